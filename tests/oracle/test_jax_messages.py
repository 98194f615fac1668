"""Pin our reading of JAX 0.10.2: its own messages equal the catalog's rendered examples.

If JAX changes a message or the order of its checks, these fail before the engine's
comparison does, and say which part of our understanding moved.
"""

from __future__ import annotations

import jax
import pytest

from .jax_kernels import Verdict, jax_verdict, lower, user_facing_error

pytestmark = pytest.mark.oracle

WARPGROUP = (
    "Only copies transferring a number of bytes divisible by the warpgroup size are"
    " supported. Got bytes={} but warpgroup size is 128"
)
SMEM_SLOT = "strided<[1], offset: ?>, #gpu.address_space<workgroup>>"

CATALOG_EXAMPLES = [
    # (rule, operation, shape, dtype, target_dtype, error class, message)
    (
        "COPY-INTEGER-BYTES",
        "copy_gmem_to_smem",
        (7,),
        "int4",
        None,
        "ValueError",
        "Can only transfer integer bytes (shape=[7], dtype=i4)",
    ),
    (
        "COPY-INTEGER-BYTES",
        "copy_gmem_to_smem",
        (3, 5),
        "int4",
        None,
        "ValueError",
        "Can only transfer integer bytes (shape=[3, 5], dtype=i4)",
    ),
    (
        "COPY-INTEGER-BYTES",
        "copy_gmem_to_smem",
        (7,),
        "bool",
        None,
        "ValueError",
        "Can only transfer integer bytes (shape=[7], dtype=i1)",
    ),
    (
        "COPY-WARPGROUP-BYTES",
        "copy_gmem_to_smem",
        (8,),
        "float32",
        None,
        "NotImplementedError",
        WARPGROUP.format(32),
    ),
    (
        "COPY-WARPGROUP-BYTES",
        "copy_gmem_to_smem",
        (48,),
        "bfloat16",
        None,
        "NotImplementedError",
        WARPGROUP.format(96),
    ),
    (
        "COPY-WARPGROUP-BYTES",
        "copy_gmem_to_smem",
        (25,),
        "float32",
        None,
        "NotImplementedError",
        WARPGROUP.format(100),
    ),
    (
        "COPY-WARPGROUP-BYTES",
        "pallas_call",
        (8,),
        "float32",
        None,
        "NotImplementedError",
        WARPGROUP.format(32),
    ),
    (
        "WGSTRIDED-ELEMENT-MULTIPLE",
        "pallas_call",
        (32,),
        "float32",
        None,
        "ValueError",
        f"memref<32xf32, {SMEM_SLOT} must have a number of elements that is a multiple of 128"
        " (got 32)",
    ),
    (
        "WGSTRIDED-ELEMENT-MULTIPLE",
        "pallas_call",
        (256,),
        "int4",
        None,
        "ValueError",
        f"memref<256xi4, {SMEM_SLOT} must have a number of elements that is a multiple of 128"
        " (got 256)",
    ),
    (
        "REFUNION-BYTE-ALIGNED-SHAPES",
        "ref_union",
        (7,),
        "int4",
        None,
        "ValueError",
        "Only byte-aligned shapes are supported. Got shape: int4(7,)",
    ),
    (
        "REFUNION-BYTE-ALIGNED-SHAPES",
        "ref_union",
        (3,),
        "int4",
        None,
        "ValueError",
        "Only byte-aligned shapes are supported. Got shape: int4(3,)",
    ),
    (
        "ALIAS-BYTE-ALIGNED-BITCAST",
        "smem_alias",
        (7,),
        "int4",
        None,
        "NotImplementedError",
        "Only byte-aligned bitcasts are supported.",
    ),
    (
        "DTYPE-BITCAST-REGION",
        "smem_bitcast",
        (3,),
        "uint8",
        "int16",
        "ValueError",
        "Can not bitcast memory region of size 24 bits to dtype with 16 bits.",
    ),
    (
        "TMA-GMEM-STRIDES-16B",
        "copy_gmem_to_smem",
        (32, 1),
        "float32",
        None,
        "ValueError",
        "async_copy requires all GMEM strides except the last one to be a multiple of 16 bytes",
    ),
    (
        "TMA-LASTDIM-128BITS",
        "copy_smem_to_gmem",
        (3,),
        "float32",
        None,
        "ValueError",
        "Async copies require the number of bits copied along the last dimension to be"
        " divisible by 128, but got 96",
    ),
    (
        "TMA-BOX-256",
        "copy_gmem_to_smem",
        (8, 512),
        "float32",
        None,
        "ValueError",
        "Async copies only support copying <=256 elements along each dimension, got (8, 512)",
    ),
]


def test_oracle_is_the_catalogued_jax() -> None:
    """The catalog's examples were rendered with 0.10.2; other releases word some differently."""
    assert jax.__version__ == "0.10.2"


@pytest.mark.parametrize(
    ("operation", "shape", "dtype", "target_dtype", "error_class", "message"),
    [
        pytest.param(*case[1:], id=f"{case[0]}-{case[1]}-{'x'.join(map(str, case[2]))}-{case[3]}")
        for case in CATALOG_EXAMPLES
    ],
)
def test_jax_renders_the_catalog_example(
    operation: str,
    shape: tuple[int, ...],
    dtype: str,
    target_dtype: str | None,
    error_class: str,
    message: str,
) -> None:
    assert jax_verdict(operation, shape, dtype, target_dtype) == Verdict(error_class, message)


@pytest.mark.parametrize(
    ("operation", "shape", "dtype"),
    [
        ("pallas_call", (128,), "float32"),  # the quickstart's fix: 512 bytes, 128 elements
        ("copy_gmem_to_smem", (32,), "float32"),  # 128 bytes is enough for a bare copy
        ("copy_gmem_to_smem", (256,), "int4"),
        ("ref_union", (256,), "int4"),
        ("smem_alias", (256,), "int4"),
    ],
)
def test_aligned_case_lowers(operation: str, shape: tuple[int, ...], dtype: str) -> None:
    assert jax_verdict(operation, shape, dtype).ok


def test_quickstart_fails_in_sequence() -> None:
    """8 × f32 fails the warpgroup check, 32 × f32 the element multiple, 128 × f32 lowers."""
    first, second, third = (jax_verdict("pallas_call", (n,), "float32") for n in (8, 32, 128))
    assert first.error_class == "NotImplementedError"
    assert second.message is not None and second.message.endswith("(got 32)")
    assert third.ok


def test_box_limit_applies_to_contiguous_loads() -> None:
    """JAX 0.10.2 loads with OOB fill mode ZEROS, which never takes the bulk path."""
    assert jax_verdict("copy_gmem_to_smem", (512,), "float32") == Verdict(
        "ValueError",
        "Async copies only support copying <=256 elements along each dimension, got (512,)",
    )
    assert jax_verdict("copy_smem_to_gmem", (512,), "float32").ok


def test_eight_bit_add_is_refused_after_the_load() -> None:
    assert jax_verdict("pallas_call", (128,), "int8") == Verdict(
        "NotImplementedError",
        "Pointwise operations on 8-bit types are unsupported (except bitwise operations)."
        " Upcast to a 16- or 32-bit type before performing the operation.",
    )


def test_verbose_errors_unwrap_to_the_same_error() -> None:
    """JAX_PALLAS_VERBOSE_ERRORS wraps the error in a LoweringError; the cause is unchanged."""
    jax.config.update("jax_pallas_verbose_errors", True)
    try:
        with pytest.raises(Exception) as raised:
            lower("copy_gmem_to_smem", (7,), "int4")
    finally:
        jax.config.update("jax_pallas_verbose_errors", False)
    assert type(raised.value).__name__ == "LoweringError"
    root = user_facing_error(raised.value)
    assert (type(root).__name__, str(root)) == jax_verdict("copy_gmem_to_smem", (7,), "int4")
