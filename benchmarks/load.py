"""Fifty clients at once: ``errata serve`` (one worker) under 50 clients, each sending its
next request as soon as its last was answered (a closed loop), over a mix of what users ask.
Run from the repository root:

    .venv/bin/python -m benchmarks.load                          # SQLite, what serve loads
    .venv/bin/python -m benchmarks.load --records 89000 --keep var/bench-load-100k.sqlite3
    .venv/bin/python -m benchmarks.load --database-url postgresql+psycopg://postgres@127.0.0.1:5432/EMPTY_DB
    .venv/bin/python -m benchmarks.load --leave-out related      # the mix without a kind

The database gets what a fresh ``errata serve`` loads (seeds and mined data, ~11,200 records)
and ``--records`` synthetic ones through the importer; ``--keep`` keeps the SQLite file for
the next run; a ``--database-url`` must name an empty database, and is left filled. The
server starts with the rate limit off, the benchmark reads 2,000 record ids, sends each kind
of request a few times, then takes the server's resident memory (VmRSS) as "after start".

Each client then draws its next request from this mix (weights in a hundred requests: mostly
reads, as on a public service; the pastes and computes are the work that costs):

    28  GET /errors/{id}              a record's page (HTML), a record drawn at random
    20  POST /api/match               a 20 KB paste as plain text, one of 8 (paste seeds 0-7)
    14  GET /api/errors/{id}/related  a random record's related records
    12  GET /api/errors?q=WORD        search, a word of SEARCH_WORDS
    12  GET /search?q=WORD            the search page (HTML)
    12  POST /api/compute             copy_gmem_to_smem of int4[n], n of 1-16 (seen after
                                      their first), or one time in 4 a new case: a random
                                      operation, 2-D shape and dtype (of 3.9 million)
     2  POST /api/import              3 new synthetic records as JSON Lines (curator token)

VmRSS is read every 0.5 s. Figures per kind and overall: answers, their p50, p99 and slowest,
5xx answers, requests without an answer (client timeout ``--timeout``, or a transport error),
other non-2xx answers by status; throughput, server CPU a request, peak memory ÷ after start.
A 5xx, an unanswered request or a peak over 1.5x fails the run: the server's log is kept in
``var/bench-load-server.log``, its warnings and 5xx counted. Clients and server share cores.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import random
import re
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx

from benchmarks import corpus, memory
from benchmarks.load_index import database_url
from benchmarks.writes import REPO_ROOT, TOKEN, fill, latency_row, serve, stop, until_ready

CLIENTS = 50
WEIGHTS = {  # requests in a hundred, as the module's docstring lists them
    "record page": 28, "match": 20, "related": 14, "search (API)": 12, "search (page)": 12,
    "compute": 12, "import": 2,
}  # fmt: skip
SEARCH_WORDS = (
    "warpgroup", "layout", "block", "tiling", "swizzle", "barrier", "int4", "semaphore",
    "shape", "dtype", "alignment", "multiple", "transpose", "TMA", "accumulator", "lowering",
)  # fmt: skip
OPERATIONS = ("copy_gmem_to_smem", "copy_smem_to_gmem", "pallas_call")
DTYPES = ("int4", "int8", "bfloat16", "float32", "float8_e4m3fn")
NEW_COMPUTE_SHARE = 0.25
PASTES = 8
ID_PAGES = 10  # of 200 ids: ids are hashes, so the first pages are a random sample
IMPORT_RECORDS = 3
SAMPLE_EVERY_S = 0.5
MEMORY_LIMIT = 1.5  # peak ÷ after start that fails the run
KEPT_LOG = REPO_ROOT / "var" / "bench-load-server.log"

Outcome = tuple[float, int | str]  # seconds, status or the client's error
Request = tuple[str, str, dict[str, Any]]  # method, path, httpx keyword arguments


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=0, help="synthetic records to import")
    parser.add_argument("--database-url", help="an empty database (default: SQLite file)")
    parser.add_argument("--keep", type=Path, help="SQLite file to fill once and reuse")
    parser.add_argument("--seconds", type=float, default=60.0, help="length of the run")
    parser.add_argument("--timeout", type=float, default=30.0, help="client timeout, s")
    parser.add_argument("--leave-out", action="append", default=[], choices=list(WEIGHTS))
    args = parser.parse_args()
    weights = {kind: n for kind, n in WEIGHTS.items() if kind not in args.leave_out}
    with tempfile.TemporaryDirectory() as scratch:
        url = database_url(args.database_url, args.keep, Path(scratch))
        fill(url, args.records, Path(scratch))
        return asyncio.run(measure(url, weights, args.seconds, args.timeout, Path(scratch)))


class Mix:
    """The requests of the mix: ``draw`` picks a kind by weight, ``request`` builds one."""

    def __init__(self, record_ids: list[str], weights: dict[str, int]) -> None:
        self.record_ids = record_ids
        self.weights = weights
        self.pastes = [corpus.paste(20_000, seed=seed).encode() for seed in range(PASTES)]
        self.import_seeds = itertools.count(1)  # seed 0 is the fill's: new records each time

    def draw(self, rng: random.Random) -> str:
        return rng.choices(list(self.weights), weights=list(self.weights.values()))[0]

    def request(self, kind: str, rng: random.Random) -> Request:
        record_id = rng.choice(self.record_ids)
        word = rng.choice(SEARCH_WORDS)
        if kind == "record page":
            return "GET", f"/errors/{record_id}", {}
        if kind == "related":
            return "GET", f"/api/errors/{record_id}/related", {}
        if kind == "search (API)":
            return "GET", "/api/errors", {"params": {"q": word}}
        if kind == "search (page)":
            return "GET", "/search", {"params": {"q": word}}
        if kind == "match":
            headers = {"Content-Type": "text/plain"}
            return "POST", "/api/match", {"content": rng.choice(self.pastes), "headers": headers}
        if kind == "compute":
            return "POST", "/api/compute", {"json": compute_case(rng)}
        documents = corpus.record_documents(IMPORT_RECORDS, seed=next(self.import_seeds))
        body = "".join(json.dumps(document) + "\n" for document in documents).encode()
        headers = {"Content-Type": "application/x-ndjson", "Authorization": f"Bearer {TOKEN}"}
        return "POST", "/api/import", {"content": body, "headers": headers}


def compute_case(rng: random.Random) -> dict[str, Any]:
    """A case seen after its first request, or now and then one seen by no earlier run."""
    if rng.random() < NEW_COMPUTE_SHARE:
        shape = [rng.randint(1, 512), rng.randint(1, 512)]
        return {"operation": rng.choice(OPERATIONS), "shape": shape, "dtype": rng.choice(DTYPES)}
    return {"operation": "copy_gmem_to_smem", "shape": [rng.randint(1, 16)], "dtype": "int4"}


async def send(client: httpx.AsyncClient, request: Request) -> Outcome:
    method, path, arguments = request
    sent = time.perf_counter()
    try:
        response = await client.request(method, path, **arguments)
        status: int | str = response.status_code
    except httpx.TimeoutException:
        status = "timeout"
    except httpx.TransportError as error:
        status = type(error).__name__
    return time.perf_counter() - sent, status


async def measure(
    url: str, weights: dict[str, int], seconds: float, timeout: float, scratch: Path
) -> int:
    port = 18000 + os.getpid() % 1000
    log = scratch / "server.log"
    server = serve(url, port, log)
    base = f"http://127.0.0.1:{port}"
    try:
        async with httpx.AsyncClient(base_url=base, timeout=timeout) as client:
            await until_ready(client)
            mix = Mix(await record_ids(client), weights)
            rng = random.Random(0)
            for kind in weights:  # warm-up: each kind's first requests
                for _ in range(1 if kind == "import" else 3):
                    _, status = await send(client, mix.request(kind, rng))
                    if status != 200:
                        print(f"warm-up {kind}: {status}")
        after_start = memory.rss_mb(server.pid)
        cpu_before = cpu_seconds(server.pid)
        print(f"# {len(mix.record_ids):,} record ids; RSS after start {after_start:.0f} MB")
        started = time.perf_counter()
        outcomes, peak = await run_clients(base, mix, seconds, timeout, server.pid)
        took, cpu = time.perf_counter() - started, cpu_seconds(server.pid) - cpu_before
        failed = report(outcomes, took, cpu, after_start, peak)
    finally:
        stop(server)
    if failed:
        keep_log(log)
    return 1 if failed else 0


async def record_ids(client: httpx.AsyncClient) -> list[str]:
    """Up to ``ID_PAGES`` pages of record ids from ``/api/errors``."""
    found: list[str] = []
    params: dict[str, Any] = {"limit": 200}
    for _ in range(ID_PAGES):
        page = (await client.get("/api/errors", params=params)).raise_for_status().json()
        found += [item["id"] for item in page["items"]]
        if not page["nextCursor"]:
            break
        params["cursor"] = page["nextCursor"]
    return found


async def run_clients(
    base: str, mix: Mix, seconds: float, timeout: float, pid: int
) -> tuple[dict[str, list[Outcome]], float]:
    """``CLIENTS`` closed loops until ``seconds`` are up, each on a connection of its own;
    the outcomes by kind, and the server's peak RSS (MB) while they ran."""
    outcomes: dict[str, list[Outcome]] = {kind: [] for kind in mix.weights}
    end = time.perf_counter() + seconds

    async def loop(number: int) -> None:
        rng = random.Random(number + 1)
        async with httpx.AsyncClient(base_url=base, timeout=timeout) as client:
            while time.perf_counter() < end:
                kind = mix.draw(rng)
                outcomes[kind].append(await send(client, mix.request(kind, rng)))

    peaks = [memory.rss_mb(pid)]

    async def sample() -> None:
        while True:
            peaks.append(memory.rss_mb(pid))
            await asyncio.sleep(SAMPLE_EVERY_S)

    sampler = asyncio.create_task(sample())
    await asyncio.gather(*(loop(number) for number in range(CLIENTS)))
    sampler.cancel()
    await asyncio.gather(sampler, return_exceptions=True)
    return outcomes, max(peaks)


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of process ``pid`` so far (Linux's /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def report(
    outcomes: dict[str, list[Outcome]], seconds: float, cpu: float, after: float, peak: float
) -> bool:
    """Print the table (``seconds``: until the last answer or timeout); whether the run
    failed (5xx, no answer, or memory over the limit)."""
    print(
        f"{'kind':<22}{'answered':>8}{'p50':>10}{'p99':>10}{'slowest':>10}"
        f"{'5xx':>6}{'no answer':>11}  other non-2xx"
    )
    every = [outcome for rows in outcomes.values() for outcome in rows]
    failures = sum(row(kind, rows) for kind, rows in outcomes.items())
    row("all", every)
    ratio = peak / after
    print(
        f"{len(every):,} requests in {seconds:.0f} s ({len(every) / seconds:.0f}/s), "
        f"server CPU {cpu * 1000 / max(1, len(every)):.2f} ms a request, "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    print(f"server RSS: after start {after:.0f} MB, peak {peak:.0f} MB ({ratio:.2f}x)")
    if ratio > MEMORY_LIMIT:
        print(f"FAILED: peak memory over {MEMORY_LIMIT}x after start")
    if failures:
        print(f"FAILED: {failures} requests answered 5xx or not at all")
    return bool(failures) or ratio > MEMORY_LIMIT


def row(label: str, rows: list[Outcome]) -> int:
    """Print one kind's row; how many of its requests failed (5xx or no answer)."""
    answered = [latency for latency, status in rows if isinstance(status, int)]
    statuses = Counter(status for _, status in rows)
    server_errors = sum(n for s, n in statuses.items() if isinstance(s, int) and s >= 500)
    other = {s: n for s, n in statuses.items() if isinstance(s, int) and 300 <= s < 500}
    unanswered_by = {s: n for s, n in statuses.items() if isinstance(s, str)}
    unanswered = sum(unanswered_by.values())
    timing = latency_row(label, answered) if answered else f"{label:<22}{0:>8}{'':>30}"
    detail = " ".join(f"{s}: {n}" for s, n in sorted(other.items())) or "-"
    if unanswered_by:
        detail += f" ({', '.join(f'{s}: {n}' for s, n in unanswered_by.items())})"
    print(f"{timing}{server_errors:>6}{unanswered:>11}  {detail}")
    return server_errors + unanswered


def keep_log(log: Path) -> None:
    """Keep the server's log; print its warnings and errors, and its 5xx answers, counted."""
    KEPT_LOG.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(log, KEPT_LOG)
    said: Counter[str] = Counter()
    for line in log.read_text(errors="replace").splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            said[line[:100]] += 1
            continue
        if entry.get("logger") != "errata.access":
            event = re.sub(r"/[0-9a-f]{16}\b", "/{id}", str(entry.get("event")))
            said[f"{entry.get('logger')}: {' '.join(event.split()[:6])}"] += 1
        elif entry.get("status", 0) >= 500:
            said[f"answered {entry['status']}: {entry.get('method')} {entry.get('route')}"] += 1
    print(f"# the server's log is kept in {KEPT_LOG}; what it said, counted:")
    for text, count in said.most_common(15):
        print(f"{count:>7}  {text}")


if __name__ == "__main__":
    sys.exit(main())
