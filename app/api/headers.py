"""Headers every response carries, whatever produced it."""

from __future__ import annotations

from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

DEFAULT_HEADERS = ((b"x-content-type-options", b"nosniff"),)
# Set on answers given from a catalog that may be stale (the database unreachable or busy).
STALE_HEADER = "X-Catalog-Stale"
_EXTRA = "errata.response_headers"  # in the request's scope: headers its answer must carry


def add_response_header(request: Request, name: str, value: str) -> None:
    """Have the request's answer carry a header, whoever builds the answer."""
    request.scope.setdefault(_EXTRA, []).append((name.lower().encode(), value.encode()))


class DefaultHeaders:
    """Pure ASGI middleware: adds each default header the response does not set itself, and
    those the request asked for (``add_response_header``)."""

    def __init__(self, app: ASGIApp, headers: tuple[tuple[bytes, bytes], ...] = DEFAULT_HEADERS):
        self.app = app
        self.headers = headers

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {key.lower() for key, _ in headers}
                headers += [(key, value) for key, value in self.headers if key not in present]
                headers += scope.get(_EXTRA, ())
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)
