"""check(): verdicts as JAX 0.10.2 gives them (each case below was lowered with JAX)."""

from __future__ import annotations

import pytest

from app.engines.mosaic_gpu import (
    RULES,
    InputValueError,
    ShapeError,
    UnknownDTypeError,
    check,
    suggest_fixes,
)
from app.engines.mosaic_gpu.versions import parse_version

# (operation, shape, dtype, target, JAX's error class, JAX's message); None: lowers cleanly.
# tests/oracle/test_engine_table_vs_jax.py lowers every case with JAX to confirm it.
JAX_0_10_2 = [
    (
        "copy_gmem_to_smem",
        (7,),
        "int4",
        None,
        "ValueError",
        "Can only transfer integer bytes (shape=[7], dtype=i4)",
    ),
    (
        "copy_gmem_to_smem",
        (8,),
        "int4",
        None,
        "NotImplementedError",
        "Only copies transferring a number of bytes divisible by the warpgroup size are "
        "supported. Got bytes=4 but warpgroup size is 128",
    ),
    ("copy_gmem_to_smem", (256,), "int4", None, None, None),
    (
        "copy_gmem_to_smem",
        (512,),
        "int4",
        None,
        "ValueError",
        "Async copies only support copying <=256 elements along each dimension, got (512,)",
    ),
    ("copy_gmem_to_smem", (2, 256), "int4", None, None, None),
    (
        "copy_gmem_to_smem",
        (1, 256, 2),
        "float32",
        None,
        "ValueError",
        "async_copy requires all GMEM strides except the last one to be a multiple of 16 bytes",
    ),
    (
        "copy_gmem_to_smem",
        (32, 0),
        "float32",
        None,
        "NotImplementedError",
        "async_copy assumes the GMEM reference is contiguous",
    ),
    (
        "copy_gmem_to_smem",
        (2, 2, 2, 2, 2, 64),
        "float32",
        None,
        "ValueError",
        "Async copies only support striding up to 5 dimensions",
    ),
    ("copy_gmem_to_smem", (1, 1, 1, 1, 1, 1, 1, 64), "float32", None, None, None),
    ("copy_gmem_to_smem", (4, 256), "bool", None, "ValueError", "Unsupported integer bitwidth: 1"),
    (
        "copy_gmem_to_smem",
        (256,),
        "float8_e4m3",
        None,
        "ValueError",
        "unsupported TMA dtype f8E4M3",
    ),
    ("copy_gmem_to_smem", (128,), "complex64", None, "NotImplementedError", "complex<f32>"),
    (
        "copy_gmem_to_smem",
        (128,),
        "float6_e2m3fn",
        None,
        "ValueError",
        "Only power of 2 bitwidths are supported, got: 6",
    ),
    (
        "copy_gmem_to_smem",
        (227, 256),
        "float32",
        None,
        "ValueError",
        "Mosaic GPU kernel exceeds available shared memory: smem_bytes=232456 > "
        "max_smem_bytes=232448",
    ),
    ("copy_gmem_to_smem", (226, 256), "float32", None, None, None),
    ("copy_smem_to_gmem", (512,), "float32", None, None, None),
    (
        "copy_smem_to_gmem",
        (7,),
        "bool",
        None,
        "ValueError",
        "Async copies require the number of bits copied along the last dimension to be "
        "divisible by 128, but got 7",
    ),
    ("copy_smem_to_gmem", (1,), "float32", None, "IndexError", "list index out of range"),
    (
        "pallas_call",
        (8,),
        "float32",
        None,
        "NotImplementedError",
        "Only copies transferring a number of bytes divisible by the warpgroup size are "
        "supported. Got bytes=32 but warpgroup size is 128",
    ),
    (
        "pallas_call",
        (32,),
        "float32",
        None,
        "ValueError",
        "memref<32xf32, strided<[1], offset: ?>, #gpu.address_space<workgroup>> must have a "
        "number of elements that is a multiple of 128 (got 32)",
    ),
    ("pallas_call", (128,), "float32", None, None, None),
    (
        "pallas_call",
        (8, 512),
        "float32",
        None,
        "ValueError",
        "Async copies only support copying <=256 elements along each dimension, got (8, 512)",
    ),
    (
        "pallas_call",
        (128,),
        "int8",
        None,
        "NotImplementedError",
        "Pointwise operations on 8-bit types are unsupported (except bitwise operations). "
        "Upcast to a 16- or 32-bit type before performing the operation.",
    ),
    (
        "pallas_call",
        (151, 256),
        "bfloat16",
        None,
        "ValueError",
        "Mosaic GPU kernel exceeds available shared memory: smem_bytes=233480 > "
        "max_smem_bytes=232448",
    ),
    (
        "pallas_call",
        (0, 32),
        "int4",
        None,
        "IndexError",
        "Slice slice(0, 0, 1) along axis 1 is out of bounds for shape [1, 0, 32]",
    ),
    (
        "ref_union",
        (3,),
        "int4",
        None,
        "ValueError",
        "Only byte-aligned shapes are supported. Got shape: int4(3,)",
    ),
    ("ref_union", (7,), "bool", None, "NotImplementedError", "Unsupported dtype: bool"),
    (
        "ref_union",
        (0,),
        "int8",
        None,
        "IndexError",
        "Slice slice(0, 0, None) along axis 0 is out of bounds for shape [0]",
    ),
    ("ref_union", (256,), "int4", None, None, None),
    (
        "smem_alias",
        (3,),
        "int4",
        None,
        "NotImplementedError",
        "Only byte-aligned bitcasts are supported.",
    ),
    ("smem_alias", (256,), "int4", None, None, None),
    (
        "smem_bitcast",
        (6,),
        "uint8",
        "float32",
        "ValueError",
        "Can not bitcast memory region of size 48 bits to dtype with 32 bits.",
    ),
    ("smem_bitcast", (8,), "uint8", "float32", None, None),
    (
        "smem_bitcast",
        (3,),
        "int16",
        "int8",
        "NotImplementedError",
        "Data type bitcast is only supported from i8 to other types.",
    ),
    ("smem_bitcast", (3,), "int16", "int16", None, None),
    (
        "smem_bitcast",
        (2, 3),
        "uint8",
        "int16",
        "NotImplementedError",
        "Data type bitcast is only supported for 1D arrays.",
    ),
    ("smem_bitcast", (3,), "uint8", "complex64", "NotImplementedError", "complex<f32>"),
    (
        "smem_bitcast",
        (300000,),
        "uint8",
        "uint8",
        "ValueError",
        "Mosaic GPU kernel exceeds available shared memory: smem_bytes=300032 > "
        "max_smem_bytes=232448",
    ),
    # 0-d blocks: the checks run as on any block (JAX drops no check for a scalar).
    (
        "copy_gmem_to_smem",
        (),
        "float32",
        None,
        "NotImplementedError",
        "Only copies transferring a number of bytes divisible by the warpgroup size are "
        "supported. Got bytes=4 but warpgroup size is 128",
    ),
    (
        "pallas_call",
        (),
        "int4",
        None,
        "ValueError",
        "Can only transfer integer bytes (shape=[], dtype=i4)",
    ),
    (
        "ref_union",
        (),
        "int4",
        None,
        "ValueError",
        "Only byte-aligned shapes are supported. Got shape: int4()",
    ),
    ("copy_smem_to_gmem", (), "float32", None, "IndexError", "list index out of range"),
    (
        "smem_bitcast",
        (),
        "uint8",
        "float32",
        "NotImplementedError",
        "Data type bitcast is only supported for 1D arrays.",
    ),
]


@pytest.mark.parametrize(("operation", "shape", "dtype", "target", "error", "message"), JAX_0_10_2)
def test_first_violation_is_what_jax_raises(operation, shape, dtype, target, error, message):
    result = check(operation, shape, dtype, target_dtype=target)
    first = result.first_violation
    verdict = (first.error_class, first.message) if first else (None, None)
    assert verdict == (error, message)
    assert result.ok is (error is None)


def test_violations_list_every_failing_check_in_jax_order() -> None:
    result = check("copy_gmem_to_smem", "[7]", "int4")
    assert [v.rule_id for v in result.violations] == [
        "MGPU-COPY-INTEGER-BYTES",
        "MGPU-COPY-WARPGROUP-BYTES",
        "MGPU-TMA-LASTDIM-128BITS",
    ]
    assert result.first_violation == result.violations[0]


def test_explanations_spell_out_the_arithmetic() -> None:
    integer, warpgroup, _ = check("copy_gmem_to_smem", [7], "int4").violations
    assert integer.explanation == "7 × 4 bits = 28 bits; 28 mod 8 = 4"
    assert warpgroup.explanation == (
        "7 × 4 bits = 28 bits = 3.5 bytes, counted as 3; 3 mod 128 = 3"
    )
    (box,) = check("copy_gmem_to_smem", [512], "int4").violations
    assert box.explanation == "largest dimension 512 > 256 elements (TMA box limit)"
    (region,) = check("smem_bitcast", [6], "uint8", "float32").violations
    assert region.explanation == "6 bytes × 8 = 48 bits; 48 mod 32 = 16"


def test_an_int4_block_never_loads_untiled_in_0_10_2_but_can_from_0_11_0() -> None:
    released = check("pallas_call", [256], "int4", jax_version="0.10.2").violations
    later = check("pallas_call", [256], "int4", jax_version="0.11.0", lowering_semantics="Lane")
    assert released[0].rule_id == "MGPU-WGSTRIDED-ELEMENT-MULTIPLE"
    assert [v.rule_id for v in later.violations] == ["MGPU-POINTWISE-NARROW-BITWIDTH"]
    element_multiple = RULES["MGPU-WGSTRIDED-ELEMENT-MULTIPLE"]
    verdicts = {
        (elements, bits): (
            element_multiple.fails({"elements": elements, "bits": bits}, parse_version("0.10.2")),
            element_multiple.fails({"elements": elements, "bits": bits}, parse_version("0.11.0")),
        )
        for elements, bits in [(128, 4), (256, 4), (384, 4), (512, 1), (1024, 1), (128, 32)]
    }
    assert verdicts == {  # catalog (main, since 0.11.0): i4 fails at 128/384/640, i1 below 1024
        (128, 4): (True, True),
        (256, 4): (True, False),
        (384, 4): (True, True),
        (512, 1): (True, True),
        (1024, 1): (True, False),
        (128, 32): (False, False),
    }


def test_accepts_text_in_every_field() -> None:
    result = check("copy_gmem_to_smem", "int4(7,)", None)
    assert (result.shape, result.dtype.name) == ((7,), "int4")
    assert check("copy_gmem_to_smem", "memref<256xi4>").ok
    assert check("pallas_call", "(8, 128)", "jnp.float32").ok
    assert check("smem_bitcast", "[8]", "uint8", "np.float32").ok


def test_default_version_is_0_10_2() -> None:
    assert check("copy_gmem_to_smem", [8], "int4").jax_version == "0.10.2"


def test_each_release_lowers_with_its_own_default_semantics() -> None:
    """0.11.0 made Warpgroup the default, and the 128-byte multiple is a Lane check."""
    lane = check("copy_gmem_to_smem", [8], "bfloat16", jax_version="0.10.2")
    warpgroup = check("copy_gmem_to_smem", [8], "bfloat16", jax_version="0.11.0")
    asked = check(
        "copy_gmem_to_smem", [8], "bfloat16", jax_version="0.11.0", lowering_semantics="Lane"
    )
    assert (lane.lowering_semantics, warpgroup.lowering_semantics) == ("Lane", "Warpgroup")
    assert lane.first_violation is not None
    assert lane.first_violation.rule_id == "MGPU-COPY-WARPGROUP-BYTES"
    assert warpgroup.ok
    assert asked.violations == lane.violations


def test_a_pallas_call_asserts_from_0_11_2_whatever_the_block() -> None:
    """0.11.2 registers no Mosaic GPU lowering of pallas_call: a bare assert, no fix."""
    for shape, dtype in [((128,), "float32"), ((7,), "int4")]:
        result = check("pallas_call", shape, dtype, jax_version="0.12.0.1")
        assert [(v.rule_id, v.error_class, v.message) for v in result.violations] == [
            ("MGPU-PALLAS-CALL-UNREGISTERED", "AssertionError", "")
        ]
        assert "plgpu.kernel" in result.violations[0].explanation
        assert suggest_fixes("pallas_call", shape, dtype, jax_version="0.12.0.1") == []
    lane = check("pallas_call", [128], "float32", jax_version="0.11.1", lowering_semantics="Lane")
    assert lane.ok


def test_0_12_0_words_the_strides_anew_and_copies_a_unit_slice_as_one_element() -> None:
    def first(shape: list[int], version: str) -> tuple[str, str]:
        violation = check("copy_gmem_to_smem", shape, "int8", jax_version=version).violations[0]
        return violation.error_class, violation.message

    assert first([3, 5], "0.11.2")[1].startswith("async_copy requires all GMEM strides")
    assert first([3, 5], "0.12.0")[1].startswith("Async copies require all GMEM strides")
    assert first([1], "0.11.2") == ("IndexError", "list index out of range")
    assert first([1], "0.12.0") == (
        "ValueError",
        "Async copies require the number of bits copied along the last dimension to be "
        "divisible by 128, but got 8",
    )
    stored = check("copy_smem_to_gmem", [1], "int8", jax_version="0.9.2").violations
    assert [(v.error_class, v.message) for v in stored] == [
        ("ValueError", "max() iterable argument is empty")  # Python 3.12's words
    ]


def test_huge_dimensions_compute_exactly() -> None:
    (first, *_) = check("copy_gmem_to_smem", [2**31 - 1], "int4").violations
    assert first.rule_id == "MGPU-SMEM-CAPACITY"
    assert "smem_bytes=1073741832" in first.message  # ⌊(2**31 - 1) × 4 / 8⌋ → 1024s, + 8
    assert check("copy_gmem_to_smem", [2**31], "int4").violations[0].rule_id == (
        "MGPU-SMEM-CAPACITY"
    )


@pytest.mark.parametrize(
    ("kwargs", "field", "text"),
    [
        ({"operation": "copy"}, "operation", "copy_gmem_to_smem, copy_smem_to_gmem"),
        ({"dtype": "int5"}, "dtype", "closest"),
        ({"dtype": "float32", "shape": "int4(7,)"}, "dtype", "the shape says int4"),
        ({"dtype": None, "shape": "[7]"}, "dtype", "required"),
        ({"shape": "[-3]"}, "shape", "negative"),
        ({"target_dtype": "int8"}, "target_dtype", "takes no target_dtype"),
        ({"operation": "smem_bitcast"}, "target_dtype", "needs a target_dtype"),
        ({"target_dtype": "bf17", "operation": "smem_bitcast"}, "target_dtype", "bfloat16"),
        ({"jax_version": "0.4.30"}, "jax_version", "errata models JAX 0.7.0 to 0.12.0.1"),
        ({"jax_version": "0.6.1"}, "jax_version", "JAX 0.6.1 is not modelled"),
        ({"jax_version": "0.4.38"}, "jax_version", "JAX 0.4.38 is not modelled"),
        ({"jax_version": "banana"}, "jax_version", "cannot read"),
        ({"jax_version": "latest"}, "jax_version", "cannot read"),
        ({"jax_version": "0.10.0", "operation": "async_store"}, "jax_version", "0.10.1"),
        ({"lowering_semantics": "Lanes"}, "lowering_semantics", "valid: Lane, Warpgroup"),
        (
            {"lowering_semantics": "Warpgroup", "operation": "async_store", "shape": "(64, 64)"},
            "lowering_semantics",
            "under Lane semantics only",
        ),
        (
            {"lowering_semantics": "Warpgroup", "jax_version": "0.9.2"},
            "lowering_semantics",
            "Warpgroup semantics from JAX 0.10.2 on",
        ),
        ({"operation": "pallas_call", "jax_version": "0.11.0"}, "jax_version", "layout"),
        (
            {"operation": "smem_bitcast", "target_dtype": "int16", "jax_version": "0.12.0"},
            "jax_version",
            "exists up to JAX 0.11.2",
        ),
    ],
)
def test_bad_input_names_its_field(kwargs: dict, field: str, text: str) -> None:
    arguments = {"operation": "copy_gmem_to_smem", "shape": "[7]", "dtype": "int4", **kwargs}
    with pytest.raises(InputValueError) as raised:
        check(**arguments)
    assert raised.value.field == field
    assert text in str(raised.value)


def test_error_subclasses() -> None:
    with pytest.raises(UnknownDTypeError):
        check("copy_gmem_to_smem", [7], "int5")
    with pytest.raises(ShapeError):
        check("copy_gmem_to_smem", [2**31 + 1], "int4")
    with pytest.raises(ValueError):
        check("nope", [7], "int4")
