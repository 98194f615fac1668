"""Liveness and readiness probes."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse
from sqlalchemy import Connection, inspect, text
from sqlalchemy.exc import SQLAlchemyError

from app.api.problems import DATABASE_RETRY_AFTER_S, problem_response
from app.errors import ServiceUnavailable

router = APIRouter(tags=["health"])


@router.get("/healthz", summary="The process is up")
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


@router.get("/readyz", summary="The database is reachable, its schema current, the catalog built")
def readyz(request: Request) -> Response:
    """Ready once the catalog is built. While the database is unreachable the answer is a
    503 that says whether match and compute still answer, from the catalog in memory."""
    engine = request.app.state.engine
    expected = request.app.state.schema_head
    catalog = request.app.state.catalog.newest()
    try:
        with engine.connect() as connection:
            revision = _schema_revision(connection)
    except SQLAlchemyError:
        if catalog is None:
            raise ServiceUnavailable("The database is unreachable.") from None
        return problem_response(
            503,
            "Service unavailable",
            "The database is unreachable; match and compute answer from the catalog in "
            f"memory (store version {catalog.version}), which may be stale.",
            instance=request.url.path,
            headers={"Retry-After": str(DATABASE_RETRY_AFTER_S)},
            catalogVersion=catalog.version,
        )
    if revision != expected:
        raise ServiceUnavailable(f"Schema revision is {revision}, expected {expected}.")
    if catalog is None:
        raise ServiceUnavailable("The catalog of records is not built yet.")
    return JSONResponse(
        {"status": "ready", "schemaRevision": str(revision), "catalogVersion": catalog.version}
    )


def _schema_revision(connection: Connection) -> str | None:
    """The applied Alembic revision, read directly: a probe should be one cheap, quiet query."""
    if not inspect(connection).has_table("alembic_version"):
        return None
    revision = connection.scalar(text("SELECT version_num FROM alembic_version"))
    return str(revision) if revision is not None else None
