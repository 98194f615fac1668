"""Rules as data: ids, records, and messages rendered exactly as each JAX release prints them."""

from __future__ import annotations

import pytest

from app.engines.mosaic_gpu import RULES, check
from app.engines.mosaic_gpu.versions import parse_version

CATALOG_IDS = [
    "MGPU-COPY-INTEGER-BYTES",
    "MGPU-COPY-WARPGROUP-BYTES",
    "MGPU-ALIAS-BYTE-ALIGNED-BITCAST",
    "MGPU-DTYPE-BITCAST-REGION",
    "MGPU-REFUNION-BYTE-ALIGNED-SHAPES",
    "MGPU-WGSTRIDED-ELEMENT-MULTIPLE",
    "MGPU-ASYNC-STORE-INTEGER-BYTES",
    "MGPU-ASYNC-STORE-WARPGROUP-BYTES",
    "MGPU-DIALECT-ASYNC-STORE-BITS",
    "MGPU-TMA-GMEM-STRIDES-16B",
    "MGPU-TMA-LASTDIM-128BITS",
    "MGPU-TMA-SWIZZLE-LASTDIM",
    "MGPU-TMA-BOX-256",
    "MGPU-TMA-LASTDIM-STRIDE1",
    "MGPU-CPASYNC-ELEMENTS-128",
    "MGPU-CPASYNC-4BYTES",
    "MGPU-GATHER-TMA-128B",
    "MGPU-SWIZZLE-VALUE",
    "MGPU-SWIZZLE-TRAILING-DIM",
    "MGPU-TILING-SWIZZLE-FIT",
    "MGPU-FIND-SWIZZLE-16B",
    "MGPU-BITWIDTH-POW2",
    "MGPU-LAYOUTINF-MINOR-TILING-BYTES",
    "MGPU-TRANSFER-VECTOR-BYTES",
    "MGPU-TILINGTRANSFORM-DIVISIBILITY",
]
LATEST = parse_version("0.10.2")


def first_message(*args: object, version: str = "0.10.2") -> str:
    result = check(*args, jax_version=version)  # type: ignore[arg-type]
    assert result.first_violation is not None
    return result.first_violation.message


def test_every_catalog_rule_is_present_with_its_rank() -> None:
    ranked = {rule.catalog_rank: rule.id for rule in RULES.values() if rule.catalog_rank}
    assert [ranked[rank] for rank in range(1, 26)] == CATALOG_IDS


@pytest.mark.parametrize(
    ("rule_id", "error_class"),
    [
        ("MGPU-COPY-INTEGER-BYTES", "ValueError"),
        ("MGPU-COPY-WARPGROUP-BYTES", "NotImplementedError"),
        ("MGPU-ALIAS-BYTE-ALIGNED-BITCAST", "NotImplementedError"),
        ("MGPU-TILINGTRANSFORM-DIVISIBILITY", "AssertionError"),
        ("MGPU-TILING-SWIZZLE-FIT", "NotImplementedError"),
    ],
)
def test_error_classes(rule_id: str, error_class: str) -> None:
    assert RULES[rule_id].error_class == error_class


def test_integer_bytes_renders_list_and_mlir_type() -> None:
    assert first_message("copy_gmem_to_smem", (3, 5), "int4") == (
        "Can only transfer integer bytes (shape=[3, 5], dtype=i4)"
    )
    assert first_message("copy_gmem_to_smem", (7,), "bool") == (
        "Can only transfer integer bytes (shape=[7], dtype=i1)"
    )


def test_async_store_renders_tuple_and_numpy_name() -> None:
    assert first_message("async_store", (3, 5), "int4") == (
        "Can only transfer integer bytes (shape=(3, 5), dtype=int4)"
    )


@pytest.mark.parametrize(
    ("version", "message"),
    [
        ("0.7.0", "Only aligned copies are supported"),
        (
            "0.7.1",
            "Only copies transferring a number of bytes divisible by the warpgroup size are "
            "supported",
        ),
        (
            "0.8.1",
            "Only copies transferring a number of bytes divisible by the warpgroup size are "
            "supported",
        ),
        (
            "0.8.2",
            "Only copies transferring a number of bytes divisible by the warpgroup size are "
            "supported. Got bytes=32 but warpgroup size is 128",
        ),
        (
            "0.10.2",
            "Only copies transferring a number of bytes divisible by the warpgroup size are "
            "supported. Got bytes=32 but warpgroup size is 128",
        ),
    ],
)
def test_warpgroup_bytes_wordings(version: str, message: str) -> None:
    assert first_message("copy_gmem_to_smem", (8,), "float32", version=version) == message


@pytest.mark.parametrize(
    ("version", "message"),
    [
        (
            "0.7.0",
            "memref<32xf32, strided<[1], offset: ?>, #gpu.address_space<workgroup>> must have "
            "a number of elements that is a multiple of 128 (got 32)",
        ),
        (
            "0.10.2",
            "memref<32xf32, strided<[1], offset: ?>, #gpu.address_space<workgroup>> must have "
            "a number of elements that is a multiple of 128 (got 32)",
        ),
    ],
)
def test_element_multiple_wordings(version: str, message: str) -> None:
    assert first_message("pallas_call", (32,), "float32", version=version) == message


def test_element_multiple_says_256_is_not_a_multiple_of_128_for_int4() -> None:
    assert first_message("pallas_call", (2, 256), "int4") == (
        "memref<2x256xi4, strided<[256, 1], offset: ?>, #gpu.address_space<workgroup>> must "
        "have a number of elements that is a multiple of 128 (got 512)"
    )


@pytest.mark.parametrize(
    ("version", "tail"),
    [
        ("0.7.0", ""),
        ("0.8.1", ""),
        ("0.8.2", " Got shape: int4(7,)"),
        ("0.10.2", " Got shape: int4(7,)"),
    ],
)
def test_ref_union_shape_tail_arrived_in_0_8_2(version: str, tail: str) -> None:
    """Read in each release's jax/_src/pallas/mosaic_gpu/core.py (RefUnion)."""
    message = first_message("ref_union", (7,), "int4", version=version)
    assert message == f"Only byte-aligned shapes are supported.{tail}"


def test_box_tail_arrived_in_0_8_2() -> None:
    old = first_message("copy_gmem_to_smem", (8, 512), "float32", version="0.8.1")
    new = first_message("copy_gmem_to_smem", (8, 512), "float32", version="0.8.2")
    assert old == "Async copies only support copying <=256 elements along each dimension"
    assert new == f"{old}, got (8, 512)"


def test_box_renders_the_shape_after_unit_dims_are_dropped() -> None:
    assert first_message("copy_gmem_to_smem", (1, 512), "float32").endswith("got (512,)")


def test_double_spaces_survive_rendering() -> None:
    swizzle = RULES["MGPU-TMA-SWIZZLE-LASTDIM"].render(
        {"swizzle": 128, "swizzle_elements": 32, "slice_last": 64}, LATEST
    )
    assert swizzle == (
        "Async copies with swizzle=128 require the last dimension of the slice to be exactly "
        "128 bytes i.e.  32 elements, but got 64 elements."
    )
    tiling = RULES["MGPU-TILING-SWIZZLE-FIT"].render(
        {"swizzle_elements": 64, "tiling_minor": 32}, LATEST
    )
    assert tiling == "Minor tiling dimension does not fit swizzle:  expected 64, got 32"


def test_refunion_glues_dtype_and_tuple() -> None:
    assert first_message("ref_union", (3,), "int4") == (
        "Only byte-aligned shapes are supported. Got shape: int4(3,)"
    )


def test_smem_capacity_limit_and_wording_changed_in_0_7_1() -> None:
    shape = (223, 256)  # 228352 bytes + an 8-byte barrier
    assert check("copy_gmem_to_smem", shape, "float32", jax_version="0.7.1").ok
    assert first_message("copy_gmem_to_smem", shape, "float32", version="0.7.0") == (
        "Mosaic GPU kernel exceeds available shared memory smem_bytes=228360 > 228000"
    )


@pytest.mark.parametrize(
    ("rule_id", "failing", "passing"),
    [
        ("MGPU-SWIZZLE-VALUE", {"swizzle": 16}, {"swizzle": 128}),
        (
            "MGPU-SWIZZLE-TRAILING-DIM",
            {"swizzle": 128, "bits": 16, "slice_last": 32},
            {"swizzle": 128, "bits": 16, "slice_last": 64},
        ),
        ("MGPU-FIND-SWIZZLE-16B", {"minor_dim_bits": 192}, {"minor_dim_bits": 256}),
        ("MGPU-CPASYNC-4BYTES", {"vector_length": 1, "bits": 16}, {"vector_length": 2, "bits": 16}),
        ("MGPU-GATHER-TMA-128B", {"slice_last": 16, "bits": 8}, {"slice_last": 32, "bits": 8}),
        ("MGPU-TMA-LASTDIM-STRIDE1", {"last_stride": 2}, {"last_stride": 1}),
        (
            "MGPU-LAYOUTINF-MINOR-TILING-BYTES",
            {"tiling_minor": 3, "bits": 4},
            {"tiling_minor": 4, "bits": 4},
        ),
        (
            "MGPU-TILINGTRANSFORM-DIVISIBILITY",
            {"tiled_dims": (64, 60), "tiling": (8, 32)},
            {"tiled_dims": (64, 64), "tiling": (8, 32)},
        ),
    ],
)
def test_catalog_only_rule_conditions(rule_id: str, failing: dict, passing: dict) -> None:
    rule = RULES[rule_id]
    assert rule.fails(failing, LATEST)
    assert not rule.fails(passing, LATEST)


def test_a_rule_is_not_rendered_for_a_release_without_it() -> None:
    with pytest.raises(LookupError):
        RULES["MGPU-ASYNC-STORE-INTEGER-BYTES"].wording(parse_version("0.10.0"))


@pytest.mark.parametrize(
    ("version", "shape", "dtype", "error", "opening"),
    [
        ("0.7.1", (256,), "int4", "AssertionError", "i4"),
        ("0.7.2", (256,), "int4", "ValueError", "memref<256xi4, strided<[1], offset: ?>"),
        ("0.8.1", (16,), "float64", "ValueError", "memref<16xf64, strided<[1], offset: ?>"),
        ("0.10.2", (16,), "float64", "ValueError", "unsupported TMA dtype f64"),
        ("0.8.1", (8, 128), "bool", "ValueError", "memref<8x128xi1, strided<[128, 1]"),
        ("0.8.1", (300, 32), "float64", "ValueError", "Async copies only support copying <=256"),
    ],
)
def test_old_pallas_calls_load_the_block_before_building_the_pipeline(
    version: str, shape: tuple[int, ...], dtype: str, error: str, opening: str
) -> None:
    """As each release lowers the quickstart (tests/oracle/test_releases.py): until 0.7.1 a
    sub-byte load asserts whole bytes; until 0.8.1 the load's layout check comes before the
    pipeline's TMA descriptors and SMEM budget."""
    first = check("pallas_call", shape, dtype, jax_version=version).first_violation
    assert first is not None
    assert first.error_class == error
    assert first.message.startswith(opening)


def test_tma_moves_2_bit_integers_from_0_7_1() -> None:
    """launch_context.py of 0.7.0 has no 2-bit TMA integer type; 0.7.1 adds it."""
    old = check("copy_gmem_to_smem", (8, 128), "int2", jax_version="0.7.0").first_violation
    assert old is not None and old.message == "Unsupported integer bitwidth: 2"
    assert check("copy_gmem_to_smem", (8, 128), "int2", jax_version="0.7.1").ok
