"""Stop reading work when its client has gone: a match queued behind another for its turn on
the CPU, or a record page waiting for a thread, is dropped rather than computed for nobody.

Writes are never cancelled: an import or a ``PUT`` whose client has gone goes on and
commits, and the client's retry of the same document is then a no-op.
"""

from __future__ import annotations

import asyncio

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.api.problems import problem_for

# Requests that write to the store: never cancelled once they have started.
WRITE_METHODS = frozenset({"PUT", "PATCH", "DELETE"})
WRITE_PATHS = frozenset({"/api/import"})
# nginx's code for a request whose client closed the connection first; nobody receives it,
# but the access log and the latency histogram count it apart from the server's own errors.
CLIENT_GONE_STATUS = 499


def cancellable(scope: Scope) -> bool:
    """Whether cancelling the request loses nothing: it reads, or answers from what it reads."""
    return scope["method"] not in WRITE_METHODS and scope["path"] not in WRITE_PATHS


class CancelWhenGone:
    """Pure ASGI middleware, innermost: the only reader of the client's messages while the
    request runs. Body messages are handed on to the app as it asks; a disconnect before the
    answer has started cancels the app's call and logs the request as 499.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not cancellable(scope):
            await self.app(scope, receive, send)
            return
        messages: asyncio.Queue[Message] = asyncio.Queue()
        answering = False
        gone = False

        async def answer(message: Message) -> None:
            nonlocal answering
            answering = True
            await send(message)

        with anyio.CancelScope() as call:

            async def pump() -> None:
                nonlocal gone
                while True:
                    message = await receive()
                    await messages.put(message)
                    if message["type"] == "http.disconnect":
                        gone = not answering
                        if gone:
                            call.cancel()
                        return

            pumping = asyncio.ensure_future(pump())
            try:
                await self.app(scope, messages.get, answer)
            finally:
                pumping.cancel()
        if gone:
            await send_gone(scope, send)


async def send_gone(scope: Scope, send: Send) -> None:
    """A 499 the server drops (its client is gone), sent so that logs and metrics say why."""
    response = problem_for(
        scope, CLIENT_GONE_STATUS, "Client closed request", "The client went away first."
    )
    await response(scope, _nothing_to_receive, send)


async def _nothing_to_receive() -> Message:
    return {"type": "http.disconnect"}
