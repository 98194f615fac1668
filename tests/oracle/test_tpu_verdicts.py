"""The TPU verdict script, run here in its CPU mode, the loader of what it records, and the
TPU pastes captured from JAX."""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
from dataclasses import replace
from pathlib import Path

import pytest

from app.matching.tpu_values import TpuBlockValues, TpuMatmulValues, read_tpu_values

from .capture_tpu_pastes import CASES as CAPTURED
from .capture_tpu_pastes import captured, paste_path
from .capture_tracebacks import REPO_ROOT
from .tpu_verdicts import VERDICTS, RecordedVerdict, read_verdicts, recorded_verdicts

pytestmark = pytest.mark.oracle

SCRIPT = REPO_ROOT / "tools" / "tpu_verdicts.py"
UNALIGNED = "block-shape=256x256-block=100x100-dtype=float32"
ALIGNED = "block-shape=256x256-block=8x128-dtype=float32"
RANK_1 = "block-shape=4096-block=500-dtype=float32"
BARE_BF16 = "matmul-lhs=bfloat16-rhs=bfloat16-acc=None-lhsShape=128x256-rhsShape=256x128"
F32_ACC = "matmul-lhs=bfloat16-rhs=bfloat16-acc=float32-lhsShape=128x256-rhsShape=256x128"
LANE_OFFSET = "offset-axis=lane-start=64-promise=False"
CASES = (UNALIGNED, ALIGNED, RANK_1, BARE_BF16, F32_ACC, LANE_OFFSET)


def run_script(*arguments: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The script as the TPU machine runs it: isolated (-I), so it cannot import the project."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JAX_", "PYTHONPATH"))}
    return subprocess.run(
        [sys.executable, "-I", str(SCRIPT), *arguments],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )


@pytest.fixture(scope="module")
def lowered(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, RecordedVerdict]]:
    out = tmp_path_factory.mktemp("verdicts")
    only = [argument for case in CASES for argument in ("--only", case)]
    printed = run_script(str(out), "--cpu-lower", *only, cwd=out).stdout.strip()
    path = Path(printed)
    verdicts = read_verdicts(path.read_text().splitlines(), path.name)
    return path, {verdict.id: verdict for verdict in verdicts}


def test_the_dry_run_lists_a_grid_of_unique_cases_of_each_family(tmp_path: Path) -> None:
    ids = run_script("--dry-run", cwd=tmp_path).stdout.split()
    assert len(ids) == len(set(ids)) > 250
    assert {case.split("-")[0] for case in ids} == {"block", "vmem", "offset", "matmul"}
    assert {"dtype=int4", "dtype=int8", "dtype=bfloat16"} <= {i.rsplit("-", 1)[-1] for i in ids}
    assert any("limit=None-buffers=1" in case for case in ids)


def test_cpu_lowering_records_jaxs_verdict_on_each_case(
    lowered: tuple[Path, dict[str, RecordedVerdict]],
) -> None:
    path, verdicts = lowered
    assert sorted(verdicts) == sorted(CASES)
    assert path.name == "verdicts-cpu-lower-tpu-v5-lite-jax-0.10.2.jsonl"
    run = verdicts[ALIGNED].run
    assert (run.mode, run.jax, run.jaxlib) == ("cpu-lower", "0.10.2", "0.10.2")
    assert {case for case, verdict in verdicts.items() if verdict.passed} == {
        ALIGNED,
        F32_ACC,
        LANE_OFFSET,  # libtpu's check alone refuses it
    }
    assert {verdicts[case].error_class for case in (UNALIGNED, RANK_1)} == {"ValueError"}
    assert verdicts[BARE_BF16].error_class == "VerificationError"
    assert verdicts[UNALIGNED].parameters == {
        "shape": [256, 256],
        "block": [100, 100],
        "dtype": "float32",
    }


def test_the_reader_types_the_values_of_the_messages_the_script_records(
    lowered: tuple[Path, dict[str, RecordedVerdict]],
) -> None:
    _, verdicts = lowered
    [block] = read_tpu_values(verdicts[UNALIGNED].message or "").values
    assert isinstance(block, TpuBlockValues)
    assert (block.block_shape, block.array_shape) == ((100, 100), (256, 256))
    [rank_1] = read_tpu_values(verdicts[RANK_1].message or "").values
    assert isinstance(rank_1, TpuBlockValues) and (rank_1.rank1, rank_1.bit_width) == (True, 32)
    [matmul] = read_tpu_values(verdicts[BARE_BF16].message or "").values
    assert isinstance(matmul, TpuMatmulValues)
    assert (matmul.lhs_dtype, matmul.acc_dtype) == ("bfloat16", "bfloat16")


def test_verdicts_are_read_from_a_tar_as_from_the_file(
    lowered: tuple[Path, dict[str, RecordedVerdict]], tmp_path: Path
) -> None:
    path, verdicts = lowered
    with tarfile.open(tmp_path / "verdicts.tar.gz", "w:gz") as archive:
        archive.add(path, arcname=f"run/{path.name}")
    read = list(recorded_verdicts(tmp_path, mode="cpu-lower"))
    assert {v.run.source for v in read} == {f"verdicts.tar.gz:run/{path.name}"}
    from_file = {v.id: replace(v, run=replace(v.run, source="")) for v in verdicts.values()}
    assert {v.id: replace(v, run=replace(v.run, source="")) for v in read} == from_file
    assert list(recorded_verdicts(tmp_path, mode="tpu")) == []


def test_a_file_off_the_schema_is_refused() -> None:
    with pytest.raises(ValueError, match="not a header"):
        read_verdicts(['{"kind": "case"}'], "bad.jsonl")


def test_the_committed_verdicts_keep_to_the_schema() -> None:
    verdicts = list(recorded_verdicts(VERDICTS))
    assert verdicts and all(verdict.run.mode == "tpu" and verdict.id for verdict in verdicts)


@pytest.mark.parametrize("name", sorted(CAPTURED))
def test_each_captured_paste_is_what_jax_prints_today(name: str, tmp_path: Path) -> None:
    """The TPU pastes said to be captured from JAX 0.10.2 are, word for word."""
    assert captured(name, tmp_path) == paste_path(name).read_text()
