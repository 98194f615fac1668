"""Errors of old releases that real reports paste, which errata named from JAX's source alone,
and which curated records now answer: each report's paste, as its thread shows it, is
matched to the record of its site, with the advice the thread's maintainers gave or a run of
that release showed, first among what to do."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from app.services.catalog import Catalog
from app.services.match import MatchRequest, MatchResponse, MatchService
from tests.conftest import Backend

BODY_FAILED_TO_VERIFY = "80105c1cdaab211b"  # lower_jaxpr_to_func, 0.4.24-0.4.31
MATMUL_OPERANDS = "91f38796fdc779ca"  # inferMatmul, 0.4.16-0.4.28
REPEAT_LAYOUTS = "f91a84d54a174a88"  # tpu_repeat_rule, 0.4.17-0.4.35
# Sites printing the same words as one of them: the index map's function of 0.4.24-0.4.31
# and SparseCore's lowering of 0.7.2-0.10.0, each a ValueError or LoweringException alike.
SAME_WORDS = ("95e819a0b1e6874f", "0c1ae5572a829aff")

# jax-ml/jax#20046 (JAX 0.4.25): jnp.exp of one element of a ref left in VMEM; cut by the page.
JAX_20046 = """\
  File "/build/99cfc82c986b79a05c676f893b555558d643/google3/runfiles/google3/experimental/\
users/wuxiao/try_jax/jax_playground_test.py", line 97, in test_scalar_exp
    out = pallas.pallas_call(
  File "/build/99cfc82c986b79a05c676f893b555558d643/google3/runfiles/google3/third_party/py/\
jax/_src/pallas/pallas_call.py", line 562, in wrapped
    out_flat = pallas_call_p.bind(
jax._src.source_info_util.JaxStackTraceBeforeTransformation: jax._src.pallas.mosaic.lowering.\
LoweringException: Body failed to verify: "func.func"() <{function_type = (memref<1xf32, \
#tpu.memory_space<vmem>>, memref<1xf32, #tpu.memory_space<vmem>>) -> (), sym_name = "main"}> ({
^bb0(%arg0: memref<1xf32, #tpu.memory_space<vmem>>, %arg1: memref<1xf32, \
#tpu.memory_space<vmem>>):
  %0 = "arith.constant"() <{value = 0 : index}> : () -> index
  %1 = "vector.load"(%arg0, %0) : (memref<1xf32, #tpu.memory_space<vmem>>, index) -> \
vector<1xf32>
  %2 = "vector.shape_cast"(%1) : (vector<1xf32>) -> vector<f32>
  %3 = "math.exp"(%2) <{fastmath = #arith.fastmath<none>}> : (vector<f32>) -> vector<f32>
"""
# jax-ml/jax#18388 (JAX 0.4.20): q @ k.T with a key block of 16 rows.
JAX_18388 = """\
Traceback (most recent call last):
  File "/root/test_multihead.py", line 101, in <module>
    res = matrix_mul(x, x, x, )
  File "/root/test_multihead.py", line 73, in matrix_mul
    return pl.pallas_call(
  File "/usr/local/lib/python3.10/dist-packages/jax/_src/pallas/pallas_call.py", line 383, in \
wrapped
    out_flat = pallas_call_p.bind(
jax._src.source_info_util.JaxStackTraceBeforeTransformation: RuntimeError: Internal TPU kernel \
compiler error: unsupported operand shapes or layouts

The MLIR operation involved:
  %26 = "tpu.matmul"(%23, %25, %17) {transpose_lhs = false, transpose_rhs = true} : \
(vector<256x128xf32>, vector<16x128xf32>, vector<256x16xf32>) -> vector<256x16xf32>

Please report a bug at: https://github.com/google/jax/issues/new?assignees=apaszke
"""
# jax-ml/jax#24415: pltpu.repeat of a row statistic of 4 query rows; cut by the page.
JAX_24415 = """\
ERROR: test_extended_paged_attention_v1_multiple_queries (__main__.PallasTest)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/usr/local/lib/python3.10/site-packages/jax/_src/compiler.py", line 266, in \
backend_compile
    return backend.compile(built_c, compile_options=options)
jaxlib.xla_extension.XlaRuntimeError: INTERNAL: Mosaic failed to compile TPU kernel: Not \
implemented: Non-trivial layouts unsupported

at location: loc("/repeat"(callsite("_flash_attention"("/workspaces
"""

REPORTS = [
    pytest.param(
        JAX_20046,
        BODY_FAILED_TO_VERIFY,
        "0.4.25",
        ("o_ref[...] = jnp.exp(x_ref[...])", "jax-ml/jax#20046"),
        id="jax#20046",
    ),
    pytest.param(
        JAX_18388,
        MATMUL_OPERANDS,
        "0.4.20",
        ("block_k=128", "jax-ml/jax#18388"),
        id="jax#18388",
    ),
    pytest.param(
        JAX_24415,
        REPEAT_LAYOUTS,
        "0.4.35",
        ("jax.lax.broadcast_in_dim", "jax-ml/jax#24415"),
        id="jax#24415",
    ),
]


@pytest.fixture(scope="module")
def catalog(backend: Backend) -> Iterator[Catalog]:
    """What people wrote, and what mining says of these sites and of those of the same
    words, in a database of its own."""
    with backend.curated_catalog(
        (BODY_FAILED_TO_VERIFY, MATMUL_OPERANDS, REPEAT_LAYOUTS, *SAME_WORDS)
    ) as catalog:
        yield catalog


def answer(catalog: Catalog, text: str) -> MatchResponse:
    return MatchService(catalog).match(MatchRequest(text=text))


@pytest.mark.parametrize(("paste", "record_id", "release", "advice"), REPORTS)
def test_the_reported_paste_is_answered_with_the_records_advice(
    catalog: Catalog, paste: str, record_id: str, release: str, advice: tuple[str, ...]
) -> None:
    response = answer(catalog, paste)
    first = response.matches[0]
    assert first.errorId == record_id
    assert first.sourceOnly is None  # curated: what to do is the record's
    assert response.release is not None and release in response.release.releases
    record = catalog.records[record_id]
    assert record.curated
    assert all(words in record.solutions[0] for words in advice), record.solutions[0]


def test_a_body_that_failed_to_verify_is_read_whole_not_to_the_first_dot(
    catalog: Catalog,
) -> None:
    """jax#20046's message prints the kernel's MLIR function, whose first dot is inside
    ``"func.func"``: the record reads its line whole, where the site's derived pattern read
    30 characters of it (score 0.031), and leads the other sites of the same words."""
    [found] = answer(catalog, JAX_20046).matches
    assert found.errorId == BODY_FAILED_TO_VERIFY
    assert found.score >= 0.9
    assert set(SAME_WORDS) <= set(found.alternatives)


def test_the_matmul_records_advice_depends_on_the_release_it_names() -> None:
    """jax#18388 is of 0.4.20, where the rhs's rows must be a multiple of 128; 0.4.26 lowers
    float32 rows of any number: the record says both, each with its releases."""
    from app.knowledge.mining import DEFAULT_CURATED, curated_records

    [record] = [r for r in curated_records(DEFAULT_CURATED) if r["id"] == MATMUL_OPERANDS]
    first, upgrade_to = record["solutions"][:2]
    assert first.startswith("On JAX 0.4.17 to 0.4.25, make the matmul's rhs rows a multiple")
    assert upgrade_to.startswith("Upgrade to JAX 0.4.26 or later")
    assert "05f54b665c" in record["documentation"]
