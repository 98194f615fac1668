"""SQLite's own tuning: a small page cache per connection, widened only while a bulk write
runs, and the planner's statistics refreshed after a bulk import."""

from __future__ import annotations

import json
from pathlib import Path

from sqlalchemy import inspect, text

from app.config import load_settings
from app.db import (
    SQLITE_BULK_CACHE_KIB,
    SQLITE_CACHE_KIB,
    make_engine,
    make_session_factory,
    widen_cache_for_bulk_write,
)
from app.migrate import upgrade
from app.records.importer import BULK_IMPORT_RECORDS, import_paths
from benchmarks import corpus


def test_a_bulk_writes_wide_cache_is_given_back_with_its_connection(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'errata.sqlite3'}")
    factory = make_session_factory(engine)
    try:
        with factory() as session:
            cache = text("PRAGMA cache_size")
            assert session.scalar(cache) == -SQLITE_CACHE_KIB
            widen_cache_for_bulk_write(session)
            assert session.scalar(cache) == -SQLITE_BULK_CACHE_KIB
            connection = session.connection().connection.dbapi_connection
        with factory() as session:
            assert session.connection().connection.dbapi_connection is connection  # pooled
            assert session.scalar(cache) == -SQLITE_CACHE_KIB
    finally:
        engine.dispose()


def test_a_bulk_import_leaves_the_planner_statistics(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'errata.sqlite3'}"
    engine = make_engine(url)
    upgrade(load_settings(database_url=url), engine)
    factory = make_session_factory(engine)
    documents = list(corpus.record_documents(BULK_IMPORT_RECORDS + 11))
    few, many = tmp_path / "few.jsonl", tmp_path / "many.jsonl"
    few.write_text("".join(json.dumps(doc) + "\n" for doc in documents[:10]))
    many.write_text("".join(json.dumps(doc) + "\n" for doc in documents[10:]))
    try:
        import_paths(factory, [few])
        assert "sqlite_stat1" not in inspect(engine).get_table_names()
        import_paths(factory, [many])
        with engine.connect() as connection:
            analyzed = connection.scalar(text("SELECT count(*) FROM sqlite_stat1"))
        assert analyzed
    finally:
        engine.dispose()
