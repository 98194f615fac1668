"""A paste of each kind of Pallas TPU failure gets a fix computed for its own values, first:
the answer leads with the change, as a diff, and the matched record's answer is not said
twice. The pastes are tests/fixtures/pastes/tpu-*.txt (captured from JAX where JAX raises
the error, written from libtpu's real words where only a TPU does)."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.answers.answer import Answer
from app.answers.cards import match_answers
from app.answers.catalog import Catalog
from app.answers.links import Links
from app.answers.match import MatchService
from app.engines.tpu import check_blocks
from app.errors import ProblemError
from app.schemas.match import MatchRequest, MatchResponse

PASTES = Path(__file__).parent.parent / "fixtures" / "pastes"
LINKS = Links("https://errata.example")


def answered(catalog: Catalog, paste: str) -> tuple[MatchResponse, list[Answer]]:
    response = MatchService(catalog).match(MatchRequest(text=(PASTES / paste).read_text()))
    return response, match_answers(response, catalog.records, LINKS)


@pytest.mark.parametrize(
    ("paste", "headline", "do_this", "removed", "added"),
    [
        (
            "tpu-block-not-aligned.txt",
            "ValueError: The block's last dimension is 100",
            "Use blocks of (128, 128) with grid (2, 2)",
            "pl.BlockSpec((100, 100)",
            "pl.BlockSpec((128, 128)",
        ),
        (
            "tpu-rank1-block.txt",
            "A 1-D block of 500 against an array of 4000",
            "Use blocks of (4000,) with grid (1,)",
            "pl.BlockSpec((500,)",
            "pl.BlockSpec((4000,)",
        ),
        (
            "tpu-int8-block-rows.txt",
            "its second-to-last is 4 against 64",
            "Use blocks of (8, 256)",
            "pl.BlockSpec((4, 256)",
            "pl.BlockSpec((8, 256)",
        ),
        (
            "tpu-int4-rank1-block.txt",
            "not a power of 2 of at least 1024",
            "Use blocks of (1024,) with grid (8,)",
            "pl.BlockSpec((512,)",
            "pl.BlockSpec((1024,)",
        ),
        (
            "tpu-e1001-default-limit.txt",
            "VMEM over its scoped limit by 16,777,216 bytes",
            "Raise the scoped VMEM limit to 32 MiB",
            "pltpu.CompilerParams()",
            "vmem_limit_bytes=33554432",
        ),
        (
            "tpu-e1001-explicit-limit.txt",
            "VMEM over vmem_limit_bytes by 6,291,456 bytes",
            "Raise the scoped VMEM limit to 8 MiB",
            "vmem_limit_bytes=2 * 1024 * 1024",  # as the paste's code writes it
            "vmem_limit_bytes=8 * 1024 * 1024",
        ),
        (
            "tpu-vmem-allocation.txt",
            "the blocks take 536,870,912 bytes",
            "Shrink every input and output block along axis 0 to 1024",
            "pl.BlockSpec((8192, 8192)",
            "pl.BlockSpec((1024, 8192)",
        ),
        (
            "tpu-e2002-int4-rows.txt",
            "E2002: the block (32, 256) of input 0 is not whole (64, 128) tiles",
            "Block (64, 256) instead of (32, 256)",
            "block_shape=(32, 256)",
            "block_shape=(64, 256)",
        ),
        (
            "tpu-matmul-bf16-acc.txt",
            "does not multiply bfloat16 × bfloat16 into bfloat16",
            "Multiply bfloat16 × bfloat16 and accumulate in float32",
            "preferred_element_type=jnp.bfloat16",
            "preferred_element_type=jnp.float32",
        ),
    ],
)
def test_each_tpu_failure_leads_with_its_computed_fix(
    catalog: Catalog, paste: str, headline: str, do_this: str, removed: str, added: str
) -> None:
    _, answers = answered(catalog, paste)
    first = answers[0]
    assert first.kind == "compute"
    assert headline in first.headline
    assert first.doThis is not None and first.doThis.title.startswith(do_this)
    diff = (first.doThis.diff or "").splitlines()
    assert any(line.startswith("-") and removed in line for line in diff), diff
    assert any(line.startswith("+") and added in line for line in diff), diff


def test_a_dynamic_offset_gets_the_aligned_load_and_roll(catalog: Catalog) -> None:
    _, answers = answered(catalog, "tpu-e2003-dynamic-lane.txt")
    [first] = answers  # the matched record's answer is this one: not said twice
    assert "dynamic start on the lane axis" in first.headline
    assert first.doThis is not None and "pltpu.roll" in first.doThis.title
    assert any(link.label == "Record page" for link in first.links)


def test_a_block_error_is_answered_once_with_its_record(catalog: Catalog) -> None:
    response, answers = answered(catalog, "tpu-block-not-aligned.txt")
    [found] = response.tpu
    assert found.copies == sorted(found.copies) and len(found.copies) == 2  # chained copies
    [match] = response.matches
    assert match.fixUnavailable is None  # no more "no construct the engine models"
    [answer] = answers
    assert [link.label for link in answer.links][:1] == ["Record page"]
    assert any("chip v5e (the paste names none)" in note for note in answer.notes)


def test_the_block_fixes_pass_the_engine_in_the_answers_release(catalog: Catalog) -> None:
    response, _ = answered(catalog, "tpu-block-not-aligned.txt")
    [found] = response.tpu
    assert found.compute is not None and found.compute.fixes
    for fix in found.compute.fixes:
        assert check_blocks([256, 256], fix.shape, "float32", "v5e", found.jaxVersion).ok


def test_a_release_the_tpu_engine_does_not_model_is_refused_by_name(catalog: Catalog) -> None:
    response, answers = answered(catalog, "tpu-block-not-aligned-0.4.35.txt")
    [match] = response.matches
    assert match.fixUnavailable is not None and "0.4.35 is not modelled" in match.fixUnavailable
    assert all(answer.kind != "compute" for answer in answers)


def test_bad_lhs_type_leads_with_the_default_precision(catalog: Catalog) -> None:
    """bfloat16 × bfloat16 into float32 compiles on a v5e at the default precision and is
    "Bad lhs type" at precision=HIGHEST (data/tpu-verdicts/): that is the change to make."""
    response, answers = answered(catalog, "tpu-bad-lhs-type-logged.txt")
    [found] = response.tpu
    assert found.matmul is not None and not found.matmul.supported
    assert (found.matmul.precision, found.matmul.reason) == ("highest", "Bad lhs type")
    first = answers[0]
    assert first.headline.endswith("into float32 at precision HIGHEST")
    assert first.doThis is not None and first.doThis.diff == (
        "-precision=lax.Precision.HIGHEST\n+precision=lax.Precision.DEFAULT"
    )
    assert all(lhs == rhs == "float32" for lhs, rhs, _ in found.matmul.alternatives[:1])


def test_smaller_blocks_tile_the_array_the_pastes_code_states(catalog: Catalog) -> None:
    """The kernel's x is (4096, 1024): a (512, 1024) block is 8 steps of its grid, and a
    block of 128 rows 32."""
    response, answers = answered(catalog, "tpu-e1001-explicit-limit.txt")
    [found] = response.tpu
    assert not any("as large as the block" in each for each in found.assumed)
    diffs = [step.diff or "" for step in answers[0].alternatives]
    assert any("-grid=(8, 1)" in diff and "+grid=(32, 1)" in diff for diff in diffs), diffs


@pytest.mark.parametrize(
    ("block", "array", "said"),
    [
        (", ".join(["Blocked(block_size=3)"] * 9), ", ".join(["5"] * 9), "at most 8 items"),
        ("Blocked(block_size=100), Blocked(block_size=100)", "9" * 23 + ", 256", "above the limit"),
        ("Blocked(block_size=0), Blocked(block_size=100)", "0, 256", "is not positive"),
    ],
    ids=["rank 9", "absurd size", "zero"],
)
def test_values_past_the_engines_bounds_are_no_fix_and_no_failure(
    catalog: Catalog, block: str, array: str, said: str
) -> None:
    """A paste's figures the engine refuses leave the reason, not a server error."""
    text = (PASTES / "tpu-block-not-aligned.txt").read_text()
    text = text.replace("Blocked(block_size=100), Blocked(block_size=100)", block)
    text = text.replace("array shape (256, 256)", f"array shape ({array})")
    response = MatchService(catalog).match(MatchRequest(text=text))
    [found] = response.tpu
    assert found.compute is None and found.unavailable is not None and said in found.unavailable


FIGURES = re.compile(r"\d+|[(),]")
MANGLED = st.sampled_from(["0", "-1", "9" * 30, "2147483648", "3.5", "1e9", "", "x", "(", ","])


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    paste=st.sampled_from(sorted(path.name for path in PASTES.glob("tpu-*.txt"))),
    seed=st.randoms(use_true_random=False),
    replacement=MANGLED,
)
def test_a_tpu_paste_with_mangled_figures_is_answered_or_refused(
    catalog: Catalog, paste: str, seed: random.Random, replacement: str
) -> None:
    """Figures cut, typed wrong or absurd (a rank of 9, 10**29 rows, ``16.3.5M``) are read,
    computed or left with a reason: never an exception of the service's own."""
    text = FIGURES.sub(
        lambda found: replacement if seed.random() < 0.25 else found.group(),
        (PASTES / paste).read_text(),
    )
    try:
        response = MatchService(catalog).match(MatchRequest(text=text))
    except ProblemError:
        return  # a paste the service refuses, with its 4xx
    match_answers(response, catalog.records, LINKS)
