"""Adversarial pastes of the largest size errata reads, against a real server, and what each
costs the other requests of its process. Run from the repository root:

    .venv/bin/python -m benchmarks.hostile                  # SQLite, seeds and mined data
    .venv/bin/python -m benchmarks.hostile --database-url postgresql+psycopg://…/EMPTY_DB

``errata serve`` (one worker) loads every record a fresh database gets. Each shape of
``corpus.adversarial_pastes`` (one long line, digits, many short errors, repeated
tracebacks, deep indentation, frames without end, pathological Unicode, unclosed brackets)
is posted as plain text to ``/api/match`` ``--runs`` times, while ``/healthz`` is asked
every 20 ms on a connection of its own. The table gives the match's status and median
time, and ``/healthz``'s median and slowest answer while the matches ran, beside its
median with nothing else running. Times are wall-clock: quote them from one run.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable
from pathlib import Path

if __package__ in (None, ""):  # run as a file: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx

from app.matching import MAX_PASTE_BYTES
from benchmarks import corpus
from benchmarks.writes import serve, until_ready

HEALTH_EVERY_S = 0.02


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", help="an empty database (default: SQLite file)")
    parser.add_argument("--runs", type=int, default=3, help="matches of each shape")
    parser.add_argument("--size", type=int, default=MAX_PASTE_BYTES, help="bytes a paste")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        url = args.database_url or f"sqlite:///{scratch}/errata.sqlite3"
        return asyncio.run(measure(url, args.runs, args.size, Path(scratch)))


async def measure(url: str, runs: int, size: int, scratch: Path) -> int:
    port = 18000 + os.getpid() % 1000
    server = serve(url, port, scratch / "server.log")
    base = f"http://127.0.0.1:{port}"
    try:
        async with (
            httpx.AsyncClient(base_url=base, timeout=600) as client,
            httpx.AsyncClient(base_url=base, timeout=600) as health,
        ):
            await until_ready(client)
            idle = await _health_times(health, asyncio.sleep(2.0))
            print(f"/healthz alone: median {_ms(statistics.median(idle))}")
            print(f"{'paste':<22}{'status':>7}{'match':>10}{'healthz median':>16}{'slowest':>10}")
            for name, paste in corpus.adversarial_pastes(size).items():
                statuses, times, during = await _shape(client, health, paste, runs)
                print(
                    f"{name:<22}{','.join(sorted(statuses)):>7}"
                    f"{_ms(statistics.median(times)):>10}"
                    f"{_ms(statistics.median(during)):>16}{_ms(max(during)):>10}"
                )
    finally:
        server.terminate()
        server.wait(timeout=30)
    return 0


async def _shape(
    client: httpx.AsyncClient, health: httpx.AsyncClient, paste: str, runs: int
) -> tuple[set[str], list[float], list[float]]:
    body = paste.encode()
    statuses: set[str] = set()
    times: list[float] = []

    async def matches() -> None:
        for _ in range(runs):
            started = time.perf_counter()
            response = await client.post(
                "/api/match", content=body, headers={"Content-Type": "text/plain"}
            )
            times.append(time.perf_counter() - started)
            statuses.add(str(response.status_code))

    during = await _health_times(health, matches())
    return statuses, times, during


async def _health_times(health: httpx.AsyncClient, work: Awaitable[object]) -> list[float]:
    """``/healthz``'s answer times, asked every ``HEALTH_EVERY_S`` until ``work`` is done."""
    task = asyncio.ensure_future(work)
    times: list[float] = []
    while not task.done():
        started = time.perf_counter()
        response = await health.get("/healthz")
        response.raise_for_status()
        times.append(time.perf_counter() - started)
        await asyncio.sleep(HEALTH_EVERY_S)
    await task
    return times


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


if __name__ == "__main__":
    sys.exit(main())
