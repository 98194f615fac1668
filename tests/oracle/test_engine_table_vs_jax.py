"""The hand-written table of tests/engines/mosaic_gpu/test_engine.py, lowered by JAX itself.

That table says each of its verdicts is what JAX 0.10.2 gives; many of its cases are
neither in the oracle grid nor among the catalog examples, so here every case is
lowered and JAX's verdict (first error class and exact message, or a clean lowering)
must be the table's. Every operation of the table has a kernel in jax_kernels
(smem_alias and smem_bitcast through JAX internals), so no case is skipped.
"""

from __future__ import annotations

import pytest

from tests.engines.mosaic_gpu.test_engine import JAX_0_10_2

from .jax_kernels import OPERATIONS, Verdict, jax_verdict

pytestmark = pytest.mark.oracle


def _case_id(operation: str, shape: tuple[int, ...], dtype: str, target: str | None) -> str:
    name = f"{operation}-{'x'.join(map(str, shape))}-{dtype}"
    return name if target is None else f"{name}-to-{target}"


CASES = [pytest.param(*case, id=_case_id(*case[:4])) for case in JAX_0_10_2]


def test_every_table_operation_has_a_kernel() -> None:
    assert {case[0] for case in JAX_0_10_2} <= set(OPERATIONS)


@pytest.mark.parametrize(("operation", "shape", "dtype", "target", "error", "message"), CASES)
def test_table_verdict_is_jax_verdict(
    operation: str,
    shape: tuple[int, ...],
    dtype: str,
    target: str | None,
    error: str | None,
    message: str | None,
) -> None:
    assert jax_verdict(operation, shape, dtype, target) == Verdict(error, message)
