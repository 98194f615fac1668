"""Request-scoped dependencies: the unit of work and curator authentication."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterator
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.orm import Session

from app.config import Settings
from app.db import transaction
from app.errors import Forbidden, Unauthorized
from app.records.store import RecordStore
from app.services.match import MatchService


def get_settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


def get_session(request: Request) -> Iterator[Session]:
    """The request's unit of work: committed when the endpoint returns, else rolled back."""
    with transaction(request.app.state.session_factory) as session:
        yield session


SessionDep = Annotated[Session, Depends(get_session, scope="function")]


def get_store(session: SessionDep) -> RecordStore:
    return RecordStore(session)


StoreDep = Annotated[RecordStore, Depends(get_store)]


def get_match_service(request: Request, store: StoreDep) -> MatchService:
    return MatchService(store, request.app.state.match_cache)


MatchServiceDep = Annotated[MatchService, Depends(get_match_service)]

_bearer = HTTPBearer(auto_error=False, description="A curator token from ERRATA_ADMIN_TOKENS.")


def require_curator(
    settings: Annotated[Settings, Depends(get_settings)],
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> None:
    """401 without a bearer token, 403 with one that is not configured (constant-time compare)."""
    if credentials is None or not credentials.credentials:
        raise Unauthorized("This endpoint needs 'Authorization: Bearer <token>'.")
    given = hashlib.sha256(credentials.credentials.encode()).digest()
    allowed = False
    for token in settings.admin_tokens:
        expected = hashlib.sha256(token.get_secret_value().encode()).digest()
        allowed |= hmac.compare_digest(given, expected)
    if not allowed:
        raise Forbidden("The bearer token is not allowed to write records.")


CuratorDep = Depends(require_curator)
