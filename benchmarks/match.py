"""Matching speed in-process: ``match_paste`` against synthetic catalogs, and a naive baseline.

Run from the repository root:

    .venv/bin/python -m benchmarks.match            # 4, 1k, 10k and 100k records (~5 min)
    .venv/bin/python -m benchmarks.match --quick    # 4, 1k and 10k records, fewer runs (~1 min)
    .venv/bin/python benchmarks/match.py --records 100000 --pastes 20
    .venv/bin/python -m benchmarks.match --error MGPU-COPY-WARPGROUP-BYTES  # another error

For each catalog size a fresh child process generates the records (see ``corpus.py``),
adds every matchable site mined from JAX's source (``--no-mined`` leaves them out), and
builds the ``PatternIndex`` with the frame index the service reads releases and raise
points with (build time, and the resident memory they add and the process peak), then
for each paste size matches the paste ``--runs`` times after one cold run (the first
match after a build compiles the patterns it needs), all before the baseline is built.
Times are wall-clock, so quote figures from one run on one machine.

The baseline is the loop one would write without an index: for every pattern, one Python
``re.search`` over the lines the matcher searches (joined), then each line for the
patterns that hit, to get per-line captures. It is stopped after ``--naive-budget``
seconds and extrapolated linearly over the patterns it did not reach (the table says
when). It times only the pattern loop — not the normalizing and reading of the paste
that ``match_paste`` also does — so the speed-up it shows is a lower bound.

Answers are checked, not timed: the index's hits must equal the baseline's for every
pattern the baseline reached, and where it reached all of them the whole report of
``match_paste`` run on the baseline must equal the indexed one. A mismatch exits 1.
"""

from __future__ import annotations

import argparse
import gc
import json
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.matching import Hit, MatchReport, PatternIndex, match_paste
from app.matching.frames import FrameIndex
from benchmarks import corpus, memory

RECORD_COUNTS = (4, 1_000, 10_000, 100_000)
PASTE_KB = (2, 20, 200)
_ANCHORED = re.compile(r"[\^$]|\\[AzZbB]")


@dataclass
class Case:
    """One (catalog, paste) measurement, in milliseconds where a time."""

    records: int
    paste_kb: int
    paste_bytes: int
    lines_searched: int
    cold_ms: float
    median_ms: float
    p99_ms: float
    naive_ms: float
    naive_extrapolated: bool
    naive_patterns: int
    checked: str
    matches: list[str] = field(default_factory=list)


@dataclass
class Catalog:
    records: int
    patterns: int
    build_s: float
    rss_before_mb: float
    rss_after_mb: float
    peak_mb: float
    naive_compile_s: float
    cases: list[Case] = field(default_factory=list)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="up to 10k records, 50 runs")
    parser.add_argument("--records", type=_ints, help="catalog sizes, e.g. 1000,100000")
    parser.add_argument("--pastes", type=_ints, help="paste sizes in KB, e.g. 2,20,200")
    parser.add_argument("--runs", type=int, help="timed matches per case (default 300)")
    parser.add_argument("--naive-budget", type=float, help="seconds per baseline (default 10)")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--no-mined", action="store_true", help="synthetic records only")
    parser.add_argument(
        "--error",
        default=corpus.KNOWN_TRACEBACK.stem,
        help="the real traceback in every paste, by its file in tests/fixtures/tracebacks "
        "(default: %(default)s, whose message shows all its values; "
        "MGPU-COPY-WARPGROUP-BYTES shows only a byte count, the rest read from the paste)",
    )
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    records = args.records or (RECORD_COUNTS[:3] if args.quick else RECORD_COUNTS)
    pastes = args.pastes or PASTE_KB
    runs = args.runs or (50 if args.quick else 300)
    budget = args.naive_budget or (2.0 if args.quick else 10.0)
    if args.child is not None:
        known = corpus.TRACEBACKS / f"{args.error}.txt"
        catalog = measure(args.child, pastes, runs, budget, not args.no_mined, known)
        print(json.dumps(_as_dict(catalog)))
        return 0 if all(case.checked != "MISMATCH" for case in catalog.cases) else 1

    if not (corpus.TRACEBACKS / f"{args.error}.txt").is_file():
        parser.error(f"no traceback {args.error}.txt in {corpus.TRACEBACKS}")
    print(f"# {_machine()}; {runs} runs per case, baseline budget {budget:g} s", flush=True)
    print(f"# every paste holds {args.error}", flush=True)
    catalogs = []
    for count in records:
        command = [sys.executable, "-m", "benchmarks.match", "--child", str(count)]
        command += ["--pastes", ",".join(map(str, pastes)), "--runs", str(runs)]
        command += ["--naive-budget", str(budget), "--error", args.error]
        command += ["--no-mined"] if args.no_mined else []
        done = subprocess.run(command, capture_output=True, text=True, cwd=corpus.REPO_ROOT)
        if not done.stdout.strip():
            sys.stderr.write(done.stderr)
            return 1
        catalogs.append(json.loads(done.stdout.strip().splitlines()[-1]))
        print(_catalog_line(catalogs[-1]), flush=True)
    print()
    print(_table(catalogs))
    if args.json:
        args.json.write_text(json.dumps(catalogs, indent=2))
    mismatched = [c for cat in catalogs for c in cat["cases"] if c["checked"] == "MISMATCH"]
    for case in mismatched:
        print(f"MISMATCH: {case['records']} records, {case['paste_kb']} KB paste")
    return 1 if mismatched else 0


def measure(
    count: int,
    paste_kb: Sequence[int],
    runs: int,
    budget: float,
    mined: bool = True,
    known: Path = corpus.KNOWN_TRACEBACK,
) -> Catalog:
    """Build one catalog's index and measure every paste size against it (child process)."""
    entries = corpus.entries(count) + (corpus.mined_entries() if mined else [])
    gc.collect()
    rss_before = memory.rss_mb()
    started = time.perf_counter()
    FrameIndex.load()
    index = PatternIndex.build(entries)
    build_s = time.perf_counter() - started
    gc.collect()
    catalog = Catalog(
        records=count,
        patterns=len(index),
        build_s=build_s,
        rss_before_mb=rss_before,
        rss_after_mb=memory.rss_mb(),
        peak_mb=memory.peak_mb(),
        naive_compile_s=0.0,
    )
    # Every paste is timed before the baseline compiles its patterns, which the service
    # never holds: with them alive, the collector's passes slowed the timed matches (the
    # 200 KB p99 13.3-13.6 ms; 7.8-8.6 ms with them frozen out by ``gc.freeze()``).
    timed = [_time_paste(index, corpus.paste(kb * 1000, known=known), runs) for kb in paste_kb]
    started = time.perf_counter()
    naive = NaiveIndex(index)
    catalog.naive_compile_s = time.perf_counter() - started
    for kb, paste in zip(paste_kb, timed, strict=True):
        catalog.cases.append(_compare(index, naive, count, kb, paste, budget))
    return catalog


@dataclass
class _Timed:
    """A paste matched: the cold run (recorded) and the timed runs."""

    text: str
    recorder: _Recorder
    report: MatchReport
    cold_ms: float
    times: list[float]


def _time_paste(index: PatternIndex, text: str, runs: int) -> _Timed:
    recorder = _Recorder(index)
    frames = FrameIndex.load()
    started = time.perf_counter()
    report = match_paste(text, recorder, None, frames)  # type: ignore[arg-type]
    cold_ms = (time.perf_counter() - started) * 1000
    times = []
    gc.collect()
    for _ in range(runs):
        started = time.perf_counter()
        match_paste(text, index, None, frames)
        times.append((time.perf_counter() - started) * 1000)
    return _Timed(text, recorder, report, cold_ms, times)


def _compare(
    index: PatternIndex, naive: NaiveIndex, count: int, kb: int, timed: _Timed, budget: float
) -> Case:
    """The timed paste against the baseline: its time, and whether the answers agree."""
    text, recorder, report, times = timed.text, timed.recorder, timed.report, timed.times
    scan = naive.scan(recorder.calls, budget)
    checked = _check(index, naive, recorder, scan, text, report)
    done = scan.patterns_done
    naive_ms = scan.seconds * 1000 * (len(index) / done if done else float("inf"))
    return Case(
        records=count,
        paste_kb=kb,
        paste_bytes=len(text.encode()),
        lines_searched=sum(len(texts) for texts in recorder.calls),
        cold_ms=timed.cold_ms,
        median_ms=statistics.median(times),
        p99_ms=percentile(times, 99),
        naive_ms=naive_ms,
        naive_extrapolated=done < len(index),
        naive_patterns=done,
        checked=checked,
        matches=[f"{m.record_id} {m.captures}" for m in report.matches],
    )


def _check(
    index: PatternIndex,
    naive: NaiveIndex,
    recorder: _Recorder,
    scan: Scan,
    text: str,
    report: MatchReport,
) -> str:
    """Compare the index with the baseline: every search call, then the whole report."""
    for texts, hits, expected in zip(recorder.calls, recorder.results, scan.hits, strict=True):
        reached = [hit for hit in hits if hit.entry < scan.patterns_done]
        if _key(reached) != _key(expected):
            print(f"search of {len(texts)} lines differs", file=sys.stderr)
            return "MISMATCH"
    if scan.patterns_done < len(index):
        return f"first {scan.patterns_done} patterns"
    if match_paste(text, naive, None, FrameIndex.load()) != report:  # type: ignore[arg-type]
        return "MISMATCH"
    return "all patterns"


def _key(hits: Sequence[Hit]) -> list[tuple[int, int, tuple[tuple[str, str], ...], int, int]]:
    return sorted(
        (h.text, h.entry, tuple(sorted(h.captures.items())), h.start, h.end) for h in hits
    )


class _Recorder:
    """The index, recording the texts each ``search`` call is given and what it found."""

    def __init__(self, index: PatternIndex) -> None:
        self._index = index
        self.calls: list[list[str]] = []
        self.results: list[list[Hit]] = []

    def search(self, texts: Sequence[str]) -> list[Hit]:
        hits = self._index.search(texts)
        self.calls.append(list(texts))
        self.results.append(hits)
        return hits

    def __getattr__(self, name: str) -> Any:
        return getattr(self._index, name)


@dataclass
class Scan:
    hits: list[list[Hit]]  # per search call
    patterns_done: int
    seconds: float


class NaiveIndex:
    """No index: every pattern runs on every text, with Python's ``re``.

    ``search`` gives the same answers as ``PatternIndex.search`` by construction, so
    ``match_paste`` accepts it in the index's place. Cut-off messages
    (``search_truncated_in``) are left to the index, which tries only patterns whose first
    long literal shows.
    """

    def __init__(self, index: PatternIndex) -> None:
        self._index = index
        self.entries = index.entries
        self.compiled = [re.compile(index.pattern(entry)) for entry in range(len(index))]
        self.anchored = [bool(_ANCHORED.search(p.pattern)) for p in self.compiled]

    def search(self, texts: Sequence[str]) -> list[Hit]:
        [hits] = self.scan([list(texts)], budget=None).hits
        return hits

    def scan(self, calls: Sequence[Sequence[str]], budget: float | None) -> Scan:
        """Run patterns in catalog order over every call's texts, until ``budget`` seconds."""
        joined = ["\n".join(texts) for texts in calls]
        hits: list[list[Hit]] = [[] for _ in calls]
        started = time.perf_counter()
        done = 0
        for entry, compiled in enumerate(self.compiled):
            for number, texts in enumerate(calls):
                # A pattern without anchors that matches some line matches the joined lines.
                if not self.anchored[entry] and compiled.search(joined[number]) is None:
                    continue
                for line, text in enumerate(texts):
                    found = compiled.search(text)
                    if found is not None:
                        hits[number].append(
                            Hit(entry, line, _captures(found), found.start(), found.end())
                        )
            done = entry + 1
            if budget is not None and done % 64 == 0 and time.perf_counter() - started > budget:
                break
        seconds = time.perf_counter() - started
        for found_hits in hits:
            found_hits.sort(key=lambda hit: (hit.text, hit.entry))
        return Scan(hits, done, seconds)

    def search_truncated_in(self, texts: Sequence[str]) -> list[Hit]:
        return self._index.search_truncated_in(texts)

    def holding_a_head(self, texts: Sequence[str]) -> set[int]:
        return self._index.holding_a_head(texts)

    def literals(self, entry: int) -> tuple[str, ...]:
        return self._index.literals(entry)

    def entries_of(self, record_id: str) -> tuple[int, ...]:
        return self._index.entries_of(record_id)

    def opening(self, entry: int) -> str:
        return self._index.opening(entry)

    def group_names(self, entry: int) -> tuple[str, ...]:
        return self._index.group_names(entry)

    def pattern(self, entry: int) -> str:
        return self._index.pattern(entry)

    def specificity(self, entry: int) -> tuple[int, int]:
        return self._index.specificity(entry)


def _captures(found: re.Match[str]) -> dict[str, str]:
    names = {index: name for name, index in found.re.groupindex.items()}
    return {
        names.get(index, str(index)): value
        for index, value in enumerate(found.groups(), start=1)
        if value is not None
    }


# --- reporting ---------------------------------------------------------------------------


def _table(catalogs: list[dict[str, Any]]) -> str:
    header = (
        "| records | paste | lines searched | first match | median | p99 "
        "| naive re loop | speed-up (median) | answers checked |"
    )
    rows = [header, "|" + "---|" * 9]
    for catalog in catalogs:
        for case in catalog["cases"]:
            naive = f"{_ms(case['naive_ms'])}"
            if case["naive_extrapolated"]:
                share = case["naive_patterns"] / catalog["patterns"]
                naive += f" (extrapolated from {share:.0%})"
            rows.append(
                f"| {catalog['records']:,} | {case['paste_kb']} KB | {case['lines_searched']} "
                f"| {_ms(case['cold_ms'])} | {_ms(case['median_ms'])} | {_ms(case['p99_ms'])} "
                f"| {naive} | {_ratio(case['naive_ms'] / case['median_ms'])} | {case['checked']} |"
            )
    return "\n".join(rows)


def _catalog_line(catalog: dict[str, Any]) -> str:
    added = catalog["rss_after_mb"] - catalog["rss_before_mb"]
    return (
        f"{catalog['records']:>7,} records: build {catalog['build_s']:.2f} s, "
        f"index adds {added:.0f} MB RSS (process {catalog['rss_after_mb']:.0f} MB, "
        f"peak {catalog['peak_mb']:.0f} MB); baseline compiles in "
        f"{catalog['naive_compile_s']:.2f} s"
    )


def _ms(value: float) -> str:
    if value >= 1000:
        return f"{value / 1000:,.1f} s"
    if value >= 10:
        return f"{value:.1f} ms"
    return f"{value:.2f} ms" if value >= 1 else f"{value:.3f} ms"


def _ratio(value: float) -> str:
    return f"{value:,.0f}×" if value >= 10 else f"{value:.2g}×"


def timed(call: Callable[[], object], runs: int, warm_up: int = 20) -> list[float]:
    """Milliseconds of each of ``runs`` calls, after ``warm_up`` calls."""
    for _ in range(warm_up):
        call()
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        call()
        times.append((time.perf_counter() - started) * 1000)
    return times


def figures(times: Sequence[float]) -> str:
    """Median / p99, in milliseconds."""
    return f"{statistics.median(times):.3f} / {percentile(times, 99):.3f} ms"


def percentile(values: Sequence[float], percent: float) -> float:
    ordered = sorted(values)
    position = min(len(ordered) - 1, max(0, round(percent / 100 * len(ordered)) - 1))
    return ordered[position]


def _machine() -> str:
    import os
    import platform

    return f"Python {platform.python_version()}, {os.cpu_count()} cores, {platform.machine()}"


def _ints(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part.strip()]


def _as_dict(catalog: Catalog) -> dict[str, Any]:
    from dataclasses import asdict

    return asdict(catalog)


if __name__ == "__main__":
    sys.exit(main())
