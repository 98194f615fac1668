"""Every error leaves as RFC 9457 application/problem+json, with a detail naming the cause."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from fastapi import FastAPI, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect
from starlette.types import Scope

from app.api.headers import DEFAULT_HEADERS
from app.errors import ProblemError, field_errors, fields_detail
from app.observability.routes import methods_for
from app.rendering.negotiation import prefers_html

PROBLEM_JSON = "application/problem+json"
DATABASE_RETRY_AFTER_S = 5
# Every pooled connection was in use for the pool's whole wait: a burst, over in seconds.
BUSY_RETRY_AFTER_S = 2
CLIENT_CLOSED_REQUEST = 499  # nginx's status for a client that left before its answer
log = logging.getLogger(__name__)
# Why FastAPI's own parsing of a JSON body failed (the cause of its 400), by the error's type.
UNREADABLE_JSON: dict[type[Exception], str] = {
    UnicodeDecodeError: "not UTF-8",
    RecursionError: "nested too deeply",
}


def problem_response(
    status: int,
    title: str,
    detail: str,
    *,
    instance: str | None = None,
    headers: Mapping[str, str] | None = None,
    **extra: Any,
) -> JSONResponse:
    body: dict[str, Any] = {
        "type": "about:blank",
        "title": title,
        "status": status,
        "detail": detail,
    }
    if instance:
        body["instance"] = instance
    body.update({key: value for key, value in extra.items() if value})
    sent = dict(headers or {})
    if status == 401:
        sent.setdefault("WWW-Authenticate", "Bearer")
    return JSONResponse(body, status_code=status, media_type=PROBLEM_JSON, headers=sent or None)


ProblemPage = Callable[[int, str, str, Mapping[str, str] | None], Response]
"""Renders a problem as an HTML page: status, title, detail, headers."""
# Paths whose callers are programs: problem+json whatever their Accept header says.
API_PREFIXES = ("/api/", "/chatops/", "/openapi.json", "/metrics", "/healthz", "/readyz")


def problem_for(
    scope: Scope,
    status: int,
    title: str,
    detail: str,
    *,
    headers: Mapping[str, str] | None = None,
    **extra: Any,
) -> Response:
    """problem+json; for a browser asking for a page, the page the app installed for it."""
    app = scope.get("app")
    page: ProblemPage | None = getattr(app.state, "problem_page", None) if app else None
    if page is not None and _wants_page(scope):
        return page(status, title, detail, headers)
    return problem_response(
        status, title, detail, instance=scope.get("path"), headers=headers, **extra
    )


def _wants_page(scope: Scope) -> bool:
    if scope.get("path", "").startswith(API_PREFIXES):
        return False
    accept = dict(scope.get("headers") or []).get(b"accept", b"").decode("latin-1")
    return prefers_html(accept)


def _unreadable_json(exc: HTTPException) -> str | None:
    cause = exc.__cause__
    return next((why for kind, why in UNREADABLE_JSON.items() if isinstance(cause, kind)), None)


def describe_validation_errors(errors: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    for error in errors:
        if error.get("type") == "json_invalid":
            position = error.get("ctx", {}).get("error", "")
            return f"Malformed JSON body: {position}".rstrip(": "), []
    fields = field_errors(errors)
    return fields_detail(fields) or "Invalid request", fields


def install(app: FastAPI, page: ProblemPage | None = None) -> None:
    """The handlers that turn every error into a problem; ``page`` renders one for browsers."""
    app.state.problem_page = page

    @app.exception_handler(ProblemError)
    async def _problem(request: Request, exc: ProblemError) -> Response:
        headers = {"Retry-After": str(exc.retry_after)} if exc.retry_after is not None else None
        return problem_for(
            request.scope, exc.status, exc.title, exc.detail, headers=headers, errors=exc.errors
        )

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> Response:
        detail, fields = describe_validation_errors(list(exc.errors()))
        return problem_for(request.scope, 422, "Invalid input", detail, errors=fields)

    @app.exception_handler(HTTPException)
    async def _http(request: Request, exc: HTTPException) -> Response:
        title = {404: "Not found", 405: "Method not allowed"}.get(exc.status_code, "Error")
        detail = exc.detail if isinstance(exc.detail, str) else title
        headers = dict(exc.headers or {})
        if exc.status_code == 404 and detail == "Not Found":
            detail = f"No route {request.method} {request.url.path}."
        elif exc.status_code == 405:
            # Starlette names the methods of the first route on the path; list every route's.
            allowed = methods_for(request.app, request.url.path)
            if allowed:
                headers["Allow"] = ", ".join(allowed)
        elif exc.status_code == 400 and (reason := _unreadable_json(exc)) is not None:
            # A JSON body that is not UTF-8, or nested deeper than the parser goes: as
            # malformed as any other bad JSON, as the bodies read with pydantic's parser say.
            return problem_response(
                422,
                "Invalid input",
                f"Malformed JSON body: {reason}",
                instance=request.url.path,
            )
        return problem_for(request.scope, exc.status_code, title, detail, headers=headers)

    # A server that went away, or a connection it dropped.
    for unavailable in (OperationalError, InterfaceError):
        app.add_exception_handler(unavailable, _database_down)
    app.add_exception_handler(PoolTimeout, _pool_exhausted)

    @app.exception_handler(ClientDisconnect)
    async def _client_gone(_request: Request, _exc: ClientDisconnect) -> Response:
        """The client left before its body arrived: no one to answer, and no error of ours.
        The status is never sent; it is what the access log and the metrics record."""
        return Response(status_code=CLIENT_CLOSED_REQUEST)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> Response:
        log.exception("unhandled error on %s %s", request.method, request.url.path)
        # This answer is sent from outside every middleware: add what they would have.
        headers = {key.decode(): value.decode() for key, value in DEFAULT_HEADERS}
        request_id = getattr(request.state, "request_id", None)
        if request_id:
            headers["X-Request-ID"] = request_id
        return problem_for(
            request.scope,
            500,
            "Internal server error",
            "An unexpected error occurred.",
            headers=headers,
        )


async def _database_down(request: Request, exc: Exception) -> Response:
    cause = exc.orig if isinstance(exc, DBAPIError) else exc
    log.warning("database unavailable: %s", type(cause).__name__)
    return problem_for(
        request.scope,
        503,
        "Service unavailable",
        "The database is unreachable; try again shortly.",
        headers={"Retry-After": str(DATABASE_RETRY_AFTER_S)},
    )


async def _pool_exhausted(request: Request, _exc: Exception) -> Response:
    """Every pooled connection stayed in use while the request waited: the database is
    fine, this process has more requests at once than connections."""
    log.warning("database pool exhausted on %s %s", request.method, request.url.path)
    return problem_for(
        request.scope,
        503,
        "Service unavailable",
        "The server is busy: every database connection is in use; try again in "
        f"{BUSY_RETRY_AFTER_S} s.",
        headers={"Retry-After": str(BUSY_RETRY_AFTER_S)},
    )
