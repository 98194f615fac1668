"""Instructions a request costs inside the app, counted by callgrind: the same on every run.

Run from the repository root (valgrind comes from Debian: ``apt-get install -y valgrind``):

    .venv/bin/python -m benchmarks.instructions            # about 5 minutes

Wall time on these machines drifts by a fifth within minutes; instruction counts do not
(two runs agree within a fraction of a percent). Each endpoint of
``benchmarks.request_path`` is called ``--calls`` times, after 50 warm-up calls, in a fresh
process under ``valgrind --tool=callgrind``; the calls are marked off by a call of libc's
``getppid`` before and after them (``--dump-before=getppid``), so that the count leaves the
start-up out. Instructions are not time (a cache miss costs more than an addition), but
they show which change saved what, where wall time cannot tell a 3 % saving from the
machine's mood.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

if __package__ in (None, ""):  # run as a file: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import uvloop

from benchmarks.request_path import asgi_call, calibrated_app, measured_calls, prepared

WARM_UP = 50
_TOTAL = re.compile(r"^(?:summary|totals): (\d+)", re.MULTILINE)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200, help="calls counted per endpoint")
    parser.add_argument("--child", nargs=2, metavar=("ENDPOINT", "CALLS"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        uvloop.install()  # as errata serve runs
        asyncio.run(_calls(args.child[0], int(args.child[1])))
        return 0
    cases = measured_calls()
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        counts = pool.map(lambda name: _counted(name, args.calls), cases)
        per_call = {name: count / args.calls for name, count in zip(cases, counts, strict=True)}
    trivial = per_call["GET /healthz"]
    print(f"# instructions a call, callgrind, {args.calls} calls per endpoint")
    print("| endpoint | instructions | of `/healthz` |")
    print("|---|---:|---:|")
    for name, count in per_call.items():
        print(f"| {name} | {count:,.0f} | {100 * trivial / count:.0f} % |")
    return 0


def _counted(endpoint: str, calls: int) -> int:
    """The instructions of ``calls`` calls of ``endpoint``, between the child's two marks."""
    with tempfile.TemporaryDirectory() as folder:
        output = Path(folder) / "callgrind.out"
        command = [
            "valgrind", "--tool=callgrind", "--dump-before=getppid",
            f"--callgrind-out-file={output}",
            sys.executable, "-m", "benchmarks.instructions", "--child", endpoint, str(calls),
        ]  # fmt: skip
        environment = {
            **os.environ,
            "PYTHONHASHSEED": "0",  # the same dict layouts every run
            # The store's version is re-read every 0.5 s of wall time: every few thousand
            # calls at full speed, but every few calls under callgrind, fifty times slower.
            "ERRATA_STORE_VERSION_MAX_AGE_S": "60",
        }
        subprocess.run(command, capture_output=True, env=environment, check=True)
        # Dump 1 is the start-up, dump 2 the calls between the marks.
        found = _TOTAL.search(output.with_name(output.name + ".2").read_text())
    if found is None:
        raise SystemExit(f"callgrind wrote no total for {endpoint}")
    return int(found[1])


async def _calls(endpoint: str, calls: int) -> None:
    app, (method, path, body) = calibrated_app(), measured_calls()[endpoint]
    with open(os.devnull, "w") as devnull, contextlib.redirect_stderr(devnull), prepared(endpoint):
        async with app.router.lifespan_context(app):
            for _ in range(WARM_UP):
                await asgi_call(app, method, path, body)
            os.getppid()  # the marks: callgrind dumps its counts before each
            for _ in range(calls):
                await asgi_call(app, method, path, body)
            os.getppid()


if __name__ == "__main__":
    raise SystemExit(main())
