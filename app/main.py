"""The app factory: everything is built from the settings it is given, nothing at import time."""

from __future__ import annotations

import gc
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles
from sqlalchemy import Engine
from starlette.middleware.cors import CORSMiddleware

from app import collector
from app.allocator import cap_malloc_arenas
from app.answers.catalog_cache import DATABASE_UNAVAILABLE, CatalogCache
from app.api import chatops, compute, health, match, problems, records
from app.api.disconnects import CancelWhenGone
from app.api.headers import DefaultHeaders
from app.api.limits import BodySizeLimit, RateLimit
from app.api.offload import SharedRun, cpu_turns
from app.api.openapi import document_problems
from app.chatops.replays import ReplayCache
from app.config import Settings, load_settings
from app.db import make_engine, make_session_factory
from app.matching.frames import FrameIndex
from app.migrate import head_revision
from app.observability import setup as observability
from app.observability.logs import configure_logging, flush_access_log
from app.observability.multiprocess import forget_process
from app.records.seeding import prepare_database
from app.records.version_watch import VersionedLRU, VersionWatch, forget_after_writes
from app.web import routes as web
from app.web.pages import STATIC_DIR, SWAGGER_UI_DIR, problem_page

log = logging.getLogger(__name__)
# Record answers (GET /api/errors/{id}) each process remembers: a few KB each.
RECORD_ANSWERS = 1024


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or load_settings()
    cap_malloc_arenas()  # each worker process, before its threads start
    configure_logging(settings.log_level, settings.log_format)
    engine = make_engine(
        settings.resolved_database_url,
        statement_timeout_ms=settings.database_statement_timeout_ms,
        pool=settings.pool_limits,
    )

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        app.state.cpu_turns = cpu_turns()
        # What the process holds once started, the catalog above all, is frozen out of every
        # later collection, each of which would walk it all again (0.2 s at 100,000
        # records); the collector waits until then, so that it does not walk it even once.
        # A catalog replaced later is freed all the same: it holds no reference cycles.
        with collector.paused():
            if settings.prepare_database:
                prepare_database(settings, engine, app.state.session_factory)
            # Built before the first request (and /readyz) is answered; if the database
            # cannot be read now, the first request that needs the catalog builds it.
            try:
                app.state.catalog.current()
            except DATABASE_UNAVAILABLE:
                log.warning("catalog not built at start: database unreachable")
            # Every match reads it; loaded later, its 345,000 objects would be walked by
            # each full collection a long paste sets off (64 ms, the GIL held).
            FrameIndex.load()
            gc.freeze()
        yield
        gc.unfreeze()  # collectable again once the app is over (a test process starts many)
        flush_access_log()
        engine.dispose()
        forget_process()

    app = FastAPI(
        title="errata",
        summary="Known errors, matched and fixed: JAX Pallas / Mosaic GPU alignment errors.",
        version="0.1.0",
        lifespan=lifespan,
        docs_url=None,  # /docs is a page of app/web, with Swagger UI served from here
        redoc_url=None,
    )
    _hold_state(app, settings, engine)
    _route(app, settings)
    _add_middleware(app, settings)
    return app


def _hold_state(app: FastAPI, settings: Settings, engine: Engine) -> None:
    """What the app's requests share, on ``app.state``: the database, caches, shared runs."""
    app.state.settings = settings
    app.state.engine = engine
    app.state.session_factory = make_session_factory(engine)
    app.state.version_watch = VersionWatch(settings.store_version_max_age_s)
    forget_after_writes(app.state.session_factory, app.state.version_watch)
    app.state.record_answers = VersionedLRU[bytes](app.state.version_watch, RECORD_ANSWERS)
    app.state.schema_head = head_revision(settings)
    app.state.catalog = CatalogCache(app.state.session_factory, app.state.version_watch)
    app.state.catalog_refresh = SharedRun()
    app.state.record_refresh = SharedRun()
    app.state.slack_replays = ReplayCache()


def _route(app: FastAPI, settings: Settings) -> None:
    """Problem documents, the API's and the web pages' routes, the static files, and the
    documentation site where it is built (served from this process: no network needed)."""
    problems.install(app, page=problem_page)
    document_problems(app)
    # Routes are tried in order: the probes, then the busiest; compute before match, whose
    # millisecond of work dwarfs a few more route checks.
    app.include_router(health.router)
    app.include_router(compute.router)
    app.include_router(match.router)
    app.include_router(records.router)
    app.include_router(records.import_router)
    app.include_router(chatops.router)
    app.include_router(web.router)
    app.mount("/static/swagger-ui", StaticFiles(directory=SWAGGER_UI_DIR), name="swagger-ui")
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    if (settings.guide_dir / "index.html").is_file():
        app.mount("/guide", StaticFiles(directory=settings.guide_dir, html=True), name="guide")
    else:
        app.add_api_route("/guide/", web.guide_not_built, include_in_schema=False)


def _add_middleware(app: FastAPI, settings: Settings) -> None:
    """The middleware, innermost first: client gone, body size, rate limit, CORS, headers,
    observability."""
    app.add_middleware(CancelWhenGone)
    app.add_middleware(BodySizeLimit, max_bytes=settings.max_body_bytes)
    app.add_middleware(
        RateLimit, rate=settings.rate_limit_per_second, burst=settings.rate_limit_burst
    )
    if settings.cors_allow_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.cors_allow_origins,
            allow_methods=["GET", "POST", "PUT"],
            allow_headers=["Authorization", "Content-Type", "X-Request-ID"],
            expose_headers=["X-Request-ID", "Retry-After"],
        )
    app.add_middleware(DefaultHeaders)
    observability.install(app)  # outermost: request ids, access log, latency
