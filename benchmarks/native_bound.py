"""The most a native reader of lines could save: ``match_paste`` whole, and with the paste
already cleaned and its tracebacks already read.

Run from the repository root (about a minute):

    .venv/bin/python -m benchmarks.native_bound
    .venv/bin/python -m benchmarks.native_bound --records 1000 --pastes 20

Two steps read every line of a paste in Python: cleaning it (``normalize``: logger prefixes,
markup) and the traceback grammar (``read_exceptions``). Written in native code, each would
still hand Python the same cleaned lines and the same reading. This benchmark matches each
paste as the service does, then again with those two steps replaced by their results,
computed once before timing; the cleaned lines are copied afresh on every call, since native
code returns new strings, whose hashes Python has not cached. The difference is the most
that native versions of the two steps could save; what remains is the rest of the reader, in
Python, which they would not touch. Beside it, each step is timed alone, and the machine's
gauge (the naive ``re`` loop of ``benchmarks.match``, over the same lines) is measured in the
same process, so that runs on different machines can be compared.

The catalog is issue 14's: ``--records`` synthetic records and every mined site, with the
frame index. Times are wall-clock medians and p99 of ``--runs`` calls: quote one run.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from unittest import mock

if __package__ in (None, ""):  # run as a file: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.matching import PatternIndex, match_paste, matcher
from app.matching.frames import FrameIndex
from app.matching.normalize import NormalizedPaste, normalize
from app.matching.release import read_release
from app.matching.tracebacks import read_exceptions
from benchmarks import corpus
from benchmarks.match import NaiveIndex, _machine, _Recorder, figures, timed


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=100_000, help="synthetic records")
    parser.add_argument("--pastes", default="20,200", help="paste sizes in KB, e.g. 2,20")
    parser.add_argument("--runs", type=int, default=300, help="timed calls per figure")
    parser.add_argument("--naive-budget", type=float, default=2.0, help="seconds of the gauge")
    args = parser.parse_args(argv)
    frames = FrameIndex.load()
    index = PatternIndex.build(corpus.entries(args.records) + corpus.mined_entries())
    print(f"# {_machine()}; {args.records:,} records and the mined sites; {args.runs} runs")
    print()
    print("| paste | gauge | whole | cleaned and read beforehand | saved at most | the rest |")
    print("|---|---:|---:|---:|---:|---:|")
    stages = []
    naive = NaiveIndex(index)
    for kb in (int(part) for part in args.pastes.split(",")):
        row, medians = _measure(corpus.paste(kb * 1000), index, frames, naive, args)
        print(f"| {kb} KB | {row} |")
        stages.append((kb, medians))
    print()
    print("| paste | cleaning alone | grammar alone | release alone | lines searched | copy |")
    print("|---|---:|---:|---:|---:|---:|")
    for kb, medians in stages:
        print(f"| {kb} KB | " + " | ".join(f"{median:.3f} ms" for median in medians) + " |")
    print()
    print("(median / p99; 'the rest' is the median cleaned and read beforehand, less the copy)")
    return 0


def _measure(
    text: str, index: PatternIndex, frames: FrameIndex, naive: NaiveIndex, args: argparse.Namespace
) -> tuple[str, list[float]]:
    """One paste's row of the first table, and the medians of its steps for the second."""

    def median(call: Callable[[], object]) -> float:
        return statistics.median(timed(call, args.runs))

    whole = timed(lambda: match_paste(text, index, None, frames), args.runs)
    paste = normalize(text)
    reading = read_exceptions(paste.lines)

    def copied(_: object = None) -> NormalizedPaste:
        lines = tuple([f" {line}"[1:] for line in paste.lines])  # new strings
        return NormalizedPaste(lines, paste.origins, paste.original)

    with (
        mock.patch.object(matcher, "normalize", copied),
        mock.patch.object(matcher, "read_exceptions", lambda _: reading),
    ):
        rest = timed(lambda: match_paste(text, index, None, frames), args.runs)
    copying = median(copied)
    recorder = _Recorder(index)
    match_paste(text, recorder, None, frames)  # type: ignore[arg-type]
    scan = naive.scan(recorder.calls, args.naive_budget)
    gauge_ms = scan.seconds * 1000 * len(index) / scan.patterns_done
    beforehand = statistics.median(rest) - copying
    row = (
        f"{gauge_ms:,.0f} ms | {figures(whole)} | {figures(rest)} "
        f"| {statistics.median(whole) - beforehand:.3f} ms | {beforehand:.3f} ms"
    )
    steps = [
        median(lambda: normalize(text)),
        median(lambda: read_exceptions(paste.lines)),
        median(lambda: read_release(frames, paste.lines, reading.structure, None)),
        median(lambda: index.search(paste.lines)),
        copying,
    ]
    return row, steps


if __name__ == "__main__":
    sys.exit(main())
