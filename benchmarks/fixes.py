"""The engine's fix search for one release against the same search for every modelled release.

Run from the repository root:

    .venv/bin/python -m benchmarks.fixes            # about a minute

A paste that does not date itself to one release is fixed for every release that raises its
error (see ``alsoJaxVersions`` in the README); this is what that costs the first time a case
is asked, before the service remembers the answer. For each case ``suggest_fixes`` runs for
0.12.0.1 alone, then for 0.12.0.1 and the 18 releases before it, alternately, ``--runs``
times each; releases that check a case alike are searched once. Times are wall-clock: quote
the figures of one run.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

if __package__ in (None, ""):  # run as a file: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.engines.mosaic_gpu import resolve, suggest_fixes
from benchmarks.match import percentile

NEWEST = "0.12.0.1"
OLDER = (
    "0.7.0", "0.7.1", "0.7.2", "0.8.0", "0.8.1", "0.8.2", "0.8.3", "0.9.0", "0.9.0.1", "0.9.1",
    "0.9.2", "0.10.0", "0.10.1", "0.10.2", "0.11.0", "0.11.1", "0.11.2", "0.12.0",
)  # fmt: skip
# Failing cases of the constructs every modelled release has, as pastes show them.
CASES = (
    ("copy_gmem_to_smem", (7,), "int4"),
    ("copy_gmem_to_smem", (3, 5), "bfloat16"),
    ("copy_gmem_to_smem", (300, 3), "float32"),
    ("ref_union", (3,), "int4"),
    ("smem_alias", (5, 7), "float8_e4m3fn"),
    ("copy_smem_to_gmem", (3, 7), "int8"),
)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30, help="timed searches per case and way")
    args = parser.parse_args(argv)
    print(f"# Python {sys.version.split()[0]}; {args.runs} runs per case and way (ms)")
    print("| case | distinct | one release: median / p99 | 19 releases: median / p99 | ratio |")
    print("|---|---:|---:|---:|---:|")
    ratios = []
    for operation, shape, dtype in CASES:
        distinct = len(
            resolve(operation, shape, dtype, None, NEWEST, None, OLDER).in_distinct_releases
        )

        one = partial(suggest_fixes, operation, shape, dtype, jax_version=NEWEST)
        every = partial(one, also_in=OLDER)
        alone, across = _alternately(one, every, args.runs)
        ratio = statistics.median(across) / statistics.median(alone)
        ratios.append(ratio)
        print(
            f"| {operation} {shape} {dtype} | {distinct} | {_figures(alone)} | "
            f"{_figures(across)} | {ratio:.1f}× |"
        )
    print(f"\nmedian ratio over the cases: {statistics.median(ratios):.1f}×")
    return 0


def _alternately(
    first: Callable[[], object], second: Callable[[], object], runs: int
) -> tuple[list[float], list[float]]:
    """Milliseconds of each call, the two taking turns so that both see the same machine."""
    first(), second()  # warm: numpy's first calls, the dtype tables
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(runs):
        for call, spent in zip((first, second), times, strict=True):
            started = time.perf_counter()
            call()
            spent.append((time.perf_counter() - started) * 1e3)
    return times


def _figures(times: list[float]) -> str:
    return f"{statistics.median(times):.1f} / {percentile(times, 99):.1f}"


if __name__ == "__main__":
    raise SystemExit(main())
