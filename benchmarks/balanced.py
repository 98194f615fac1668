"""Two ``errata serve`` processes behind HAProxy (``deploy/haproxy.cfg``) on loopback, sharing
one PostgreSQL, as two containers would be. Run from the repository root (HAProxy from
Debian: ``apt-get install -y haproxy``):

    .venv/bin/python -m benchmarks.balanced --database-url postgresql+psycopg://postgres@127.0.0.1:5432/EMPTY_DB
    .venv/bin/python -m benchmarks.balanced --database-url ... --records 100000

The database is filled through the importer, then both processes start (one worker each)
and the balancer in front of them. A 20 KB paste is sent through the balancer at a fixed
rate (open loop) for the whole run. A third of the way in, one record is written through
process A, and process B is asked every 50 ms until it matches the record: the time a
write takes to reach the other process. Two thirds of the way in, process A is killed
(SIGKILL). Figures: the matches before the write, from the write until the kill, and after
the kill (median, p99, slowest), and how many were not answered 200 (the balancer retries
what never reached a process, or got no byte of an answer; a reply cut mid-way by the kill
reaches the client as a protocol error).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a file: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx

from benchmarks import corpus
from benchmarks.writes import (
    REPO_ROOT,
    fill,
    latency_row,
    open_loop,
    serve,
    until_ready,
    write_reaches,
)

HAPROXY_CONFIG = REPO_ROOT / "deploy" / "haproxy.cfg"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", required=True, help="an empty PostgreSQL database")
    parser.add_argument("--records", type=int, default=0, help="synthetic records to import")
    parser.add_argument("--rate", type=float, default=20.0, help="matches a second")
    parser.add_argument("--seconds", type=float, default=30.0, help="length of the run")
    args = parser.parse_args()
    haproxy = shutil.which("haproxy") or shutil.which("haproxy", path="/usr/sbin:/sbin")
    if haproxy is None:
        sys.exit("haproxy is missing: apt-get install -y haproxy")
    with tempfile.TemporaryDirectory() as scratch:
        fill(args.database_url, args.records, Path(scratch))
        return asyncio.run(
            measure(haproxy, args.database_url, args.rate, args.seconds, Path(scratch))
        )


async def measure(haproxy: str, url: str, rate: float, seconds: float, scratch: Path) -> int:
    first_port = 19000 + os.getpid() % 500 * 3
    ports = {"A": first_port, "B": first_port + 1, "balancer": first_port + 2}
    servers = {name: serve(url, ports[name], scratch / f"server-{name}.log") for name in "AB"}
    balancer = subprocess.Popen(
        [haproxy, "-db", "-f", str(HAPROXY_CONFIG)],
        env={
            **os.environ,
            "ERRATA_SERVER_A": f"127.0.0.1:{ports['A']}",
            "ERRATA_SERVER_B": f"127.0.0.1:{ports['B']}",
            "ERRATA_LISTEN": f"127.0.0.1:{ports['balancer']}",
        },
        stdout=(scratch / "haproxy.log").open("wb"),
        stderr=subprocess.STDOUT,
    )
    clients = {
        name: httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=60)
        for name, port in ports.items()
    }
    try:
        for client in clients.values():
            await until_ready(client)
        paste = corpus.paste(20_000)
        outcomes: list[tuple[float, float, int | str]] = []  # sent at, latency, status
        start = time.perf_counter()

        async def one() -> None:
            sent = time.perf_counter()
            try:
                response = await clients["balancer"].post(
                    "/api/match", content=paste, headers={"Content-Type": "text/plain"}
                )
                status: int | str = response.status_code
            except httpx.TransportError as error:
                status = type(error).__name__
            outcomes.append((sent - start, time.perf_counter() - sent, status))

        async def events() -> tuple[float, float, float]:
            await asyncio.sleep(seconds / 3)
            written_at = time.perf_counter() - start
            reached = await write_reaches(clients["A"], clients["B"], poll_s=0.05)
            await asyncio.sleep(max(0.0, start + 2 * seconds / 3 - time.perf_counter()))
            killed_at = time.perf_counter() - start
            servers["A"].send_signal(signal.SIGKILL)
            return written_at, reached, killed_at

        for _ in range(int(2 * rate)):  # warm-up: both processes' first matches
            await one()
        outcomes.clear()
        start = time.perf_counter()

        happenings = asyncio.create_task(events())
        await open_loop(one, rate, start + seconds)
        written_at, reached, killed_at = await happenings
        print(f"# load average {os.getloadavg()[0]:.1f}")
        print(f"a write through A was matched through B after {reached:.3f} s")
        print(f"{'matches':<22}{'sent':>8}{'median':>10}{'p99':>10}{'slowest':>10}  not 200")
        report("before the write", [o for o in outcomes if o[0] < written_at])
        report("write, until the kill", [o for o in outcomes if written_at <= o[0] < killed_at])
        report("after A was killed", [o for o in outcomes if o[0] >= killed_at])
    finally:
        for client in clients.values():
            await client.aclose()
        balancer.terminate()
        balancer.wait(timeout=15)
        for server in servers.values():
            server.terminate()
            server.wait(timeout=30)
    return 0


def report(label: str, outcomes: list[tuple[float, float, int | str]]) -> None:
    latencies = [latency for _, latency, _ in outcomes]
    failed = [status for _, _, status in outcomes if status != 200]
    print(f"{latency_row(label, latencies)}  {len(failed)} {failed[:5]}")


if __name__ == "__main__":
    sys.exit(main())
