"""The records related to one, best first, a page at a time (``GET /api/errors/{id}/related``
and the record pages).

A record's relatives are ranked from the catalog (see kinship) and the errors the record
lists, once per record and catalog, so once per store version, and the ranking is kept with
the catalog: a page of it is then a lookup, without the database. A ranking reads at most
a few thousand records' ids, however large the catalog, and keeps at most
``RELATIVES_KEPT`` of them.
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import islice

from app.answers.catalog import Catalog, RecordInfo
from app.answers.kinship import check_order, message_words, record_features
from app.errors import InvalidInput
from app.records.store import (
    MAX_PAGE_SIZE,
    RecordStore,
    decode_scored_cursor,
    encode_related_cursor,
)

# What each kind of feature shared is called among a relative's reasons, in their order.
_REASONS = {
    "construct": "construct:{}",
    "function": "function",
    "file": "filePath",
    "module": "module",
    "rule": "rule",
    "kind": "backgroundTag",
    "class": "errorClass",
    "tag": "tag:{}",
    "word": "word:{}",
}
_ORDER = {kind: at for at, kind in enumerate(["step", *_REASONS])}
_LISTED = "listed"
_CUT_WORD = re.compile(r"\w+$")


@dataclass(frozen=True)
class Relative:
    id: str
    slug: str
    message: str
    # listed, next:<construct>, before:<construct>, construct:<c>, function, filePath,
    # module, rule, backgroundTag, errorClass, tag:<t>, word:<w>
    reasons: list[str]
    score: int


@dataclass(frozen=True)
class Relatives:
    items: list[Relative]
    total: int
    next_cursor: str | None
    unresolved: list[str]  # listed related errors that match no record


@dataclass(frozen=True)
class _Ranking:
    """A record's relatives, best first: their ids, and their scores negated (an array, so
    a ranking kept takes 16 bytes a relative); which of them are retired, and listed."""

    ids: tuple[str, ...]
    negated: array[int]
    retired: frozenset[str]
    listed: frozenset[str]
    unresolved: tuple[str, ...]

    def after(self, score: int, record_id: str) -> int:
        """Where the relatives past ``score`` and ``record_id`` begin."""
        return bisect_right(
            range(len(self.ids)),
            (-score, record_id),
            key=lambda at: (self.negated[at], self.ids[at]),
        )

    def total(self, live_only: bool) -> int:
        return len(self.ids) - (len(self.retired) if live_only else 0)


def related_records(
    store: RecordStore,
    catalog: Catalog,
    record_id: str,
    *,
    limit: int,
    cursor: str | None = None,
    live_only: bool = False,
) -> Relatives:
    """The records related to ``record_id``: those it lists (its ``relatedErrors``), then
    those sharing the rarest features with it; a page of ``limit`` after ``cursor``.

    ``NotFound`` where no record has the id; none related to a record written since the
    catalog was read."""
    if not 1 <= limit <= MAX_PAGE_SIZE:
        raise InvalidInput(f"limit must be between 1 and {MAX_PAGE_SIZE}, got {limit}.")
    after = decode_scored_cursor(cursor) if cursor else None
    own = catalog.records.get(record_id)
    if own is None:
        store.get(record_id)
        return Relatives([], 0, None, [])
    ranking = _ranked(store, catalog, own)
    start = ranking.after(*after) if after is not None else 0
    window = list(islice(_records(catalog, ranking, live_only, start), limit + 1))
    said = _said(catalog, own)
    items = [
        Relative(
            info.id,
            info.slug,
            info.message,
            ([_LISTED] if info.id in ranking.listed else [])
            + [reason for reason, carriers in said if info.id in carriers],
            -ranking.negated[at],
        )
        for at, info in window[:limit]
    ]
    next_cursor = None
    if len(window) > limit:
        next_cursor = encode_related_cursor(items[-1].score, items[-1].id)
    return Relatives(items, ranking.total(live_only), next_cursor, list(ranking.unresolved))


def _records(
    catalog: Catalog, ranking: _Ranking, live_only: bool, start: int
) -> Iterator[tuple[int, RecordInfo]]:
    """Each relative's place in the ranking and facts, from ``start``; retired ones too
    unless ``live_only``."""
    for at in range(start, len(ranking.ids)):
        if not (live_only and ranking.ids[at] in ranking.retired):
            yield at, catalog.records[ranking.ids[at]]


def _ranked(store: RecordStore, catalog: Catalog, own: RecordInfo) -> _Ranking:
    """The record's ranking, worked out once per catalog."""
    key = ("related", own.id)
    known: _Ranking | None = catalog.answers.get(key)
    if known is not None:
        return known
    listed: dict[str, None] = {}
    unresolved = []
    document = store.get(own.id).document
    annotation = store.annotation(own.id) or {}
    for text in dict.fromkeys(
        map(str, [*document.get("relatedErrors", ()), *annotation.get("relatedErrors", ())])
    ):
        target = _starting(catalog, text)
        if target is None:
            unresolved.append(text)
        elif target != own.id:
            listed[target] = None
    ranked = catalog.kinship.rank(own.id, record_features(own), listed)
    ranking = _Ranking(
        tuple(other for _, other in ranked),
        array("q", (negated for negated, _ in ranked)),
        frozenset(other for _, other in ranked if catalog.records[other].retired),
        frozenset(listed),
        tuple(unresolved),
    )
    catalog.answers.put(key, ranking)
    return ranking


def _starting(catalog: Catalog, text: str) -> str | None:
    """The id of the record whose message starts with ``text`` (its closing dots aside), a
    live one first, then the first by id. Only the records saying the rarest whole word of
    the text's literal start are read; every record, where it has none."""
    prefix = text.rstrip(". …").strip()
    if not prefix:
        return None
    head, brace, _ = prefix.partition("{")
    if not brace:
        head = _CUT_WORD.sub("", head)  # the word the text ends in may be cut short
    kinship = catalog.kinship
    rarest = min((f"word:{word}" for word in message_words(head)), key=kinship.count, default=None)
    read = (
        (catalog.records[other] for other in kinship.carrying(rarest))
        if rarest is not None
        else catalog.records.values()
    )
    found = [info for info in read if info.message.startswith(prefix)]
    return min(found, key=lambda info: (info.retired, info.id)).id if found else None


def _said(catalog: Catalog, own: RecordInfo) -> list[tuple[str, set[str]]]:
    """Each feature of ``own`` that weighs anything, as a relative's reason says it, and
    the records carrying it (a few hundred at most), in ``_ORDER``."""
    kinship = catalog.kinship
    said = []
    for feature in record_features(own):
        if not kinship.weight(feature):
            continue
        kind, _, value = feature.partition(":")
        if kind == "step" and own.rule:
            operation, _, pair = value.rpartition(":")
            # The pair k, k + 1: where the record's own check is k, the other's comes next.
            ahead = check_order(operation).index(own.rule) == int(pair)
            reason = f"{'next' if ahead else 'before'}:{operation}"
        elif kind in _REASONS:
            reason = _REASONS[kind].format(value)
        else:
            continue
        said.append((_ORDER[kind], reason, set(kinship.carrying(feature))))
    return [(reason, carriers) for _, reason, carriers in sorted(said, key=lambda s: s[:2])]
