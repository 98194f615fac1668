"""How long a search takes: ``GET /api/errors?q=…`` called in-process (ASGI, as
``benchmarks.request_path`` calls endpoints) on what a fresh ``errata serve`` loads, the
curated records and the 11,000 mined from JAX's source, on SQLite and on PostgreSQL.

Run from the repository root:

    .venv/bin/python -m benchmarks.search                       # SQLite, then PostgreSQL
    .venv/bin/python -m benchmarks.search --backends sqlite --calls 50

SQLite is a file in a temporary folder; PostgreSQL a database made for the run through
``--postgres-admin-url`` and dropped after it. Each call asks for a page of 50, one call at
a time, after 10 warm-up calls, the queries taking turns in 10 rounds (these machines' speed
drifts within minutes); the table gives each query's median and 95th percentile and how
many records it finds. "page 5" follows the cursors of a search (untimed) and times its
fifth page.
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
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

if __package__ in (None, ""):  # run as a file: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import uvloop
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from app.config import load_settings
from app.main import create_app
from benchmarks.request_path import asgi_call

ADMIN_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
QUERIES = {
    "one word: `warpgroup`": {"q": "warpgroup"},
    "two words: `warpgroup size`": {"q": "warpgroup size"},
    'a phrase: `"divisible by the warpgroup"`': {"q": '"divisible by the warpgroup"'},
    "a prefix: `warpgr*`": {"q": "warpgr*"},
    "a word most records hold: `jax`": {"q": "jax"},
    "a word and a filter: `tma`, `backend=mosaic_gpu`": {"q": "tma", "backend": "mosaic_gpu"},
    "no record: `zyzzyva`": {"q": "zyzzyva"},
    "no `q` (listing, for reference)": {},
}
PAGED = "one word: `warpgroup`"
WARM_UP = 10
ROUNDS = 10  # the queries take turns, so that each is measured on the same machine


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backends", nargs="+", default=["sqlite", "postgresql"])
    parser.add_argument("--calls", type=int, default=200, help="timed calls per query")
    parser.add_argument("--postgres-admin-url", default=ADMIN_URL)
    args = parser.parse_args(argv)
    uvloop.install()
    print("| database | query | found | median | p95 |")
    print("|---|---|---:|---:|---:|")
    for backend in args.backends:
        with _database(backend, args.postgres_admin_url) as url:
            asyncio.run(_run(backend, url, args.calls))
    return 0


@contextlib.contextmanager
def _database(backend: str, admin_url: str) -> Iterator[str]:
    """A new, empty database of ``backend``'s kind, gone after the run."""
    if backend == "sqlite":
        with tempfile.TemporaryDirectory() as folder:
            yield f"sqlite:///{folder}/errata.sqlite3"
        return
    name = f"errata_bench_{uuid.uuid4().hex[:10]}"
    admin = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield make_url(admin_url).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


async def _run(backend: str, url: str, calls: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        settings = load_settings(database_url=url, data_dir=folder, rate_limit_per_second=0)
        app = create_app(settings)
        # The app logs every call to stderr.
        with open(os.devnull, "w") as devnull, contextlib.redirect_stderr(devnull):
            async with app.router.lifespan_context(app):
                records = json.loads(await asgi_call(app, "GET", "/api/errors?limit=1", b""))
                name = f"{'SQLite' if backend == 'sqlite' else 'PostgreSQL'}, {records['total']:,}"
                targets = {label: _target(query) for label, query in QUERIES.items()}
                targets["page 5 of `warpgroup`"] = await _fifth_page(app, QUERIES[PAGED])
                found = {}
                for label, target in targets.items():
                    found[label] = json.loads(await asgi_call(app, "GET", target, b""))["total"]
                    await _times(app, target, WARM_UP)
                times: dict[str, list[float]] = {label: [] for label in targets}
                for _ in range(ROUNDS):
                    for label, target in targets.items():
                        times[label] += await _times(app, target, calls // ROUNDS)
    for label, timed in times.items():
        median = statistics.median(timed) * 1e3
        p95 = statistics.quantiles(timed, n=20)[-1] * 1e3
        print(f"| {name} | {label} | {found[label]:,} | {median:.1f} ms | {p95:.1f} ms |")
        name = ""


def _target(query: dict[str, str], cursor: str | None = None) -> str:
    return "/api/errors?" + urlencode({**query, **({"cursor": cursor} if cursor else {})})


async def _fifth_page(app: Any, query: dict[str, str]) -> str:
    cursor = None
    for _ in range(4):
        page = json.loads(await asgi_call(app, "GET", _target(query, cursor), b""))
        cursor = page["nextCursor"]
    return _target(query, cursor)


async def _times(app: Any, target: str, calls: int) -> list[float]:
    times = []
    for _ in range(calls):
        started = time.perf_counter()
        await asgi_call(app, "GET", target, b"")
        times.append(time.perf_counter() - started)
    return times


if __name__ == "__main__":
    raise SystemExit(main())
