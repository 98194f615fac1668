"""Related records in a catalog where one tag is carried by thousands: the database ranks,
counts and pages them, and a request reads a page of them, never all (SQLite and
PostgreSQL)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from sqlalchemy import Engine, event
from sqlalchemy.orm import Session, sessionmaker

from app.answers.catalog_cache import CatalogCache
from app.config import load_settings
from app.db import make_engine, make_session_factory, transaction
from app.errors import InvalidInput
from app.migrate import upgrade
from app.records.importer import import_text
from app.records.store import MAX_PAGE_SIZE, RecordStore
from app.records.version_watch import VersionWatch
from app.web.record_page import RELATED_SHOWN, record_page
from tests.conftest import Backend

# Records sharing the tag "jax" with the record: thousands, as in JAX's mined catalog.
CROWD = 3000
TARGET = "target"


def _record(record_id: str, message: str, **fields: Any) -> str:
    record = {"id": record_id, "errorMessage": message, "errorClass": "ValueError", **fields}
    return json.dumps({"record": record})


def _catalog() -> str:
    """The record, one record it lists, one of its file, one of its background tag, two
    sharing two of its tags, and a crowd sharing only ``jax``."""
    lines = [
        _record(
            TARGET,
            "Target error",
            filePath="jax/_src/pallas/target.py",
            backgroundTag="target-kind",
            tags=["jax", "widgets"],
            relatedErrors=["Listed error about widgets", "No record says this"],
        ),
        _record("listed", "Listed error about widgets: {n}"),
        _record("same-file", "Same file error", filePath="jax/_src/pallas/target.py"),
        _record("same-kind", "Same kind error", backgroundTag="target-kind"),
        _record("two-tags-b", "Two tags error b", tags=["jax", "widgets"]),
        _record("two-tags-a", "Two tags error a", tags=["widgets", "jax"]),
        _record("retired-tag", "Retired error", tags=["widgets"], retired=True),
    ]
    lines += [_record(f"crowd-{n:05d}", f"Crowd error {n}", tags=["jax"]) for n in range(CROWD)]
    return "\n".join(lines) + "\n"


STRONGEST_FIRST = ["listed", "same-file", "same-kind", "two-tags-a", "two-tags-b"]


@dataclass
class Crowded:
    engine: Engine
    sessions: sessionmaker[Session]


@pytest.fixture(scope="module")
def crowded(backend: Backend) -> Iterator[Crowded]:
    settings = load_settings(database_url=backend.new_database())
    engine = make_engine(settings.resolved_database_url)
    upgrade(settings, engine)
    sessions = make_session_factory(engine)
    with transaction(sessions) as session:
        import_text(RecordStore(session), _catalog(), "synthetic catalog")
    yield Crowded(engine, sessions)
    engine.dispose()


@pytest.fixture
def loaded(crowded: Crowded) -> Iterator[list[object]]:
    """Every ORM object the sessions load while the test runs."""
    objects: list[object] = []

    def count(_session: Session, instance: object) -> None:
        objects.append(instance)

    event.listen(Session, "loaded_as_persistent", count)
    yield objects
    event.remove(Session, "loaded_as_persistent", count)


def test_a_tag_thousands_carry_answers_a_bounded_page_best_first(
    crowded: Crowded, loaded: list[object]
) -> None:
    statements: list[str] = []

    def record(*args: Any) -> None:
        statements.append(args[2])

    event.listen(crowded.engine, "before_cursor_execute", record)
    try:
        with transaction(crowded.sessions) as session:
            page = RecordStore(session).related(TARGET, limit=10)
    finally:
        event.remove(crowded.engine, "before_cursor_execute", record)
    assert [item.id for item in page.items][:5] == STRONGEST_FIRST
    assert [item.id for item in page.items][5:] == [f"crowd-{n:05d}" for n in range(5)]
    assert page.total == 5 + CROWD + 1  # the retired record shares a tag too
    assert page.next_cursor is not None
    assert page.unresolved == ["No record says this"]
    reasons = {item.id: item.reasons for item in page.items}
    assert reasons["listed"] == ["listed"]
    assert reasons["same-file"] == ["filePath"]
    assert reasons["same-kind"] == ["backgroundTag"]
    assert reasons["two-tags-a"] == ["tag:jax", "tag:widgets"]
    assert reasons["crowd-00000"] == ["tag:jax"]
    # The record itself and its tags: none of the thousands that share one.
    assert len(loaded) < 10
    ranked = [s for s in statements if "ORDER BY" in s and "score" in s]
    assert ranked and all("LIMIT" in s for s in ranked)


def test_pages_walk_every_related_record_once_in_order(crowded: Crowded) -> None:
    seen: list[str] = []
    cursor = None
    with transaction(crowded.sessions) as session:
        store = RecordStore(session)
        while True:
            page = store.related(TARGET, limit=MAX_PAGE_SIZE, cursor=cursor)
            assert len(page.items) <= MAX_PAGE_SIZE
            seen += [item.id for item in page.items]
            cursor = page.next_cursor
            if cursor is None:
                break
        assert len(seen) == len(set(seen)) == page.total
        assert seen[:5] == STRONGEST_FIRST
        assert seen[5:] == sorted(seen[5:])  # one tag each: by id
        live = store.related(TARGET, limit=MAX_PAGE_SIZE, live_only=True)
        assert live.total == page.total - 1
        with pytest.raises(InvalidInput):
            store.related(TARGET, limit=MAX_PAGE_SIZE + 1)


def test_the_record_page_reads_a_bounded_few_of_thousands(
    crowded: Crowded, loaded: list[object]
) -> None:
    catalog = CatalogCache(crowded.sessions, VersionWatch()).current()
    loaded.clear()
    with transaction(crowded.sessions) as session:
        store = RecordStore(session)
        view = record_page(store, catalog, store.get(TARGET))
    shown = [item.url.rsplit("/", 1)[-1] for item in view.related]
    # "jax" is carried by nearly every record: it relates none of them.
    assert shown == ["listed", "same-file"]  # one specific tag, or the kind, is too little
    assert len(shown) <= RELATED_SHOWN
    assert view.related_total == 5
    assert view.unresolved == ["No record says this"]
    assert len(loaded) < 10
