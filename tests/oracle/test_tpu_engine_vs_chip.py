"""The TPU engine against what a real TPU v5e said of every case of the grid.

``data/tpu-verdicts/`` holds what ``tools/tpu_verdicts.py`` recorded on the chip (JAX
0.10.2 and its libtpu): each kernel compiled and ran, or the compiler's exception. The
engine must give the same verdict for the same values, and the same figures where libtpu
prints them, and the reader must type the values out of each message the chip printed.
"""

from __future__ import annotations

import re

import pytest

from app.engines.tpu import (
    VmemBlock,
    check_blocks,
    dynamic_offset_advice,
    matmul_support,
    operand_tiling,
    vmem_budget,
)
from app.matching.tpu_values import (
    TpuDynamicOffset,
    TpuMatmulValues,
    TpuTilingValues,
    TpuVmemValues,
    read_tpu_values,
)

from .tpu_fix_cases import fix_cases
from .tpu_verdicts import RecordedVerdict, every_recorded

RECORDED = tuple(v for v in every_recorded() if not v.run.source.endswith("-fixes.jsonl"))
FIXES_RUN = tuple(v for v in every_recorded() if v.run.source.endswith("-fixes.jsonl"))
KERNEL_AT = re.compile(r"in pallas_call (kernel at \S+) has")
SCOPED = re.compile(r"Scoped allocation with size (\S+) and limit (\S+) exceeded")


def family(name: str) -> list[RecordedVerdict]:
    return [verdict for verdict in RECORDED if verdict.family == name]


def test_a_v5e_run_of_the_whole_grid_is_recorded() -> None:
    runs = {(v.run.chip, v.run.jax, v.run.libtpu) for v in RECORDED}
    assert runs == {("TPU v5 lite", "0.10.2", "0.0.42.1")}
    assert {v.family for v in RECORDED} == {"block", "vmem", "offset", "matmul"}
    assert len({v.id for v in RECORDED}) == len(RECORDED) > 340
    assert all(v.verdict != "ok" or v.correct for v in family("block") + family("matmul"))


@pytest.mark.parametrize("verdict", family("block"), ids=lambda v: v.id)
def test_block_verdicts_match_the_chip(verdict: RecordedVerdict) -> None:
    shape, block, dtype = (verdict.parameters[k] for k in ("shape", "block", "dtype"))
    said = verdict.message or ""
    kernel = KERNEL_AT.search(said)
    context = {"kernel": kernel[1]} if kernel else {}
    check = check_blocks(shape, block, dtype, "v5e", verdict.run.jax, **context)
    tiling = operand_tiling(block, dtype, "v5e", shape) if len(block) > 1 else None
    if check.violations:
        assert (verdict.error_class, said) == ("ValueError", check.violations[0].message)
    elif tiling is not None and not tiling.aligned:
        assert "E2002: CompileTimeMosaicMisalignedBlockAndTiling" in said
        assert f"has tiling {tiling.tile}" in said
        [read] = read_tpu_values(said).values
        assert isinstance(read, TpuTilingValues)
        assert (read.tiling, read.block_shape) == (tiling.tile, tuple(block[-2:]))
    else:
        assert verdict.passed, said[:300]


@pytest.mark.parametrize("verdict", family("vmem"), ids=lambda v: v.id)
def test_vmem_verdicts_and_figures_match_the_chip(verdict: RecordedVerdict) -> None:
    p = verdict.parameters
    blocks = [
        VmemBlock(p["block"], p["dtype"], role, p["buffers"], p["shape"])
        for role in ("input", "output")
    ]
    budget = vmem_budget(blocks, "v5e", p["limit"], verdict.run.jax)
    if budget.fits:
        assert verdict.passed, (verdict.message or "")[:300]
        return
    said = verdict.message or ""
    assert "E1001: CompileTimeScopedVmemOom" in said
    [violation] = budget.violations
    assert violation.message in said  # size, limit and excess, as libtpu prints them
    [read] = [v for v in read_tpu_values(said).values if isinstance(v, TpuVmemValues)]
    assert (read.report, read.requested, read.limit) == (
        "scoped",
        budget.total_bytes,
        budget.limit_bytes,
    )
    limit_fix = budget.fixes[0]
    if limit_fix.kind == "vmem_limit":  # the limit it asks for is one the chip compiled
        raised = vmem_budget(blocks, "v5e", budget.needed_limit_bytes, verdict.run.jax)
        assert raised.fits


def test_the_default_scoped_limit_is_what_the_chip_printed() -> None:
    printed = {SCOPED.search(v.message or "")[2] for v in family("vmem") if v.verdict == "error"}
    defaults = {
        SCOPED.search(v.message or "")[2]
        for v in family("vmem")
        if v.verdict == "error" and v.parameters["limit"] is None
    }
    assert defaults == {"16.00M"} and "16.00M" in printed
    assert vmem_budget([VmemBlock((8, 128), "float32")], "v5e").limit_bytes == 16 << 20


@pytest.mark.parametrize("verdict", family("matmul"), ids=lambda v: v.id)
def test_matmul_verdicts_match_the_chip(verdict: RecordedVerdict) -> None:
    p = verdict.parameters
    accumulator = p["acc"] or p["lhs"]  # a bare @ of one dtype accumulates in it
    support = matmul_support(p["lhs"], p["rhs"], "v5e", accumulator, p.get("precision"))
    assert support.supported == verdict.passed, (verdict.message or "")[:300]
    if not support.supported:
        said = (verdict.message or "").split("\n")[0]
        assert any(reason.split(" (")[0] in said for reason in support.reason.split("; "))
        for lhs, rhs, acc in support.alternatives:
            assert matmul_support(lhs, rhs, "v5e", acc, p.get("precision")).supported


def test_the_reader_types_the_matmuls_the_chip_refused() -> None:
    typed = 0
    for verdict in family("matmul"):
        read = [v for v in read_tpu_values(verdict.message or "").values]
        if verdict.passed or "Invalid vector type" in (verdict.message or ""):
            continue
        [matmul] = read
        assert isinstance(matmul, TpuMatmulValues)
        if matmul.lhs_dtype is not None:
            typed += 1
            assert matmul.lhs_dtype in (verdict.parameters["lhs"], "bfloat16", "float32")
    assert typed >= 10


def test_dynamic_offsets_as_the_chip_took_them() -> None:
    """A lane start the compiler cannot prove aligned is refused, a promise makes it compile,
    and a false promise gives wrong values: the advice promises only a true multiple."""
    verdicts = {(v.parameters["axis"], v.parameters["start"], v.parameters["promise"]): v
                for v in family("offset")}  # fmt: skip
    for start in (64, 128):
        refused = verdicts["lane", start, False]
        [offset] = read_tpu_values(refused.message or "").values
        assert isinstance(offset, TpuDynamicOffset)
        assert (offset.dimension, offset.multiple) == (1, 128)
    assert verdicts["lane", 128, True].passed
    assert verdicts["lane", 64, True].verdict == "ok" and not verdicts["lane", 64, True].correct
    assert "pl.multiple_of(start, 128)" in dynamic_offset_advice("lane", "float32", "v5e", 128)
    assert "pl.multiple_of" not in dynamic_offset_advice("lane", "float32", "v5e", 64)
    assert all(v.passed for (axis, _, _), v in verdicts.items() if axis == "sublane")


def test_every_fix_of_a_recorded_failure_ran_right_on_the_chip() -> None:
    """The first three block fixes of each refused block, and the limit and the blocks
    shrunk together of each VMEM overflow, compiled and gave numpy's result on the v5e
    (``python -m tests.oracle.tpu_fix_cases`` lists them; tools/tpu_verdicts.py --cases
    ran them)."""
    said = {v.id: v for v in (*RECORDED, *FIXES_RUN)}
    cases = fix_cases(RECORDED)
    assert len(cases) > 90 and {c["family"] for c in cases} == {"block", "vmem"}
    unrecorded = [c["id"] for c in cases if c["id"] not in said]
    assert not unrecorded, f"run on a TPU: tools/tpu_verdicts.py --cases ({unrecorded[:3]})"
    assert [c["id"] for c in cases if not said[c["id"]].passed] == []
