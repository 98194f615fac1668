"""Families of compilers' messages below JAX, each from real wordings: the record a paste
reaches, its advice, and the near misses that must not reach it."""

from __future__ import annotations

import pytest

from app.matching.compilers import compiler_messages, legalization
from app.matching.memory import find_overflows

MOSAIC = "libtpu (Mosaic's TPU compiler)"
WRAPPER = "jax.errors.JaxRuntimeError: INTERNAL: Mosaic failed to compile TPU kernel: "
BAD_LHS = "4ecea782e3348baf"
LEGALIZE = "9aec4caf5cd1d6dd"
NARROW_FLOAT = "5b747e955b411851"
VERSION_SKEW = "144a0fcebaf68edb"  # Mosaic's serialization version check (jaxlib/mosaic/serde.cc)
HELION = "bed31dbe69f03a9f"
XLA_VMEM = "c8a7440698851820"
TRITON_SHARED_MEMORY = "d8d1ef965b23ab67"
HBM = "7e5c2edb7cda0f17"

FAMILIES = [
    # a bfloat16 block times a float32 one, and 16-bit operands at HIGHEST (a tuning log)
    (
        "MosaicError: INTERNAL: Mosaic failed to compile TPU kernel: Bad lhs type\n\n"
        'The MLIR operation involved:\n  %41 = "tpu.matmul"(%38, %39, %40) <{precision = '
        "#tpu.contract_precision<fp32>}> : (vector<64x256xbf16>, vector<256x256xbf16>, "
        "vector<64x256xf32>) -> vector<64x256xf32>\n",
        MOSAIC,
        BAD_LHS,
        ("drop precision=lax.Precision.HIGHEST", "give it float32 operands"),
    ),
    # math.log1p on bfloat16 on a v5e: the op and dtype worked out from the op shown
    (
        WRAPPER + "failed to legalize operation 'math.log1p'\n\nThe MLIR operation involved:\n"
        '  %5 = "math.log1p"(%4) <{fastmath = #arith.fastmath<none>}> : (vector<8x128xbf16>) '
        "-> vector<8x128xbf16>\n",
        MOSAIC,
        LEGALIZE,
        (
            "Here math.log1p has bfloat16 operands: compute it on x.astype(jnp.float32) and "
            "cast the result back with .astype(jnp.bfloat16)",
        ),
    ),
    # openxla/xla's catalogue (error 2xxx): arith.mulf, without the op shown
    (
        "INTERNAL: Mosaic failed to compile TPU kernel: failed to legalize operation "
        "'arith.mulf'\n",
        MOSAIC,
        LEGALIZE,
        ("Compute in a 32-bit dtype and cast back",),
    ),
    # vllm-project/tpu-inference's gmm_v2 on FP4 experts on v6e
    (
        "MosaicError: INTERNAL: Mosaic failed to compile TPU kernel: Unsupported type "
        "'vector<8x128x8xf4E2M1FN>'\n",
        MOSAIC,
        NARROW_FLOAT,
        ("x.astype(jnp.float8_e4m3fn) loses nothing", "(4-bit floats: v7x)"),
    ),
    # openxla/xla's catalogue (error 2xxx): a kernel written by another release's Mosaic
    (
        "INVALID_ARGUMENT: Mosaic failed to compile TPU kernel: unregistered operation "
        "'tpu.wait_dma' found in dialect ('tpu') that does not allow unknown operations\n",
        MOSAIC,
        VERSION_SKEW,
        ("pip install -U 'jax[tpu]'", "jax[tpu]==0.7.1 pins libtpu==0.0.20.*"),
    ),
    # pytorch/helion's launcher, in XLA's words
    (
        "RuntimeError: XLA:TPU compile permanent error. Ran out of memory in memory space "
        "vmem. Estimated 268.96MB exceeds 67.11MB vmem capacity.\n",
        "Helion's VMEM estimate (pytorch/helion), not libtpu",
        HELION,
        ("Helion's own estimate", "block_sizes of its helion.Config"),
    ),
    # erfanzar/EasyDeL#78: a whole program over a v2-8's HBM, XLA's error E1000
    (
        "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: XLA:TPU compile permanent "
        "error. Ran out of memory in memory space hbm. Used 21.90G of 7.48G hbm. Exceeded hbm "
        "capacity by 14.42G.\n",
        "libtpu (XLA's TPU compiler)",
        HBM,
        ("E1000", "donate_argnums", "v5p: 95 GiB"),
    ),
    # XLA's Triton emitter, its figures cut off by the log
    (
        "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Shared memory size limit "
        "exceeded\n",
        "XLA's GPU compiler (its Triton emitter)",
        TRITON_SHARED_MEMORY,
        ("fewer pipeline stages", "101376 bytes"),
    ),
]


@pytest.mark.parametrize(("paste", "compiler", "record_id", "advice"), FAMILIES)
def test_each_family_is_answered_by_its_record_and_its_advice(
    paste: str, compiler: str, record_id: str, advice: tuple[str, ...]
) -> None:
    [said] = compiler_messages(paste)
    assert (said.compiler, said.record_id) == (compiler, record_id)
    for words in advice:
        assert words in said.why, words


def test_a_skews_symptom_takes_the_skews_own_solutions_with_its_own_meaning() -> None:
    """The unregistered op is explained as such, then answered by the version check's record
    (the pins of jax[tpu] that agree with libtpu), not by a copy of them."""
    [said] = compiler_messages(FAMILIES[4][0])
    assert said.why.startswith("The Mosaic that read the kernel (libtpu's copy, or jaxlib's)")
    assert "Install jax, jaxlib and libtpu from one release together" in said.why


def test_xlas_own_vmem_report_is_still_libtpus() -> None:
    """The words Helion copies, with libtpu's own figures, are libtpu's."""
    paste = (
        "RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in memory "
        "space vmem. Used 65.05M of 64.00M vmem. Exceeded vmem capacity by 1.05M.\n"
    )
    [said] = compiler_messages(paste)
    assert (said.compiler, said.record_id) == ("libtpu (XLA's TPU compiler)", XLA_VMEM)


NEAR_MISSES = [
    # an unregistered op of another dialect, in an MLIR tool's own words
    "error: unregistered operation 'tfl.pseudo_const' found in dialect ('tfl')",
    # a bad type of some other compiler, not Mosaic's
    "error: bad lhs type +",
    # behind Mosaic's wrapper: a legalization failure of Mosaic's own op, not arithmetic's
    WRAPPER + "failed to legalize operation 'tpu.gather'",
    # behind it too: a 32-bit integer type, no narrow float the chip lacks
    WRAPPER + "Unsupported type 'vector<8x128xi32>'",
    # and a bad shape, not a bad type
    WRAPPER + "Bad lhs shape",
    # a VMEM capacity in a comment, not an estimate over it
    "# NOTE: v6e chip has 128M VMEM capacity, set this to 64M to avoid VMEM OOM",
    # shared memory talked about, nothing exceeded
    "the kernel uses 98304 bytes of shared memory per block",
]


@pytest.mark.parametrize("paste", NEAR_MISSES)
def test_near_misses_reach_no_record_of_these_families(paste: str) -> None:
    found = {said.record_id for said in compiler_messages(paste)}
    assert not found & {rec for _, _, rec, _ in FAMILIES}


def test_a_legalization_without_the_op_shown_works_nothing_out() -> None:
    assert legalization("failed to legalize operation 'math.exp'") is None
    shown = "failed to legalize operation 'arith.addi'\n  %3 = \"arith.addi\"(%1, %2) : (i8, i8)"
    assert legalization(shown) is not None and "int8 operands" in str(legalization(shown))
    wide = "failed to legalize operation 'math.exp'\n  %3 = \"math.exp\"(%2) : (vector<8xf32>)"
    assert legalization(wide) is None  # already 32 bits: no dtype to widen to


def test_shared_memory_figures_told_in_prose_are_a_memory_report() -> None:
    """A report's prose (tokamax's Triton VJP on a 99 KiB card) gives the figures XLA's
    message lost; the message itself is still named."""
    paste = (
        "At head dimension 256 that tiling asks for 102784 bytes of\nshared memory, and the "
        "card has 101376, so it fails with `RESOURCE_EXHAUSTED:\nShared memory size limit "
        "exceeded`.\n"
    )
    [report] = find_overflows(paste)
    assert (report.backend, report.memory, report.requested, report.limit) == (
        "triton",
        "SMEM",
        102784,
        101376,
    )
    [said] = compiler_messages(paste)
    assert said.record_id == TRITON_SHARED_MEMORY
