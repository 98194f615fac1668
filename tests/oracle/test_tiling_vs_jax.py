"""The tiling engine against JAX 0.10.2: its verdict is transform_type's assert, and each
fix lowers a tiled copy for CUDA (on the CPU)."""

from __future__ import annotations

import itertools
import warnings
from typing import Any

import jax
import jax.numpy as jnp
import pytest
from jax.experimental.pallas import mosaic_gpu as plgpu

from app.engines.mosaic_gpu.tiling import tiling_divides, tiling_fixes

pytestmark = pytest.mark.oracle

SHAPES = ((16, 48), (100, 64), (12, 128), (3, 5, 64), (64, 64))
TILINGS = ((8, 32), (8, 64), (8, 16), (4, 64))
DTYPES = {"float16": 16, "float32": 32, "int8": 8}
SWIZZLES = (None, 32, 64, 128)


def asserts(shape: tuple[int, ...], tiling: tuple[int, ...], dtype: str) -> bool:
    try:
        plgpu.TilingTransform(tiling).transform_type(jax.core.ShapedArray(shape, jnp.dtype(dtype)))
    except AssertionError:
        return True
    return False


def lowers(shape: tuple[int, ...], tiling: tuple[int, ...], dtype: str, swizzle: int | None) -> str:
    """ "" where a copy through a ref of ``shape`` so tiled lowers, else the error."""

    def body(x_gmem: Any, o_gmem: Any, smem: Any, barrier: Any) -> None:
        plgpu.copy_gmem_to_smem(x_gmem, smem, barrier)
        plgpu.barrier_wait(barrier)
        plgpu.copy_smem_to_gmem(smem, o_gmem)
        plgpu.wait_smem_to_gmem(0)

    swizzled = (plgpu.SwizzleTransform(swizzle),) if swizzle else ()
    transforms = (plgpu.TilingTransform(tiling), *swizzled)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kernel = plgpu.kernel(
            body,
            out_shape=jax.ShapeDtypeStruct(shape, jnp.dtype(dtype)),
            scratch_shapes=[
                plgpu.SMEM(shape, jnp.dtype(dtype), transforms=transforms),
                plgpu.Barrier(),
            ],
        )
        try:
            jax.jit(kernel).trace(jnp.zeros(shape, dtype)).lower(lowering_platforms=("cuda",))
        except Exception as error:  # the verdict is the record
            return f"{type(error).__name__}: {error}"[:300]
    return ""


@pytest.mark.parametrize(("shape", "tiling"), list(itertools.product(SHAPES, TILINGS)))
@pytest.mark.parametrize("dtype", sorted(DTYPES))
def test_the_verdict_is_transform_types_assert(
    shape: tuple[int, ...], tiling: tuple[int, ...], dtype: str
) -> None:
    assert tiling_divides(shape, tiling) is not asserts(shape, tiling, dtype)


FAILING = [
    (shape, tiling, dtype, swizzle)
    for shape, tiling in itertools.product(SHAPES, TILINGS)
    for dtype in ("float16", "float32")
    for swizzle in SWIZZLES
    if not tiling_divides(shape, tiling)
    and (swizzle is None or tiling[-1] * DTYPES[dtype] == swizzle * 8)  # the user's swizzle fits
]


@pytest.mark.parametrize(("shape", "tiling", "dtype", "swizzle"), FAILING)
def test_every_fix_lowers(
    shape: tuple[int, ...], tiling: tuple[int, ...], dtype: str, swizzle: int | None
) -> None:
    fixes = tiling_fixes(shape, tiling, DTYPES[dtype], swizzle)
    assert any(fix.kind == "pad" for fix in fixes)
    for fix in fixes:
        assert lowers(fix.shape, fix.tiling, dtype, swizzle) == "", fix
