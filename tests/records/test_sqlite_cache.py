"""An SQLite connection keeps a small page cache, widened only while a bulk write runs."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import text

from app.db import (
    SQLITE_BULK_CACHE_KIB,
    SQLITE_CACHE_KIB,
    make_engine,
    make_session_factory,
    widen_cache_for_bulk_write,
)


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
