"""A catalog catches up with writes without a request ever waiting for a rebuild: a few
records are applied in place, an import is rebuilt in a thread while the old one answers."""

from __future__ import annotations

import gc
import json
import uuid
import weakref
from collections.abc import Iterable, Iterator
from typing import Any

import pytest
from sqlalchemy.orm import Session, sessionmaker

from app.answers import catalog_cache as catalogs
from app.answers.catalog import Catalog
from app.answers.catalog_cache import CatalogCache
from app.config import load_settings
from app.db import make_engine, make_session_factory, transaction
from app.matching import OverlaidIndex, PatternIndex, match_paste
from app.matching.index import AnyIndex
from app.migrate import upgrade
from app.records.importer import import_text
from app.records.store import RecordStore
from app.records.validation import validate_record
from app.records.version_watch import VersionWatch
from tests.conftest import Backend


@pytest.fixture
def sessions(backend: Backend) -> Iterator[sessionmaker[Session]]:
    """A database of this test's own: the versions it sees are its writes alone."""
    settings = load_settings(database_url=backend.new_database())
    engine = make_engine(settings.resolved_database_url)
    upgrade(settings, engine)
    yield make_session_factory(engine)
    engine.dispose()


def widget(number: int, **fields: object) -> dict[str, object]:
    return {"id": f"w{number}", "errorMessage": f"Widget {number} is misaligned by {{n}}", **fields}


def put(sessions: sessionmaker[Session], record: dict[str, object]) -> None:
    with transaction(sessions) as session:
        RecordStore(session).upsert(validate_record(record), None, keep_newer=False)


def matched(cache: CatalogCache, text: str) -> list[str]:
    return matched_in(cache.current(), text)


def matched_in(catalog: Catalog, text: str) -> list[str]:
    report = match_paste(f"ValueError: {text}", catalog.patterns)
    return [match.record_id for match in report.matches]


def test_single_writes_are_applied_in_place_as_a_full_build_would_see_them(
    sessions: sessionmaker[Session],
) -> None:
    for number in range(3):
        put(sessions, widget(number))
    cache = CatalogCache(sessions, VersionWatch(max_age=0))
    built = cache.current()
    assert isinstance(built.patterns, PatternIndex)

    put(sessions, widget(3))  # added
    put(sessions, widget(1, errorMessage="Gadget 1 is misaligned by {n}"))  # reworded
    put(sessions, widget(2, retired=True))  # retired
    current = cache.current()
    assert isinstance(current.patterns, OverlaidIndex)
    assert current.patterns.base is built.patterns  # not rebuilt
    assert matched(cache, "Widget 3 is misaligned by 8") == ["w3"]
    assert matched(cache, "Gadget 1 is misaligned by 8") == ["w1"]
    assert matched(cache, "Widget 1 is misaligned by 8") == []
    assert matched(cache, "Widget 2 is misaligned by 8") == []
    assert current.records["w2"].retired and current.live_records == 3

    rebuilt = CatalogCache(sessions, VersionWatch(max_age=0)).current()
    assert rebuilt.version == current.version
    assert rebuilt.records == current.records
    for text in ("Widget 0 is misaligned by 1", "Gadget 1 is misaligned by 2", "Widget 3 x"):
        fresh = match_paste(f"ValueError: {text}", rebuilt.patterns)
        overlaid = match_paste(f"ValueError: {text}", current.patterns)
        assert [m.record_id for m in overlaid.matches] == [m.record_id for m in fresh.matches]
    # A record's entries and what each opens with, which date a message cut short.
    for record_id in ("w0", "w1", "w2", "w3"):
        assert openings(current.patterns, record_id) == openings(rebuilt.patterns, record_id)
    assert openings(current.patterns, "w1") == [("current", "Gadget 1 is misaligned by ")]


def test_a_compilers_message_is_a_record_its_pattern_alone_never_matches(
    sessions: sessionmaker[Session],
) -> None:
    """A record that says who prints it (``saidBy``) is named by the reading of compilers'
    messages, not by the pattern index: kept out of a full build and of one applied in place,
    and matched again once it no longer says so."""
    said = {"compiler": "libtpu (Mosaic's TPU compiler)", "reading": "wrapped", "order": 1}
    put(sessions, widget(0))
    put(sessions, widget(1, saidBy=said))
    cache = CatalogCache(sessions, VersionWatch(max_age=0))
    built = cache.current()
    assert isinstance(built.patterns, PatternIndex)
    assert matched(cache, "Widget 0 is misaligned by 8") == ["w0"]
    assert matched(cache, "Widget 1 is misaligned by 8") == []
    assert built.records["w1"].curated and not built.patterns.entries_of("w1")

    put(sessions, widget(2, saidBy=said))  # added in place
    put(sessions, widget(1))  # no longer a compiler's
    assert isinstance(cache.current().patterns, OverlaidIndex)
    assert matched(cache, "Widget 2 is misaligned by 8") == []
    assert matched(cache, "Widget 1 is misaligned by 8") == ["w1"]


def openings(index: AnyIndex, record_id: str) -> list[tuple[str, str]]:
    return sorted(
        (index.entries[entry].variant, index.opening(entry))
        for entry in index.entries_of(record_id)
    )


def test_an_import_is_rebuilt_in_the_background_while_the_old_catalog_answers(
    sessions: sessionmaker[Session], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(catalogs, "MAX_CHANGES_IN_PLACE", 5)
    put(sessions, widget(0))
    cache = CatalogCache(sessions, VersionWatch(max_age=0))
    before = cache.current()
    document = "\n".join(json.dumps(widget(number)) for number in range(1, 21))
    with transaction(sessions) as session:
        assert import_text(RecordStore(session), document, "import").added == 20

    assert cache.current() is before  # answered at once, from the catalog held
    cache.wait_for_rebuild()
    after = cache.current()
    assert after.version > before.version
    assert isinstance(after.patterns, PatternIndex) and after.live_records == 21
    assert matched(cache, "Widget 20 is misaligned by 4") == ["w20"]


def test_too_many_overlaid_entries_are_folded_into_a_rebuilt_index(
    sessions: sessionmaker[Session], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(catalogs, "MAX_OVERLAY_ENTRIES", 2)
    put(sessions, widget(0))
    cache = CatalogCache(sessions, VersionWatch(max_age=0))
    cache.current()
    for number in (1, 2):
        put(sessions, widget(number))
        cache.current()
    assert cache.current().overlaid_entries == 2  # applied in place until now
    sprocket = f"Sprocket {uuid.uuid4().hex}"
    put(sessions, widget(3, errorMessage=f"{sprocket} {{n}}"))
    cache.current()
    cache.wait_for_rebuild()
    assert isinstance(cache.current().patterns, PatternIndex)
    assert cache.current().live_records == 4
    assert matched(cache, f"{sprocket} 5") == ["w3"]


def test_a_catalog_is_built_with_the_collector_paused_and_freed_without_it(
    sessions: sessionmaker[Session], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The collector waits for a build; a catalog, frozen out of its passes at start, is
    freed all the same once replaced, since it holds no reference cycles."""
    for number in range(3):
        put(sessions, widget(number))
    collecting: list[bool] = []
    build = PatternIndex.build

    def watched(entries: Iterable[Any]) -> PatternIndex:
        collecting.append(gc.isenabled())
        return build(entries)

    monkeypatch.setattr(PatternIndex, "build", watched)
    with transaction(sessions) as session:
        built = catalogs.load_catalog(RecordStore(session), 1)
    assert collecting == [False] and gc.isenabled()
    assert matched_in(built, "Widget 2 is misaligned by 8") == ["w2"]
    alive: list[weakref.ref[Any]] = [weakref.ref(built), weakref.ref(built.patterns)]
    gc.disable()
    try:
        del built
        assert [ref() for ref in alive] == [None, None]
    finally:
        gc.enable()
