"""Errors of old releases that real reports paste, which errata named from JAX's source alone,
and which curated records now answer: each report's paste, as its thread shows it, is
matched to the record of its site, with the advice the thread's maintainers gave or a run of
that release showed, first among what to do."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from app.answers.cards import match_answers
from app.answers.catalog import Catalog
from app.answers.links import Links
from app.answers.match import MatchService
from app.schemas.match import MatchRequest, MatchResponse
from tests.conftest import Backend

BODY_FAILED_TO_VERIFY = "80105c1cdaab211b"  # lower_jaxpr_to_func, 0.4.24-0.4.31
MATMUL_OPERANDS = "91f38796fdc779ca"  # inferMatmul, 0.4.16-0.4.28
REPEAT_LAYOUTS = "f91a84d54a174a88"  # tpu_repeat_rule, 0.4.17-0.4.35
# The kernels JAX ships (jax/experimental/pallas/ops/tpu).
FLASH_BLOCK_LARGER = "186933b3c9d20856"  # flash attention's _verify_block, 0.4.15-0.12.0.1
FLASH_NOT_DIVISIBLE = "d22c34531920c7df"  # the same function's other check
SPLASH_HEAD_DIM_V = "d73aeec0bc78a1bb"  # splash attention's flash_attention_kernel, 0.4.24-0.7.0
GMM_ROWS = "375e50e0f8519c64"  # megablox's _calculate_num_tiles, 0.4.26-0.12.0.1
RAGGED_HEAD_DIM = "dbb825cca92d0b4c"  # ragged paged attention's broadcast_to_shape, 0.5.3-0.12.0.1
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

# jax-ml/jax#30861: splash attention on gpt-oss's 64-wide heads; the page starts mid-traceback.
JAX_30861 = """\
    jaxpr, _, consts, () = pe.trace_to_jaxpr_dynamic(wrapped_kernel_fun,
  File "/home/ranran_google_com/.local/lib/python3.10/site-packages/jax/_src/pallas/primitives.py"\
, line 874, in wrap_with_transforms
    return f(*new_args)
  File "/home/ranran_google_com/.local/lib/python3.10/site-packages/jax/experimental/pallas/ops/tp\
u/splash_attention/splash_attention_kernel.py", line 716, in flash_attention_kernel
    raise NotImplementedError(
NotImplementedError: head_dim_v=64 should be a multiple of 128
"""
# pytorch/xla#8671: torch_xla's flash attention on 4992 keys; the ComfyUI log stops at "/app".
PYTORCH_XLA_8671 = """\
2025-02-04 07:29:15,292 - execution.py:398 - ERROR - !!! Exception during processing !!! kv_seq_le\
n=4992 should be divisible by block_k_major=512
2025-02-04 07:29:15,295 - execution.py:399 - ERROR - Traceback (most recent call last):
  File "/app/execution.py", line 329, in execute
    output_data, output_ui, has_subgraph = get_output_data(obj, input_data_all, execution_block_cb\
=execution_block_cb, pre_execute_cb=pre_execute_cb)
                                           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\
^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/app/execution.py", line 203, in get_output_data
    return_values = _map_node_over_list(obj, input_data_all, obj.FUNCTION, allow_interrupt=True, e\
xecution_block_cb=execution_block_cb, pre_execute_cb=pre_execute_cb)
                    ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\
^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/app/execution.py", line 175, in _map_node_over_list
    process_inputs(input_dict, i)
  File "/app/execution.py", line 164, in process_inputs
    results.append(getattr(obj, func)(**inputs))
                   ^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/app
"""
# erfanzar/EasyDeL#83: the reporter's words, no traceback; a decode step of one query.
EASYDEL_83 = """\
an error occurs: block_q=1024 should be smaller or equal to q_seq_len=1.

When I tried to set config.q_seq_len = 4096. it doesn't work, it still report the same error: bloc\
k_q=1024 should be smaller or equal to q_seq_len=1.
"""
# sgl-project/sglang-jax#1099: raised by sglang-jax's copy of megablox, in JAX's words.
SGLANG_JAX_1099 = """\
[GMM kernel] using default block sizes for key: (1024, 6144, 2048, 384, 6, 'bfloat16', 'float8_e4m\
3fn', 6144): (384, 2048, 2048)
...
File ".../gmm/megablox_gmm_kernel/gmm.py", line 80, in _calculate_num_tiles
    raise ValueError(f"{x} must be divisible by x-dimension tile size ({tx}).")
ValueError: 1024 must be divisible by x-dimension tile size (384).
"""

# marin-community/levanter#1176 (JAX 0.7.2, which levanter's lock then pinned): Llama-3.2-1B's
# 64-wide heads through ragged paged attention, a bare assert that levanter caught and fell
# back from; the frames between levanter's call and the kernel's are left out here.
LEVANTER_1176 = """\
2025-09-22 19:15:05,751 - INFO - Enqueuing request InferenceRequest(request_id='req_0', prompt_t\
okens=[791, 16553, 15262, 311, 8343], max_tokens=64, temperature=0.7, stop_tokens=None, seed=None\
, future=<Future pending>, n_generations=1, original_prompt='The chicken liked to eat', enable_lo\
gprobs=False)
/home/power/marin/submodules/levanter/src/levanter/layers/attention.py:1744: UserWarning: TPU rag\
ged paged attention failed. Falling back to reference implementation.
  warnings.warn("TPU ragged paged attention failed. Falling back to reference implementation.")
2025-09-22 19:15:07,126 - WARNING - Failed to use TPU ragged paged attention. Falling back to refe\
rence
Traceback (most recent call last):
  File "/home/power/marin/submodules/levanter/src/levanter/layers/attention.py", line 1732, in ra\
gged_paged_attention
    out = _do_tpu_ragged_paged_attention(
          ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/home/power/marin/submodules/levanter/src/levanter/layers/attention.py", line 1782, in _d\
o_tpu_ragged_paged_attention
...
  File "/home/power/marin/submodules/levanter/.venv/lib/python3.11/site-packages/jax/_src/linear_\
util.py", line 429, in _get_result_paths_thunk
    ans = _fun(*args, **kwargs)
          ^^^^^^^^^^^^^^^^^^^^^
  File "/home/power/marin/submodules/levanter/.venv/lib/python3.11/site-packages/jax/experimental\
/pallas/ops/tpu/ragged_paged_attention/kernel.py", line 645, in compute_with_kv_blk_in_cur_seq
    flash_attention(
  File "/home/power/marin/submodules/levanter/.venv/lib/python3.11/site-packages/jax/experimental\
/pallas/ops/tpu/ragged_paged_attention/kernel.py", line 577, in flash_attention
    l_alpha = broadcast_to_shape(l_alpha, qkv.shape)
              ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/home/power/marin/submodules/levanter/.venv/lib/python3.11/site-packages/jax/experimental\
/pallas/ops/tpu/ragged_paged_attention/kernel.py", line 570, in broadcast_to_shape
    assert shape[1] % arr.shape[1] == 0
           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^
AssertionError
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
    pytest.param(
        JAX_30861,
        SPLASH_HEAD_DIM_V,
        "0.7.0",
        ("jnp.pad(q, pad)", "[..., :head_dim]"),
        id="jax#30861",
    ),
    pytest.param(
        SGLANG_JAX_1099,
        GMM_ROWS,
        "0.7.2",
        ("tm divides m = lhs.shape[0]", "sglang-jax#1104"),
        id="sglang-jax#1099",
    ),
]

# Pastes that show no JAX frame and name no release, of words every release from 0.4.15 to
# the newest prints (flash attention's block checks): nothing dates them, and the answer
# says so (no release) rather than guess one.
UNDATED_REPORTS = [
    pytest.param(
        PYTORCH_XLA_8671,
        FLASH_NOT_DIVISIBLE,
        ("pytorch/xla#8671", "-kv_len % block_k_major", "fa.SegmentIds("),
        id="pytorch/xla#8671",
    ),
    pytest.param(
        EASYDEL_83,
        FLASH_BLOCK_LARGER,
        ("block_q=min(block_q, q.shape[2])", "block_k_major = block_k = kv_seq_len"),
        id="EasyDeL#83",
    ),
]


# Pastes of a bare assert, which prints no message: the JAX frame that raised it names the
# site, and the answer gives what its record says to do.
RAISED_AT_REPORTS = [
    pytest.param(
        LEVANTER_1176,
        RAGGED_HEAD_DIM,
        "0.7.2",
        ("jnp.pad(kv_pages", "sm_scale=head_dim ** -0.5", "levanter#1192"),
        id="levanter#1176",
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


@pytest.mark.parametrize(("paste", "record_id", "advice"), UNDATED_REPORTS)
def test_an_undated_paste_is_answered_with_the_records_advice_and_no_release(
    catalog: Catalog, paste: str, record_id: str, advice: tuple[str, ...]
) -> None:
    response = answer(catalog, paste)
    first = response.matches[0]
    assert first.errorId == record_id
    assert first.sourceOnly is None  # curated: what to do is the record's
    assert response.release is None
    record = catalog.records[record_id]
    assert record.curated
    assert all(words in record.solutions[0] for words in advice), record.solutions[0]


@pytest.mark.parametrize(("paste", "record_id", "release", "advice"), RAISED_AT_REPORTS)
def test_a_reported_bare_assert_is_answered_with_its_sites_advice(
    catalog: Catalog, paste: str, record_id: str, release: str, advice: tuple[str, ...]
) -> None:
    response = answer(catalog, paste)
    assert response.matches == []  # no message to match
    first = response.raisePoints[0]
    assert (first.errorId, first.via) == (record_id, "frame")
    assert release in first.releases
    assert response.release is not None and release in response.release.releases
    record = catalog.records[record_id]
    assert record.curated
    assert all(words in record.solutions[0] for words in advice), record.solutions[0]
    [card] = match_answers(response, catalog.records, Links(""))
    assert card.doThis is not None and card.doThis.title == record.solutions[0]


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
