"""Record pages and related records against ``errata serve``: each record's page, and its
``GET /api/errors/{id}/related``, asked one at a time. Run from the repository root:

    .venv/bin/python -m benchmarks.record_pages                    # shipped records, SQLite
    .venv/bin/python -m benchmarks.record_pages --records 89000    # and 89,000 synthetic
    .venv/bin/python -m benchmarks.record_pages --keep var/bench-pages.sqlite3   # fill once
    .venv/bin/python -m benchmarks.record_pages --database-url postgresql+psycopg://...

A database that holds records already (a kept file, a PostgreSQL database filled by an
earlier run) is used as it is; an empty one is filled.

The database gets every record a fresh one loads (the curated and the mined, about 11,000)
and ``--records`` synthetic ones (``corpus.record_documents``), then the server starts
(building its catalog before it says ready). ``--pages`` live records drawn at random are
each asked for twice: first their page, then their related records, which the page has
ranked (kept for the catalog's version); ``--pages`` others are asked for their related
records first, then their page. Figures: median, p99 and slowest of each, and the server's
memory before and after.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

if __package__ in (None, ""):  # run as a file: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx
from sqlalchemy import select
from sqlalchemy.exc import DatabaseError

from app.db import make_engine
from app.records.models import RecordRow
from benchmarks.load_index import database_url
from benchmarks.writes import fill, latency_row, serve, until_ready

# Pages asked for before the timed ones: the worker's first requests warm its caches.
WARM_UP = 20


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=0, help="synthetic records added")
    parser.add_argument("--database-url", help="an empty database (default: SQLite file)")
    parser.add_argument("--keep", type=Path, help="SQLite file to fill once and reuse")
    parser.add_argument("--pages", type=int, default=500, help="records asked for, each way")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        url = database_url(args.database_url, args.keep, Path(scratch))
        ids = _live_ids(url)
        if not ids:  # a database filled before (a kept file) is used as it is
            fill(url, args.records, Path(scratch))
            ids = _live_ids(url)
        print(f"# {len(ids):,} live records")
        drawn = random.Random(0).sample(sorted(ids), WARM_UP + 2 * args.pages)
        return asyncio.run(measure(url, drawn, Path(scratch)))


def _live_ids(url: str) -> list[str]:
    """Every live record's id; none where the database is empty (or has no tables yet)."""
    engine = make_engine(url)
    try:
        with engine.connect() as connection:
            live = select(RecordRow.id).where(RecordRow.retired.is_(False))
            return list(connection.scalars(live))
    except DatabaseError:
        return []
    finally:
        engine.dispose()


async def measure(url: str, ids: list[str], scratch: Path) -> int:
    port = 18000 + os.getpid() % 1000
    server = serve(url, port, scratch / "server.log")
    try:
        started = time.perf_counter()
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=60) as client:
            await until_ready(client)
            print(f"ready (catalog built) after {time.perf_counter() - started:.1f} s")
            print(f"server memory when ready: {_memory(server.pid)}")
            await _times(client, "/errors/{}", ids[:WARM_UP])
            rest = ids[WARM_UP:]
            pages, others = rest[: len(rest) // 2], rest[len(rest) // 2 :]
            print(f"{'asked':<22}{'count':>8}{'median':>10}{'p99':>10}{'slowest':>10}")
            rows = [
                ("page, first", await _times(client, "/errors/{}", pages)),
                ("related, after page", await _times(client, "/api/errors/{}/related", pages)),
                ("related, first", await _times(client, "/api/errors/{}/related", others)),
                ("page, after related", await _times(client, "/errors/{}", others)),
            ]
            for label, latencies in rows:
                print(latency_row(label, latencies))
            print(f"server memory after: {_memory(server.pid)}")
    finally:
        server.terminate()
        server.wait(timeout=30)
    return 0


async def _times(client: httpx.AsyncClient, path: str, ids: Sequence[str]) -> list[float]:
    """Each of ``ids``'s ``path`` asked for in turn: the seconds each answer took."""
    latencies = []
    for record_id in ids:
        sent = time.perf_counter()
        response = await client.get(path.format(record_id))
        latencies.append(time.perf_counter() - sent)
        assert response.status_code == 200, (path, record_id, response.status_code)
    return latencies


def _memory(pid: int) -> str:
    """The process's resident memory now and at its peak (Linux)."""
    status = Path(f"/proc/{pid}/status").read_text()
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    return f"{fields['VmRSS'].strip()} (peak {fields['VmHWM'].strip()})"


if __name__ == "__main__":
    sys.exit(main())
