"""Compute: what JAX will raise for these values, and fixes that pass every check.

Shared by the HTTP API, the web pages and the chat bots; errors carry their HTTP status.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, MutableMapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar, cast

from cachetools import LRUCache, cached
from pydantic import (
    ValidationError,
)

from app.answers.catalog import Catalog, operations_for_rule
from app.answers.computed import smem_budget_out
from app.engines.mosaic_gpu import (
    RULES,
    SEMANTICS,
    CheckResult,
    Fix,
    InputValueError,
    Violation,
    check,
    fixes_for,
    parse_dtype,
    parse_version,
    read_version,
    resolve,
    sweep,
)
from app.engines.mosaic_gpu.smem import smem_budget
from app.errors import (
    InvalidInput,
    NotFound,
    ProblemError,
    field_errors,
    fields_detail,
    invalid_field,
)
from app.schemas.answers import SmemBudgetOut
from app.schemas.compute import (
    LOWERING_SEMANTICS,
    BatchResponse,
    CaseFailure,
    CaseProblem,
    CodeOut,
    ComputeRequest,
    ComputeResponse,
    FixOut,
    LoweringSemantics,
    ReleaseCheckOut,
    SmemBudgetRequest,
    SweepRequest,
    SweepResponse,
    ViolationOut,
)

# The API spells the engine's lowering semantics as the engine names them.
assert LOWERING_SEMANTICS == SEMANTICS
T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)
# Engine answers kept per process, by the full case: the same error is computed over and
# over (a popular case, or every match of it), and answers never change.
ENGINE_CACHE_SIZE = 512

# Engine argument names → the request's camelCase field names.
_FIELDS = {
    "target_dtype": "targetDtype",
    "jax_version": "jaxVersion",
    "lowering_semantics": "loweringSemantics",
    "also_in": "alsoJaxVersions",
    "other_dims": "otherDims",
    "max_concurrent_steps": "maxConcurrentSteps",
    "sequential_steps": "sequentialSteps",
}


@dataclass(frozen=True)
class ComputeAnswer:
    response: ComputeResponse  # shared by every request that asks the same: not to be changed
    json: bytes


class EngineNeeded(Exception):
    """A case the engine has not answered yet, asked of a service that may not run it."""


class ComputeService:
    """Maps a request onto the engine, and the engine's answer onto records."""

    def __init__(self, catalog: Catalog, *, run_engine: bool = True) -> None:
        """``catalog``: the process's current one (see ``CatalogCache``). With
        ``run_engine=False`` only cases the engine has answered before are answered (cheap
        enough for the event loop); any other raises ``EngineNeeded``."""
        self.catalog = catalog
        self.run_engine = run_engine

    def operation_of(self, request: ComputeRequest, field_prefix: str = "") -> str:
        if request.operation:
            return request.operation
        if request.errorId:
            record = self.catalog.records.get(request.errorId)
            if record is None:
                raise NotFound(f"No error record with id {request.errorId!r}.")
            if not record.operations:
                raise invalid_field(
                    f"{field_prefix}errorId",
                    f"record {record.id!r} names no operation to compute",
                )
            return record.operations[0]
        assert request.rule is not None
        if request.rule not in RULES:
            raise invalid_field(f"{field_prefix}rule", f"unknown rule {request.rule!r}")
        operations = operations_for_rule(request.rule)
        if not operations:
            raise invalid_field(
                f"{field_prefix}rule", f"rule {request.rule} belongs to no modelled operation"
            )
        return operations[0]

    def compute(self, request: ComputeRequest, field_prefix: str = "") -> ComputeResponse:
        return self.answer(request, field_prefix).response

    def batch(self, cases: list[Any]) -> BatchResponse:
        """Every case answered on its own: a bad case gets its problem, the others their
        answers."""
        results: list[ComputeResponse | CaseFailure] = []
        for index, case in enumerate(cases):
            prefix = f"cases.{index}."
            try:
                try:
                    request = ComputeRequest.model_validate(case)
                except ValidationError as exc:
                    raise _invalid_case(prefix, exc) from None
                results.append(self.compute(request, field_prefix=prefix))
            except ProblemError as exc:
                problem = CaseProblem(
                    status=exc.status, title=exc.title, detail=exc.detail, errors=exc.errors
                )
                results.append(CaseFailure(problem=problem))
        return BatchResponse(results=results)

    def answer(self, request: ComputeRequest, field_prefix: str = "") -> ComputeAnswer:
        """The answer, and its JSON, remembered with the catalog: the same case asked again
        costs neither the engine nor building and serializing the answer."""
        case = _case(request, self.operation_of(request, field_prefix))
        key = tuple(case.values())
        known: ComputeAnswer | None = self.catalog.answers.get(key)
        if known is not None:
            return known
        results, fixes = _engine(
            lambda **arguments: self._recall_or_run(_answer, **arguments), field_prefix, **case
        )
        response = self._response(results, fixes)
        answer = ComputeAnswer(response, response.model_dump_json().encode())
        self.catalog.answers.put(key, answer)
        return answer

    def verdict(
        self,
        operation: str,
        shape: tuple[int, ...],
        dtype: str,
        jax_version: str | None,
        lowering_semantics: LoweringSemantics | None = None,
    ) -> CheckResult:
        """The engine's verdict alone. Raises ``InputValueError`` for values it refuses."""
        return self._recall_or_run(
            cached_check,
            operation=operation,
            shape=shape,
            dtype=dtype,
            target_dtype=None,
            jax_version=jax_version,
            lowering_semantics=lowering_semantics,
        )

    def _recall_or_run(self, call: _Remembering[T], **case: Any) -> T:
        if self.run_engine:
            return call(**case)
        assert call.cache is not None and call.cache_lock is not None
        with call.cache_lock:
            known: T | None = call.cache.get(call.cache_key(**case))
        if known is None:
            raise EngineNeeded(f"the engine has not answered {case} yet")
        return known

    def _response(
        self, results: tuple[CheckResult, ...], fixes: tuple[Fix, ...]
    ) -> ComputeResponse:
        result = results[0]
        violations = [self._violation(v) for v in result.violations]
        return ComputeResponse(
            ok=result.ok,
            operation=result.operation,
            shape=list(result.shape),
            dtype=result.dtype.name,
            targetDtype=result.target_dtype.name if result.target_dtype else None,
            jaxVersion=result.jax_version,
            loweringSemantics=cast(LoweringSemantics, result.lowering_semantics),
            firstViolation=violations[0] if violations else None,
            violations=violations,
            fixes=[fix_out(fix) for fix in fixes],
            checkedIn=[
                ReleaseCheckOut(
                    jaxVersion=each.jax_version,
                    loweringSemantics=cast(LoweringSemantics, each.lowering_semantics),
                    ok=each.ok,
                    rule=each.first_violation.rule_id if each.first_violation else None,
                )
                for each in results
            ],
        )

    def _violation(self, violation: Violation) -> ViolationOut:
        return ViolationOut(
            rule=violation.rule_id,
            errorId=self.catalog.rule_records.get(violation.rule_id),
            errorClass=violation.error_class,
            message=violation.message,
            explanation=violation.explanation,
        )


def checked_jax_version(
    text: str | None, field: str = "jaxVersion", *, modelled: bool = True
) -> None:
    """The one rule for a JAX version, wherever a user gives one (API, pages, chat, CLI): a
    release the engine models, or ``main``; with ``modelled=False``, as a paste is read, any
    version (0.4.34's paste is dated and linked, though the engine models 0.7.0 on); anything
    else is a 422 naming ``field``."""
    if text is None:
        return
    read = parse_version if modelled else read_version
    try:
        read(text)
    except InputValueError as exc:
        raise invalid_field(field, str(exc)) from None


def _case(request: ComputeRequest, operation: str) -> dict[str, Any]:
    """The engine's arguments for ``request``, hashable: the key of its remembered answer."""
    return {
        "operation": operation,
        "shape": request.shape if isinstance(request.shape, str) else tuple(request.shape),
        "dtype": request.dtype,
        "target_dtype": request.targetDtype,
        "jax_version": request.jaxVersion,
        "lowering_semantics": request.loweringSemantics,
        "also_in": tuple(request.alsoJaxVersions),
        "limit": request.maxFixes,
    }


class _Remembering(Protocol[T_co]):
    """A ``cachetools.cached`` function, whose remembered answers can be read."""

    cache: MutableMapping[Any, Any] | None
    cache_key: Callable[..., Any]
    cache_lock: AbstractContextManager[Any] | None

    def __call__(self, /, *args: Any, **kwargs: Any) -> T_co: ...


@cached(LRUCache(ENGINE_CACHE_SIZE), lock=threading.Lock())
def _answer(
    operation: str,
    shape: str | tuple[int, ...],
    dtype: str | None,
    target_dtype: str | None,
    jax_version: str | None,
    lowering_semantics: str | None,
    also_in: tuple[str, ...],
    limit: int,
) -> tuple[tuple[CheckResult, ...], tuple[Fix, ...]]:
    """The engine's verdict in each release asked (remembered apart: a match has asked most
    of them already), and up to ``limit`` fixes that pass in all of them (none when the
    values pass everywhere already)."""
    case = resolve(operation, shape, dtype, target_dtype, jax_version, lowering_semantics, also_in)
    results = tuple(
        cached_check(
            operation=operation,
            shape=shape,
            dtype=dtype,
            target_dtype=target_dtype,
            jax_version=version,
            lowering_semantics=lowering_semantics,
        )
        for version in (jax_version, *also_in)
    )
    failing = not all(result.ok for result in results)
    return results, tuple(fixes_for(case, limit)) if failing and limit else ()


@cached(LRUCache(ENGINE_CACHE_SIZE), lock=threading.Lock())
def cached_check(
    *,
    operation: str,
    shape: str | tuple[int, ...],
    dtype: str | None,
    target_dtype: str | None,
    jax_version: str | None,
    lowering_semantics: str | None,
) -> CheckResult:
    """``check``, remembered: the same case always gets the same verdict."""
    return check(operation, shape, dtype, target_dtype, jax_version, lowering_semantics)


def fix_out(fix: Fix) -> FixOut:
    """An engine's fix as the API answers it (every backend's)."""
    return FixOut(
        kind=fix.kind,
        axis=fix.axis,
        shape=list(fix.shape),
        dtype=fix.dtype,
        targetDtype=fix.target_dtype,
        addedBytes=fix.added_bytes,
        verified=fix.verified,
        description=fix.description,
        note=fix.note,
        code=CodeOut(before=fix.code.before, after=fix.code.after, validation=fix.validation),
    )


def _invalid_case(prefix: str, exc: ValidationError) -> InvalidInput:
    """A case's validation errors as a 422 naming each field under ``cases.N.``."""
    errors = field_errors(exc.errors(), prefix)
    return InvalidInput(fields_detail(errors), errors=errors)


def _engine[T](call: Callable[..., T], field_prefix: str, **kwargs: Any) -> T:
    """Run an engine call; its input errors become 422s naming the request's field."""
    try:
        return call(**kwargs)
    except InputValueError as exc:
        field = field_prefix + _FIELDS.get(exc.field, exc.field)
        raise invalid_field(field, str(exc)) from None


def run_smem_budget(request: SmemBudgetRequest) -> SmemBudgetOut:
    budget = _engine(
        smem_budget,
        "",
        buffers=[(buffer.shape, buffer.dtype, buffer.role) for buffer in request.buffers],
        max_concurrent_steps=request.maxConcurrentSteps,
        sequential_steps=request.sequentialSteps,
        barriers=request.barriers,
        gpu=request.gpu,
        jax_version=request.jaxVersion,
    )
    return smem_budget_out(budget)


def run_sweep(request: SweepRequest) -> SweepResponse:
    sizes = _engine(
        sweep,
        "",
        operation=request.operation,
        dtype=request.dtype,
        start=request.start,
        stop=request.stop,
        axis=request.axis,
        other_dims=request.otherDims,
        target_dtype=request.targetDtype,
        jax_version=request.jaxVersion,
        lowering_semantics=request.loweringSemantics,
    )
    return SweepResponse(
        operation=request.operation,
        dtype=parse_dtype(request.dtype).name,
        axis=request.axis,
        validSizes=[int(size) for size in sizes],
        count=len(sizes),
    )
