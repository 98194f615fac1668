"""First start: bring the schema up to date and load the shipped records into an empty store."""

from __future__ import annotations

import logging

from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session, sessionmaker

from app.config import Settings
from app.migrate import upgrade
from app.records.importer import ImportSummary, import_paths
from app.records.models import RecordRow

log = logging.getLogger(__name__)


class SeedError(RuntimeError):
    pass


def prepare_database(
    settings: Settings, engine: Engine, factory: sessionmaker[Session]
) -> ImportSummary | None:
    """Migrate, then seed if no record exists yet. Returns the seed import's summary, if any."""
    upgrade(settings, engine)
    with factory() as session:
        if session.scalar(select(func.count()).select_from(RecordRow)):
            return None
    summary = import_paths(factory, [path for path in settings.seed_paths if path.exists()])
    if summary.failed:
        raise SeedError("; ".join(str(issue) for issue in summary.issues))
    log.info(
        "loaded the seeds: %d records and %d annotations (errata's corrections, and the"
        " mined facts of curated records' sites) added",
        summary.added - summary.annotations_added,
        summary.annotations_added,
    )
    return summary
