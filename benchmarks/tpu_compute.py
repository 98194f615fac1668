"""The Pallas TPU engine per case, in-process, beside the Mosaic GPU engine.

Run from the repository root:

    .venv/bin/python -m benchmarks.tpu_compute          # a few seconds

For each case: the verdict alone (``check_blocks`` / ``check``), and the verdict with up to
five verified fixes (``block_fixes`` / ``suggest_fixes``), the first time a case is asked,
before the service remembers the answer; and one VMEM budget with its fixes. Each runs
``--runs`` times; times are wall-clock milliseconds: quote the figures of one run.
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

from app.engines import mosaic_gpu, tpu
from benchmarks.match import percentile

# Failing BlockSpecs as TPU pastes show them: unaligned, rank 1, narrow dtypes, squeezed.
TPU_CASES = (
    ((256, 256), (100, 100), "float32"),
    ((8192, 8192), (1000, 1000), "bfloat16"),
    ((1000,), (100,), "float32"),
    ((4096,), (256,), "int8"),
    ((4, 256, 256), (None, 100, 128), "int4"),
)
GPU_CASES = (
    ("copy_gmem_to_smem", (7,), "int4"),
    ("copy_gmem_to_smem", (3, 5), "bfloat16"),
    ("pallas_call", (3, 7), "int8"),
)
BUDGET = [
    tpu.VmemBlock((2048, 1024), "float32", "input", array_shape=(8192, 1024)),
    tpu.VmemBlock((2048, 1024), "float32", "output", array_shape=(8192, 1024)),
]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200, help="timed calls per case")
    args = parser.parse_args(argv)
    print(f"# Python {sys.version.split()[0]}; {args.runs} runs per case (ms, median / p99)")
    print("| engine | case | verdict | verdict and fixes |")
    print("|---|---|---:|---:|")
    for array, block, dtype in TPU_CASES:
        verdict = partial(tpu.check_blocks, array, block, dtype, "v5e")
        fixes = partial(tpu.block_fixes, array, block, dtype, "v5e")
        both = partial(_both, verdict, fixes)
        print(f"| TPU | {array} by {block} {dtype} | {_time(verdict, args.runs)} | "
              f"{_time(both, args.runs)} |")  # fmt: skip
    budget = partial(tpu.vmem_budget, BUDGET, "v5e")
    print(
        f"| TPU | vmem_budget, 2 blocks of (2048, 1024) float32 | — | {_time(budget, args.runs)} |"
    )
    for operation, shape, dtype in GPU_CASES:
        gpu_verdict = partial(mosaic_gpu.check, operation, shape, dtype)
        gpu_fixes = partial(mosaic_gpu.suggest_fixes, operation, shape, dtype)
        gpu_both = partial(_both, gpu_verdict, gpu_fixes)
        print(f"| Mosaic GPU | {operation} {shape} {dtype} | {_time(gpu_verdict, args.runs)} | "
              f"{_time(gpu_both, args.runs)} |")  # fmt: skip
    return 0


def _both(verdict: Callable[[], object], fixes: Callable[[], object]) -> None:
    """The verdict, then the fixes: what a first answer to a failing case costs."""
    verdict()
    fixes()


def _time(call: Callable[[], object], runs: int) -> str:
    call()  # warm: the data files, numpy's first calls
    spent = []
    for _ in range(runs):
        started = time.perf_counter()
        call()
        spent.append((time.perf_counter() - started) * 1e3)
    return f"{statistics.median(spent):.3f} / {percentile(spent, 99):.3f}"


if __name__ == "__main__":
    raise SystemExit(main())
