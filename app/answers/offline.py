"""Answering on this machine, without a server: the database, and what answering needs, from
its snapshot. ``errata match``, ``errata run``, ``errata.explain`` and the notebook extension
answer here.

``match`` and ``compute`` take the catalog, the frame index and the compiler records from
a snapshot (``answers.snapshot``) while the database and errata's files stand as they were
when it was built; that reading loads neither the settings nor any database code. Else
they are built as the service builds them, from the database as it is (a fresh one is
prepared first), and snapshotted for the next command. Only an SQLite file is snapshotted:
another database's state cannot be told without asking it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

    from sqlalchemy import Engine
    from sqlalchemy.orm import Session, sessionmaker

    from app.answers.answer import MatchAnswer
    from app.answers.links import Links
    from app.answers.snapshot import Prepared
    from app.config import Settings


def database(settings: Settings) -> tuple[Engine, sessionmaker[Session]]:
    from app.db import make_engine, make_session_factory

    engine = make_engine(settings.resolved_database_url)
    return engine, make_session_factory(engine)


def prepared_database(settings: Settings) -> tuple[Engine, sessionmaker[Session]]:
    """The database as it is, without loading the migrations, when errata prepared it before
    (it holds a record); a fresh one (no tables, or no record) is prepared first."""
    from sqlalchemy import select
    from sqlalchemy.exc import DBAPIError

    from app.records.models import RecordRow

    engine, factory = database(settings)
    try:
        with factory() as session:
            if session.scalar(select(RecordRow.id).limit(1)) is not None:
                return engine, factory
    except DBAPIError:  # no tables yet
        pass
    from app.records.seeding import prepare_database

    prepare_database(settings, engine, factory)
    return engine, factory


def prepared() -> Prepared:
    """The catalog of the database's records, the frame index and the compiler records:
    the snapshot's while it is current, else built and snapshotted."""
    from app.answers.snapshot import read_snapshot, snapshot_file
    from app.matching.compiler_advice import keep_compiler_table

    path = snapshot_file()
    found = read_snapshot(path)
    if found is None:
        return _built(path)
    keep_compiler_table(found.compilers)
    return found


def _built(path: Path) -> Prepared:
    """Built as the service builds them, and written to ``path`` unless something the
    snapshot names changed while they were built (a write through another process)."""
    from app.answers.catalog_cache import CatalogCache
    from app.answers.snapshot import Prepared, database_files, source_state, write_snapshot
    from app.config import load_settings
    from app.db import sqlite_file
    from app.matching.compiler_advice import compiler_table
    from app.matching.frames import FrameIndex
    from app.records.version_watch import VersionWatch

    settings = load_settings()
    file = sqlite_file(settings.resolved_database_url)
    files = database_files(file) if file is not None else ()
    # Closed once prepared: SQLite folds its log into its file as its last connection closes,
    # which a reading that follows leaves as it is.
    prepared_database(settings)[0].dispose()
    sources = source_state(files)
    engine, factory = database(settings)
    try:
        catalog = CatalogCache(factory, VersionWatch()).current()
    finally:
        engine.dispose()
    built = Prepared(catalog, FrameIndex.load(), compiler_table())
    if file is not None and source_state(files) == sources:
        write_snapshot(path, built, files, sources)
    return built


def match_here(ready: Prepared, text: str, jax_version: str | None, links: Links) -> MatchAnswer:
    """A paste's match and its answers, as ``POST /api/match`` answers them, from what
    ``prepared`` read; a ``ProblemError`` for input the service refuses."""
    from app.answers.answer import MatchAnswer
    from app.answers.cards import match_answers
    from app.answers.match import MatchService
    from app.schemas.match import MatchRequest

    service = MatchService(ready.catalog, frames=ready.frames)
    answer = service.match(MatchRequest(text=text or " ", jaxVersion=jax_version))
    answers = match_answers(answer, ready.catalog.records, links)
    return MatchAnswer.model_construct(**dict(answer), answers=answers)
