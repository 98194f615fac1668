from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from app.matching import values as values_module
from app.matching.values import (
    SMEM,
    TypedValues,
    UserFrame,
    ValueSource,
    adopt_written_dtype,
    find_value_sources,
    infer_missing,
    needs_context,
    type_values,
    user_frame,
)


def completed(captures: dict[str, str], sources: list[ValueSource], line: int = 0) -> TypedValues:
    values = type_values(captures)
    assert needs_context(values)
    infer_missing(values, sources, line)
    return values


def test_list_shape_and_mlir_dtype() -> None:
    values = type_values({"shape": "[3, 5]", "dtype": "i4"})
    assert values.shape == [3, 5]
    assert (values.dtype, values.bit_width) == ("int4", 4)
    assert (values.element_count, values.bits, values.bytes) == (15, 60, None)
    assert values.inferred == []


def test_refunion_rendering() -> None:
    values = type_values({"dtype": "int4", "shape": "(3,)"})
    assert (values.shape, values.dtype, values.bits) == ([3], "int4", 12)


def test_memref_capture() -> None:
    values = type_values(
        {
            "memref": "memref<32xf32, strided<[1], offset: ?>, #gpu.address_space<workgroup>>",
            "warpgroup_size": "128",
            "prod_shape": "32",
        }
    )
    assert (values.shape, values.dtype, values.memory_space) == ([32], "float32", SMEM)
    assert (values.element_count, values.bits, values.bytes) == (32, 1024, 128)
    assert values.numbers == {"warpgroup_size": 128}


def test_a_type_printed_as_a_jax_aval_gives_its_shape_and_dtype() -> None:
    values = type_values({"memref": "bfloat16[8,128]"})
    assert (values.shape, values.dtype, values.bit_width) == ([8, 128], "bfloat16", 16)
    assert values.unparsed == []


def test_unnamed_self_documenting_capture() -> None:
    values = type_values({"1": "bytes=32", "2": "128"})
    assert (values.bytes, values.bits) == (32, 256)
    assert values.numbers == {"2": 128}


def test_unparsable_named_capture_is_reported() -> None:
    values = type_values({"dtype": "not-a-dtype"})
    assert values.dtype is None
    assert values.unparsed == ["dtype"]


def test_missing_values_come_from_the_paste_and_are_marked() -> None:
    sources = find_value_sources(
        [
            "    x = jnp.arange(8, dtype=jnp.float32)",
            "With inval types=[MemRefType(memref<8xf32>), "
            "MemRefType(memref<1x8xf32, #gpu.address_space<workgroup>>), None]",
        ]
    )
    values = completed({"bytes": "32", "warpgroup_size": "128"}, sources, line=5)
    assert (values.shape, values.dtype, values.memory_space) == ([1, 8], "float32", SMEM)
    assert values.inferred == ["shape", "dtype", "bit_width", "memory_space", "element_count"]


def test_inference_ignores_sources_that_contradict_the_message() -> None:
    sources = find_value_sources(["jax.ShapeDtypeStruct((16,), jnp.float32)"])
    values = completed({"bytes": "32"}, sources)
    assert values.shape is None
    assert values.inferred == []


def test_oldest_wording_takes_everything_from_the_paste() -> None:
    sources = find_value_sources(["out = add_vectors(jnp.arange(8, dtype=jnp.float32), y)"])
    values = completed({}, sources)
    assert (values.shape, values.dtype, values.bytes) == ([8], "float32", 32)
    assert values.inferred == [
        "shape",
        "dtype",
        "bit_width",
        "element_count",
        "bits",
        "bytes",
    ]


def test_value_sources() -> None:
    sources = find_value_sources(
        [
            "scratch_types=[plgpu.SMEM((7,), jnp.int4), plgpu.Barrier()]",
            "out_shape=jax.ShapeDtypeStruct(shape=(3, 5), dtype=jnp.bfloat16)",
            "x = jnp.zeros((4, 128), dtype=jnp.float8_e4m3fn)",
            "{ lambda a:Ref<gmem>{i4[7]}; b:Ref<smem>{i4[7]} c:Ref<smem>{barrier[1]}. let",
            "MemRefType(memref<7xi4>)",
        ]
    )
    found = [(s.line, s.shape, s.dtype, s.memory_space) for s in sources]
    assert found == [
        (0, (7,), "int4", SMEM),
        (1, (3, 5), "bfloat16", None),
        (2, (4, 128), "float8_e4m3fn", None),
        (3, (7,), "int4", "gmem"),
        (3, (7,), "int4", SMEM),
        (4, (7,), "int4", "gmem"),
    ]


def test_a_scalar_is_no_buffers_shape() -> None:
    """An index map's arguments, printed in a TPU block error's jaxpr, are int32 scalars."""
    index_map = "and index_map { lambda ; a:i32[] b:i32[]. let  in (a, b) }, in memory space"
    assert find_value_sources([index_map, "x: f32[8,128]"]) == [
        ValueSource(1, (8, 128), "float32", 32, None)
    ]


def test_the_first_shape_a_message_names_is_its_values_shape() -> None:
    """A store's message names the ref's shape, the expected and the value's, then the
    transforms, whose ``()`` reads like a shape."""
    captures = {"shape": "(8, 128)", "shape_2": "(8, 128)", "shape_3": "(8,)", "transforms": "()"}
    assert type_values(captures).shape == [8, 128]


def test_the_users_frame_is_the_nearest_outside_the_libraries_that_writes_a_dtype() -> None:
    lines = [
        "Traceback (most recent call last):",
        '  File "kernel.py", line 3, in <module>',
        "    out = run_kernel(jnp.float32)",
        '  File "/home/me/helpers.py", line 9, in run_kernel',
        "    return kernel(x)",
        '  File "/usr/lib/python3.11/site-packages/jax/_src/pjit.py", line 1091, in lower',
        "    return _pjit_lower(",
        "ValueError: Async copies require ... but got 96",
    ]
    assert user_frame(lines) == UserFrame(
        "kernel.py", 3, "out = run_kernel(jnp.float32)", "float32"
    )
    without_dtype = [line.replace("jnp.float32", "x") for line in lines]
    assert user_frame(without_dtype) == UserFrame(
        "/home/me/helpers.py", 9, "return kernel(x)", None
    )
    assert user_frame(lines[5:]) is None
    two = [*lines[:2], "    x = jnp.ones(3, jnp.int8).astype(jnp.float32)"]
    assert user_frame(two) == UserFrame("kernel.py", 3, two[2].strip(), None)


def test_a_dtype_the_message_leaves_unsaid_comes_from_the_users_line() -> None:
    values = type_values({"zeroth_bw": "96"})
    adopt_written_dtype(values, UserFrame("kernel.py", 3, "f(jnp.float32)", "float32"))
    assert (values.dtype, values.bit_width, values.inferred) == (
        "float32",
        32,
        ["dtype", "bit_width"],
    )
    counted = type_values({"bytes": "6"})
    adopt_written_dtype(counted, UserFrame("kernel.py", 3, "f(jnp.float32)", "float32"))
    assert counted.dtype is None, "48 bits are not a whole number of float32 elements"


_STATEMENT_PIECES = (
    "scratch_types=[plgpu.SMEM((7,), jnp.int4)]",
    "out_shape=jax.ShapeDtypeStruct((16,), jnp.float32)",
    "x = numpy.ones(4, 'float32')",
    "y = jax.numpy.zeros((8, 128), dtype=jax.numpy.bfloat16)",
    "z = jnp.full((2,), 0, jnp.int8)",
    "MemRefType(memref<1x8xf32, #gpu.address_space<workgroup>>)",
    "b:Ref<smem>{i4[7]}",
    "f32[7609,88632]",
    '  File "/x/site-packages/jax/_src/numpy/lax_numpy.py", line 7, in zeros',
    "step 7 [8, 128] loss",
    "{ lambda ; a:i32[] b:i32[]. let  in (a, b) }",
    "",
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.sampled_from(_STATEMENT_PIECES), max_size=4), max_size=8))
def test_value_sources_equal_every_reading_tried_on_every_line(pieces: list[list[str]]) -> None:
    """Reading only the lines that hold what a statement needs finds what every reader run
    on every line finds, in the same order."""
    lines = [" ".join(line) for line in pieces]
    everywhere = [
        ValueSource(number, *value)
        for number, line in enumerate(lines)
        for read, _ in values_module._STATEMENTS
        for value in read(line)
        if value[0]  # scalars are no buffer's
    ]
    assert find_value_sources(lines) == everywhere
