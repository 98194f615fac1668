"""Refuse request bodies over the configured size before any of them is parsed, and rate-limit
the expensive calls per client."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.api.problems import problem_for


class BodySizeLimit:
    """Pure ASGI middleware: checks Content-Length up front and counts streamed bytes.

    When a streamed body runs over, the 413 is sent at once and the app is told the client
    went away, so whatever it answers afterwards is dropped.
    """

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await self._refuse(scope, receive, send)
            return

        received = 0
        refused = False

        async def limited_receive() -> Message:
            nonlocal received, refused
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes and not refused:
                    refused = True
                    await self._refuse(scope, receive, send)
                    return {"type": "http.disconnect"}
            return message

        async def guarded_send(message: Message) -> None:
            if not refused:
                await send(message)

        await self.app(scope, limited_receive, guarded_send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = problem_for(
            scope,
            413,
            "Payload too large",
            f"The request body is over the limit of {self.max_bytes} bytes.",
        )
        await response(scope, receive, send)


# POSTs that cost real work: matching, the engine, imports, and the chat commands and the
# web page's paste form built on them.
EXPENSIVE_PATHS = ("/api/match", "/api/compute", "/api/import", "/chatops", "/")
# GETs that cost as much: a result's link on the pages matches its paste again.
EXPENSIVE_GETS = ("/match",)


def is_expensive(method: str, path: str, paths: tuple[str, ...] = EXPENSIVE_PATHS) -> bool:
    """A POST (``method`` as ASGI gives it: upper case) to one of ``paths`` or below one, or
    a GET of one of ``EXPENSIVE_GETS``: what the rate limit counts."""
    if method == "GET":
        return path in EXPENSIVE_GETS
    return method == "POST" and any(
        path == prefix or path.startswith(prefix + "/") for prefix in paths
    )


class TokenBuckets:
    """One token bucket per key: ``rate`` tokens a second, at most ``burst`` saved up.

    Memory stays bounded: past ``max_keys`` buckets, the full ones (idle clients) are dropped,
    then the least recently used.
    """

    def __init__(
        self,
        rate: float,
        burst: int,
        *,
        max_keys: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.rate = rate
        self.burst = float(burst)
        self.max_keys = max_keys
        self._clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def take(self, key: str) -> float:
        """Spend one token; 0 when allowed, else the seconds until a token is there."""
        with self._lock:
            now = self._clock()
            tokens, stamp = self._buckets.pop(key, (self.burst, now))
            tokens = min(self.burst, tokens + (now - stamp) * self.rate)
            wait = 0.0 if tokens >= 1 else (1 - tokens) / self.rate
            self._buckets[key] = (tokens - 1 if wait == 0 else tokens, now)
            if len(self._buckets) > self.max_keys:
                self._prune(now)
            return wait

    def _prune(self, now: float) -> None:
        full = [
            key
            for key, (tokens, stamp) in self._buckets.items()
            if tokens + (now - stamp) * self.rate >= self.burst
        ]
        for key in full:
            del self._buckets[key]
        # Buckets are re-inserted on use, so the first ones are the least recently used.
        for key in list(self._buckets)[: max(0, len(self._buckets) - self.max_keys)]:
            del self._buckets[key]


class RateLimit:
    """Pure ASGI middleware: a token bucket per client address for the expensive POSTs.

    Over the limit the answer is 429 problem+json with ``Retry-After`` (whole seconds). The
    buckets live in this process: with N workers a client gets up to N times the rate.
    """

    def __init__(
        self,
        app: ASGIApp,
        rate: float,
        burst: int,
        paths: tuple[str, ...] = EXPENSIVE_PATHS,
    ) -> None:
        self.app = app
        self.paths = paths
        self.buckets = TokenBuckets(rate, burst) if rate > 0 else None

    def _limited(self, scope: Scope) -> bool:
        if self.buckets is None or scope["type"] != "http":
            return False
        return is_expensive(scope["method"], scope["path"], self.paths)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self._limited(scope):
            assert self.buckets is not None
            client = scope.get("client")
            wait = self.buckets.take(client[0] if client else "unknown")
            if wait > 0:
                retry_after = max(1, math.ceil(wait))
                response = problem_for(
                    scope,
                    429,
                    "Too many requests",
                    f"Too many expensive requests from this client; retry in {retry_after} s.",
                )
                response.headers["Retry-After"] = str(retry_after)
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)
