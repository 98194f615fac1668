"""The types of the Mosaic GPU rules (``Rule``, ``Wording``) and the hardware constants
they are stated in.

A rule has a condition and an explanation, both functions of named quantities
(``elements``, ``bits``, ``total_bits``...). Conditions use only arithmetic and
numpy reductions, so the same function answers for one case (Python ints) and
for a whole batch of candidate shapes (numpy arrays). The rules themselves are data, in
``catalog_rules`` and ``observed_rules``, kept apart from these types so that they read as
data; ``rules`` looks them up.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .versions import OLDEST_MODELLED, Version, render_version

WARPGROUP_SIZE = 128
TMA_MAX_BOX = 256
TMA_ROW_BITS = 128
# sm90's opt-in SMEM per block: JAX's default when no GPU is there to ask.
MAX_SMEM_BYTES = 227 * 1024
CONSTANTS = {"WARPGROUP_SIZE": WARPGROUP_SIZE, "MAX_SMEM_BYTES": MAX_SMEM_BYTES}

Quantities = Mapping[str, Any]
Condition = Callable[[Quantities], Any]
Explain = Callable[[Quantities], str]

# Element types the TMA descriptor accepts, besides integers (launch_context._tma_dma_type).
TMA_FLOATS = frozenset({"f16", "f32", "bf16", "f8E5M2", "f8E4M3FN", "f8E8M0FNU", "f4E2M1FN"})
TMA_INTEGER_BITS = frozenset({2, 4, 8, 16, 32, 64})
# From 0.11.0 a sub-byte block loads untiled when its strided vector is whole bytes (Lane).
SUB_BYTE_STRIDED_LAYOUTS: Version = (0, 11, 0)


@dataclass(frozen=True)
class Wording:
    """How releases from ``since`` on (until the next wording) report a rule."""

    since: Version
    error_class: str
    template: str
    condition: Condition | None = None  # when this range checks something else
    explain: Explain | None = None


@dataclass(frozen=True)
class Rule:
    id: str
    catalog_rank: int | None  # None: observed by lowering with JAX, not in the catalog
    summary: str
    condition: Condition
    explain: Explain
    wordings: tuple[Wording, ...]  # oldest first

    @property
    def since(self) -> Version:
        return self.wordings[0].since

    @property
    def error_class(self) -> str:
        """The exception class in the newest wording."""
        return self.wordings[-1].error_class

    def exists_in(self, version: Version) -> bool:
        return self.since <= version

    def wording(self, version: Version) -> Wording:
        """The wording in force at ``version``."""
        if not self.exists_in(version):
            raise LookupError(f"{self.id} is not checked by JAX {render_version(version)}")
        return [wording for wording in self.wordings if wording.since <= version][-1]

    def condition_in(self, version: Version) -> Condition:
        """What the rule checks at ``version``: a wording's own condition, or the rule's."""
        return self.wording(version).condition or self.condition

    def fails(self, quantities: Quantities, version: Version) -> Any:
        """Whether the rule fails: a bool, or a bool array for a batch."""
        return self.condition_in(version)(quantities)

    def render(self, quantities: Quantities, version: Version) -> str:
        """The message exactly as that JAX version prints it."""
        return self.wording(version).template.format(**CONSTANTS, **quantities)

    def explanation(self, quantities: Quantities, version: Version) -> str:
        return (self.wording(version).explain or self.explain)(quantities)


def make_rule(
    id: str,
    rank: int | None,
    summary: str,
    error_class: str,
    template: str,
    condition: Condition,
    explain: Explain,
    *,
    since: Version = OLDEST_MODELLED,
    older: tuple[Wording, ...] = (),
) -> Rule:
    """A rule whose newest wording is ``template``, in force from ``since``."""
    return Rule(
        id,
        rank,
        summary,
        condition,
        explain,
        (*older, Wording(since, error_class, template)),
    )
