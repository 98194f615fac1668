"""What errata adds where people work: a failing notebook cell's explanation, and
``errata run`` around a command that succeeds. Run from the repository root:

    .venv/bin/python -m benchmarks.notebook              # 5 notebook processes of each kind
    .venv/bin/python -m benchmarks.notebook --runs 10

A fresh SQLite database in a scratch folder gets what ``errata serve`` loads (the seeds, the
curated and the mined records), and one ``errata match`` writes the snapshot, as a user's
first command does. Then:

- notebook: a fresh process drives a real IPython shell. A cell lowers a Pallas kernel that
  JAX 0.10.2 refuses on the CPU (tests/oracle's int4 block of 7), once without errata, so
  JAX's own first-time costs are paid. Then ``%load_ext errata``, and the same failing cell:
  at once (the catalog still being read in the loading's thread, the worst case), or 5 s
  later (the first failure of a session that loaded errata at its top); then 10 more times.
  errata's time in a cell is measured between two ``post_run_cell`` callbacks registered
  around the extension's, so JAX's lowering and IPython's traceback are not counted;
- ``errata run``: ``python -c pass`` on its own and as ``errata run -- python -c pass``,
  alternated; the overhead is the difference of the medians.

Each figure is a median over the processes (``--runs``), with the slowest.
"""

from __future__ import annotations

import argparse
import json
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
FAILING = "lower('copy_gmem_to_smem', (7,), 'int4')"
LATER_CELLS = 10
WARM_UP_WAIT_S = 5.0
COMMAND_RUNS = 20


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="notebook processes of each kind")
    parser.add_argument("--child", choices=["at-once", "later"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_notebook(wait=args.child == "later")))
        return 0
    with tempfile.TemporaryDirectory() as scratch:
        env = _prepared_env(Path(scratch))
        at_once = [_child(env, "at-once") for _ in range(args.runs)]
        waited = [_child(env, "later") for _ in range(args.runs)]
        (bare, bare_cpu), (wrapped, wrapped_cpu) = _command_overhead(env)
    print(f"# a failing notebook cell, every shipped record (SQLite), {args.runs} processes each")
    _row("%load_ext errata", [run["load"] for run in at_once + waited])
    _row("first failure, at once", [run["first"] for run in at_once])
    _row(f"first failure, {WARM_UP_WAIT_S:.0f} s after", [run["first"] for run in waited])
    _row("later failures", [median for run in at_once + waited for median in run["later"]])
    print(f"# errata run -- python -c pass, {COMMAND_RUNS} runs each")
    _row("python -c pass", bare, bare_cpu)
    _row("errata run -- python -c pass", wrapped, wrapped_cpu)
    overhead = statistics.median(wrapped) - statistics.median(bare)
    cpu = statistics.median(wrapped_cpu) - statistics.median(bare_cpu)
    print(f"{'overhead (medians)':<34}{overhead:>9.3f} s   CPU {cpu:.3f} s")
    return 0


def _row(name: str, seconds: list[float], cpu: list[float] | None = None) -> None:
    used = f"   CPU {statistics.median(cpu):.3f} s" if cpu else ""
    print(f"{name:<34}{statistics.median(seconds):>9.3f} s   slowest {max(seconds):.3f} s{used}")


def _prepared_env(folder: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("ERRATA_")}
    env["ERRATA_DATABASE_URL"] = f"sqlite:///{folder / 'errata.sqlite3'}"
    env["XDG_CACHE_HOME"] = str(folder / "cache")
    env["PYTHONPATH"] = str(REPO)
    seed = [sys.executable, "-m", "app", "admin", "db", "upgrade", "--seed"]
    subprocess.run(seed, env=env, cwd=REPO, check=True, capture_output=True)
    match = [sys.executable, "-m", "app", "match", str(TRACEBACK)]
    subprocess.run(match, env=env, cwd=REPO, check=True, capture_output=True)
    return env


def _child(env: dict[str, str], kind: str) -> dict[str, object]:
    command = [sys.executable, "-m", "benchmarks.notebook", "--child", kind]
    done = subprocess.run(command, env=env, cwd=REPO, check=False, capture_output=True)
    if done.returncode != 0:
        raise SystemExit(f"the notebook process failed:\n{done.stderr.decode()}")
    return json.loads(done.stdout.decode().splitlines()[-1])  # type: ignore[no-any-return]


def _notebook(wait: bool) -> dict[str, object]:
    """One notebook session's figures: loading errata, errata's time in the first failing
    cell and the median of the later ones."""
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    shell = InteractiveShell.instance()
    marks: list[float] = []

    def before(result: object) -> None:
        marks.append(time.perf_counter())

    def after(result: object) -> None:  # another function: IPython registers one once
        marks.append(time.perf_counter())

    with capture_output() as captured:
        shell.run_cell("from tests.oracle.jax_kernels import lower")
        shell.run_cell(FAILING)  # JAX's first lowering, without errata
        shell.events.register("post_run_cell", before)
        started = time.perf_counter()
        shell.run_cell("%load_ext errata")
        load = time.perf_counter() - started
        shell.events.register("post_run_cell", after)
        if wait:
            time.sleep(WARM_UP_WAIT_S)
        errata = []
        for _ in range(1 + LATER_CELLS):
            marks.clear()
            shell.run_cell(FAILING)
            errata.append(marks[1] - marks[0])
    if len(captured.outputs) != 1 + LATER_CELLS:
        raise SystemExit(f"not every failing cell was explained:\n{captured.stderr}")
    return {"load": load, "first": errata[0], "later": [statistics.median(errata[1:])]}


Timings = tuple[list[float], list[float]]  # wall seconds, CPU seconds of each run


def _command_overhead(env: dict[str, str]) -> tuple[Timings, Timings]:
    """``python -c pass`` alone and under ``errata run``, alternated: wall and CPU times."""
    bare_command = [sys.executable, "-c", "pass"]
    wrapped_command = [sys.executable, "-m", "app", "run", "--", *bare_command]
    bare: Timings = ([], [])
    wrapped: Timings = ([], [])
    for _ in range(COMMAND_RUNS):
        for command, (walls, cpus) in ((bare_command, bare), (wrapped_command, wrapped)):
            cpu_before, started = _children_cpu(), time.perf_counter()
            done = subprocess.run(command, env=env, cwd=REPO, capture_output=True, check=True)
            walls.append(time.perf_counter() - started)
            cpus.append(_children_cpu() - cpu_before)
            if done.stdout or done.stderr:
                raise SystemExit(f"errata run added output: {done.stderr.decode()}")
    return bare, wrapped


def _children_cpu() -> float:
    """CPU seconds of the processes this one ran and waited for, so far."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


if __name__ == "__main__":
    raise SystemExit(main())
