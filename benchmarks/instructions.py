"""Instructions a request costs inside the app, counted by callgrind: the same on every run.

Run from the repository root (valgrind comes from Debian: ``apt-get install -y valgrind``):

    .venv/bin/python -m benchmarks.instructions            # 10 to 25 minutes
    .venv/bin/python -m benchmarks.instructions --steps    # the in-process steps only

Wall time on these machines drifts by a fifth within minutes; instruction counts do not
(two runs agree within a fraction of a percent). Each endpoint of
``benchmarks.request_path`` is called ``--calls`` times, after 50 warm-up calls, in a fresh
process under ``valgrind --tool=callgrind``; the calls are marked off by a call of libc's
``getppid`` before and after them (``--dump-before=getppid``), so that the count leaves the
start-up out. Instructions are not time (a cache miss costs more than an addition), but
they show which change saved what, where wall time cannot tell a 3 % saving from the
machine's mood.

Beside the endpoints, the two steps whose speed the issues set targets for are counted the
same way, in-process and without the app: ``match_paste`` of the matching benchmark's 2,
20 and 200 KB pastes against 1,000 synthetic records and the mined sites (with the frame
index, as the service calls it), and ``validate_record`` of the import benchmark's records
(parse, check, derive slug and pattern). Each is counted over the calls ``STEPS`` gives,
after warm-up calls (the first matches compile the patterns they need).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import NamedTuple

if __package__ in (None, ""):  # run as a file: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import uvloop

from benchmarks import corpus
from benchmarks.request_path import asgi_call, calibrated_app, measured_calls, prepared

WARM_UP = 50


class Step(NamedTuple):
    """An in-process step. A count does not vary between runs: a few calls of a long step
    suffice."""

    calls: int  # counted
    warm_up: int
    paste_kb: int | None  # match_paste of the matching benchmark's paste; None: validate_record


STEPS = {
    "match_paste (2 KB paste)": Step(20, 2, 2),
    "match_paste (20 KB paste)": Step(10, 2, 20),
    "match_paste (200 KB paste)": Step(2, 2, 200),
    "validate_record (a seed-sized record)": Step(2000, 100, None),
}
STEP_CATALOG_RECORDS = 1_000
_TOTAL = re.compile(r"^(?:summary|totals): (\d+)", re.MULTILINE)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200, help="calls counted per endpoint")
    parser.add_argument("--steps", action="store_true", help="the in-process steps only")
    parser.add_argument("--child", nargs=2, metavar=("ENDPOINT", "CALLS"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child and args.child[0] in STEPS:
        _step_calls(args.child[0], int(args.child[1]))
        return 0
    if args.child:
        uvloop.install()  # as errata serve runs
        asyncio.run(_calls(args.child[0], int(args.child[1])))
        return 0
    calls = {} if args.steps else {name: args.calls for name in measured_calls()}
    calls.update({name: step.calls for name, step in STEPS.items()})
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        counts = pool.map(lambda name: _counted(name, calls[name]), calls)
        per_call = {name: count / calls[name] for name, count in zip(calls, counts, strict=True)}
    if not args.steps:
        trivial = per_call["GET /healthz"]
        print(f"# instructions a call, callgrind, {args.calls} calls per endpoint")
        print("| endpoint | instructions | of `/healthz` |")
        print("|---|---:|---:|")
        for name in measured_calls():
            print(f"| {name} | {per_call[name]:,.0f} | {100 * trivial / per_call[name]:.0f} % |")
        print()
    print(f"# in-process steps ({STEP_CATALOG_RECORDS:,} synthetic records and the mined sites)")
    print("| step | instructions a call | calls counted |")
    print("|---|---:|---:|")
    for name, step in STEPS.items():
        print(f"| {name} | {per_call[name]:,.0f} | {step.calls} |")
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


def _step_calls(name: str, calls: int) -> None:
    call = _step(STEPS[name])
    for _ in range(STEPS[name].warm_up):
        call()
    os.getppid()  # the marks, as for the endpoints
    for _ in range(calls):
        call()
    os.getppid()


def _step(step: Step) -> Callable[[], object]:
    """One call of ``step``, everything it needs built first."""
    if step.paste_kb is None:
        from app.records.importer import read_documents
        from app.records.validation import validate_record

        lines = "".join(json.dumps(document) + "\n" for document in corpus.record_documents(2000))
        records = itertools.cycle([incoming.record for incoming in read_documents(lines, "")])
        return lambda: validate_record(next(records))
    from app.matching import PatternIndex, match_paste
    from app.matching.frames import FrameIndex

    frames = FrameIndex.load()
    index = PatternIndex.build(corpus.entries(STEP_CATALOG_RECORDS) + corpus.mined_entries())
    paste = corpus.paste(step.paste_kb * 1000)
    return lambda: match_paste(paste, index, None, frames)


if __name__ == "__main__":
    raise SystemExit(main())
