"""Liveness and readiness probes."""

from __future__ import annotations

from fastapi import APIRouter, Request
from sqlalchemy import Connection, inspect, text
from sqlalchemy.exc import SQLAlchemyError

from app.errors import ServiceUnavailable

router = APIRouter(tags=["health"])


@router.get("/healthz", summary="The process is up")
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


@router.get("/readyz", summary="The database is reachable and its schema current")
def readyz(request: Request) -> dict[str, str]:
    engine = request.app.state.engine
    expected = request.app.state.schema_head
    try:
        with engine.connect() as connection:
            revision = _schema_revision(connection)
    except SQLAlchemyError:
        raise ServiceUnavailable("The database is unreachable.") from None
    if revision != expected:
        raise ServiceUnavailable(f"Schema revision is {revision}, expected {expected}.")
    return {"status": "ready", "schemaRevision": str(revision)}


def _schema_revision(connection: Connection) -> str | None:
    """The applied Alembic revision, read directly: a probe should be one cheap, quiet query."""
    if not inspect(connection).has_table("alembic_version"):
        return None
    revision = connection.scalar(text("SELECT version_num FROM alembic_version"))
    return str(revision) if revision is not None else None
