"""The app factory: everything is built from the settings it is given, nothing at import time."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from app.api import compute, health, match, problems, records
from app.api.limits import BodySizeLimit
from app.config import Settings, load_settings
from app.db import make_engine, make_session_factory
from app.migrate import head_revision
from app.records.seeding import prepare_database
from app.services.match import MatchIndexCache


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or load_settings()
    engine = make_engine(settings.resolved_database_url)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if settings.prepare_database:
            prepare_database(settings, engine, app.state.session_factory)
        yield
        engine.dispose()

    app = FastAPI(
        title="errata",
        summary="Known errors, matched and fixed: JAX Pallas / Mosaic GPU alignment errors.",
        version="0.1.0",
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.state.engine = engine
    app.state.session_factory = make_session_factory(engine)
    app.state.schema_head = head_revision(settings)
    app.state.match_cache = MatchIndexCache()

    problems.install(app)
    app.include_router(health.router)
    app.include_router(records.router)
    app.include_router(records.import_router)
    app.include_router(compute.router)
    app.include_router(match.router)
    app.add_middleware(BodySizeLimit, max_bytes=settings.max_body_bytes)
    return app
