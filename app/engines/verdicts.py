"""What every engine answers with: the failing checks, and fixes with their code.

Shared by the backends (``mosaic_gpu``, ``tpu``), so the API and the pages render one shape.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.jaxref.shapes import Dims


@dataclass(frozen=True)
class Violation:
    """One failing check: what JAX raises for it, and the arithmetic behind it."""

    rule_id: str
    error_class: str
    message: str
    explanation: str


class Verdict:
    """A verdict's checks, in the order JAX runs them: the kernel lowers when none fails, and
    the first that fails is the error JAX raises (later ones show once it is fixed)."""

    violations: tuple[Violation, ...]

    @property
    def ok(self) -> bool:
        return not self.violations

    @property
    def first_violation(self) -> Violation | None:
        return self.violations[0] if self.violations else None


@dataclass(frozen=True)
class CodeChange:
    before: str
    after: str


@dataclass(frozen=True)
class Fix:
    kind: str  # GPU: "pad", "reshape", "promote" or "view"; TPU: "block", "vmem", ...
    axis: int | None  # the padded axis; the last one is -1; None: the whole block
    shape: Dims
    dtype: str
    target_dtype: str | None
    added_bytes: float  # bits / 8: half a byte per int4 element
    verified: bool
    code: CodeChange
    validation: str
    description: str
    note: str  # what else the fix asks of the data ("" when only the shape changes)
