"""The curated records of errors raised by the kernels JAX ships (jax.experimental.pallas.ops:
flash attention, splash attention, megablox, ragged paged attention), checked against JAX
itself.

Each record's example fix is run as it is written: its "before" and "after" code, given the
inputs its comments name (as ``jax.ShapeDtypeStruct``, at the sizes of the thread the record
cites), inside ``jax.jit`` and lowered for TPU on the CPU (registered as a TPU v5e). The
before must raise the record's class from the record's site, at the line the mined data gives
for the installed release, in words the record's match pattern reads (a bare assert, which
prints none, from its statement). The after must lower, and, run in TPU interpret mode on
small arrays, compute what a reference computes (JAX's ``mha_reference``, or the plain
attention or per-group matmul the kernel stands for). A kernel the installed release cannot
interpret (ragged paged attention, which neither of 0.10.2's interpreters runs) has JAX's
reference of it stand in for it there, and a test holds that the kernel still cannot be
interpreted. A site the installed release no longer has (splash attention's ``head_dim_v``
check, gone in 0.7.1) is held to what its record says of later releases: its before lowers
and computes the same.
"""

from __future__ import annotations

import builtins
import contextlib
import functools
import json
import re
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax._src import config as jax_config
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas.ops.tpu import flash_attention as fa
from jax.experimental.pallas.ops.tpu.ragged_paged_attention import (
    ref_ragged_paged_attention,
    tuned_block_sizes,
)

from app.config import REPO_ROOT
from app.jaxref.releases import release_commits, release_key
from app.jaxref.templates import compile_pattern
from tests.data.test_site_records import mined_sites
from tests.oracle.jax_kernels import user_facing_error

pytestmark = pytest.mark.oracle

bf16, f32, i32 = jnp.bfloat16, jnp.float32, jnp.int32
RAGGED_HEAD_DIM = "dbb825cca92d0b4c"  # ragged paged attention's broadcast_to_shape
RECORD_FILES = sorted((REPO_ROOT / "data" / "records").glob("pallas-ops-*.json"))


@functools.cache
def records() -> dict[str, dict[str, Any]]:
    """The records of the shipped kernels' sites, by id."""
    found = {}
    for path in RECORD_FILES:
        record = json.loads(path.read_text(encoding="utf-8"))["record"]
        found[record["id"]] = record
    return found


def example_code(record: dict[str, Any]) -> tuple[str, str]:
    """The record's example fix as two programs: its before and its after."""
    fix = record["exampleFix"]
    assert fix.startswith("# before\n"), fix
    before, after = fix.removeprefix("# before\n").split("\n# after\n")
    return before, after


def error_class(record: dict[str, Any]) -> type[BaseException]:
    found = getattr(builtins, record["errorClass"])
    assert issubclass(found, BaseException)
    return found


def spec(shape: tuple[int, ...], dtype: Any) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(shape, dtype)


@dataclass(frozen=True)
class Case:
    """A record's example run: the inputs its code reads at the thread's sizes (traced and
    lowered), small inputs to run it on, and what those must compute."""

    traced: dict[str, jax.ShapeDtypeStruct]
    small: Callable[[np.random.Generator], dict[str, jax.Array]]
    reference: Callable[[dict[str, jax.Array], dict[str, Any]], jax.Array]
    tolerance: float
    # Where the installed release cannot interpret the kernel: the kernel's name in the
    # example, and JAX's reference of it, which computes the after in its place.
    stand_in: tuple[str, Callable[..., jax.Array]] | None = None


def normal(rng: np.random.Generator, *shape: int, scale: float = 0.5) -> jax.Array:
    return jnp.asarray(rng.standard_normal(shape) * scale, f32)


def attention_inputs(q_shape: tuple[int, ...], kv_shape: tuple[int, ...]) -> Any:
    def make(rng: np.random.Generator) -> dict[str, jax.Array]:
        return {
            "q": normal(rng, *q_shape),
            "k": normal(rng, *kv_shape),
            "v": normal(rng, *kv_shape),
        }

    return make


def flash_reference(inputs: dict[str, jax.Array], namespace: dict[str, Any]) -> jax.Array:
    """JAX's own reference of its flash attention, on the unpadded inputs."""
    return fa.mha_reference(inputs["q"], inputs["k"], inputs["v"], None)


def masked_attention(inputs: dict[str, jax.Array], namespace: dict[str, Any]) -> jax.Array:
    """Softmax attention under the splash kernel's own mask (the example's ``mask``), one
    (q_seq_len, kv_seq_len) mask per head, with no scale, as splash computes it."""
    q, k, v = inputs["q"], inputs["k"], inputs["v"]
    mask = namespace["mask"]
    allowed = np.stack([head[:, :] for head in mask.masks])  # (heads, q_len, kv_len)
    scores = jnp.einsum("bhqd,bhkd->bhqk", q, k, precision="highest")
    scores = jnp.where(allowed[None], scores, -jnp.inf)
    return jnp.einsum("bhqk,bhkd->bhqd", jax.nn.softmax(scores, axis=-1), v, precision="highest")


def grouped_inputs(sizes: tuple[int, ...], k: int, n: int) -> Any:
    def make(rng: np.random.Generator) -> dict[str, jax.Array]:
        m = sum(sizes)
        return {
            "lhs": normal(rng, m, k),
            "rhs": normal(rng, len(sizes), k, n),
            "group_sizes": jnp.asarray(sizes, jnp.int32),
        }

    return make


def grouped_matmul(inputs: dict[str, jax.Array], namespace: dict[str, Any]) -> jax.Array:
    """Each group's rows of lhs times the group's rhs: what megablox.gmm computes."""
    lhs, rhs = np.asarray(inputs["lhs"], np.float64), np.asarray(inputs["rhs"], np.float64)
    ends = np.cumsum(np.asarray(inputs["group_sizes"]))
    starts = ends - np.asarray(inputs["group_sizes"])
    return jnp.asarray(
        np.concatenate(
            [lhs[s:e] @ rhs[g] for g, (s, e) in enumerate(zip(starts, ends, strict=True))]
        ),
        f32,
    )


def paged_inputs(rng: np.random.Generator) -> dict[str, jax.Array]:
    """Two sequences, 5 queries of 20 keys and 3 of 9, on pages of 16 tokens (two free slots
    of four), 8 query heads on 2 KV heads of head_dim 64, K and V interleaved."""
    return {
        "q": normal(rng, 8, 8, 64),
        "kv_pages": normal(rng, 8, 16, 4, 64),
        "kv_lens": jnp.asarray([20, 9, 0, 0], i32),
        "page_indices": jnp.asarray([[3, 5, 0, 0], [6, 0, 0, 0], [0] * 4, [0] * 4], i32),
        "cu_q_lens": jnp.asarray([0, 5, 8, 8, 8], i32),
        "num_seqs": jnp.asarray([2], i32),
    }


def paged_attention(inputs: dict[str, jax.Array], namespace: dict[str, Any]) -> jax.Array:
    """JAX's own reference of its ragged paged attention, on the unpadded inputs, with the
    model's scale, 1/sqrt(head_dim)."""
    return ref_ragged_paged_attention(*inputs.values(), sm_scale=inputs["q"].shape[-1] ** -0.5)


# Record id -> its example's run. The traced sizes are the threads': EasyDeL#83 (a decode
# step, q_seq_len=1), pytorch/xla#8671 (4992 keys), jax-ml/jax#30861 (gpt-oss's 64-wide
# heads), sgl-project/sglang-jax#1099 (1024 rows, 6144 by 2048 experts),
# marin-community/levanter#1176 (Llama-3.2-1B's 32 query and 8 KV heads of head_dim 64, on
# levanter's default engine of 16 sequences of 64 pages of 128 tokens).
CASES = {
    "186933b3c9d20856": Case(
        traced={
            "q": spec((2, 8, 1, 128), bf16),
            "k": spec((2, 8, 1024, 128), bf16),
            "v": spec((2, 8, 1024, 128), bf16),
        },
        small=attention_inputs((1, 2, 1, 128), (1, 2, 512, 128)),
        reference=flash_reference,
        tolerance=1e-5,
    ),
    "d22c34531920c7df": Case(
        traced={name: spec((1, 8, 4992, 128), bf16) for name in ("q", "k", "v")},
        small=attention_inputs((1, 2, 600, 128), (1, 2, 600, 128)),
        reference=flash_reference,
        tolerance=1e-5,
    ),
    "d73aeec0bc78a1bb": Case(
        traced={name: spec((2, 8, 1024, 64), bf16) for name in ("q", "k", "v")},
        small=attention_inputs((1, 2, 256, 64), (1, 2, 256, 64)),
        reference=masked_attention,
        tolerance=1e-5,
    ),
    "375e50e0f8519c64": Case(
        traced={
            "lhs": spec((1024, 6144), bf16),
            "rhs": spec((8, 6144, 2048), bf16),
            "group_sizes": spec((8,), jnp.int32),
        },
        # 200 rows: no tile of the example divides them, so its after pads them.
        small=grouped_inputs((120, 80), 2048, 2048),
        reference=grouped_matmul,
        tolerance=1e-3,
    ),
    RAGGED_HEAD_DIM: Case(
        traced={
            "q": spec((512, 32, 64), bf16),
            "kv_pages": spec((1024, 128, 16, 64), bf16),
            "kv_lens": spec((16,), i32),
            "page_indices": spec((16, 64), i32),
            "cu_q_lens": spec((17,), i32),
            "num_seqs": spec((1,), i32),
        },
        small=paged_inputs,
        reference=paged_attention,
        tolerance=1e-6,
        stand_in=("ragged_paged_attention", ref_ragged_paged_attention),
    ),
}
STANDING_IN = sorted(rid for rid, case in CASES.items() if case.stand_in)


@pytest.fixture(autouse=True)
def block_sizes_of_a_v5e(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ragged paged attention looks its block sizes up by the device's TPU version, of which
    a CPU has none ('TPU version must be 4 or higher.'): it is told a v5's, as the lowering
    is told the CPU is a v5e (and, the CPU's name in no table, takes the default sizes)."""
    monkeypatch.setattr(tuned_block_sizes, "get_tpu_version", lambda: 5)


def program(
    record: dict[str, Any],
    names: list[str],
    *,
    fixed: bool,
    stand_in: tuple[str, Callable[..., jax.Array]] | None = None,
) -> Callable[..., Any]:
    """The example as a function of its inputs: the before alone, or (``fixed``) the before
    up to its error, whose set-up (imports, block sizes, masks) the after reads, then the
    after, with ``stand_in``'s function under the kernel's name. Returns ``out`` and the
    namespace the code ran in."""
    before, after = example_code(record)
    raised = error_class(record)

    def run(*arrays: jax.Array) -> tuple[jax.Array, dict[str, Any]]:
        namespace: dict[str, Any] = {
            "jax": jax,
            "jnp": jnp,
            **dict(zip(names, arrays, strict=True)),
        }
        if not fixed:
            exec(compile(before, f"<{record['id']} before>", "exec"), namespace)
        else:
            with contextlib.suppress(raised):
                exec(compile(before, f"<{record['id']} before>", "exec"), namespace)
            if stand_in is not None:
                name, function = stand_in
                namespace[name] = function
            exec(compile(after, f"<{record['id']} after>", "exec"), namespace)
        return namespace["out"], namespace

    return run


def lower(record: dict[str, Any], *, fixed: bool) -> None:
    """Trace the example at the thread's sizes and lower it for TPU, with JAX's default
    32-bit types (the oracle's x64 makes these kernels' index arithmetic mix i32 and i64)."""
    traced = CASES[record["id"]].traced
    run = program(record, list(traced), fixed=fixed)
    with jax_config.enable_x64(False):
        jax.jit(lambda *arrays: run(*arrays)[0]).trace(*traced.values()).lower(
            lowering_platforms=("tpu",)
        )


def raised_by_before(record: dict[str, Any]) -> BaseException:
    with jax_config.traceback_filtering("off"), pytest.raises(Exception) as raised:
        lower(record, fixed=False)
    return user_facing_error(raised.value)


def computed(
    record: dict[str, Any], *, fixed: bool, stand_in: bool = True
) -> tuple[jax.Array, jax.Array]:
    """The example run in TPU interpret mode on small arrays (the kernel's reference in its
    place, where the case has one and ``stand_in``), and its reference."""
    case = CASES[record["id"]]
    inputs = case.small(np.random.default_rng(0))
    run = program(record, list(inputs), fixed=fixed, stand_in=case.stand_in if stand_in else None)
    with jax_config.enable_x64(False), pltpu.force_tpu_interpret_mode():
        out, namespace = run(*inputs.values())
    return out, case.reference(inputs, namespace)


def installed_line(record: dict[str, Any]) -> int | None:
    """The site's line in the installed release, as mined; None where it has no such site."""
    site = mined_sites()[record["id"]]
    lines = [e["lineNumber"] for e in site["releases"] if e["release"] == jax.__version__]
    return lines[0] if lines else None


def test_every_shipped_kernel_record_has_a_case() -> None:
    assert len(RECORD_FILES) >= 5
    assert set(records()) == set(CASES)
    assert RAISING  # the installed release has most of these sites
    for record in records().values():  # each is a mined site's record, of JAX's ops
        assert record["id"] in mined_sites()
        assert record["filePath"].startswith("jax/experimental/pallas/ops/")


# The records whose site the installed release has, and those it no longer has.
# (A case whose record is missing is neither: the test above names it.)
RAISING = sorted(
    rid for rid in set(CASES) & set(records()) if installed_line(records()[rid]) is not None
)
GONE = sorted(set(CASES) & set(records()) - set(RAISING))


@pytest.mark.usefixtures("cpu_as_tpu")
@pytest.mark.parametrize("record_id", RAISING)
def test_the_before_raises_the_record_from_its_site(record_id: str) -> None:
    record = records()[record_id]
    line = installed_line(record)
    error = raised_by_before(record)
    assert type(error) is error_class(record), error
    frame = traceback.extract_tb(error.__traceback__)[-1]
    assert frame.filename.endswith(record["filePath"]), frame
    assert frame.lineno == line, frame
    assert frame.name == mined_sites()[record_id]["site"]["function"].split(".")[-1], frame
    if record["matchPattern"]:
        assert compile_pattern(record["matchPattern"]).search(str(error)), str(error)
        # The example fix quotes the message the before prints.
        quoted = f"# {record['errorClass']}: {error}"
    else:  # a bare assert prints nothing: the frame's line is its statement, the record's
        assert str(error) == "" and frame.line == record["errorMessage"], (str(error), frame)
        quoted = f"# {record['errorClass']} ({record['errorMessage']}, in {frame.name} "
    assert quoted in record["exampleFix"], quoted


@pytest.mark.usefixtures("cpu_as_tpu")
@pytest.mark.parametrize("record_id", sorted(CASES))
def test_the_after_lowers_for_tpu(record_id: str) -> None:
    lower(records()[record_id], fixed=True)


@pytest.mark.parametrize("record_id", sorted(CASES))
def test_the_after_computes_what_the_kernel_stands_for(record_id: str) -> None:
    out, expected = computed(records()[record_id], fixed=True)
    assert out.shape == expected.shape
    np.testing.assert_allclose(out, expected, atol=CASES[record_id].tolerance, rtol=1e-4)


@pytest.mark.usefixtures("cpu_as_tpu")
@pytest.mark.parametrize("record_id", GONE)
def test_a_release_without_the_site_takes_the_before_as_its_record_says(record_id: str) -> None:
    """The installed JAX is later than the site's last release: the record must say so and
    advise the release after it, where its before is accepted; the before must lower and
    compute the same as the fix."""
    record = records()[record_id]
    last = mined_sites()[record_id]["releases"][-1]["release"]
    releases = sorted(release_commits(), key=release_key)
    first_without = releases[releases.index(last) + 1]
    assert release_key(first_without) <= release_key(jax.__version__)
    assert last in record["documentation"] and first_without in record["documentation"]
    upgrade = f"Upgrade to JAX {first_without} or later"
    assert any(solution.startswith(upgrade) for solution in record["solutions"])
    lower(record, fixed=False)
    out, expected = computed(record, fixed=False)
    np.testing.assert_allclose(out, expected, atol=CASES[record_id].tolerance, rtol=1e-4)


@pytest.mark.usefixtures("cpu_as_tpu")
def test_a_flash_attention_padded_without_a_mask_lowers_but_computes_otherwise() -> None:
    """The divisibility record's padding is a fix only with its mask: the after with the
    segment ids left out passes the check and lowers, and its output differs."""
    record = records()["d22c34531920c7df"]
    before, after = example_code(record)
    unmasked = after.replace("segment_ids=segment_ids, ", "")
    assert unmasked != after
    bare = {**record, "exampleFix": f"# before\n{before}\n# after\n{unmasked}"}
    lower(bare, fixed=True)
    out, expected = computed(bare, fixed=True)
    assert float(jnp.max(jnp.abs(out - expected))) > 100 * CASES[record["id"]].tolerance


@pytest.mark.parametrize("record_id", STANDING_IN)
def test_a_kernel_the_interpreter_cannot_run_has_its_reference_stand_in(record_id: str) -> None:
    """0.10.2's TPU interpreter reads a ref only through indexing, and ragged paged attention
    reshapes its KV buffer: the kernel runs in no case, 128-wide heads included, and its
    reference computes the after in its place, as the record says. Once the interpreter runs
    the kernel, this fails: the stand-in is then to go."""
    record = records()[record_id]
    assert "reference of the kernel in its place" in record["verifiedBy"]
    with pytest.raises(
        jax.errors.JaxRuntimeError, match="'ReshapeTransform' object has no attribute 'indices'"
    ):
        computed(record, fixed=True, stand_in=False)


def ragged_after(old: str, new: str) -> dict[str, Any]:
    """The ragged paged attention record with ``old`` of its after written ``new``."""
    record = records()[RAGGED_HEAD_DIM]
    before, after = example_code(record)
    changed = after.replace(old, new)
    assert changed != after
    return {**record, "exampleFix": f"# before\n{before}\n# after\n{changed}"}


@pytest.mark.usefixtures("cpu_as_tpu")
def test_a_ragged_paged_attention_at_the_padded_scale_lowers_but_computes_otherwise() -> None:
    """The padding is exact only with the model's scale: 1/sqrt(128), the padded width's,
    passes the check and lowers, and its output differs."""
    rescaled = ragged_after("sm_scale=sm_scale,", "sm_scale=(head_dim + pad) ** -0.5,")
    lower(rescaled, fixed=True)
    out, expected = computed(rescaled, fixed=True)
    assert float(jnp.max(jnp.abs(out - expected))) > 100 * CASES[RAGGED_HEAD_DIM].tolerance


@pytest.mark.usefixtures("cpu_as_tpu")
def test_a_ragged_paged_attention_with_q_alone_padded_is_refused_as_its_record_says() -> None:
    refused = "Q head_dim 128 must be the same as that of K/V 64."
    assert refused in records()[RAGGED_HEAD_DIM]["solutions"][0]
    q_alone = ragged_after("jnp.pad(kv_pages, ((0, 0), (0, 0), (0, 0), (0, pad)))", "kv_pages")
    with pytest.raises(ValueError, match=re.escape(refused)):
        lower(q_alone, fixed=True)
