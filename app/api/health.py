"""Liveness and readiness probes."""

from __future__ import annotations

from fastapi import APIRouter, Request
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

from app.errors import ServiceUnavailable
from app.migrate import current_revision

router = APIRouter(tags=["health"])


@router.get("/healthz", summary="The process is up")
def healthz() -> dict[str, str]:
    return {"status": "ok"}


@router.get("/readyz", summary="The database is reachable and its schema current")
def readyz(request: Request) -> dict[str, str]:
    engine = request.app.state.engine
    expected = request.app.state.schema_head
    try:
        with engine.connect() as connection:
            connection.execute(text("SELECT 1"))
        revision = current_revision(engine)
    except SQLAlchemyError:
        raise ServiceUnavailable("The database is unreachable.") from None
    if revision != expected:
        raise ServiceUnavailable(f"Schema revision is {revision}, expected {expected}.")
    return {"status": "ready", "schemaRevision": str(revision)}
