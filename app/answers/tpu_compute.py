"""Compute for TPU: ``{"backend": "tpu", ...}`` requests answered by the Pallas TPU engine.

Errors carry their HTTP status: a value the engine refuses is a 422 naming the request's
field (``arrayShape``, ``blocks.0.dtype``, ``chip``, ``jaxVersion``).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from app.answers.catalog import Catalog
from app.answers.compute import fix_out
from app.engines.tpu import (
    InputValueError,
    Violation,
    VmemBlock,
    block_fixes,
    check_blocks,
    vmem_budget,
)
from app.engines.verdicts import Fix
from app.errors import invalid_field
from app.schemas.compute import ViolationOut
from app.schemas.tpu_compute import TpuComputeRequest, TpuComputeResponse, VmemOut

_SNAKE = re.compile(r"_([a-z])")


def request_field(engine_field: str) -> str:
    """The engine's argument name as the request spells it: ``blocks.0.array_shape`` →
    ``blocks.0.arrayShape``."""
    return _SNAKE.sub(lambda match: match.group(1).upper(), engine_field)


def _engine[T](call: Callable[[], T]) -> T:
    try:
        return call()
    except InputValueError as exc:
        raise invalid_field(request_field(exc.field), str(exc)) from None


def answer_tpu(request: TpuComputeRequest, catalog: Catalog) -> TpuComputeResponse:
    if request.operation == "vmem_budget":
        return _budget_answer(request, catalog)
    assert request.arrayShape is not None and request.blockShape is not None
    assert request.dtype is not None
    array, block, dtype = request.arrayShape, request.blockShape, request.dtype
    result = _engine(lambda: check_blocks(array, block, dtype, request.chip, request.jaxVersion))
    fixes: list[Fix] = []
    if not result.ok and request.maxFixes:
        fixes = _engine(
            lambda: block_fixes(
                array, block, dtype, request.chip, request.jaxVersion, request.maxFixes
            )
        )
    violations = [_violation(v, catalog) for v in result.violations]
    return TpuComputeResponse(
        ok=result.ok,
        operation="pallas_call",
        chip=result.chip,
        jaxVersion=result.jax_version,
        arrayShape=list(result.array_shape),
        blockShape=list(result.block_shape),
        dtype=result.dtype.name,
        firstViolation=violations[0] if violations else None,
        violations=violations,
        fixes=[fix_out(fix) for fix in fixes],
        vmem=None,
    )


def _budget_answer(request: TpuComputeRequest, catalog: Catalog) -> TpuComputeResponse:
    blocks = [
        VmemBlock(block.blockShape, block.dtype, block.role, block.bufferCount, block.arrayShape)
        for block in request.blocks
    ]
    budget = _engine(
        lambda: vmem_budget(blocks, request.chip, request.vmemLimitBytes, request.jaxVersion)
    )
    violations = [_violation(v, catalog) for v in budget.violations]
    return TpuComputeResponse(
        ok=budget.fits,
        operation="vmem_budget",
        chip=budget.chip,
        jaxVersion=budget.jax_version,
        arrayShape=None,
        blockShape=None,
        dtype=None,
        firstViolation=violations[0] if violations else None,
        violations=violations,
        fixes=[fix_out(fix) for fix in budget.fixes[: request.maxFixes]],
        vmem=VmemOut(
            totalBytes=budget.total_bytes,
            limitBytes=budget.limit_bytes,
            limitIsDefault=budget.limit_is_default,
            physicalBytes=budget.physical_bytes,
            overBytes=budget.over_bytes,
            neededLimitBytes=budget.needed_limit_bytes,
        ),
    )


def _violation(violation: Violation, catalog: Catalog) -> ViolationOut:
    return ViolationOut(
        rule=violation.rule_id,
        errorId=catalog.rule_records.get(violation.rule_id),
        errorClass=violation.error_class,
        message=violation.message,
        explanation=violation.explanation,
    )
