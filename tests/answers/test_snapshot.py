"""A snapshot of what answering needs answers as what it was built from, and is read only
while errata's code and data and the database stand as they did."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.answers import snapshot
from app.answers.cards import match_answers
from app.answers.catalog_cache import CatalogCache
from app.answers.compute import ComputeService
from app.answers.links import Links
from app.answers.match import MatchService
from app.answers.snapshot import (
    Prepared,
    database_files,
    read_snapshot,
    source_state,
    write_snapshot,
)
from app.config import load_settings
from app.db import make_engine, make_session_factory
from app.matching.compiler_advice import compiler_table
from app.matching.frames import FrameIndex
from app.records.seeding import prepare_database
from app.records.version_watch import VersionWatch
from app.schemas.compute import ComputeRequest
from app.schemas.match import MatchRequest
from tests.matching.catalog import PASTES, TRACEBACKS, fixture_text


@pytest.fixture(scope="module")
def shipped(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Prepared, Path]]:
    """What answering needs, built from a database of every shipped record, as errata match
    builds it; and the database's file."""
    database = tmp_path_factory.mktemp("shipped") / "errata.sqlite3"
    settings = load_settings(database_url=f"sqlite:///{database}")
    engine = make_engine(settings.resolved_database_url)
    factory = make_session_factory(engine)
    prepare_database(settings, engine, factory)
    catalog = CatalogCache(factory, VersionWatch()).current()
    engine.dispose()
    yield Prepared(catalog, FrameIndex.load(), compiler_table()), database


def test_a_snapshot_answers_every_fixture_paste_as_what_it_was_built_from(
    shipped: tuple[Prepared, Path], tmp_path: Path
) -> None:
    built, database = shipped
    files = database_files(database)
    path = tmp_path / "snapshot.pickle"
    write_snapshot(path, built, files, source_state(files))
    kept = read_snapshot(path)
    assert kept is not None and kept.compilers == built.compilers
    links = Links(base="")
    for paste in sorted([*TRACEBACKS.iterdir(), *PASTES.iterdir()]):
        request = MatchRequest(text=fixture_text(paste))
        fresh = MatchService(built.catalog, frames=built.frames).match(request)
        read = MatchService(kept.catalog, frames=kept.frames).match(request)
        assert read.model_dump_json() == fresh.model_dump_json(), paste.name
        cards = match_answers(fresh, built.catalog.records, links)
        assert match_answers(read, kept.catalog.records, links) == cards, paste.name
    block = ComputeRequest(operation="copy_gmem_to_smem", shape=[7], dtype="int4")
    computed = ComputeService(kept.catalog).compute(block)
    assert computed == ComputeService(built.catalog).compute(block)


def test_a_snapshot_is_not_read_once_what_it_was_built_from_changed(
    shipped: tuple[Prepared, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file of the code or the data changed, added or removed, or the database written
    (its file, or its write-ahead log): each makes the snapshot stale."""
    built, _ = shipped
    code, data = tmp_path / "app", tmp_path / "data"
    for folder in (code, data):
        folder.mkdir()
        (folder / "a.py").write_text("1")
    monkeypatch.setattr(snapshot, "APP_DIR", code)
    monkeypatch.setattr(snapshot, "DATA_DIR", data)
    database = tmp_path / "errata.sqlite3"
    database.write_text("records")
    files = database_files(database)
    path = tmp_path / "snapshot.pickle"
    changes = [
        lambda: (code / "a.py").write_text("22"),
        lambda: (data / "b.json").write_text("{}"),
        lambda: (data / "a.py").unlink(),
        lambda: database.write_text("more records"),
        lambda: files[1].write_text("a write"),
    ]
    for change in changes:
        write_snapshot(path, built, files, source_state(files))
        assert read_snapshot(path) is not None
        change()
        assert read_snapshot(path) is None
    (data / ".b.json.1.partial").write_text("a miner's file, half written")
    write_snapshot(path, built, files, source_state(files))
    (data / ".b.json.1.partial").unlink()
    assert read_snapshot(path) is not None  # hidden files are no data


def test_a_file_that_is_no_whole_snapshot_is_not_read(
    shipped: tuple[Prepared, Path], tmp_path: Path
) -> None:
    built, database = shipped
    files = database_files(database)
    path = tmp_path / "snapshot.pickle"
    assert read_snapshot(path) is None
    write_snapshot(path, built, files, source_state(files))
    whole = path.read_bytes()
    for broken in (whole[: len(whole) // 2], b"not a pickle", whole[:10]):
        path.write_bytes(broken)
        assert read_snapshot(path) is None


def test_only_the_most_recently_written_snapshots_are_kept(
    shipped: tuple[Prepared, Path], tmp_path: Path
) -> None:
    built, database = shipped
    files = database_files(database)
    older = [tmp_path / f"catalog-{n}.pickle" for n in range(snapshot.SNAPSHOTS_KEPT + 2)]
    for age, path in enumerate(older):
        path.write_bytes(b"an older build")
        os.utime(path, ns=(age * 10**9, age * 10**9))
    newest = tmp_path / "catalog-new.pickle"
    write_snapshot(newest, built, files, source_state(files))
    kept = sorted(tmp_path.glob("catalog-*.pickle"))
    assert kept == sorted([newest, *older[-(snapshot.SNAPSHOTS_KEPT - 1) :]])
