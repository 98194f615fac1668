"""Issue 14's reference, measured beside errata's reader in one run: Hyperscan over a paste's
exception lines only.

The issue set its targets against "scanning only exception lines with Hyperscan": 0.23 ms
median and 0.43 ms p99 for a 20 KB traceback at 100,000 patterns. Machines differ, so this
measures that reference here, on the matching benchmark's catalog and pastes, and times
``match_paste`` in the same process. Hyperscan is an optional extra; run from the
repository root (about 5 minutes, most of it compiling the patterns):

    .venv/bin/pip install -e '.[reference]'
    .venv/bin/python -m benchmarks.reference             # 100,000 records
    .venv/bin/python -m benchmarks.reference --records 10000

Two forms of the reference are timed, since the issue does not say where its exception lines
came from:

* *scan*: the exception lines as errata's reader finds them (untimed), scanned in one call;
* *find and scan*: the lines a regular expression picks from the raw paste
  (``…Error: …``), scanned in one call. No cleaning, no traceback, no other line read.

Each is timed ``--runs`` times after 20 warm-up calls, as is ``match_paste``; each must first
find the paste's known error, or the run exits 1.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a file: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import hyperscan

from app.matching import PatternIndex, match_paste, normalize, read_exceptions
from app.matching.frames import FrameIndex
from benchmarks import corpus
from benchmarks.match import figures, timed

PASTE_KB = (2, 20, 200)
WARM_UP = 20
_EXCEPTION_LINE = re.compile(r"^[ \t]*[\w.]+(?:Error|Exception|Warning)\b.*:.*$", re.MULTILINE)
_NAMED_GROUP = re.compile(r"\(\?P<[A-Za-z_]\w*>")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=100_000, help="synthetic records")
    parser.add_argument("--runs", type=int, default=300, help="timed calls per case")
    args = parser.parse_args()

    entries = corpus.entries(args.records) + corpus.mined_entries()
    started = time.perf_counter()
    database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    database.compile(
        expressions=[_NAMED_GROUP.sub("(?:", e.pattern).encode() for e in entries],
        ids=list(range(len(entries))),
        flags=hyperscan.HS_FLAG_SINGLEMATCH | hyperscan.HS_FLAG_UTF8,
    )
    compiled_s = time.perf_counter() - started
    scratch = hyperscan.Scratch(database)
    frames = FrameIndex.load()
    index = PatternIndex.build(entries)
    print(f"# {len(entries):,} patterns; Hyperscan compiled them in {compiled_s:.0f} s")
    print(f"# median / p99 of {args.runs} calls each, after {WARM_UP} warm-up calls")
    print()
    print("| paste | exception lines | scan | find and scan | errata's `match_paste` | ratio |")
    print("|---|---:|---:|---:|---:|---:|")
    hits: list[int] = []

    def found(pattern: int, start: int, end: int, flags: int, context: object) -> None:
        hits.append(pattern)

    known = {n for n, e in enumerate(entries) if e.record_id == corpus.KNOWN_RECORD}
    for kb in PASTE_KB:
        text = corpus.paste(kb * 1000)
        read = read_exceptions(normalize(text).lines).exceptions
        lines = "\n".join(f"{e.qualified_class}: {e.message}" for e in read).encode()

        def scan(data: bytes = lines) -> None:
            database.scan(data, match_event_handler=found, scratch=scratch)

        def find_and_scan(paste: str = text) -> None:
            picked = "\n".join(m[0] for m in _EXCEPTION_LINE.finditer(paste))
            database.scan(picked.encode(), match_event_handler=found, scratch=scratch)

        def reader(paste: str = text) -> None:
            match_paste(paste, index, None, frames)

        # Each form must find the paste's known error before it is timed.
        for form in (scan, find_and_scan):
            hits.clear()
            form()
            if not known & set(hits):
                print(f"{form.__name__} missed {corpus.KNOWN_RECORD} in the {kb} KB paste")
                return 1
        answer = match_paste(text, index, None, frames)
        if corpus.KNOWN_RECORD not in [m.record_id for m in answer.matches]:
            print(f"match_paste missed {corpus.KNOWN_RECORD} in the {kb} KB paste")
            return 1
        scanned, picked, matched = (
            timed(f, args.runs, WARM_UP) for f in (scan, find_and_scan, reader)
        )
        ratio = statistics.median(matched) / statistics.median(picked)
        print(
            f"| {kb} KB | {len(read)} | {figures(scanned)} | {figures(picked)} "
            f"| {figures(matched)} | {ratio:.1f}× |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
