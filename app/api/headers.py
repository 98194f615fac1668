"""Headers every response carries, whatever produced it."""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

DEFAULT_HEADERS = ((b"x-content-type-options", b"nosniff"),)


class DefaultHeaders:
    """Pure ASGI middleware: adds each default header the response does not set itself."""

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
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)
