"""Related records by the rarity of what they share, in a catalog where most records carry
the same tags (jax, pallas) as in JAX's mined catalog: those sharing only such tags relate
nothing, one sharing a rare function, file or word relates much. Ranked once per record and
catalog, from memory; a request reads a page of them, never all (SQLite and PostgreSQL)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

import pytest
from sqlalchemy import Engine, event
from sqlalchemy.orm import Session, sessionmaker

from app.answers.catalog import Catalog
from app.answers.catalog_cache import CatalogCache
from app.answers.computed import closest_curated
from app.answers.kinship import MOST_CARRIERS, Kinship, record_features
from app.answers.related import Relatives, related_records
from app.config import load_settings
from app.db import make_engine, make_session_factory, transaction
from app.errors import InvalidInput, NotFound
from app.matching.frames import FrameIndex
from app.migrate import upgrade
from app.records.importer import import_text
from app.records.store import MAX_PAGE_SIZE, RecordStore
from app.records.validation import validate_record
from app.records.version_watch import VersionWatch
from app.web.record_page import RELATED_SHOWN, record_page
from tests.conftest import Backend

# Records sharing the tags "jax" and "pallas" with the record: thousands, as in JAX's
# mined catalog, more than any feature may be carried by and still relate records.
CROWD = MOST_CARRIERS + 100
TARGET = "target"
COMMON = ["jax", "pallas"]


def _record(record_id: str, message: str, **fields: Any) -> str:
    record = {"id": record_id, "errorMessage": message, "errorClass": "ValueError", **fields}
    return json.dumps({"record": record})


def _catalog() -> str:
    """The record; one record it lists; one sharing each of its rare features; one sharing
    a rare tag, and one both common tags; one retired; a crowd sharing the common tags."""
    lines = [
        _record(
            TARGET,
            "Target sprocket overflowed by {n} teeth",
            errorClass="OverflowError",
            filePath="jax/_src/pallas/target.py",
            site={"function": "_check_sprockets"},
            backgroundTag="target-kind",
            tags=[*COMMON, "widgets"],
            relatedErrors=["Listed error about gears", "No record says this"],
        ),
        _record("listed", "Listed error about gears: {n}", tags=COMMON),
        _record("same-function", "Raised elsewhere", site={"function": "_check_sprockets"}),
        _record("same-file", "Raised nearby", filePath="jax/_src/pallas/target.py"),
        _record("same-kind", "Same kind, other words", backgroundTag="target-kind"),
        _record("same-word", "A sprocket of another kind"),
        _record("rare-tag", "Tagged alike", tags=["widgets"]),
        _record("common-tags", "Tagged like everyone", tags=COMMON),
        _record("retired-word", "Retired sprocket", retired=True),
    ]
    lines += [
        _record(f"crowd-{n:05d}", f"Crowd error {n}", tags=COMMON, errorClass="TypeError")
        for n in range(CROWD)
    ]
    return "\n".join(lines) + "\n"


RELATED = {"listed", "same-function", "same-file", "same-kind", "same-word", "rare-tag"}


@dataclass
class Crowded:
    engine: Engine
    sessions: sessionmaker[Session]
    catalogs: CatalogCache


@pytest.fixture(scope="module")
def crowded(backend: Backend) -> Iterator[Crowded]:
    settings = load_settings(database_url=backend.new_database())
    engine = make_engine(settings.resolved_database_url)
    upgrade(settings, engine)
    sessions = make_session_factory(engine)
    with transaction(sessions) as session:
        import_text(RecordStore(session), _catalog(), "synthetic catalog")
    yield Crowded(engine, sessions, CatalogCache(sessions, VersionWatch(max_age=0)))
    engine.dispose()


def related(crowded: Crowded, record_id: str = TARGET, **options: Any) -> Relatives:
    with transaction(crowded.sessions) as session:
        store = RecordStore(session)
        return related_records(store, crowded.catalogs.current(), record_id, **options)


def test_a_rare_shared_feature_outranks_tags_nearly_every_record_carries(
    crowded: Crowded,
) -> None:
    """Counting shared tags put "common-tags" (two) before "rare-tag" (one) and related the
    whole crowd; "jax" and "pallas" now weigh nothing, so neither is related at all."""
    page = related(crowded, limit=MAX_PAGE_SIZE)
    ids = [item.id for item in page.items]
    assert ids[0] == "listed"
    assert set(ids) == RELATED | {"retired-word"}
    assert "common-tags" not in ids and not any(i.startswith("crowd-") for i in ids)
    assert page.total == len(RELATED) + 1
    assert page.unresolved == ["No record says this"]
    reasons = {item.id: item.reasons for item in page.items}
    assert reasons["listed"] == ["listed"]
    assert reasons["same-function"] == ["function"]
    assert reasons["same-file"] == ["filePath", "module"]
    assert reasons["same-kind"] == ["backgroundTag"]
    assert reasons["same-word"] == ["word:sprocket"]
    assert reasons["rare-tag"] == ["tag:widgets"]
    scores = {item.id: item.score for item in page.items}
    # A file two records share, and its folder, outweigh a word three records say.
    assert scores["same-file"] > scores["same-function"] > scores["same-word"]


def test_pages_walk_every_related_record_once_in_order(crowded: Crowded) -> None:
    whole = related(crowded, limit=MAX_PAGE_SIZE)
    seen: list[str] = []
    cursor = None
    while True:
        page = related(crowded, limit=2, cursor=cursor)
        assert len(page.items) <= 2 and page.total == whole.total
        seen += [item.id for item in page.items]
        cursor = page.next_cursor
        if cursor is None:
            break
    assert seen == [item.id for item in whole.items]
    live = related(crowded, limit=MAX_PAGE_SIZE, live_only=True)
    assert [item.id for item in live.items] == [i for i in seen if i != "retired-word"]
    assert live.total == whole.total - 1
    with pytest.raises(InvalidInput):
        related(crowded, limit=MAX_PAGE_SIZE + 1)
    with pytest.raises(NotFound):
        related(crowded, "no-such-record", limit=1)


def test_a_ranking_is_kept_per_catalog_and_a_write_changes_it(crowded: Crowded) -> None:
    statements: list[str] = []

    def record(*args: Any) -> None:
        statements.append(args[2])

    related(crowded, limit=10)
    event.listen(crowded.engine, "before_cursor_execute", record)
    try:
        again = related(crowded, limit=10)
    finally:
        event.remove(crowded.engine, "before_cursor_execute", record)
    assert not [s for s in statements if "records" in s]  # the ranking kept: no record read
    assert "same-word-later" not in [item.id for item in again.items]
    later = {"id": "same-word-later", "errorMessage": "Another sprocket of another kind"}
    with transaction(crowded.sessions) as session:
        RecordStore(session).upsert(validate_record(later), None)
    page = related(crowded, limit=MAX_PAGE_SIZE)
    assert "same-word-later" in [item.id for item in page.items]
    assert page.total == again.total + 1


def test_a_kinship_changed_in_place_is_the_one_a_build_makes(crowded: Crowded) -> None:
    """Twice: a record written since the build is written again."""
    catalog = crowded.catalogs.current()
    records = dict(catalog.records)
    kinship = catalog.kinship
    for written in (
        {
            TARGET: replace(records[TARGET], tags=("widgets", "gears"), file=None),
            "new": replace(records["same-word"], id="new"),
            "crowd-00001": replace(records["crowd-00001"], message="Widgets and gears"),
        },
        {
            TARGET: replace(records[TARGET], tags=("gears",), function=None),
            "new": replace(records["same-file"], id="new"),
            "newer": replace(records["same-kind"], id="newer"),
        },
    ):
        kinship = kinship.changed(records, written)
        records = {**records, **written}
        built = Kinship.build(list(records.values()))
        assert kinship.size == built.size == len(records)
        for info in records.values():
            for feature in record_features(info):
                assert kinship.count(feature) == built.count(feature), feature
                assert kinship.weight(feature) == built.weight(feature), feature
                assert sorted(kinship.carrying(feature)) == sorted(built.carrying(feature))
    assert sorted(kinship.carrying("file:jax/_src/pallas/target.py")) == [
        "new",
        "same-file",
        TARGET,
    ]
    assert kinship.carrying("tag:gears") == [TARGET]
    assert kinship.carrying("function:_check_sprockets") == ["same-function"]


def test_the_record_page_shows_the_best_few_and_reads_no_crowd(crowded: Crowded) -> None:
    catalog: Catalog = crowded.catalogs.current()
    loaded: list[object] = []

    def count(_session: Session, instance: object) -> None:
        loaded.append(instance)

    event.listen(Session, "loaded_as_persistent", count)
    try:
        with transaction(crowded.sessions) as session:
            store = RecordStore(session)
            view = record_page(store, catalog, store.get(TARGET))
    finally:
        event.remove(Session, "loaded_as_persistent", count)
    shown = [item.url.rsplit("/", 1)[-1] for item in view.related]
    assert len(shown) == RELATED_SHOWN and shown[0] == "listed"
    assert "retired-word" not in shown
    assert view.related_total >= len(RELATED)
    assert view.unresolved == ["No record says this"]
    assert len(loaded) < 10  # the record, its tags and annotation: none of the crowd


def test_the_curated_records_nearest_a_mined_one_share_a_rare_feature(crowded: Crowded) -> None:
    """Every curated record was scored for a mined one, the crowd's among them, however far
    (a few hundred ms at 100,000 records); only those sharing a rare feature are now."""
    mined = {
        "id": "mined-sprocket",
        "errorMessage": "Flange bent at {n}",
        "documentationSource": "derived",
        "site": {"function": "_check_sprockets"},
    }
    with transaction(crowded.sessions) as session:
        RecordStore(session).upsert(validate_record(mined), None)
    catalog = crowded.catalogs.current()
    found = closest_curated(
        catalog.records["mined-sprocket"], "_check_sprockets", catalog, FrameIndex.load()
    )
    assert {near.errorId for near in found} == {TARGET, "same-function"}
