"""Pastes captured on a TPU v5e (tools/tpu_pastes.py): a user's script and what the chip
printed. Each is answered first with a change of the script's own lines, and the chip's
recorded verdict on the changed values (data/tpu-verdicts/) is a kernel that compiled and
gave numpy's result."""

from __future__ import annotations

from typing import Any

import pytest

from app.answers.cards import match_answers
from app.answers.catalog import Catalog
from app.answers.links import Links
from app.answers.match import MatchService
from app.config import REPO_ROOT
from app.schemas.match import MatchRequest
from tests.oracle.tpu_verdicts import chip_ran_right
from tests.oracle.tpu_verdicts import tool as tool_module

PASTES = REPO_ROOT / "tests" / "fixtures" / "pastes"
MIB = 2**20
COPY = {"shape": [4096, 2048], "dtype": "float32", "buffers": None}
# name: (words of the headline, a line the Do-this diff adds, the chip's case of the fix)
CASES: dict[str, tuple[str, str, tuple[str, dict[str, Any]] | None]] = {
    "e1001-default-limit": (
        "VMEM over the default scoped limit by 16,777,216 bytes",
        "+compiler_params=pltpu.CompilerParams(vmem_limit_bytes=32 * 1024 * 1024),",
        ("vmem", {**COPY, "block": [1024, 2048], "limit": 32 * MIB}),
    ),
    "e1001-explicit-limit": (
        "VMEM over vmem_limit_bytes by 33,554,432 bytes",
        "+compiler_params=pltpu.CompilerParams(vmem_limit_bytes=64 * 1024 * 1024),",
        ("vmem", {**COPY, "block": [2048, 2048], "limit": 64 * MIB}),
    ),
    "e2002-int8-rows": (
        "E2002: the block (8, 256) of input 0 is not whole (32, 128) tiles",
        "+in_specs=[pl.BlockSpec((32, 256), lambda i, j: (i, j))],",
        ("block", {"shape": [64, 256], "block": [32, 256], "dtype": "int8"}),
    ),
    "e2002-int4-rows": (
        "E2002: the block (32, 256) of input 0 is not whole (64, 128) tiles",
        "+grid=(1, 1),",
        ("block", {"shape": [64, 256], "block": [64, 256], "dtype": "int4"}),
    ),
    "e2003-dynamic-lane": ("cannot prove a dynamic start on the lane axis", "", None),
    "matmul-int8-float-acc": (
        "does not multiply int8 × int8 into float32",
        "+preferred_element_type=jnp.int32",
        ("matmul", {"lhs": "int8", "rhs": "int8", "acc": "int32"}),
    ),
    "matmul-int8-int4": (
        "does not multiply int8 × int4 into int32",
        "",
        ("matmul", {"lhs": "int8", "rhs": "int8", "acc": "int32"}),
    ),
    "matmul-bf16-highest": (
        "does not multiply bfloat16 × bfloat16 into float32 at precision HIGHEST",
        "+precision=lax.Precision.DEFAULT",
        ("matmul", {"lhs": "bfloat16", "rhs": "bfloat16", "acc": "float32"}),
    ),
}


def test_every_capture_is_the_script_the_tool_runs() -> None:
    tool = tool_module("tpu_pastes")
    assert sorted(tool.CASES) == sorted(CASES)
    for name, (_, script) in tool.CASES.items():
        paste = (PASTES / f"tpu-v5e-{name}.txt").read_text()
        assert paste.split("$ cat repro.py\n")[1].split("$ python repro.py\n")[0] == script
        assert "/home/user/repro.py" in paste and "TPU v5 lite" in paste.splitlines()[0]


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_capture_leads_with_a_change_of_its_script_that_the_chip_ran(
    catalog: Catalog, name: str
) -> None:
    headline, added, fixed = CASES[name]
    text = (PASTES / f"tpu-v5e-{name}.txt").read_text()
    response = MatchService(catalog).match(MatchRequest(text=text))
    [first, *_] = match_answers(response, catalog.records, Links("https://errata.example"))
    assert first.kind == "compute" and headline in first.headline
    assert first.doThis is not None
    if added:
        assert added in (first.doThis.diff or "").splitlines(), first.doThis.diff
    if fixed is not None:
        family, parameters = fixed
        assert chip_ran_right(family, **parameters)
    if name.startswith("e2002"):  # the grid follows the block
        assert any(line.startswith("+grid=") for line in (first.doThis.diff or "").splitlines())
