"""What matching and computing need from the database, held in memory by each process.

A ``Catalog`` is one store version's worth of it: the pattern index over every live
record's wordings, a few facts about every record, and the record documenting each rule.
It is built from the store and kept at the store's version by ``catalog_cache``; nothing
here reads the database, so that a process handed a catalog (``errata match``, from its
snapshot) loads no database code.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import Any

from rapidfuzz import fuzz, process, utils

from app.answers.kinship import Kinship
from app.engines.mosaic_gpu import OPERATIONS
from app.jaxref.templates import literal_text
from app.matching import AnyIndex, OverlaidIndex, PatternEntry, PatternIndex
from app.memo import LockedLRU
from app.packed import PackedMapping

SUGGESTIONS = 3
# Records read closely for the suggestions, of those whose words the query's hold: the word
# sets' overlap is cheap over the whole catalog but says 1.0 for any record whose few words
# the query happens to hold; the closer reading ranks these few.
SIMILAR_SHORTLIST = 30
# The least score a suggestion keeps: below it, records share a word or two by chance. On
# benchmarks/suggestions.py's drifted messages every right record first scored above it; an
# unrelated message ("Can only transfer whole pixels to the GPU canvas") scores 0.27.
SIMILAR_CUTOFF = 0.3
# The longest message of a live record is about 500 characters; a query's words past this many
# cannot make it read more like one, and rapidfuzz holds the GIL for time that grows with
# the query (a 1 MiB line took over a minute against 11k records; 600 characters, 40 ms).
SIMILAR_QUERY_CHARS = 600
_WORD = re.compile(r"[A-Za-z]{3,}")
ANSWERS_KEPT = 1024  # per catalog, a few KB each


def _operations_by_rule() -> dict[str, tuple[str, ...]]:
    """Each rule's operations (those with a step checking it), in ``OPERATIONS`` order."""
    found: dict[str, list[str]] = {}
    for name, operation in OPERATIONS.items():
        for rule_id in dict.fromkeys(step.rule.id for step in operation.steps):
            found.setdefault(rule_id, []).append(name)
    return {rule_id: tuple(names) for rule_id, names in found.items()}


_OPERATIONS_BY_RULE = _operations_by_rule()


def operations_for_rule(rule_id: str) -> list[str]:
    return list(_OPERATIONS_BY_RULE.get(rule_id, ()))


def record_operations(
    annotated: list[str] | None, own: list[str] | None, rule: str | None
) -> list[str]:
    """The constructs a record applies to: its annotation's, its own, else its rule's."""
    return annotated or own or (operations_for_rule(rule) if rule else [])


@dataclass(frozen=True)
class RecordInfo:
    """What a match or a compute needs to know about a record."""

    id: str
    slug: str
    message: str
    error_class: str | None
    rule: str | None
    operations: tuple[str, ...]
    retired: bool = False
    backend: str | None = None  # where JAX raises it, from its source file (see backend_of)
    file: str | None = None
    curated: bool = True  # False for a record known only from JAX's source (mined, derived)
    # What to do, as people wrote it (errata's correction in its place, where it made one);
    # none for a record known only from JAX's source.
    solutions: tuple[str, ...] = ()
    # The record's own link to its source, pinned to the commit it was written against: the
    # link of a site no mined release has (a check inside a helper such as safe_zip).
    github_url: str | None = None
    # Python's own words at JAX's call of user code (``calledBy``): a message like it says
    # nothing of kinship, so the record is offered as no similar error.
    bound_to_callers: bool = False
    # Python's own words at a call of one of Pallas's public callables: how code spells it
    # (``pl.pallas_call``), from the record's ``calledAs``.
    called_as: tuple[str, ...] = ()
    # What else relates it to other records (see kinship): the function its check is in
    # (its mined site's), its background tag and its tags.
    function: str | None = None
    background: str | None = None
    tags: tuple[str, ...] = ()


class Catalog:
    """The records' facts, the pattern index over the live ones and the record documenting
    each rule, as of one store version."""

    def __init__(
        self,
        records: Mapping[str, RecordInfo],
        patterns: AnyIndex,
        rule_records: dict[str, str | None],
        version: int,
        live_records: int | None = None,
        kinship: Kinship | None = None,
    ) -> None:
        """``live_records``: how many are not retired, when the caller knows; ``kinship``:
        which records carry each feature, when the caller has it (else built on first use)."""
        self.records = records  # retired ones too: they can still be computed by id
        self.patterns = patterns
        self.rule_records = rule_records
        self.version = version
        if live_records is None:
            live_records = sum(not info.retired for info in records.values())
        self.live_records = live_records
        # The live records' messages, ids and backends, on first use.
        self._live: tuple[list[str], list[str], list[str | None]] | None = None
        self._kinship = kinship
        self._kinship_lock = threading.Lock()
        # Answers worked out from this catalog (a compute's, by its case), kept with it
        # because they change with it: the records they name come from it.
        self.answers: LockedLRU[Hashable, Any] = LockedLRU(ANSWERS_KEPT)

    def __reduce__(self) -> tuple[Any, ...]:
        """A pickle keeps the records, the index and the rules, not what was worked out."""
        fields = (self.records, self.patterns, self.rule_records, self.version)
        return (Catalog, (*fields, self.live_records))

    def packed(self) -> Catalog:
        """A copy holding its records and its index packed (``app.packed``), to be pickled:
        unpickled, it reads only the records and entries a paste leads to."""
        records = PackedMapping.pack(self.records)
        patterns = self.patterns.packed()
        return Catalog(records, patterns, self.rule_records, self.version, self.live_records)

    def similar(self, text: str) -> list[tuple[str, float]]:
        """Live records whose message reads like ``text``, best first, scored 0..1.

        Only a message's own words are compared, not the names of its placeholders: a
        message that is a value alone (``NotImplementedError(eqn.primitive)``) would read
        like any text holding "primitive". Words alike are no kinship across backends:
        when ``text`` names backends (a TPU lowering error, Triton's), only records raised
        by one of them are offered. Nor are records of Python's own words at JAX's call of
        user code, which every call of the wrong arity reads like. Only the text's first
        ``SIMILAR_QUERY_CHARS`` are read."""
        text = text[:SIMILAR_QUERY_CHARS]
        named = {backend for backend, words in _BACKEND_WORDS.items() if words.search(text)}
        messages, ids, backends = self.live_messages()
        shortlist = process.extract(
            text,
            messages,
            scorer=fuzz.token_set_ratio,
            processor=utils.default_process,
            limit=None if named else SIMILAR_SHORTLIST,
            score_cutoff=SIMILAR_CUTOFF * 100,
        )
        candidates = [
            position for _, _, position in shortlist if not named or backends[position] in named
        ][:SIMILAR_SHORTLIST]
        scored = [(similarity(text, messages[position]), ids[position]) for position in candidates]
        ranked = sorted(scored, key=lambda pair: -pair[0])  # ties: the overlap's order
        return [
            (record_id, round(score, 3)) for score, record_id in ranked if score >= SIMILAR_CUTOFF
        ][:SUGGESTIONS]

    def live_messages(self) -> tuple[list[str], list[str], list[str | None]]:
        """The literal words of every record a suggestion may offer, with its id and backend."""
        if self._live is None:
            worded = [
                (info, words)
                for info in self.records.values()
                if not info.retired
                and not info.bound_to_callers
                and _WORD.search(words := literal_text(info.message))
            ]
            self._live = (
                [words for _, words in worded],
                [info.id for info, _ in worded],
                [info.backend for info, _ in worded],
            )
        return self._live

    @property
    def kinship(self) -> Kinship:
        """Which records carry each feature: what relates records (see kinship)."""
        with self._kinship_lock:
            if self._kinship is None:
                self._kinship = Kinship.build(list(self.records.values()))
            return self._kinship

    def changed(self, changes: Changes, rule_records: dict[str, str | None]) -> Catalog:
        """This catalog with ``changes`` applied, its index overlaid rather than rebuilt."""
        if isinstance(self.patterns, OverlaidIndex):
            base, replaced = self.patterns.base, self.patterns.replaced
            overlay = list(self.patterns.overlay.entries)
        else:
            base, replaced, overlay = self.patterns, frozenset(), []
        kept = [entry for entry in overlay if entry.record_id not in changes.records]
        patterns = OverlaidIndex(
            base,
            PatternIndex.build([*kept, *changes.entries]),
            replaced | changes.records.keys(),
        )
        live = self.live_records + sum(
            (info.retired is False) - (old is not None and old.retired is False)
            for record_id, info in changes.records.items()
            for old in [self.records.get(record_id)]
        )
        kinship = self.kinship.changed(self.records, changes.records)
        records = {**self.records, **changes.records}
        return Catalog(records, patterns, rule_records, changes.version, live, kinship)

    @property
    def overlaid_entries(self) -> int:
        """Entries held outside the base index: past ``MAX_OVERLAY_ENTRIES``, rebuild."""
        patterns = self.patterns
        return len(patterns.overlay.entries) if isinstance(patterns, OverlaidIndex) else 0


@dataclass(frozen=True)
class Changes:
    """The records written since a catalog's version, as of store ``version``."""

    version: int
    records: dict[str, RecordInfo]
    entries: list[PatternEntry]
    rules_touched: bool  # an annotation or a record naming a rule changed


# The words that name a backend in a paste.
def similarity(text: str, message: str) -> float:
    """How alike a pasted message and a record's words read, 0..1: the word sets' overlap
    (rapidfuzz's token set ratio, which orders words and forgives values) times the share of
    words the two have in common of all they hold (Dice). The overlap alone says 1.0 for any
    record whose few words the paste holds among many others: on 600 pastes drawn from the
    catalog's own messages, the right record came first for 64% of them by the overlap
    alone, 87% by both, and of first suggestions scoring 0.9 or more, 39% against 83% were
    right (``benchmarks/suggestions.py``)."""
    words, record_words = (set(utils.default_process(each).split()) for each in (text, message))
    if not words or not record_words:
        return 0.0
    shared = 2 * len(words & record_words) / (len(words) + len(record_words))
    overlap = fuzz.token_set_ratio(text, message, processor=utils.default_process) / 100
    return overlap * shared


_BACKEND_WORDS = {
    "mosaic_gpu": re.compile(r"mosaic[_ ]gpu|\bplgpu\b|\bmgpu\b", re.IGNORECASE),
    "tpu": re.compile(r"\bTPU\b|pallas\.mosaic\.|tpu_custom_call", re.IGNORECASE),
    "triton": re.compile(r"\btriton\b", re.IGNORECASE),
}
