"""The parts a match answer works out: memory budgets, primitives' releases and rewrites, and
what is known of an error only JAX's source documents."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.answers.cards import match_answers
from app.answers.catalog import Catalog
from app.answers.computed import closest_curated
from app.answers.links import Links
from app.answers.match import MatchService
from app.config import CURATED_SEED_PATHS
from app.knowledge.mining import MINED_SITES
from app.matching.frames import FrameIndex
from app.schemas.match import MatchRequest, MatchResponse
from tests.conftest import Backend

SMEM_RECORD = "7f1f1f89e56deefe"
TMEM_SITE = "24a5fc31c5f55efe"  # mined only: _launch, beside the SMEM check
STRIDES_SITE = "78c0854f6545c496"  # mined only: 0.12.0's words of MGPU-TMA-GMEM-STRIDES-16B
REF_STORE_RECORD = "a03b8d2a9ac41191"  # Invalid shape for `swap`, four wordings
# A user's traceback with the kernel's block, depth and dtype on its frames' lines.
SMEM_PASTE = """Traceback (most recent call last):
  File "/home/me/kernels/add.py", line 31, in <module>
    block = plgpu.BlockSpec((128, 128), lambda i: (i, 0))
  File "/home/me/kernels/add.py", line 40, in <module>
    params = plgpu.CompilerParams(max_concurrent_steps=4, dimension_semantics=["sequential"])
  File "/home/me/kernels/add.py", line 44, in <module>
    out = add(x.astype(jnp.float16), y.astype(jnp.float16))
ValueError: Mosaic GPU kernel exceeds available shared memory: smem_bytes=393248 > \
max_smem_bytes=232448
"""
LANE_WORDING = (
    "NotImplementedError: Unimplemented primitive in Pallas Mosaic GPU lowering: {name} for "
    "lowering semantics LoweringSemantics.Lane and user thread semantics "
    "PrimitiveSemantics.Warpgroup. Please file an issue at "
    "https://github.com/jax-ml/jax/issues/new/choose."
)


@pytest.fixture(scope="module")
def catalog(backend: Backend) -> Iterator[Catalog]:
    """What people wrote, and two sites known only from the source, in a database of its own."""
    with backend.curated_catalog((TMEM_SITE, STRIDES_SITE)) as catalog:
        yield catalog


def answer(catalog: Catalog, text: str) -> MatchResponse:
    return MatchService(catalog).match(MatchRequest(text=text))


def test_smem_overflow_is_matched_to_its_curated_record_and_worked_out(catalog: Catalog) -> None:
    response = answer(catalog, SMEM_PASTE)
    [found] = response.matches
    assert found.errorId == SMEM_RECORD
    assert found.sourceOnly is None  # curated: its advice is the record's
    [memory] = response.memory
    assert (memory.requestedBytes, memory.limitBytes) == (393248, 232448)
    assert (memory.overBytes, memory.overPercent) == (160800, 69.2)
    assert "H100 / H200 (sm_90)" in memory.devices and memory.fitsOn == []
    assert (memory.maxConcurrentSteps, memory.fittingDepth) == (4, 2)
    budget = memory.budget
    assert budget is not None and budget.smemBytes == 393248
    assert [b.bytes for b in budget.buffers] == [131072] * 3 and budget.barrierBytes == 32
    assert {tuple(fit.newShape) for fit in budget.fittingBlocks} == {(64, 128), (128, 64)}
    assert {fit.smemBytes for fit in budget.fittingBlocks} == {196640}


def test_a_rules_new_wording_mined_from_a_release_is_computed_as_the_rule(
    catalog: Catalog,
) -> None:
    """0.12.0 rewords the GMEM strides check; the rule's record keeps the catalog's words, and
    the site mined from 0.12.0 is known as the rule's by its words: the engine computes it."""
    error = "Async copies require all GMEM strides except the last one to be a multiple of 16 bytes"
    text = (
        "Traceback (most recent call last):\n"
        '  File "kernel.py", line 3, in <module>\n'
        "    smem = plgpu.SMEM((3, 5), jnp.int8)\n"
        f"ValueError: {error}\n"
    )
    [found] = answer(catalog, text).matches
    assert (found.errorId, found.rule) == (STRIDES_SITE, "MGPU-TMA-GMEM-STRIDES-16B")
    assert found.fix is not None and found.fix.jaxVersion == "0.12.0.1"
    assert found.fix.firstViolation is not None
    assert found.fix.firstViolation.message == error
    assert found.fix.fixes


def test_the_older_wording_is_read_with_its_fixed_limit(catalog: Catalog) -> None:
    text = (
        "ValueError: Mosaic GPU kernel exceeds available shared memory smem_bytes=262160 > 228000"
    )
    response = answer(catalog, text)
    assert [found.errorId for found in response.matches] == [SMEM_RECORD]
    [memory] = response.memory
    assert (memory.overBytes, memory.overPercent, memory.budget) == (34160, 15.0, None)


@pytest.mark.parametrize(
    ("text", "compiler", "figures"),
    [
        (
            "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Shared memory size limit "
            "exceeded: requested 4194304, available: 101376",
            "triton",
            (4194304, 101376, 4092928, 4037.4),
        ),
        (
            "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: "
            "131072, Hardware limit: 101376. Reducing block sizes or `num_stages` may help.",
            "triton",
            (131072, 101376, 29696, 29.3),
        ),
        (
            "RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in memory "
            "space vmem. Used 65.05M of 64.00M vmem. Exceeded vmem capacity by 1.05M",
            "tpu",
            (68209869, 67108864, 1101005, 1.6),
        ),
        (
            "CompileTimeScopedVmemOom: Ran out of memory in memory space vmem ... Scoped "
            "allocation with size 37.22M and limit 32.00M exceeded scoped vmem limit by 5.22M.",
            "tpu",
            (39027999, 33554432, 5473567, 16.3),
        ),
    ],
)
def test_triton_and_tpu_reports_are_worked_out_without_a_record(
    catalog: Catalog, text: str, compiler: str, figures: tuple[int, int, int, float]
) -> None:
    [memory] = answer(catalog, text).memory
    assert memory.backend == compiler
    found = (memory.requestedBytes, memory.limitBytes, memory.overBytes, memory.overPercent)
    assert found == figures
    if compiler == "triton":
        assert "RTX 30 / A10 / A40 (sm_86)" in memory.devices
    else:
        assert memory.memory == "VMEM" and not memory.exact and memory.devices == []
    assert any("vmem_limit_bytes" in tip or "num_stages" in tip for tip in memory.advice)


def test_abs_is_lowered_from_0_9_0_under_both_semantics(catalog: Catalog) -> None:
    [found] = answer(catalog, LANE_WORDING.format(name="abs")).matches
    primitive = found.primitive
    assert primitive is not None
    assert (primitive.primitive, primitive.backend, primitive.semantics) == (
        "abs",
        "mosaic_gpu",
        "Lane",
    )
    assert {(e.semantics, e.since, e.inNewest) for e in primitive.lowered} == {
        ("Lane", "0.9.0", True),
        ("Warpgroup", "0.9.0", True),
    }
    assert primitive.upgradeTo == "0.9.0"
    assert primitive.rewrite is not None and "jnp.where" in primitive.rewrite.after


def test_a_primitive_no_release_lowers_gets_the_rewrite_and_no_upgrade(catalog: Catalog) -> None:
    [found] = answer(catalog, LANE_WORDING.format(name="transpose")).matches
    assert found.primitive is not None
    assert (found.primitive.lowered, found.primitive.upgradeTo) == ([], None)
    assert found.primitive.rewrite is not None
    assert "x.T" in found.primitive.rewrite.after


def test_a_primitive_a_later_release_lowers_gets_the_upgrade_and_the_rewrite(
    catalog: Catalog,
) -> None:
    """Mosaic GPU lowers ``concatenate`` from 0.11.0: an upgrade, or the rewrite before it."""
    [found] = answer(catalog, LANE_WORDING.format(name="concatenate")).matches
    assert found.primitive is not None
    assert found.primitive.upgradeTo == "0.11.0"
    assert {rule.semantics for rule in found.primitive.lowered} == {"Lane", "Warpgroup"}
    assert found.primitive.rewrite is not None
    assert "pl.ds(128, 128)" in found.primitive.rewrite.after


@pytest.mark.parametrize(
    ("text", "compiler", "semantics", "lowered"),
    [
        (
            "NotImplementedError: Unimplemented primitive in Pallas Triton lowering: scatter. "
            "Please file an issue at https://github.com/jax-ml/jax/issues/new/choose.",
            "triton",
            "default",
            set(),
        ),
        (
            "NotImplementedError: Unimplemented primitive in Pallas TPU lowering for tc: "
            "argmax. Please file an issue at https://github.com/jax-ml/jax/issues/new/choose.",
            "tpu",
            "TensorCore",
            {("TensorCore", "0.7.1")},
        ),
    ],
)
def test_triton_and_tpu_wordings_name_their_backends_rules(
    catalog: Catalog, text: str, compiler: str, semantics: str, lowered: set[tuple[str, str]]
) -> None:
    [found] = answer(catalog, text).matches
    primitive = found.primitive
    assert primitive is not None
    assert (primitive.backend, primitive.semantics) == (compiler, semantics)
    assert {(entry.semantics, entry.since) for entry in primitive.lowered} == lowered
    assert primitive.upgradeTo == (min(s for _, s in lowered) if lowered else None)


def test_a_primitive_lowered_on_other_core_types_only_gets_no_upgrade(catalog: Catalog) -> None:
    """jax#32991 (the enum's name in the message): SparseCore's subcores lower cumsum from
    0.8.0, registered in sc_primitives.py by SparseCore's own registering call; the
    TensorCore, whose kernel raised this, in no release."""
    text = (
        "NotImplementedError: Unimplemented primitive in Pallas TPU lowering for "
        "KernelType.TC: cumsum. Please file an issue on https://github.com/jax-ml/jax/issues."
    )
    [found] = answer(catalog, text).matches
    primitive = found.primitive
    assert primitive is not None
    assert (primitive.backend, primitive.semantics) == ("tpu", "TensorCore")
    assert {(entry.semantics, entry.since) for entry in primitive.lowered} == {
        ("SC scalar subcore", "0.8.0"),
        ("SC vector subcore", "0.8.0"),
    }
    assert primitive.upgradeTo is None


@pytest.mark.parametrize(
    ("text", "compiler", "lowered", "upgrade"),
    [
        (
            "NotImplementedError: Unimplemented primitive in Pallas TPU lowering: cos. "
            "Please file an issue on https://github.com/jax-ml/jax/issues.",
            "tpu",
            {("TensorCore", "0.4.34")},
            "0.4.34",
        ),
        (
            "NotImplementedError: Unimplemented primitive in Pallas Mosaic GPU lowering: abs. "
            "Please file an issue on https://github.com/google/jax/issues.",
            "mosaic_gpu",
            {("Lane", "0.9.0"), ("Warpgroup", "0.9.0")},
            "0.9.0",
        ),
        (  # jax#17317: registered by register_lowering(lax.sign_p)(…) from 0.4.26
            "NotImplementedError: Unimplemented primitive in Pallas GPU lowering: sign. "
            "Please file an issue on https://github.com/google/jax/issues.",
            "triton",
            {("default", "0.4.26")},
            "0.4.26",
        ),
        (  # jax#32551: registered in a loop over _JAX_FN_MAPPING from 0.8.2
            "NotImplementedError: Unimplemented primitive in Pallas GPU lowering: is_finite. "
            "Please file an issue on https://github.com/jax-ml/jax/issues.",
            "triton",
            {("default", "0.8.2")},
            "0.8.2",
        ),
    ],
)
def test_an_older_wording_names_its_primitives_rules_too(
    catalog: Catalog, text: str, compiler: str, lowered: set[tuple[str, str]], upgrade: str | None
) -> None:
    """Pastes of JAX 0.4 print the words of their day; the primitive is read from them all."""
    [found] = answer(catalog, text).matches
    assert found.variant != "current"
    primitive = found.primitive
    assert primitive is not None
    assert (primitive.backend, primitive.primitive) == (compiler, text.split(": ")[2].split(".")[0])
    assert {(entry.semantics, entry.since) for entry in primitive.lowered} == lowered
    assert primitive.upgradeTo == upgrade


def test_a_source_only_error_says_what_is_known_and_offers_curated_neighbours(
    catalog: Catalog,
) -> None:
    text = (
        "ValueError: Total TMEM allocation exceeds memory limit. Requested 640 columns which "
        "exceeds limit of 512."
    )
    [found] = answer(catalog, text).matches
    assert found.errorId == TMEM_SITE
    known = found.sourceOnly
    assert known is not None
    assert (known.filePath, known.function, known.kind) == (
        "jax/experimental/mosaic/gpu/core.py",
        "_launch",
        "raise",
    )
    assert known.condition == "cols_used > tcgen05.TMEM_MAX_COLS"
    assert known.variables == {"cols_used": "640", "tmem_max_cols": "512"}
    [site] = [
        item["record"]
        for item in map(json.loads, MINED_SITES.read_text(encoding="utf-8").splitlines())
        if item.get("record", {}).get("id") == TMEM_SITE
    ]
    newest = site["releases"][-1]
    assert known.releases == f"{site['releases'][0]['release']}–{newest['release']}"
    line = newest["lineNumber"]
    assert known.sourceUrl == newest["githubUrl"].split("#")[0] + f"#L{line}-L{line}"
    assert "No curated advice yet" in known.unknown
    nearest = known.closest[0]
    assert nearest.errorId == SMEM_RECORD and "same file" in nearest.why
    assert "same function" in nearest.why


def test_every_curated_record_is_curated_and_the_mined_one_is_not(catalog: Catalog) -> None:
    curated = {info.id for info in catalog.records.values() if info.curated}
    assert TMEM_SITE not in curated and SMEM_RECORD in curated
    shipped = {
        json.loads(path.read_text(encoding="utf-8"))["record"]["id"]
        for path in Path(CURATED_SEED_PATHS[1]).glob("*.json")
    }
    assert shipped <= curated


def test_closest_curated_is_remembered_per_function(catalog: Catalog) -> None:
    """The record page passes the function its document names, a match the frame index's:
    each gets the answer worked out for its own."""
    info, frames = catalog.records[TMEM_SITE], FrameIndex.load()
    [*_, nearest] = [closest_curated(info, name, catalog, frames)[0] for name in ("_launch", "x")]
    assert nearest.errorId == SMEM_RECORD and "same function" not in nearest.why
    assert "same function" in closest_curated(info, "_launch", catalog, frames)[0].why


def test_a_message_cut_short_names_its_record_and_no_release(catalog: Catalog) -> None:
    """Every wording of a ref store's shape check opens alike, so a cut after the opening
    tells no release; an older wording's pattern, which takes any text for a value, reads
    the elided rest where today's typed one does not, and is not taken for the paste's."""
    found = answer(catalog, "Killed 6: `` Invalid shape for `swap`. Ref shape: (8, 4, 128) ... ``")
    [match] = found.matches
    assert (match.errorId, match.why.truncated) == (REF_STORE_RECORD, True)
    assert match.variant != "current"  # the pattern that read it
    assert found.release is None
    [card] = match_answers(found, catalog.records, Links(""))
    assert not any("printed until" in text for text in card.notes), card.notes
