"""The records related to one, ranked, counted and cut to a page by the database.

A tag such as ``jax`` or ``pallas`` is carried by most of the catalog: loading every record
sharing one, with its tags, took 150–250 MB a request at 11,000 records. Here the database
scores each candidate (one integer, the weights of its relations summed), sorts and counts
them; only a page's ids, slugs and messages, and their shared tags, come back.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Select,
    Subquery,
    and_,
    case,
    func,
    literal,
    or_,
    select,
    union,
)
from sqlalchemy.orm import Session

from app.records.models import RecordRow, RecordTag

# Shared tags counted, at most, in the API's ranking: weights below stay apart past it, and
# no record carries as many tags.
MOST_TAGS_RANKED = 999


@dataclass(frozen=True)
class Ranking:
    """What each relation weighs; a candidate scores the sum, and the higher comes first
    (the lower id between equals). ``most_tags``: the shared tags that count, at most."""

    listed: int
    file: int
    background: int
    tag: int
    most_tags: int


# The API's order: listed by the record, then the same file, the same background tag, then
# the most shared tags; each relation outweighs every one after it together.
BY_STRENGTH = Ranking(
    listed=1_000_000_000, file=1_000_000, background=1_000, tag=1, most_tags=MOST_TAGS_RANKED
)


@dataclass(frozen=True)
class Relation:
    """What a record is related by: the record's own file, background tag, tags and the
    ids of the records it lists."""

    record_id: str
    file_path: str | None
    background_tag: str | None
    tags: list[str]
    listed: list[str]


@dataclass(frozen=True)
class Related:
    id: str
    slug: str
    error_message: str
    reasons: list[str]  # filePath, backgroundTag, tag:<t> (sorted), listed
    score: int


@dataclass(frozen=True)
class Ranked:
    items: list[Related]
    total: int


def rank_related(
    session: Session,
    relation: Relation,
    ranking: Ranking,
    *,
    limit: int,
    after: tuple[int, str] | None = None,
    live_only: bool = False,
) -> Ranked:
    """Up to ``limit`` related records after the position ``after`` (a score and an id),
    best first, and how many there are in all."""
    ranked = _ranked(relation, ranking, live_only)
    if ranked is None:
        return Ranked([], 0)
    total = session.scalar(select(func.count()).select_from(ranked)) or 0
    page = select(ranked)
    if after is not None:
        score, record_id = after
        page = page.where(
            or_(ranked.c.score < score, and_(ranked.c.score == score, ranked.c.id > record_id))
        )
    rows = session.execute(page.order_by(ranked.c.score.desc(), ranked.c.id).limit(limit)).all()
    shared = _shared_tags(session, [row.id for row in rows], relation.tags)
    listed = set(relation.listed)
    items = []
    for row in rows:
        reasons = []
        if relation.file_path and row.file_path == relation.file_path:
            reasons.append("filePath")
        if relation.background_tag and row.background_tag == relation.background_tag:
            reasons.append("backgroundTag")
        reasons += [f"tag:{tag}" for tag in sorted(shared.get(row.id, ()))]
        if row.id in listed:
            reasons.append("listed")
        items.append(Related(row.id, row.slug, row.error_message, reasons, row.score))
    return Ranked(items, total)


def _ranked(relation: Relation, ranking: Ranking, live_only: bool) -> Subquery | None:
    """Every candidate's columns for an answer and its score, as a subquery; ``None``
    where the record relates to nothing."""
    sources: list[Select[Any]] = []
    score: ColumnElement[int] = literal(0)
    shared = None
    if relation.tags:
        shared = (
            select(RecordTag.record_id.label("id"), func.count().label("n"))
            .where(RecordTag.tag.in_(relation.tags))
            .group_by(RecordTag.record_id)
            .cte("shared")
        )
        sources.append(select(shared.c.id))
        counted = func.coalesce(shared.c.n, 0)
        score = score + ranking.tag * case(
            (counted > ranking.most_tags, ranking.most_tags), else_=counted
        )
    for column, value, weight in (
        (RecordRow.file_path, relation.file_path, ranking.file),
        (RecordRow.background_tag, relation.background_tag, ranking.background),
    ):
        if value:
            sources.append(select(RecordRow.id).where(column == value))
            score = score + case((column == value, weight), else_=0)
    if relation.listed:
        sources.append(select(RecordRow.id).where(RecordRow.id.in_(relation.listed)))
        score = score + case((RecordRow.id.in_(relation.listed), ranking.listed), else_=0)
    if not sources:
        return None
    candidates = (sources[0] if len(sources) == 1 else union(*sources)).subquery("candidates")
    query = select(
        RecordRow.id,
        RecordRow.slug,
        RecordRow.error_message,
        RecordRow.file_path,
        RecordRow.background_tag,
        score.label("score"),
    ).join(candidates, candidates.c.id == RecordRow.id)
    if shared is not None:
        query = query.outerjoin(shared, shared.c.id == RecordRow.id)
    query = query.where(RecordRow.id != relation.record_id)
    if live_only:
        query = query.where(RecordRow.retired.is_(False))
    return query.subquery("ranked")


def _shared_tags(session: Session, ids: list[str], tags: Collection[str]) -> dict[str, list[str]]:
    """Which of ``tags`` each of ``ids`` carries (a page's worth: one query)."""
    if not ids or not tags:
        return {}
    found: dict[str, list[str]] = {}
    query = select(RecordTag.record_id, RecordTag.tag).where(
        RecordTag.record_id.in_(ids), RecordTag.tag.in_(list(tags))
    )
    for record_id, tag in session.execute(query):
        found.setdefault(record_id, []).append(tag)
    return found
