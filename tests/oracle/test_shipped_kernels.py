"""The curated records of errors raised by the kernels JAX ships (jax.experimental.pallas.ops:
flash attention, splash attention, megablox), checked against JAX itself.

Each record's example fix is run as it is written: its "before" and "after" code, given the
inputs its comments name (as ``jax.ShapeDtypeStruct``, at the sizes of the thread the record
cites), inside ``jax.jit`` and lowered for TPU on the CPU (registered as a TPU v5e). The
before must raise the record's class from the record's site, at the line the mined data gives
for the installed release, in words the record's match pattern reads. The after must lower,
and, run in TPU interpret mode on small arrays, compute what a reference computes (JAX's
``mha_reference``, or the plain attention or per-group matmul the kernel stands for). A site
the installed release no longer has (splash attention's ``head_dim_v`` check, gone in 0.7.1)
is held to what its record says of later releases: its before lowers and computes the same.
"""

from __future__ import annotations

import builtins
import contextlib
import functools
import json
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

from app.config import REPO_ROOT
from app.knowledge.releases import release_commits, release_key
from app.matching.templates import compile_pattern
from tests.data.test_site_records import mined_sites
from tests.oracle.jax_kernels import user_facing_error

pytestmark = pytest.mark.oracle

bf16, f32 = jnp.bfloat16, jnp.float32
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


# Record id -> its example's run. The traced sizes are the threads': EasyDeL#83 (a decode
# step, q_seq_len=1), pytorch/xla#8671 (4992 keys), jax-ml/jax#30861 (gpt-oss's 64-wide
# heads), sgl-project/sglang-jax#1099 (1024 rows, 6144 by 2048 experts).
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
}


def program(record: dict[str, Any], names: list[str], *, fixed: bool) -> Callable[..., Any]:
    """The example as a function of its inputs: the before alone, or (``fixed``) the before
    up to its error, whose set-up (imports, block sizes, masks) the after reads, then the
    after. Returns ``out`` and the namespace the code ran in."""
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


def computed(record: dict[str, Any], *, fixed: bool) -> tuple[jax.Array, jax.Array]:
    """The example run in TPU interpret mode on small arrays, and its reference."""
    case = CASES[record["id"]]
    inputs = case.small(np.random.default_rng(0))
    run = program(record, list(inputs), fixed=fixed)
    with jax_config.enable_x64(False), pltpu.force_tpu_interpret_mode():
        out, namespace = run(*inputs.values())
    return out, case.reference(inputs, namespace)


def installed_line(record: dict[str, Any]) -> int | None:
    """The site's line in the installed release, as mined; None where it has no such site."""
    site = mined_sites()[record["id"]]
    lines = [e["lineNumber"] for e in site["releases"] if e["release"] == jax.__version__]
    return lines[0] if lines else None


def test_every_shipped_kernel_record_has_a_case() -> None:
    assert len(RECORD_FILES) >= 4
    assert set(records()) == set(CASES)
    assert RAISING  # the installed release has most of these sites
    for record in records().values():  # each is a mined site's record, of JAX's ops
        assert record["id"] in mined_sites()
        assert record["filePath"].startswith("jax/experimental/pallas/ops/")


# The records whose site the installed release has, and those it no longer has.
RAISING = sorted(rid for rid in CASES if installed_line(records()[rid]) is not None)
GONE = sorted(set(CASES) - set(RAISING))


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
    assert compile_pattern(record["matchPattern"]).search(str(error)), str(error)
    # The example fix quotes the message the before prints.
    assert f"# {record['errorClass']}: {error}" in record["exampleFix"]


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
