"""What relates one record to another: the features both carry, each weighed by its rarity.

A record's features are its error class, source file and folder, the function its check is
in, its rule, background tag and tags, the words of its message (its placeholders left out),
and for a rule a construct checks, that construct and the checks right before and after it.
Sharing a feature weighs ln(N / n), N records in the catalog, n of them carrying it (its
inverse document frequency): ``jax`` and ``pallas``, which nearly every record carries,
weigh nothing, and a function three records raise in weighs a great deal. A feature more
records carry than ``telling_at_most`` says relates none of them, however many share it:
so the work of ranking one record's relatives is bounded, whatever the catalog's size.
"""

from __future__ import annotations

import heapq
import math
import re
from collections import defaultdict
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from functools import cache, lru_cache
from typing import Protocol

from app.engines.mosaic_gpu import OPERATIONS
from app.jaxref.templates import literal_text

# A feature carried by more records than this relates none: at 11,000 records, the file of
# 614 TPU layout checks, "assert", "got", ValueError; a ranking reads at most this many
# records a feature, whatever the catalog's size.
MOST_CARRIERS = 500
# Nor one that more than this share of the catalog carries (in a catalog of a few hundred).
MOST_SHARE = 0.25
# The most related records a ranking keeps (the API pages through them): a few KB each.
RELATIVES_KEPT = 1000
# Weights are kept in thousandths, so that a score, which a cursor carries, is an integer.
SCALE = 1000
# A record the record lists (its relatedErrors) comes before every one it only shares
# features with: no record carries enough features to reach this.
LISTED = 1_000_000_000
_WORD = re.compile(r"[a-z][a-z0-9_]{2,}")


class RecordFacts(Protocol):
    """What kinship reads of a record: the catalog's facts about it."""

    @property
    def id(self) -> str: ...
    @property
    def message(self) -> str: ...
    @property
    def error_class(self) -> str | None: ...
    @property
    def file(self) -> str | None: ...
    @property
    def function(self) -> str | None: ...
    @property
    def rule(self) -> str | None: ...
    @property
    def background(self) -> str | None: ...
    @property
    def tags(self) -> tuple[str, ...]: ...
    @property
    def operations(self) -> tuple[str, ...]: ...


def record_features(info: RecordFacts) -> list[str]:
    """Every feature of ``info``, each once, named ``kind:value`` (a catalog's build makes
    them for every record: plain concatenation, each tag set's features made once)."""
    features = list(_tag_features(info.tags))
    if info.error_class:
        features.append("class:" + info.error_class)
    if info.file:
        features.append("file:" + info.file)
        if folder := info.file.rpartition("/")[0]:
            features.append("module:" + folder)
    if info.function:
        features.append("function:" + info.function)
    if info.background:
        features.append("kind:" + info.background)
    if info.rule:
        features.append("rule:" + info.rule)
        features += _checked_with(info.rule, dict.fromkeys(info.operations))
    features += ["word:" + word for word in message_words(info.message)]
    return features


@lru_cache(maxsize=4096)
def _tag_features(tags: tuple[str, ...]) -> tuple[str, ...]:
    """``tag:<t>`` for each of ``tags``: records share a few hundred sets of tags."""
    return tuple("tag:" + tag for tag in dict.fromkeys(tags))


def message_words(message: str) -> set[str]:
    """The message's own words: its placeholders' names say nothing of what it means."""
    return set(_WORD.findall(literal_text(message).lower()))


def _checked_with(rule: str, operations: Iterable[str]) -> Iterator[str]:
    """``construct:<operation>`` for each construct that checks ``rule``, and
    ``step:<operation>:<k>`` for the pairs of its checks ``k``, ``k + 1`` that ``rule`` is
    one of: the records of two checks run one after the other share one."""
    for operation in operations:
        order = check_order(operation)
        if rule not in order:
            continue
        yield f"construct:{operation}"
        at = order.index(rule)
        yield from (f"step:{operation}:{k}" for k in (at - 1, at) if 0 <= k < len(order) - 1)


@cache
def check_order(operation: str) -> tuple[str, ...]:
    """The rules a construct checks, in the order JAX checks them (none for one unknown)."""
    found = OPERATIONS.get(operation)
    return tuple(dict.fromkeys(step.rule.id for step in found.steps)) if found else ()


class Kinship:
    """Which records carry each feature, in one catalog of ``size`` records: the lists a
    build made, and beside them the records written since (an overlay, as the pattern
    index has one), so that a write copies none of the lists of thousands (``jax``: 40 ms
    a write at 100,000 records)."""

    def __init__(
        self,
        built: dict[str, list[str]],
        size: int,
        replaced: frozenset[str] = frozenset(),
        dropped: dict[str, int] | None = None,
        added: dict[str, list[str]] | None = None,
    ) -> None:
        """``replaced``: the records written since the build, whose ``built`` lists no
        longer count; ``dropped``: how many of each feature's built carriers they are;
        ``added``: the written records carrying each feature."""
        self._built = built
        self._replaced = replaced
        self._dropped = dropped or {}
        self._added = added or {}
        self.size = size
        # The most records a feature may be carried by and still relate them (two at
        # least: a pair always can).
        self.telling_at_most = max(2, min(MOST_CARRIERS, int(MOST_SHARE * size)))

    @classmethod
    def build(cls, records: Collection[RecordFacts]) -> Kinship:
        carriers: defaultdict[str, list[str]] = defaultdict(list)
        for info in records:
            for feature in record_features(info):
                carriers[feature].append(info.id)
        return cls(dict(carriers), len(records))

    def changed(
        self, before: Mapping[str, RecordFacts], written: Mapping[str, RecordFacts]
    ) -> Kinship:
        """This kinship with the records ``written`` in place of theirs in ``before``. Only
        the overlay's lists of the features they carry (or carried) are copied."""
        dropped = dict(self._dropped)
        added = dict(self._added)
        copied: set[str] = set()

        def overlaid(feature: str) -> list[str]:
            if feature not in copied:
                copied.add(feature)
                added[feature] = list(added.get(feature, ()))
            return added[feature]

        for record_id, info in written.items():
            old = before.get(record_id)
            for feature in record_features(old) if old is not None else ():
                if record_id in self._replaced:
                    overlaid(feature).remove(record_id)
                else:
                    dropped[feature] = dropped.get(feature, 0) + 1
            for feature in record_features(info):
                overlaid(feature).append(record_id)
        new = sum(record_id not in before for record_id in written)
        return Kinship(
            self._built,
            self.size + new,
            self._replaced | written.keys(),
            dropped,
            {feature: ids for feature, ids in added.items() if ids},
        )

    def count(self, feature: str) -> int:
        """How many records carry ``feature``."""
        built = len(self._built.get(feature, ())) - self._dropped.get(feature, 0)
        return built + len(self._added.get(feature, ()))

    def weight(self, feature: str) -> int:
        """What sharing ``feature`` weighs, in thousandths; 0 where too many carry it."""
        carriers = self.count(feature)
        if not carriers or carriers > self.telling_at_most:
            return 0
        return round(SCALE * math.log(self.size / carriers))

    def carrying(self, feature: str) -> Sequence[str]:
        """Every record carrying ``feature``, however many."""
        built: Sequence[str] = self._built.get(feature, ())
        if self._dropped.get(feature):
            built = [record_id for record_id in built if record_id not in self._replaced]
        written = self._added.get(feature)
        return [*built, *written] if written else built

    def sharing(self, features: Iterable[str]) -> set[str]:
        """The records carrying any of ``features`` that weighs anything."""
        found: set[str] = set()
        for feature in set(features):
            if self.weight(feature):
                found.update(self.carrying(feature))
        return found

    def rank(
        self, record_id: str, features: Iterable[str], listed: Iterable[str]
    ) -> list[tuple[int, str]]:
        """The records related to ``record_id`` (carrying ``features``), as ``(-score, id)``
        best first, at most ``RELATIVES_KEPT``: those it lists, then by the weights of the
        features shared, then by id."""
        scores: dict[str, int] = {}
        for feature in set(features):
            weight = self.weight(feature)
            for other in self.carrying(feature) if weight else ():
                scores[other] = scores.get(other, 0) + weight
        for other in listed:
            scores[other] = scores.get(other, 0) + LISTED
        scores.pop(record_id, None)
        return heapq.nsmallest(
            RELATIVES_KEPT, ((-score, other) for other, score in scores.items() if score > 0)
        )
