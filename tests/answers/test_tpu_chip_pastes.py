"""Every error a TPU v5e printed for the verdict grid (``data/tpu-verdicts/``), pasted as it
came, is answered first with a fix computed for its own values, and the chip's own verdict
on the fixed values says the fix compiles and runs right."""

from __future__ import annotations

import re

import pytest

from app.answers.answer import Answer
from app.answers.cards import match_answers
from app.answers.catalog import Catalog
from app.answers.links import Links
from app.answers.match import MatchService
from app.schemas.match import MatchRequest
from tests.oracle.tpu_verdicts import (
    RecordedVerdict,
    chip_ran_right,
    every_recorded,
    same_case,
)

LINKS = Links("https://errata.example")
RECORDED = every_recorded()
# Python-level ValueErrors are JAX's own, answered from captured pastes elsewhere
LIBTPU_ERRORS = [v for v in RECORDED if v.verdict == "error" and v.error_class != "ValueError"]
ADDED_BLOCK = re.compile(r"^\+block_shape=\((\d+), (\d+)\)$", re.M)
ADDED_LIMIT = re.compile(
    r"^\+compiler_params=pltpu\.CompilerParams\(vmem_limit_bytes=(\d+)\)$", re.M
)
DTYPES = re.compile(r"Multiply (\w+) × (\w+) and accumulate in (\w+)")


def first_answer(catalog: Catalog, verdict: RecordedVerdict) -> Answer:
    text = f"{verdict.error_class}: {verdict.message}"
    response = MatchService(catalog).match(MatchRequest(text=text))
    return match_answers(response, catalog.records, LINKS)[0]


def test_the_chip_printed_each_kind_of_libtpu_error() -> None:
    said = " ".join(v.message or "" for v in LIBTPU_ERRORS)
    for words in ("E2002", "E1001", "E2003", "acc to be 32-bit", "float acc with int lhs",
                  "Mix int/int", "Bad lhs type", "Invalid vector type for load"):  # fmt: skip
        assert words in said


@pytest.mark.parametrize("verdict", LIBTPU_ERRORS, ids=lambda v: v.id)
def test_each_chip_error_leads_with_a_fix_the_chip_compiles(
    catalog: Catalog, verdict: RecordedVerdict
) -> None:
    answer = first_answer(catalog, verdict)
    p = verdict.parameters
    if "Invalid vector type for load" in (verdict.message or ""):  # float16: the record answers
        assert answer.kind == "compiler" and "bfloat16" in str(answer.model_dump())
        return
    assert answer.kind == "compute" and answer.doThis is not None
    diff, title = answer.doThis.diff or "", answer.doThis.title
    if verdict.family == "block":
        rows, lanes = map(int, ADDED_BLOCK.findall(diff)[0])
        assert chip_ran_right("block", shape=p["shape"], block=[rows, lanes], dtype=p["dtype"])
    elif verdict.family == "vmem":
        needed = int(ADDED_LIMIT.findall(diff)[0])
        at_least = min(  # the smallest limit recorded for these blocks that holds the fix's
            v.parameters["limit"]
            for v in RECORDED
            if v.family == "vmem"
            and (v.parameters["limit"] or 0) >= needed
            and same_case(v.parameters, {**p, "limit": v.parameters["limit"]})
        )
        assert chip_ran_right("vmem", **{**p, "limit": at_least})
    elif verdict.family == "offset":
        assert "pltpu.roll" in title
        assert chip_ran_right("offset", axis="lane", start=128, promise=True)
    else:
        fixed_dtypes = DTYPES.search(title)
        if fixed_dtypes is None:  # precision=HIGHEST dropped, the dtypes kept
            assert "precision=lax.Precision.DEFAULT" in diff
            lhs, rhs, acc = p["lhs"], p["rhs"], p["acc"]
        else:
            lhs, rhs, acc = fixed_dtypes.groups()
        assert chip_ran_right("matmul", lhs=lhs, rhs=rhs, acc=acc)
