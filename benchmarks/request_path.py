"""What a request costs inside the app, without sockets or HTTP parsing: ASGI calls in-process.

Run from the repository root:

    .venv/bin/python -m benchmarks.request_path            # 3,000 calls per endpoint

The app is built as ``errata serve`` builds it (SQLite in a temporary folder, seeds
loaded, uvloop), its lifespan started, and each endpoint called one call at a time, after
200 warm-up calls, in rounds: each round times a batch of calls of every endpoint in turn,
so that every endpoint is measured on the same machine (its speed drifts within minutes).

Beside the real endpoints the calibration route of ``benchmarks/calibration.py`` is added to
this app only: ``POST /echo`` validates its body with pydantic and returns it, measured with
the compute body and with the 20 KB paste the match endpoint reads. A second
calibration calls the match endpoint with the paste's report stored: everything but reading
the paste and matching it, which is what the endpoint could cost with a matcher that took
no time at all.
The table gives the median wall time per call over all rounds
and its share of ``/healthz``'s rate: the median over rounds of ``/healthz``'s median time
÷ the endpoint's, in that round.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import uvloop

from benchmarks import corpus
from benchmarks.calibration import with_echo

COMPUTE = {"operation": "copy_gmem_to_smem", "shape": [7], "dtype": "int4"}
STORED_MATCH = "POST /api/match (calibration, report stored)"


Case = tuple[str, str, bytes]  # method, path, body


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=3000, help="timed calls per endpoint")
    parser.add_argument("--rounds", type=int, default=10, help="rounds the calls are split in")
    args = parser.parse_args(argv)
    uvloop.install()
    asyncio.run(_run(args.calls, args.rounds))
    return 0


def measured_calls() -> dict[str, Case]:
    """The call each endpoint is measured with."""
    paste = json.dumps({"text": corpus.paste(20_000)}).encode()
    return {
        "GET /healthz": ("GET", "/healthz", b""),
        "POST /echo (calibration)": ("POST", "/echo", json.dumps(COMPUTE).encode()),
        "GET /api/errors/{id}": ("GET", f"/api/errors/{corpus.KNOWN_RECORD}", b""),
        "POST /api/compute": ("POST", "/api/compute", json.dumps(COMPUTE).encode()),
        "POST /echo (calibration, 20 KB paste)": ("POST", "/echo", paste),
        STORED_MATCH: ("POST", "/api/match", paste),
        "POST /api/match (20 KB)": ("POST", "/api/match", paste),
    }


@contextlib.contextmanager
def prepared(endpoint: str) -> Iterator[None]:
    """While ``endpoint``'s calls run: for ``STORED_MATCH``, ``match_paste`` answers with the
    report it gave the first time."""
    if endpoint != STORED_MATCH:
        yield
        return
    reading: Any = sys.modules["app.answers.match"]  # imported by the app
    matcher = reading.match_paste
    stored: list[Any] = []

    def stored_report(*args: Any, **kwargs: Any) -> Any:
        if not stored:
            stored.append(matcher(*args, **kwargs))
        return stored[0]

    reading.match_paste = stored_report
    try:
        yield
    finally:
        reading.match_paste = matcher


def calibrated_app() -> Any:
    """The app as ``errata serve`` builds it on a fresh SQLite file, with the calibration
    route."""
    folder = tempfile.mkdtemp()
    os.environ.update(
        ERRATA_DATABASE_URL=f"sqlite:///{folder}/errata.sqlite3",
        ERRATA_DATA_DIR=folder,
        ERRATA_RATE_LIMIT_PER_SECOND="0",
    )
    from app.main import create_app  # after the environment names the database

    return with_echo(create_app())


async def _run(calls: int, rounds: int) -> None:
    app, cases = calibrated_app(), measured_calls()
    # The app logs every call to stderr.
    with open(os.devnull, "w") as devnull, contextlib.redirect_stderr(devnull):
        async with app.router.lifespan_context(app):
            for name, case in cases.items():
                with prepared(name):
                    await _times(app, *case, 200)  # warm-up
            batches: dict[str, list[list[float]]] = {name: [] for name in cases}
            for _ in range(rounds):
                for name, case in cases.items():
                    with prepared(name):
                        batches[name].append(await _times(app, *case, calls // rounds))
    trivial = [statistics.median(batch) for batch in batches["GET /healthz"]]
    print(f"# in-process ASGI calls, uvloop, {calls:,} per endpoint in {rounds} rounds")
    print("| endpoint | median | of `/healthz` |")
    print("|---|---:|---:|")
    for name, timed in batches.items():
        median = statistics.median(t for batch in timed for t in batch)
        ratio = statistics.median(
            healthz / statistics.median(batch)
            for healthz, batch in zip(trivial, timed, strict=True)
        )
        print(f"| {name} | {median * 1e3:.3f} ms | {100 * ratio:.0f} % |")


async def _times(app: Any, method: str, path: str, body: bytes, calls: int) -> list[float]:
    """The wall time of each of ``calls`` calls."""
    times = []
    for _ in range(calls):
        started = time.perf_counter()
        await asgi_call(app, method, path, body)
        times.append(time.perf_counter() - started)
    return times


async def asgi_call(app: Any, method: str, target: str, body: bytes) -> bytes:
    """One call of ``target`` (a path, and a query after ``?``); its answer's body."""
    path, _, query = target.partition("?")
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": query.encode(),
        "root_path": "",
        "headers": [
            (b"host", b"127.0.0.1"),
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
        ],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
        "state": {},
    }
    received = False

    async def receive() -> dict[str, Any]:
        nonlocal received
        if not received:
            received = True
            return {"type": "http.request", "body": body, "more_body": False}
        await asyncio.Event().wait()  # the client never leaves
        raise AssertionError("unreachable")

    statuses = []
    answer = bytearray()

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            statuses.append(message["status"])
        elif message["type"] == "http.response.body":
            answer.extend(message.get("body", b""))

    await app(scope, receive, send)
    if statuses != [200]:
        raise SystemExit(f"{method} {target} answered {statuses}")
    return bytes(answer)


if __name__ == "__main__":
    raise SystemExit(main())
