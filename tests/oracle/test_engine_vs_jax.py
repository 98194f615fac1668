"""The engine against JAX itself, case by case.

For every case of the grid the engine's first error must be JAX's, class and text
exactly, or both must say the kernel lowers; and every fix the engine proposes must
lower cleanly in JAX, as must every fix it proposes for both semantics at once (under
each). The grid sits on the boundaries of the checks: byte counts around 8 bits and 128
bytes, dimensions around 256 elements, row strides around 16 bytes, and every bit width
from 1 to 64. Each case is lowered with the release's default lowering semantics, and
again with Warpgroup semantics where the engine models the construct under them.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import jax
import pytest

from app.engines.mosaic_gpu import InputValueError, check, fixes_for, resolve, suggest_fixes

from .jax_kernels import Verdict, jax_verdict

pytestmark = pytest.mark.oracle

DTYPES = (
    "bool",
    "int2",
    "int4",
    "uint4",
    "float4_e2m1fn",
    "int8",
    "float8_e4m3fn",
    "bfloat16",
    "float16",
    "int16",
    "float32",
    "int32",
)
SIZES_1D = (1, 7, 8, 16, 31, 32, 33, 64, 96, 128, 255, 256, 257, 512, 1024)
SHAPES_2D = (
    (3, 5),
    (8, 128),
    (16, 256),
    (2, 300),
    (64, 128),
    (1, 128),
    (4, 64),
    (8, 4),
    (32, 1),
    (300, 32),
    (8, 512),
    (128, 256),
)
# Multiples of 128 elements that 8-byte vectors per thread do not divide: up to 0.9.1 the
# strided layout of a pallas_call's load refused them.
UNHALVED_VECTOR_SHAPES = ((3, 128), (5, 128), (9, 128), (640,))
# 64-bit and complex dtypes: TMA has no f64, complex has no Mosaic GPU bit width.
WIDE_DTYPES = ("int64", "float64", "complex64")
WIDE_SHAPES = ((7,), (16,), (128,), (8, 128), (300, 32))
# Operations that take one (shape, dtype); smem_bitcast also takes a target dtype.
SHAPED_OPERATIONS = ("copy_gmem_to_smem", "pallas_call", "ref_union", "smem_alias")
BITCAST_SIZES = (1, 2, 3, 4, 6, 7, 8, 12, 16, 33, 64)
BITCAST_TARGETS = ("bool", "int4", "float4_e2m1fn", "int8", "bfloat16", "int16", "float32", "int32")
# async_store's own checks cannot fail once JAX's preconditions hold (tiles of 8 rows by
# 128 bytes, the 64-row WGMMA layout: always a multiple of 128 bytes); other shapes stop at
# the TilingTransform assertion, whose tiling is the user's choice, not part of the case.
ASYNC_STORE_SHAPES = ((64, 64), (64, 128), (128, 64), (64, 256))
ASYNC_STORE_DTYPES = ("bfloat16", "float16", "int16", "float32", "int32")

Case = tuple[str, tuple[int, ...], str, str | None]


def _grid() -> list[Case]:
    shapes = [(n,) for n in SIZES_1D] + list(SHAPES_2D)
    cases: list[Case] = [
        (operation, shape, dtype, None)
        for operation in SHAPED_OPERATIONS
        for shape in shapes
        for dtype in DTYPES
    ]
    cases += [
        (operation, shape, dtype, None)
        for operation in SHAPED_OPERATIONS
        for shape in WIDE_SHAPES
        for dtype in WIDE_DTYPES
    ]
    cases += [
        ("pallas_call", shape, dtype, None) for shape in UNHALVED_VECTOR_SHAPES for dtype in DTYPES
    ]
    cases += [
        ("smem_bitcast", (n,), "uint8", target) for n in BITCAST_SIZES for target in BITCAST_TARGETS
    ]
    # The bitcast's preconditions: an i8 source (int8 counts), 1-D.
    cases += [
        ("smem_bitcast", (3,), "int8", "int16"),
        ("smem_bitcast", (4,), "int16", "int8"),
        ("smem_bitcast", (2, 2), "uint8", "int16"),
    ]
    # 0-d blocks: JAX runs the same checks on them (a scalar slice is empty).
    cases += [
        (operation, (), dtype, None)
        for operation in (*SHAPED_OPERATIONS, "copy_smem_to_gmem")
        for dtype in DTYPES
    ]
    cases += [("smem_bitcast", (), "uint8", target) for target in BITCAST_TARGETS]
    cases += [
        ("async_store", shape, dtype, None)
        for shape in ASYNC_STORE_SHAPES
        for dtype in ASYNC_STORE_DTYPES
    ]
    return cases


def _case_id(case: Case) -> str:
    operation, shape, dtype, target_dtype = case
    name = f"{operation}-{'x'.join(map(str, shape)) or 'scalar'}-{dtype}"
    return name if target_dtype is None else f"{name}-to-{target_dtype}"


def _modelled_under_warpgroup(case: Case) -> bool:
    operation, shape, dtype, target_dtype = case
    try:
        engine_verdict(operation, shape, dtype, target_dtype, "Warpgroup")
    except InputValueError:
        return False
    return True


def engine_case(
    operation: str,
    shape: tuple[int, ...],
    dtype: str,
    target_dtype: str | None,
    semantics: str | None = None,
) -> dict[str, Any]:
    """The engine's arguments for a case, asked of the installed release."""
    return {
        "operation": operation,
        "shape": shape,
        "dtype": dtype,
        "target_dtype": target_dtype,
        "jax_version": jax.__version__,
        "lowering_semantics": semantics,
    }


def engine_verdict(
    operation: str,
    shape: tuple[int, ...],
    dtype: str,
    target_dtype: str | None,
    semantics: str | None = None,
) -> Verdict:
    result = check(**engine_case(operation, shape, dtype, target_dtype, semantics))
    if result.ok:
        return Verdict(None, None)
    first = result.first_violation
    return Verdict(first.error_class, first.message)


GRID = _grid()
WARPGROUP_GRID = [case for case in GRID if _modelled_under_warpgroup(case)]
CASES = [
    *(pytest.param(*case, None, id=_case_id(case)) for case in GRID),
    *(
        pytest.param(*case, "Warpgroup", id=f"{_case_id(case)}-warpgroup")
        for case in WARPGROUP_GRID
    ),
]
PARAMETERS = ("operation", "shape", "dtype", "target_dtype", "semantics")


def test_grid_is_large_enough() -> None:
    assert len(GRID) >= 300
    assert len(WARPGROUP_GRID) >= 300


@pytest.mark.parametrize(PARAMETERS, CASES)
def test_engine_verdict_is_jax_verdict(
    operation: str,
    shape: tuple[int, ...],
    dtype: str,
    target_dtype: str | None,
    semantics: str | None,
) -> None:
    expected = jax_verdict(operation, shape, dtype, target_dtype, semantics)
    assert engine_verdict(operation, shape, dtype, target_dtype, semantics) == expected


@pytest.mark.parametrize(PARAMETERS, CASES)
def test_every_fix_lowers_in_jax(
    operation: str,
    shape: tuple[int, ...],
    dtype: str,
    target_dtype: str | None,
    semantics: str | None,
) -> None:
    fixes = suggest_fixes(**engine_case(operation, shape, dtype, target_dtype, semantics))
    failing = {
        f"{fix.kind}: {fix.shape} {fix.dtype}": verdict
        for fix in fixes
        if not (
            verdict := jax_verdict(
                operation, tuple(fix.shape), fix.dtype, fix.target_dtype, semantics
            )
        ).ok
    }
    assert not failing


@pytest.mark.parametrize(
    ("operation", "shape", "dtype", "target_dtype"),
    [pytest.param(*case, id=_case_id(case)) for case in WARPGROUP_GRID],
)
def test_every_fix_for_both_semantics_lowers_under_each(
    operation: str, shape: tuple[int, ...], dtype: str, target_dtype: str | None
) -> None:
    """A paste that may come from releases of either default (0.10.2's Lane, 0.11.0's
    Warpgroup) is fixed for both: JAX lowers each such fix under Lane and under Warpgroup."""
    lane = resolve(**engine_case(operation, shape, dtype, target_dtype, "Lane"))
    both = replace(lane, also=((lane.version, "Warpgroup"),))
    failing = {
        f"{fix.kind}: {fix.shape} {fix.dtype} under {semantics}": verdict
        for fix in fixes_for(both)
        for semantics in ("Lane", "Warpgroup")
        if not (
            verdict := jax_verdict(
                operation, tuple(fix.shape), fix.dtype, fix.target_dtype, semantics
            )
        ).ok
    }
    assert not failing
