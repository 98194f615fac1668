"""How long a person waits for the answer on the page: the paste form posted to a real
server, for every real traceback in ``tests/fixtures/tracebacks``, as the page's script
posts it (the result fragment) and as a browser without script does (the whole page).
Run from the repository root:

    .venv/bin/python -m benchmarks.page_answer                  # SQLite, seeds and mined data
    .venv/bin/python -m benchmarks.page_answer --database-url postgresql+psycopg://…/EMPTY_DB

``errata serve`` (one worker) loads what a fresh database gets. Each traceback is posted
``--rounds`` times one after the other (after one warm-up round), in three ways: the form
for the fragment, the form for the whole page, and ``POST /api/match`` with the same paste
for comparison (its JSON carries the same answers). The table gives the median and p99 of
each, and the slowest traceback's median.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a file: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx

from benchmarks.corpus import TRACEBACKS
from benchmarks.writes import serve, stop, until_ready

FORM = {"Content-Type": "application/x-www-form-urlencoded"}
WAYS = {
    "page script (fragment)": ("/?fragment=true", "form"),
    "page without script": ("/", "form"),
    "POST /api/match (JSON)": ("/api/match", "text"),
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", help="an empty database (default: SQLite file)")
    parser.add_argument("--rounds", type=int, default=5, help="posts of each traceback")
    args = parser.parse_args()
    pastes = {path.stem: path.read_text() for path in sorted(TRACEBACKS.glob("*.txt"))}
    with tempfile.TemporaryDirectory() as scratch:
        url = args.database_url or f"sqlite:///{scratch}/errata.sqlite3"
        return asyncio.run(measure(url, pastes, args.rounds, Path(scratch)))


async def measure(url: str, pastes: dict[str, str], rounds: int, scratch: Path) -> int:
    port = 18000 + os.getpid() % 1000
    server = serve(url, port, scratch / "server.log")
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=60) as client:
            await until_ready(client)
            print(f"{len(pastes)} tracebacks, {rounds} rounds")
            print(f"{'way':<26}{'median':>10}{'p99':>10}{'slowest paste (median)':>34}")
            for way, (path, kind) in WAYS.items():
                times = await _times(client, path, kind, pastes, rounds)
                every = [time for each in times.values() for time in each]
                slowest = max(times, key=lambda name: statistics.median(times[name]))
                print(
                    f"{way:<26}{_ms(statistics.median(every)):>10}"
                    f"{_ms(statistics.quantiles(every, n=100)[98]):>10}"
                    f"{_ms(statistics.median(times[slowest])):>12}  {slowest[:20]}"
                )
    finally:
        stop(server)
    return 0


async def _times(
    client: httpx.AsyncClient, path: str, kind: str, pastes: dict[str, str], rounds: int
) -> dict[str, list[float]]:
    """Each paste's answer times over ``rounds`` posts, after one post of each to warm up."""
    times: dict[str, list[float]] = {name: [] for name in pastes}
    for round_ in range(rounds + 1):
        for name, paste in pastes.items():
            started = time.perf_counter()
            if kind == "form":
                response = await client.post(path, data={"text": paste}, headers=FORM)
            else:
                response = await client.post(
                    path, content=paste.encode(), headers={"Content-Type": "text/plain"}
                )
            elapsed = time.perf_counter() - started
            response.raise_for_status()
            if round_:
                times[name].append(elapsed)
    return times


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


if __name__ == "__main__":
    sys.exit(main())
