"""Data migrations, on a real database of each kind: rows written before a migration are
brought to what the store writes now."""

from __future__ import annotations

from alembic import command
from sqlalchemy import select, update
from sqlalchemy.orm import Session, sessionmaker

from app.config import load_settings
from app.db import make_engine, make_session_factory
from app.knowledge.calls import MINED_CALLS
from app.knowledge.public_names import MINED_API
from app.migrate import alembic_config, upgrade
from app.records.importer import import_paths
from app.records.models import RecordRow
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
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.stamp(config, "0005_store_versions")
    upgrade(settings, engine)
    with sessions() as session:
        filled = dict(session.execute(select(RecordRow.id, RecordRow.releases)).all())
    engine.dispose()
    assert filled == written
    assert all(releases and releases.startswith(" 0.") for releases in filled.values())
