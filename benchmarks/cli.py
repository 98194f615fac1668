"""How long ``errata match`` takes as a user runs it: a process from start to exit, on a real
traceback, against a database of every shipped record. Run from the repository root:

    .venv/bin/python -m benchmarks.cli                # 10 runs of each
    .venv/bin/python -m benchmarks.cli --runs 20

A fresh SQLite database in a scratch folder gets what ``errata serve`` loads (the seeds,
the curated and the mined records) before anything is timed. Then ``errata match`` reads
``tests/fixtures/tracebacks/MGPU-COPY-INTEGER-BYTES.txt``:

- cold: with an empty cache folder each time, as the first command after the data changed:
  it builds the catalog from the database and writes the snapshot;
- warm: from the snapshot, as every command after that.

Each figure is the median of ``--runs`` processes: wall time (with the fastest and the
slowest), and the CPU time (user and system) of the process, which a busy machine changes
less.
Python writes its bytecode caches as an installed errata's are (``PYTHONDONTWRITEBYTECODE``
is unset for the runs), and one run that is not timed fills them first. Every run's output
must be the first one's.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a file: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

REPO = Path(__file__).resolve().parent.parent
TRACEBACK = REPO / "tests" / "fixtures" / "tracebacks" / "MGPU-COPY-INTEGER-BYTES.txt"
MATCH = [sys.executable, "-m", "app", "match", str(TRACEBACK)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10, help="processes of each kind")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        env = {key: value for key, value in os.environ.items() if not _setting(key)}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["ERRATA_DATABASE_URL"] = f"sqlite:///{folder / 'errata.sqlite3'}"
        seed = [sys.executable, "-m", "app", "admin", "db", "upgrade", "--seed"]
        subprocess.run(seed, env=env, cwd=REPO, check=True, capture_output=True)
        warm_env = {**env, "XDG_CACHE_HOME": str(folder / "cache")}
        expected = _run(warm_env)[0]  # fills the bytecode caches and the snapshot
        fresh = [{**env, "XDG_CACHE_HOME": str(folder / f"cold-{n}")} for n in range(args.runs)]
        cold = [_timed(expected, each) for each in fresh]
        warm = [_timed(expected, warm_env) for _ in range(args.runs)]
    print(f"# errata match {TRACEBACK.name}, every shipped record (SQLite), {args.runs} runs")
    print(f"{'':<28}{'wall median':>12}{'(fastest–slowest)':>20}{'CPU median':>12}")
    for name, runs in (("cold: builds the snapshot", cold), ("warm: reads the snapshot", warm)):
        walls, cpus = [run[0] for run in runs], [run[1] for run in runs]
        wall, span = statistics.median(walls), f"({min(walls):.2f}–{max(walls):.2f} s)"
        print(f"{name:<28}{wall:>10.2f} s{span:>20}{statistics.median(cpus):>10.2f} s")
    return 0


def _setting(name: str) -> bool:
    return name.upper().startswith("ERRATA_")


def _timed(expected: bytes, env: dict[str, str]) -> tuple[float, float]:
    output, wall, cpu = _run(env)
    if output != expected:
        raise SystemExit("errata match printed another answer than the first run's")
    return wall, cpu


def _run(env: dict[str, str]) -> tuple[bytes, float, float]:
    """The output of one ``errata match`` process, its wall time and its CPU time."""
    before = _children_cpu()
    started = time.perf_counter()
    done = subprocess.run(MATCH, env=env, cwd=REPO, capture_output=True, check=False)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"errata match exited {done.returncode}: {done.stderr.decode()}")
    return done.stdout, wall, _children_cpu() - before


def _children_cpu() -> float:
    """CPU seconds of the processes this one ran and waited for, so far."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


if __name__ == "__main__":
    raise SystemExit(main())
