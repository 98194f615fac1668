"""check(): the verdict JAX would give for one construct, shape and dtype."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property

from app.engines.verdicts import Verdict, Violation
from app.jaxref.dtypes import DType, parse_dtype
from app.jaxref.inputs import InputValueError
from app.jaxref.shapes import Dims, ShapeSpec, as_shape_spec

from .operations import (
    OPERATIONS,
    SEMANTICS,
    Check,
    Operation,
    case_quantities,
    default_semantics,
    evaluate,
    one_shape,
)
from .rule_types import Quantities
from .versions import Version, parse_version, render_version

ShapeLike = str | Sequence[int] | ShapeSpec
DTypeLike = str | DType


@dataclass(frozen=True)
class CheckResult(Verdict):
    operation: str
    shape: Dims
    dtype: DType
    target_dtype: DType | None
    jax_version: str
    lowering_semantics: str
    violations: tuple[Violation, ...]  # every failing check, in the order JAX runs them


@dataclass(frozen=True)
class Case:
    """A fully parsed request."""

    operation: Operation
    dims: Dims
    dtype: DType
    target: DType | None
    version: Version
    semantics: str
    # Further releases, each with its lowering semantics, whose checks a fix must pass too:
    # a paste that may come from several releases is fixed for each of them.
    also: tuple[tuple[Version, str], ...] = ()

    @property
    def releases(self) -> tuple[tuple[Version, str], ...]:
        """Every release the case is checked in, with its semantics: its own first."""
        return ((self.version, self.semantics), *self.also)

    @cached_property
    def checks(self) -> frozenset[Check]:
        """What a shape must pass in every release of the case."""
        return frozenset().union(*(self.operation.checks(*release) for release in self.releases))

    @cached_property
    def in_distinct_releases(self) -> tuple[Case, ...]:
        """The case in each of its releases that checks it differently from those before."""
        distinct: dict[frozenset[Check], Case] = {}
        for version, semantics in self.releases:
            checks = self.operation.checks(version, semantics)
            distinct.setdefault(
                checks, replace(self, version=version, semantics=semantics, also=())
            )
        return tuple(distinct.values())


def get_operation(name: str) -> Operation:
    if name not in OPERATIONS:
        raise InputValueError(
            "operation", f"unknown operation {name!r}; valid: {', '.join(OPERATIONS)}"
        )
    return OPERATIONS[name]


def resolve(
    operation: str,
    shape: ShapeLike,
    dtype: DTypeLike | None,
    target_dtype: DTypeLike | None = None,
    jax_version: str | None = None,
    lowering_semantics: str | None = None,
    also_in: Sequence[str] = (),
) -> Case:
    """Parse and cross-check every argument; raises InputValueError naming the field.

    ``lowering_semantics`` ("Lane" or "Warpgroup") defaults to the release's own default, or
    to the one an operation named for its semantics is modelled under; it applies to each
    release of ``also_in`` too, the releases whose checks a fix must pass as well."""
    op = get_operation(operation)
    spec = as_shape_spec(shape)
    if dtype is None and spec.dtype is None:
        raise InputValueError("dtype", "a dtype is required (in the shape text or apart)")
    resolved = parse_dtype(dtype) if dtype is not None else spec.dtype
    assert resolved is not None
    if spec.dtype is not None and spec.dtype != resolved:
        raise InputValueError(
            "dtype", f"the shape says {spec.dtype.name} but the dtype is {resolved.name}"
        )
    target = parse_dtype(target_dtype, "target_dtype") if target_dtype is not None else None
    if op.needs_target and target is None:
        raise InputValueError("target_dtype", f"{op.name} needs a target_dtype")
    if not op.needs_target and target is not None:
        raise InputValueError("target_dtype", f"{op.name} takes no target_dtype")
    version, semantics = _release(op, jax_version, lowering_semantics, "jax_version")
    also = tuple(_release(op, text, lowering_semantics, "also_in") for text in also_in)
    return Case(op, spec.dims, resolved, target, version, semantics, also)


def _release(
    op: Operation, jax_version: str | None, lowering_semantics: str | None, field: str
) -> tuple[Version, str]:
    """The release and the lowering semantics ``op`` is checked under there."""
    version = parse_version(jax_version, field)
    if version < op.since:
        raise InputValueError(
            field,
            f"{op.name} exists from JAX {render_version(op.since)} on, "
            f"not in {render_version(version)}",
        )
    if op.until is not None and version > op.until:
        raise InputValueError(
            field,
            f"{op.name} exists up to JAX {render_version(op.until)}, "
            f"not in {render_version(version)}",
        )
    semantics = _semantics(op, version, lowering_semantics)
    for unmodelled in op.unmodelled:
        if unmodelled.covers(version, semantics):
            raise InputValueError(
                "lowering_semantics" if lowering_semantics else field,
                f"{op.name} is not modelled for JAX {render_version(version)}: {unmodelled.reason}",
            )
    return version, semantics


def _semantics(op: Operation, version: Version, asked: str | None) -> str:
    if asked is None:
        default = default_semantics(version)
        return default if default in op.semantics else op.semantics[0]
    if asked not in SEMANTICS:
        raise InputValueError(
            "lowering_semantics",
            f"unknown lowering semantics {asked!r}; valid: {', '.join(SEMANTICS)}",
        )
    if asked not in op.semantics:
        raise InputValueError(
            "lowering_semantics", f"{op.name} is modelled under {op.semantics[0]} semantics only"
        )
    return asked


def violations_of(case: Case) -> tuple[Violation, ...]:
    """Every check the case fails, rendered as that JAX version renders it."""
    found = []
    # The quantities depend only on which dtype a step measures: at most two to work out.
    by_subject: dict[bool, Quantities] = {}
    batch = one_shape(case.dims)
    for step, failing in evaluate(
        case.operation, batch, case.dtype, case.target, case.version, case.semantics
    ):
        if not failing[0]:
            continue
        quantities = by_subject.get(step.on_target)
        if quantities is None:
            quantities = by_subject[step.on_target] = case_quantities(
                case.operation, case.dims, case.dtype, case.target, step.on_target
            )
        rule, wording = step.rule, step.rule.wording(case.version)
        found.append(
            Violation(
                rule.id,
                wording.error_class,
                rule.render(quantities, case.version),
                rule.explanation(quantities, case.version),
            )
        )
    return tuple(found)


def check_case(case: Case) -> CheckResult:
    return CheckResult(
        case.operation.name,
        case.dims,
        case.dtype,
        case.target,
        render_version(case.version),
        case.semantics,
        violations_of(case),
    )


def check(
    operation: str,
    shape: ShapeLike,
    dtype: DTypeLike | None = None,
    target_dtype: DTypeLike | None = None,
    jax_version: str | None = None,
    lowering_semantics: str | None = None,
) -> CheckResult:
    """What JAX (default 0.10.2) says about ``operation`` on a block of ``shape``/``dtype``.

    ``shape`` may be text (``"[7]"``, ``"int4(7,)"``, ``"memref<7xi4>"``) or ints;
    ``dtype`` may be any spelling ``parse_dtype`` reads, or come with the shape.
    """
    return check_case(
        resolve(operation, shape, dtype, target_dtype, jax_version, lowering_semantics)
    )
