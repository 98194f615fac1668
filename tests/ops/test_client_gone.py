"""Work whose client has gone: a read is dropped before it takes its turn, a write commits.

The in-process tests drive the app with ASGI messages of their own, so that the client
leaves at a known moment; the last one leaves a real server mid-queue over a socket.
"""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import httpx
import pytest
from fastapi import FastAPI
from fastapi.dependencies.models import Dependant
from starlette.types import Message

from app.api.deps import require_curator
from app.api.disconnects import cancellable
from app.config import load_settings
from app.main import create_app
from app.observability.routes import every_route
from benchmarks import corpus
from tests.conftest import ADMIN_TOKEN, SEED_DIR, Backend, stop_server
from tests.ops.conftest import access_records, run_on_a_loop_of_its_own, serve

PASTE_FORM = (
    b"text=ValueError%3A+Can+only+transfer+integer+bytes+%28shape%3D%5B7%5D%2C+dtype%3Di4%29"
)


def _app(tmp_path: Path) -> FastAPI:
    return create_app(
        load_settings(data_dir=tmp_path, seed_paths=[SEED_DIR], admin_tokens=[ADMIN_TOKEN])
    )


def _scope(method: str, path: str, headers: list[tuple[bytes, bytes]]) -> dict[str, Any]:
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"errata"), *headers],
        "client": ("127.0.0.1", 5000),
        "server": ("errata", 80),
    }


async def _leave_after_body(
    app: FastAPI, scope: dict[str, Any], body: bytes, leave: anyio.Event
) -> list[Message]:
    """Calls the app as a client that sends ``body`` and hangs up when ``leave`` is set."""
    sent: list[Message] = []
    messages = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> Message:
        if messages:
            return messages.pop()
        await leave.wait()
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        sent.append(message)

    await app(scope, receive, send)
    return sent


def _status(sent: list[Message]) -> int:
    return next(int(m["status"]) for m in sent if m["type"] == "http.response.start")


def _counting_cpu_work(app: FastAPI, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Records every piece of work that actually ran under the process's CPU limiter."""
    ran: list[str] = []
    run_sync = anyio.to_thread.run_sync

    async def counting(func: Callable[[], Any], *args: Any, **kwargs: Any) -> Any:
        if kwargs.get("limiter") is app.state.cpu_turns:

            def counted() -> Any:
                ran.append(getattr(func, "__name__", "work"))
                return func()

            return await run_sync(counted, *args, **kwargs)
        return await run_sync(func, *args, **kwargs)

    monkeypatch.setattr(anyio.to_thread, "run_sync", counting)
    return ran


def test_a_read_queued_for_the_cpu_is_dropped_when_its_client_leaves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = _app(tmp_path)
    ran = _counting_cpu_work(app, monkeypatch)
    form = [(b"content-type", b"application/x-www-form-urlencoded")]

    async def run() -> tuple[list[Message], int]:
        async with app.router.lifespan_context(app):
            turns: anyio.CapacityLimiter = app.state.cpu_turns
            leave = anyio.Event()
            await turns.acquire()  # another request's long match holds the only turn
            call = asyncio.ensure_future(
                _leave_after_body(app, _scope("POST", "/", form), PASTE_FORM, leave)
            )
            await asyncio.sleep(0.2)
            assert not call.done()  # waiting for its turn
            leave.set()
            sent = await asyncio.wait_for(call, 5)
            turns.release()
            await asyncio.sleep(0.1)
            return sent, app.state.engine.pool.checkedout()

    sent, connections_held = run_on_a_loop_of_its_own(run())
    assert _status(sent) == 499
    assert ran == []  # the match never ran
    assert connections_held == 0


def test_a_read_whose_client_stays_is_answered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = _app(tmp_path)
    ran = _counting_cpu_work(app, monkeypatch)
    form = [(b"content-type", b"application/x-www-form-urlencoded")]

    async def run() -> list[Message]:
        async with app.router.lifespan_context(app):
            return await _leave_after_body(
                app, _scope("POST", "/", form), PASTE_FORM, anyio.Event()
            )

    sent = run_on_a_loop_of_its_own(run())
    assert _status(sent) == 200 and len(ran) == 1
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    assert b"integer bytes" in body


def test_an_import_whose_client_leaves_still_commits(tmp_path: Path) -> None:
    app = _app(tmp_path)
    record = next(corpus.record_documents(1))
    headers = [
        (b"content-type", b"application/json"),
        (b"authorization", f"Bearer {ADMIN_TOKEN}".encode()),
    ]

    async def run() -> tuple[list[Message], int]:
        async with app.router.lifespan_context(app):
            leave = anyio.Event()
            leave.set()  # gone as soon as the body is sent
            sent = await _leave_after_body(
                app, _scope("POST", "/api/import", headers), json.dumps(record).encode(), leave
            )
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://errata") as http:
                stored = await http.get(f"/api/errors/{record['id']}")
            return sent, stored.status_code

    sent, stored = run_on_a_loop_of_its_own(run())
    assert _status(sent) == 200
    assert stored == 200


def _post_and_hang_up(port: int, body: bytes, request_id: str, after_s: float) -> None:
    """A raw HTTP/1.1 POST of a paste whose client closes the socket before any answer."""
    with socket.create_connection(("127.0.0.1", port)) as sock:
        head = (
            f"POST /api/match HTTP/1.1\r\nHost: errata\r\nContent-Type: text/plain\r\n"
            f"X-Request-ID: {request_id}\r\nContent-Length: {len(body)}\r\n\r\n"
        )
        sock.sendall(head.encode() + body)
        time.sleep(after_s)


def test_a_real_server_drops_a_match_whose_client_hung_up(
    postgres: Backend, tmp_path: Path
) -> None:
    server = serve(postgres, tmp_path)
    try:
        long_paste = corpus.adversarial_pastes(1 << 20)["many short errors"].encode()
        pool = ThreadPoolExecutor(max_workers=1)
        holder = pool.submit(
            server.client().post,
            "/api/match",
            content=long_paste,
            headers={"Content-Type": "text/plain", "X-Request-ID": "holds-the-turn"},
        )
        time.sleep(0.3)  # the long match has the CPU turn
        port = httpx.URL(server.base_url).port
        assert port is not None
        _post_and_hang_up(port, long_paste, "hung-up", after_s=0.1)
        assert holder.result().status_code == 200
        pool.shutdown()
        lines = access_records(server.log_path, ["holds-the-turn", "hung-up"])
    finally:
        stop_server(server)
    assert lines["holds-the-turn"]["status"] == 200
    assert lines["hung-up"]["status"] == 499


def test_every_route_that_writes_runs_to_its_end(tmp_path: Path) -> None:
    """A route needing a curator writes: cancelling it could lose what its client sent."""
    writes = [
        (method, route.path)
        for route in every_route(_app(tmp_path))
        if isinstance(dependant := getattr(route, "dependant", None), Dependant)
        and require_curator in _calls(dependant)
        for method in route.methods
    ]
    assert ("POST", "/api/import") in writes and ("PUT", "/api/errors/{record_id}") in writes
    for method, path in writes:
        assert not cancellable({"method": method, "path": path}), (method, path)


def _calls(dependant: Dependant) -> list[object]:
    """Every dependency a route resolves, however deep."""
    return [
        call
        for dependency in dependant.dependencies
        for call in (dependency.call, *_calls(dependency))
    ]
