"""Per-request context: a request id (taken from ``X-Request-ID`` or made), the access log line
and the latency histogram, labelled by route template, never by the raw path."""

from __future__ import annotations

import asyncio
import re
import time
import uuid
from collections.abc import Callable
from typing import Any

import structlog
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.observability.logs import log_access
from app.observability.metrics import UNMATCHED_ROUTE, observe_request

REQUEST_ID_HEADER = "X-Request-ID"
_REQUEST_ID_KEY = REQUEST_ID_HEADER.lower().encode()
# Ids from clients are kept only when short and plain, so they cannot forge log lines.
_VALID_REQUEST_ID = re.compile(rb"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")
# Probes and scrapes are not access-logged while they succeed.
QUIET_PATHS = frozenset({"/healthz", "/readyz", "/metrics"})


def request_id_from(scope: Scope) -> str:
    for key, value in scope["headers"]:
        if key == _REQUEST_ID_KEY and _VALID_REQUEST_ID.fullmatch(value):
            return str(value.decode("ascii"))
    return uuid.uuid4().hex


def route_template(scope: Scope, resolve: Callable[[str], str | None]) -> str:
    """The template of the route that served the request or, for one refused before routing
    (too large, too many), of the route that would have."""
    path = getattr(scope.get("route"), "path", None)
    if not (isinstance(path, str) and path):
        path = resolve(scope["path"])
    return path or UNMATCHED_ROUTE


class RequestContext:
    """Pure ASGI middleware, outermost: binds ``request_id`` for every log line of the request,
    echoes it in the response, then logs one access line and observes the latency."""

    def __init__(self, app: ASGIApp, resolve: Callable[[str], str | None]) -> None:
        self.app = app
        self.resolve = resolve

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = request_id_from(scope)
        scope.setdefault("state", {})["request_id"] = request_id
        status = 500
        started = time.perf_counter()

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                headers = list(message.get("headers", []))
                headers.append((_REQUEST_ID_KEY, request_id.encode("ascii")))
                message = {**message, "headers": headers}
            await send(message)

        with structlog.contextvars.bound_contextvars(request_id=request_id):
            try:
                await self.app(scope, receive, send_with_id)
            finally:
                elapsed = time.perf_counter() - started
                route = route_template(scope, self.resolve)
                observe_request(scope["method"], route, status, elapsed)
                if status >= 400 or scope["path"] not in QUIET_PATHS:
                    _log_access(scope, request_id, route, status, elapsed)


def _log_access(scope: Scope, request_id: str, route: str, status: int, elapsed: float) -> None:
    """Called on the event loop serving the request, which the access log's timer uses."""
    client = scope.get("client")
    fields: dict[str, Any] = {
        "method": scope["method"],
        "path": scope["path"],  # never the query string
        "route": route,
        "status": status,
        "duration_ms": round(elapsed * 1000, 2),
        "client": client[0] if client else None,
    }
    log_access(request_id, fields, failed=status >= 500, loop=asyncio.get_running_loop())
