"""Matching while records are written: open-loop match traffic against ``errata serve``
(a 20 KB paste at a fixed rate, sent on schedule whether or not earlier answers came back,
as users would), first alone, then through one ``PUT``, then with one ``PUT`` a second.
Run from the repository root:

    .venv/bin/python -m benchmarks.writes                         # 100,000 records, SQLite
    .venv/bin/python -m benchmarks.writes --records 10000
    .venv/bin/python -m benchmarks.writes --keep var/bench-writes.sqlite3   # fill once, reuse
    .venv/bin/python -m benchmarks.writes --database-url postgresql+psycopg://...  # empty DB

The database is filled through the importer (one file), then the server starts (building
its catalog before it says ready). Figures per phase: matches sent, median, p99 and
slowest latency, how many took over 100 ms, and for the writes how long the writer's next
match took to find the written record.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx

from app.config import load_settings
from app.db import make_engine, make_session_factory
from app.migrate import upgrade
from app.records.importer import import_paths
from benchmarks import corpus
from benchmarks.load_index import database_url

REPO_ROOT = Path(__file__).resolve().parent.parent
TOKEN = "benchmark-curator"
SLOW_S = 0.1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--database-url", help="an empty database (default: SQLite file)")
    parser.add_argument("--keep", type=Path, help="SQLite file to fill once and reuse")
    parser.add_argument("--rate", type=float, default=20.0, help="matches a second")
    parser.add_argument("--seconds", type=float, default=20.0, help="length of each phase")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        url = database_url(args.database_url, args.keep, Path(scratch))
        fill(url, args.records, Path(scratch))
        return asyncio.run(measure(url, args.rate, args.seconds, Path(scratch)))


def fill(url: str, count: int, scratch: Path) -> None:
    settings = load_settings(database_url=url)
    engine = make_engine(url)
    upgrade(settings, engine)
    factory = make_session_factory(engine)
    documents = scratch / "records.jsonl"
    documents.write_text("".join(json.dumps(doc) + "\n" for doc in corpus.record_documents(count)))
    seeds = [path for path in settings.seed_paths if path.exists()]
    started = time.perf_counter()
    summary = import_paths(factory, [*seeds, documents])
    print(
        f"# {engine.dialect.name}: {summary.added:,} added, {summary.unchanged:,} unchanged "
        f"in {time.perf_counter() - started:.1f} s"
    )
    engine.dispose()


async def measure(url: str, rate: float, seconds: float, scratch: Path) -> int:
    port = 18000 + os.getpid() % 1000
    server = serve(url, port, scratch / "server.log")
    base = f"http://127.0.0.1:{port}"
    try:
        started = time.perf_counter()
        async with httpx.AsyncClient(base_url=base, timeout=60) as client:
            await until_ready(client)
            print(f"ready (catalog built) after {time.perf_counter() - started:.1f} s")
            paste = corpus.paste(20_000)
            # This process's own collector stays out of the latencies: one of its full passes
            # (63 ms, over what filling the database left) was once timed as a slow match.
            gc.collect()
            gc.freeze()
            await traffic(client, paste, rate, 2.0, writes_every=None)  # warm-up
            print(f"{'phase':<22}{'matches':>8}{'median':>10}{'p99':>10}{'slowest':>10}  >100 ms")
            for label, every in (
                ("no writes", None),
                ("one PUT", seconds * 2),
                ("one PUT a second", 1.0),
            ):
                latencies, seen = await traffic(client, paste, rate, seconds, writes_every=every)
                report(label, latencies)
                if seen:
                    print(f"{'':<22}writer's next match found the record: max {max(seen):.3f} s")
    finally:
        stop(server)
    return 0


def serve(url: str, port: int, log: Path) -> subprocess.Popen[bytes]:
    """``errata serve`` (one worker) on ``port``, writes allowed with ``TOKEN``."""
    return subprocess.Popen(
        [sys.executable, "-m", "app", "serve", "--port", str(port)],
        cwd=REPO_ROOT,
        env={
            **os.environ,
            "ERRATA_DATABASE_URL": url,
            "ERRATA_ADMIN_TOKENS": TOKEN,
            "ERRATA_RATE_LIMIT_PER_SECOND": "0",
            "ERRATA_LOG_LEVEL": "WARNING",
        },
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
    )


def stop(server: subprocess.Popen[bytes]) -> None:
    """SIGTERM, then SIGKILL where requests still running keep the server past 30 s."""
    server.terminate()
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        print("# the server was still answering 30 s after SIGTERM: killed")
        server.kill()
        server.wait()


async def until_ready(client: httpx.AsyncClient) -> None:
    while True:
        try:
            if (await client.get("/readyz")).status_code == 200:
                return
        except httpx.TransportError:
            pass
        await asyncio.sleep(0.2)


async def put_new_record(client: httpx.AsyncClient) -> dict[str, str]:
    """Write a new record through ``client``; the match request that finds it."""
    record_id = f"bench-{uuid.uuid4().hex[:12]}"
    message = f"Benchmark widget {record_id} is misaligned by {{n}} bytes"
    response = await client.put(
        f"/api/errors/{record_id}",
        json={"record": {"errorMessage": message}},
        headers={"Authorization": f"Bearer {TOKEN}"},
    )
    assert response.status_code == 201, response.text
    return {"text": "ValueError: " + message.replace("{n}", "8")}


async def traffic(
    client: httpx.AsyncClient, paste: str, rate: float, seconds: float, writes_every: float | None
) -> tuple[list[float], list[float]]:
    """Matches sent every 1/rate s for ``seconds`` (open loop); a PUT every ``writes_every``
    s from the start (the first at a quarter of the phase). Returns latencies, and for each
    write how long until a match through the server found the written record."""
    latencies: list[float] = []
    seen: list[float] = []

    async def one() -> None:
        sent = time.perf_counter()
        response = await client.post(
            "/api/match", content=paste, headers={"Content-Type": "text/plain"}
        )
        assert response.status_code == 200, response.text
        latencies.append(time.perf_counter() - sent)

    async def writes() -> None:
        assert writes_every is not None
        await asyncio.sleep(seconds / 4)
        while time.perf_counter() < end:
            took = await write_reaches(client, client)
            seen.append(took)
            await asyncio.sleep(max(0.0, writes_every - took))

    end = time.perf_counter() + seconds
    writer = asyncio.create_task(writes()) if writes_every else None
    await open_loop(one, rate, end)
    if writer is not None:
        await writer
    return latencies, seen


async def write_reaches(
    writer: httpx.AsyncClient, reader: httpx.AsyncClient, poll_s: float = 0.0
) -> float:
    """Seconds from a PUT through ``writer`` until ``reader`` matches the written record,
    asked every ``poll_s`` (0: again as soon as it answers)."""
    started = time.perf_counter()
    paste = await put_new_record(writer)
    while not (await reader.post("/api/match", json=paste)).json()["matches"]:
        await asyncio.sleep(poll_s)
    return time.perf_counter() - started


async def open_loop(send: Callable[[], Coroutine[Any, Any, None]], rate: float, end: float) -> None:
    """``send`` every 1/rate s until ``end`` (``time.perf_counter``), whether or not earlier
    ones have answered, as users would; then wait for every one."""
    tasks = []
    next_at = time.perf_counter()
    while next_at < end:
        tasks.append(asyncio.create_task(send()))
        next_at += 1 / rate
        await asyncio.sleep(max(0.0, next_at - time.perf_counter()))
    await asyncio.gather(*tasks)


def latency_row(label: str, latencies: list[float]) -> str:
    """A report's row: the label, how many, then median, p99 and slowest latency."""
    ordered = sorted(latencies)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return (
        f"{label:<22}{len(ordered):>8}{statistics.median(ordered) * 1000:>8.1f}ms"
        f"{p99 * 1000:>8.1f}ms{ordered[-1] * 1000:>8.1f}ms"
    )


def report(label: str, latencies: list[float]) -> None:
    slow = sum(latency > SLOW_S for latency in latencies)
    print(f"{latency_row(label, latencies)}  {slow}")


if __name__ == "__main__":
    sys.exit(main())
