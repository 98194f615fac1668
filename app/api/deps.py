"""Request-scoped dependencies: the unit of work and curator authentication.

They are ``async``: FastAPI runs a plain ``def`` dependency in the thread pool, and a hop
there and back costs more than these do. Whatever waits on the database (a commit, a
rollback) still runs in the thread pool.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated

import anyio
from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool

from app.answers.catalog import Catalog
from app.answers.catalog_cache import CatalogCache
from app.answers.match import MatchService
from app.api.headers import STALE_HEADER, add_response_header
from app.api.offload import SharedRun
from app.api.tokens import token_allowed
from app.config import Settings
from app.errors import Forbidden, Unauthorized
from app.records.store import RecordStore
from app.records.version_watch import has_written


async def get_settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


async def get_store(request: Request) -> AsyncIterator[RecordStore]:
    """The store over the request's unit of work: committed when the endpoint returns, else
    rolled back.

    A session connects on its first query, so a request answered from memory (a match or a
    compute with warm caches) opens no connection and has nothing to commit.
    """
    session: Session = request.app.state.session_factory()
    try:
        yield RecordStore(session, request.app.state.version_watch)
        if session.in_transaction():
            wrote = has_written(session)
            await run_in_threadpool(session.commit)
            if wrote:
                await catch_up(request)
    except BaseException:
        if session.in_transaction():
            with anyio.CancelScope(shield=True):  # a read whose client has gone, too
                await run_in_threadpool(session.rollback)
        raise
    finally:
        if session.in_transaction():  # cancelled before its commit or rollback ran
            with anyio.CancelScope(shield=True):
                await run_in_threadpool(session.close)
        else:
            session.close()  # nothing to release: no I/O


StoreDep = Annotated[RecordStore, Depends(get_store, scope="function")]


async def get_catalog(request: Request) -> Catalog:
    """The process's catalog, without waiting for the database: when the version reading
    has aged, the catalog held answers while one run in the thread pool reads the version
    and catches up (a write through this process has caught up before its answer, see
    ``catch_up``). Only a process without any catalog yet waits for one.

    While the database is unreachable (or the pool has no connection to spare) the answer
    says the catalog may be stale, and why (``X-Catalog-Stale``). The match and compute
    endpoints call this themselves: on them, FastAPI's resolving of a dependency costs more
    than the lookup.
    """
    cache: CatalogCache = request.app.state.catalog
    catalog = cache.ready()
    if catalog is not None:
        return catalog
    refresh: SharedRun = request.app.state.catalog_refresh
    catalog = cache.newest()
    if catalog is None:
        catalog = await refresh.run(cache.generation, cache.current)
    else:
        refresh.start(cache.generation, cache.current)
    if cache.stale_reason:
        add_response_header(
            request,
            STALE_HEADER,
            f"{cache.stale_reason}; catalog of store version {catalog.version}",
        )
    return catalog


async def catch_up(request: Request) -> None:
    """After a write commits: the catalog takes it in before the writer is answered, so the
    writer's next match sees it, while every other request goes on with the catalog held.
    (A write of many records starts a rebuild instead, and does not wait for it.)"""
    cache: CatalogCache = request.app.state.catalog
    refresh: SharedRun = request.app.state.catalog_refresh
    await refresh.run(cache.generation, cache.current)


CatalogDep = Annotated[Catalog, Depends(get_catalog)]


async def get_match_service(catalog: CatalogDep) -> MatchService:
    return MatchService(catalog)


MatchServiceDep = Annotated[MatchService, Depends(get_match_service)]

_bearer = HTTPBearer(auto_error=False, description="A curator token from ERRATA_ADMIN_TOKENS.")


async def require_curator(
    settings: Annotated[Settings, Depends(get_settings)],
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> None:
    """401 without a bearer token, 403 with one that is not configured (constant-time compare)."""
    if credentials is None or not credentials.credentials:
        raise Unauthorized("This endpoint needs 'Authorization: Bearer <token>'.")
    if not token_allowed(credentials.credentials, settings.admin_tokens):
        raise Forbidden("The bearer token is not allowed to write records.")


CuratorDep = Depends(require_curator)
