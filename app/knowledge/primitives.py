"""Whether a Pallas backend lowers a primitive: from which release, for which lowering
semantics, and the usual rewrite where it does not.

The releases come from the lowering rules mined from every release's source
(``data/lowering-rules.json``), so "upgrade to 0.9.0" is read, not guessed. The rewrites are
curated (``data/primitive-rewrites.json``); ``tests/oracle/test_answers_vs_jax.py`` lowers
each before and after with JAX 0.10.2.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache

from app.jaxref.releases import newest_release, span
from app.knowledge.lowering import MINED_RULES, TPU_CORE_TYPES

REWRITES = MINED_RULES.parent / "primitive-rewrites.json"


@dataclass(frozen=True)
class Lowered:
    """The releases in which ``backend`` has a rule for the primitive under ``semantics``."""

    semantics: str
    releases: tuple[str, ...]

    @property
    def span(self) -> str:
        return span(list(self.releases))


@dataclass(frozen=True)
class Rewrite:
    primitive: str
    backend: str
    summary: str
    before: str
    after: str
    inputs: tuple[tuple[int, ...], ...]
    output: tuple[int, ...]


@dataclass(frozen=True)
class PrimitiveLowering:
    primitive: str
    backend: str
    lowered: tuple[Lowered, ...]  # one per semantics with a rule in some release
    rewrite: Rewrite | None
    newest: str  # the newest release mined

    def lowered_under(self, semantics: str | None) -> Lowered | None:
        """The rule for the semantics the error named (any, when it named none)."""
        return next((entry for entry in self.lowered if semantics in (None, entry.semantics)), None)


def semantics_named(backend: str, captured: str | None) -> str | None:
    """``LoweringSemantics.Lane`` → Lane; TPU's ``tc`` or ``KernelType.TC`` → TensorCore;
    Triton has one."""
    if backend == "triton":
        return "default"
    if captured is None:
        return None
    if backend == "tpu":
        return TPU_CORE_TYPES.get(captured.strip().rsplit(".", 1)[-1].lower(), captured)
    return captured.strip().rsplit(".", 1)[-1]


def primitive_lowering(primitive: str, backend: str) -> PrimitiveLowering:
    lowered = _rules().get((backend, primitive), ())
    return PrimitiveLowering(
        primitive, backend, lowered, _rewrites().get((primitive, backend)), newest_release()
    )


def rewrites() -> tuple[Rewrite, ...]:
    return tuple(_rewrites().values())


@cache
def _rules() -> dict[tuple[str, str], tuple[Lowered, ...]]:
    """``(backend, primitive)`` → its rules, read once: a matched paste looks one up."""
    by_primitive: dict[tuple[str, str], list[Lowered]] = {}
    for rule in json.loads(MINED_RULES.read_text(encoding="utf-8"))["rules"]:
        lowered = Lowered(rule["semantics"], tuple(rule["releases"]))
        by_primitive.setdefault((rule["backend"], rule["primitive"]), []).append(lowered)
    return {key: tuple(rules) for key, rules in by_primitive.items()}


@cache
def _rewrites() -> dict[tuple[str, str], Rewrite]:
    entries = json.loads(REWRITES.read_text(encoding="utf-8"))["rewrites"]
    return {
        (entry["primitive"], entry["backend"]): Rewrite(
            entry["primitive"],
            entry["backend"],
            entry["summary"],
            entry["before"],
            entry["after"],
            tuple(tuple(shape) for shape in entry["inputs"]),
            tuple(entry["output"]),
        )
        for entry in entries
    }
