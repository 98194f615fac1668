"""Data migrations, on a real database of each kind: rows written before a migration are
brought to what the store writes now."""

from __future__ import annotations

import json

from alembic import command
from sqlalchemy import inspect, select, text, update
from sqlalchemy.orm import Session, sessionmaker

from app.config import CURATED_SEED_PATHS, load_settings
from app.db import make_engine, make_session_factory
from app.knowledge.calls import MINED_CALLS
from app.knowledge.public_names import MINED_API
from app.migrate import alembic_config, upgrade
from app.records.importer import import_paths
from app.records.models import RecordRow
from app.records.store import RecordFilters, RecordStore
from tests.conftest import Backend


def test_the_releases_of_pallas_api_errors_written_before_are_filled_in(backend: Backend) -> None:
    settings = load_settings(database_url=backend.new_database())
    engine = make_engine(settings.resolved_database_url)
    upgrade(settings, engine)
    sessions: sessionmaker[Session] = make_session_factory(engine)
    import_paths(sessions, [MINED_API, MINED_CALLS])
    with sessions() as session:
        written = dict(session.execute(select(RecordRow.id, RecordRow.releases)).all())
        # As the store wrote them before: no releases for these records.
        session.execute(update(RecordRow).values(releases=None))
        session.commit()
    config = alembic_config(settings)
    with engine.begin() as connection:  # 0006 again, on the rows as they were
        config.attributes["connection"] = connection
        command.stamp(config, "0005_store_versions")
        command.upgrade(config, "0006_api_releases")
        command.stamp(config, "head")
    with sessions() as session:
        filled = dict(session.execute(select(RecordRow.id, RecordRow.releases)).all())
    engine.dispose()
    assert filled == written
    assert all(releases and releases.startswith(" 0.") for releases in filled.values())


def test_the_search_index_goes_down_to_the_substring_column_and_comes_back(
    backend: Backend,
) -> None:
    """0007 down: the substring search's ``search_text`` as the store wrote it, no index;
    up again: the words and the index as the store writes them, found as before."""
    settings = load_settings(database_url=backend.new_database())
    engine = make_engine(settings.resolved_database_url)
    upgrade(settings, engine)
    sessions: sessionmaker[Session] = make_session_factory(engine)
    import_paths(sessions, [*CURATED_SEED_PATHS, MINED_API])
    words = select(
        RecordRow.id,
        RecordRow.search_message,
        RecordRow.search_names,
        RecordRow.search_body,
        RecordRow.curated,
    )
    with sessions() as session:
        written = session.execute(words).all()
        found = RecordStore(session).search(RecordFilters(q="warpgroup"), limit=50, cursor=None)
    assert {curated for *_, curated in written} == {True, False}  # seeds, and mined names

    config = alembic_config(settings)
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.downgrade(config, "0006_api_releases")
    with engine.connect() as connection:
        old = connection.execute(text("SELECT id, search_text, document FROM records")).all()
        tables = inspect(connection).get_table_names()
        columns = {column["name"] for column in inspect(connection).get_columns("records")}
    for _, search_text, document in old:
        document = json.loads(document) if isinstance(document, str) else document
        parts = [document["errorMessage"], document.get("documentation") or ""]
        assert search_text == "\n".join([*parts, *document.get("solutions", [])]).lower()
    assert "record_search" not in tables
    assert not columns & {"search_vector", "search_message", "curated"}

    upgrade(settings, engine)
    with sessions() as session:
        assert sorted(session.execute(words).all()) == sorted(written)
        again = RecordStore(session).search(RecordFilters(q="warpgroup"), limit=50, cursor=None)
        if backend.name == "sqlite":
            check = "INSERT INTO record_search(record_search, rank) VALUES ('integrity-check', 1)"
            session.execute(text(check))
    engine.dispose()
    assert [row.id for row in again.rows] == [row.id for row in found.rows]
    assert again.snippets == found.snippets
