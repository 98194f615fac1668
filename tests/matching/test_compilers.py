"""Messages JAX's source does not hold: the compilers' behind JAX's wrappers, MLIR's
verifier's, XLA's failed checks, and those a compiler or runtime prints whole; each from a
real report."""

from __future__ import annotations

import json
from functools import cache

import pytest

from app.jaxref.files import XLA_ERRORS_FILE
from app.matching.compiler_advice import (
    COMPILER_RECORD_FILES,
    COMPILER_RECORDS,
    CompilerRecord,
    compiler_records,
)
from app.matching.compilers import compiler_messages, misaligned_block, misaligned_slice

CASES = [
    # jax#30104: the message on the wrapper's own line
    (
        "XlaRuntimeError: INTERNAL: Mosaic failed to compile TPU kernel: Target does not "
        "support this comparison\n\nThe MLIR operation involved:\n",
        (1, 1),
        "libtpu (Mosaic's TPU compiler)",
        "Target does not support this comparison",
    ),
    # sgl-project/sglang-jax#1546: the message on the line after the wrapper
    (
        "Traceback (most recent call last):\n"
        "jax.errors.JaxRuntimeError: INVALID_ARGUMENT: Mosaic failed to compile TPU kernel:\n"
        "Failed to set window params for output 0: E2002: CompileTimeMosaicMisalignedBlock\n",
        (2, 3),
        "libtpu (Mosaic's TPU compiler)",
        "Failed to set window params for output 0: E2002: CompileTimeMosaicMisalignedBlock",
    ),
    # pytorch/xla#8797: quoted in inline code
    (
        "`RuntimeError: Bad StatusOr access: INTERNAL: Mosaic failed to compile TPU kernel: "
        "Slice shape along dimension 2 must be aligned to tiling (8), but is 2.`",
        (1, 1),
        "libtpu (Mosaic's TPU compiler)",
        "Slice shape along dimension 2 must be aligned to tiling (8), but is 2.",
    ),
    # jax#18595 (JAX 0.4.20): libtpu's earlier wording of the wrapper
    (
        "XlaRuntimeError: INVALID_ARGUMENT: Failed to compile a Mosaic module: 'tpu.matmul' op "
        "Unsupported input data type in matrix multiplication. (extra diagnostics trimmed...)",
        (1, 1),
        "libtpu (Mosaic's TPU compiler)",
        "'tpu.matmul' op Unsupported input data type in matrix multiplication. (extra "
        "diagnostics trimmed...)",
    ),
    # jax#38988
    (
        "RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in\n"
        "memory space vmem. Used 65.05M of 64.00M vmem.",
        (1, 1),
        "libtpu (XLA's TPU compiler)",
        "Ran out of memory in",
    ),
]


@pytest.mark.parametrize(("paste", "lines", "compiler", "message"), CASES)
def test_a_compilers_message_is_read_from_behind_jaxs_wrapper(
    paste: str, lines: tuple[int, int], compiler: str, message: str
) -> None:
    """Each at the wrapper's line and at the message's."""
    [said] = compiler_messages(paste)
    assert (said.line, said.message_line) == lines
    assert (said.compiler, said.message) == (compiler, message)
    assert "libtpu" in said.why


ADVISED = [
    # sgl-project/sglang-jax#1546: a block of 8 rows for a bfloat16 operand tiled by 16
    (
        "jax.errors.JaxRuntimeError: INVALID_ARGUMENT: Mosaic failed to compile TPU kernel:\n"
        "Failed to set window params for output 0: E2002: "
        "CompileTimeMosaicMisalignedBlockAndTiling:\n",
        "16 for 16-bit",
    ),
    # the same with its figures, on the lines after: the block worked out
    (
        "jax.errors.JaxRuntimeError: INVALID_ARGUMENT: Mosaic failed to compile TPU kernel:\n"
        "Failed to set window params for output 0: E2002: "
        "CompileTimeMosaicMisalignedBlockAndTiling:\n"
        "Operand of shape (..., 16, 256) has tiling (16, 128), but its block shape (..., 8, 256)\n"
        "is not divisible by tiling evenly nor matches the full shape\n",
        "Here the block fits with its second-to-last dimension 16 instead of 8 (tiling (16, "
        "128), the array's last two dimensions (16, 256))",
    ),
    # jax#37367
    (
        "jax.errors.JaxRuntimeError: INTERNAL: Mosaic failed to compile TPU kernel: E2001: "
        "CompileTimeMosaicUnsupportedRhsType: Unsupported matmul RHS type on target: "
        "vector<128x128xi8>\n",
        "preferred_element_type=jnp.float32",
    ),
    # jax#23989, and jax#18595's earlier wrapper with the op's words
    (
        "XlaRuntimeError: INTERNAL: Mosaic failed to compile TPU kernel: Unsupported input "
        "data type in matrix multiplication.\n",
        "Cast both operands to float32",
    ),
    (
        "XlaRuntimeError: INVALID_ARGUMENT: Failed to compile a Mosaic module: 'tpu.matmul' op "
        "Unsupported input data type in matrix multiplication. (extra diagnostics trimmed...)",
        "Cast both operands to float32",
    ),
    # jax#30104
    (
        "XlaRuntimeError: INTERNAL: Mosaic failed to compile TPU kernel: Target does not "
        "support this comparison\n",
        "x.astype(jnp.float32) < y.astype(jnp.float32)",
    ),
    # jax#29278
    (
        "MosaicError: INTERNAL: Mosaic failed to compile TPU kernel: Unsupported type in "
        "transpose\n",
        "x.astype(jnp.int32).T",
    ),
    # jax#28305
    (
        "XlaRuntimeError: INTERNAL: Mosaic failed to compile TPU kernel: failed to legalize "
        "operation 'arith.addi'\n",
        "Compute in a 32-bit dtype",
    ),
    # vllm-project/tpu-inference#2506
    (
        "INVALID_ARGUMENT: Mosaic failed to compile TPU kernel: Failed to verify layout for "
        "Mosaic kernel operand 9: XLA layout ({0:S(1)}) does not match Mosaic layout "
        "({0:T(128)S(1)}) for an operand of shape s32[0].\n",
        "pass no zero-size operand",
    ),
    # pytorch/xla#8797: a slice of a ref 2 wide along a dimension tiled by 8, in inline code
    (
        "It cannot work,  got this error `RuntimeError: Bad StatusOr access: INTERNAL: Mosaic "
        "failed to compile TPU kernel: Slice shape along dimension 2 must be aligned to tiling "
        "(8), but is 2.`",
        "Here the slice fits with a size of 8 instead of 2 along dimension 2 (a multiple of its "
        "tiling, 8)",
    ),
    # pytorch/helion#3204, the wrapper's words retyped in lower case
    (
        "```\nmosaic failed to compile TPU kernel: Invalid vector type for load\n"
        '%424 = "tpu.load"(...) : (memref<1x1024x256xf16, ...>) -> vector<8x128x2xf16>\n```\n',
        "use bfloat16 in TPU kernels rather than float16",
    ),
]


@pytest.mark.parametrize(("paste", "advice"), ADVISED)
def test_libtpus_own_messages_say_what_to_do(paste: str, advice: str) -> None:
    """libtpu's messages that real reports explain say what to do, not only whose they are."""
    [said] = compiler_messages(paste)
    assert said.compiler == "libtpu (Mosaic's TPU compiler)"
    assert said.why.startswith("libtpu's Mosaic compiler said it")
    assert advice in said.why


@pytest.mark.parametrize(
    ("details", "block"),
    [
        (  # both dimensions off: the multiples nearest each, or the whole dimension
            "Operand of shape (100, 1000) has tiling (8, 128), but its block shape (12, 200)",
            "Here the block fits with its second-to-last dimension 8, 16 or 100 instead of 12; "
            "its last dimension 128, 256 or 1000 instead of 200 (tiling (8, 128), the array's "
            "last two dimensions (100, 1000))",
        ),
        (  # smaller than one tile: the whole dimension alone
            "Operand of shape (..., 4, 1024) has tiling (8, 128), but its block shape (..., 2, "
            "1024)",
            "Here the block fits with its second-to-last dimension 4 instead of 2 (tiling (8, "
            "128), the array's last two dimensions (4, 1024))",
        ),
        (  # nothing off: nothing to say
            "Operand of shape (64, 1024) has tiling (8, 128), but its block shape (16, 1024)",
            None,
        ),
    ],
)
def test_e2002s_block_is_worked_out_from_its_figures(details: str, block: str | None) -> None:
    assert misaligned_block(details) == block


@pytest.mark.parametrize(
    ("message", "size"),
    [
        (  # pytorch/xla#8797: rows, smaller than one tile
            "Slice shape along dimension 2 must be aligned to tiling (8), but is 2.",
            "Here the slice fits with a size of 8 instead of 2 along dimension 2 (a multiple of "
            "its tiling, 8), starting at a multiple of 8, or with the ref's whole size along it",
        ),
        (  # a DMA of one row of a ref of two rows (openxla/xla's docs, error 2xxx)
            "Slice shape along dimension 1 must be aligned to tiling (2), but is 1.at location: "
            'loc("dma_start:"',
            "Here the slice fits with a size of 2 instead of 1 along dimension 1 (a multiple of "
            "its tiling, 2), starting at a multiple of 2, or with the ref's whole size along it",
        ),
        (  # lanes, past one tile: the multiples on either side
            "Slice shape along dimension 1 must be aligned to tiling (128), but is 200.",
            "Here the slice fits with a size of 128 or 256 instead of 200 along dimension 1 (a "
            "multiple of its tiling, 128), starting at a multiple of 128, or with the ref's "
            "whole size along it",
        ),
        # a size that is a multiple already: nothing to work out
        ("Slice shape along dimension 0 must be aligned to tiling (8), but is 16.", None),
    ],
)
def test_a_slices_size_is_worked_out_from_its_figures(message: str, size: str | None) -> None:
    assert misaligned_slice(message) == size


def test_a_misaligned_slice_says_what_the_tiling_is_and_how_to_fit_it() -> None:
    """The advice tells a slice of a ref from a load, names the tiles and the ways out."""
    paste = (
        "INTERNAL: Mosaic failed to compile TPU kernel: Slice shape along dimension 2 must be "
        "aligned to tiling (128), but is 64.\n"
    )
    [said] = compiler_messages(paste)
    for words in (
        "A slice of a ref",
        "128 lanes in the last",
        "8 rows of 32-bit data, 16 of 16-bit and 32 of 8-bit",
        "pltpu.async_copy",
        "Slice a multiple of the tiling",
        "a size of 128 instead of 64",
    ):
        assert words in said.why, words


def test_a_libtpu_message_no_report_explains_says_only_whose_it_is() -> None:
    paste = (
        "XlaRuntimeError: INTERNAL: Mosaic failed to compile TPU kernel: All memref arguments "
        "should use the TiledLayoutAttr for layout\n"
    )
    [said] = compiler_messages(paste)
    assert said.why.startswith("no release of JAX that errata mined holds it")


def test_a_paste_without_a_wrapper_has_no_compilers_message() -> None:
    assert compiler_messages("ValueError: Target does not support this comparison") == []


VERIFIED = [
    # jax#23884: the bindings' MLIRError, its diagnostic on the next line after a location
    (
        "jaxlib.mlir._mlir_libs._site_initialize.<locals>.MLIRError: Verification failed:\n"
        'error: "/swap"(callsite("kernel"("/home/ayx/4.py":12:4) at "<module>"'
        "(\"/home/ayx/4.py\":21:4))): 'vector.shape_cast' op operand #0 must be vector of any "
        "type values, but got 'i32'\n"
        ' note: "/swap"(callsite("kernel"("/home/ayx/4.py":12:4))): see current operation: '
        '%4 = "vector.shape_cast"(%0) : (i32) -> vector<1xi32>\n',
        (1, 2),
        "'vector.shape_cast' op operand #0 must be vector of any type values, but got 'i32'",
        "upstream MLIR's (vector dialect)",
    ),
    # jax#22817: what that means, a scalar stored into a VMEM ref
    (
        'MLIRError: Verification failed:\nerror: "/swap"(callsite("iota_kernel"("<ipython-input'
        "-18-1144262d6dee>\":3:2))): 'vector.shape_cast' op operand #0 must be vector of any "
        "type values, but got 'i32'\n",
        (1, 2),
        "'vector.shape_cast' op operand #0 must be vector of any type values, but got 'i32'",
        "put the ref in SMEM",
    ),
    # jax#26034: a ref indexed at a float32 value
    (
        'MLIRError: Verification failed:\nerror: "/swap"(callsite("grid_filler_kernel"("/mnt/'
        "hello_grid.py\":11:0))): 'arith.index_cast' op operand #0 must be signless-integer-"
        "like or memref of signless-integer, but got 'f32'\n",
        (1, 2),
        "'arith.index_cast' op operand #0 must be signless-integer-like or memref of "
        "signless-integer, but got 'f32'",
        "Index with integers",
    ),
    # the same, as JAX 0.10.2's Pallas re-raises it, in a newer MLIR's words
    (
        "VerificationError: Pallas encountered an internal verification error. Please file a "
        "bug at https://github.com/jax-ml/jax/issues/new/choose. Error details: "
        "'arith.index_cast' op operand #0 must be signless-non-zero-bitwidth-integer-like or "
        "memref of signless-integer, but got 'f32'\n",
        (1, 1),
        "'arith.index_cast' op operand #0 must be signless-non-zero-bitwidth-integer-like or "
        "memref of signless-integer, but got 'f32'",
        "Index with integers",
    ),
    # jax#38987: Pallas's VerificationError, the details two lines on, cut by the log
    (
        "```\nPallas encountered an internal verification error. Please file a bug at\n"
        "https://github.com/jax-ml/jax/issues. Error details:\n"
        "'vector.extract_strided_slice' op expected strides to b[e ...]\n```",
        (2, 4),
        "'vector.extract_strided_slice' op expected strides to b[e ...]",
        "upstream MLIR's (vector dialect)",
    ),
    # an op of Mosaic's own dialect, in a wording no mined release has
    (
        "MLIRError: Verification failed:\nerror: loc(unknown): 'tpu.matmul' op lhs and rhs "
        "disagree\n",
        (1, 2),
        "'tpu.matmul' op lhs and rhs disagree",
        "Mosaic's own tpu dialect",
    ),
]


@pytest.mark.parametrize(("paste", "lines", "message", "why"), VERIFIED)
def test_mlirs_verifier_is_named_by_the_op_it_rejected(
    paste: str, lines: tuple[int, int], message: str, why: str
) -> None:
    """Each at the line of the verifier's words and at the line of its diagnostic."""
    [said] = compiler_messages(paste)
    assert (said.line, said.message_line) == lines
    assert (said.compiler, said.message) == ("MLIR's verifier", message)
    assert why in said.why


def test_the_verifiers_words_without_an_op_diagnostic_near_them_are_no_message() -> None:
    """A sentence saying verification failed, and a diagnostic too far below the words to
    be theirs."""
    assert compiler_messages("Verification failed: the checksum did not match") == []
    far = "MLIRError: Verification failed:\n" + "x\n" * 5 + "'vector.load' op bad\n"
    assert compiler_messages(far) == []
    near = "MLIRError: Verification failed:\n" + "x\n" * 3 + "'vector.load' op bad\n"
    assert [said.message for said in compiler_messages(near)] == ["'vector.load' op bad"]


def test_a_messages_own_closing_quote_is_kept_and_a_spans_is_not() -> None:
    """jax#29092: the op's name ends in a quote of its own; pytorch/xla#8797's inline code
    closes with a backtick that is not the message's."""
    own = "MosaicError: INTERNAL: Mosaic failed to compile TPU kernel: failed to legalize "
    own += "operation 'tpu.gather'"
    assert compiler_messages(own)[0].message == "failed to legalize operation 'tpu.gather'"
    assert compiler_messages(f"`{own}`")[0].message.endswith("'tpu.gather'")


def test_a_failed_check_of_xlas_is_named_by_its_file_and_line() -> None:
    """jax#25212: a Triton module XLA's GPU compiler could not parse, in an absl log line;
    a sentence about a RET_CHECK names no file and is none."""
    paste = (
        '[ RUN      ] CompatTest.test_triton_add_one\nloc("-":0:0): error: expected '
        "mlir::arith::DenormalModeAttr, but got: #arith.fastmath<none>\n"
        "2024-12-02 10:44:12.371269: E external/xla/xla/status_macros.cc:55] INTERNAL: "
        "RET_CHECK failure (external/xla/xla/service/gpu/ir_emitter_unnested.cc:1388) "
        "triton_module Failed to parse Triton module: MLIR\n"
    )
    [said] = compiler_messages(paste)
    assert (said.line, said.compiler) == (3, "XLA (xla/service/gpu/ir_emitter_unnested.cc:1388)")
    assert said.message == "triton_module Failed to parse Triton module: MLIR"
    assert "XLA's C++" in said.why
    assert compiler_messages("the RET_CHECK failure went away on 0.4.36") == []


REPORTED = [
    # marin-community/marin#6636: a Mosaic GPU kernel in a container without CUDA's compilers
    (
        "UNAVAILABLE: No PTX compilation provider is available. Neither ptxas/nvlink nor "
        "nvjtlink is available.\nDriver compilation is enabled: 0\n",
        1,
        "XLA's GPU compiler",
        "No PTX compilation provider is available. Neither ptxas/nvlink nor nvjtlink is available.",
        "jax[cuda12]",
    ),
    # jax-ml/jax#25344: Triton's PTX for a ptxas of an older CUDA, under XLA's wrapper
    (
        "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: CustomCall failed: ptxas exited with "
        "non-zero error code 65280, output: ptxas /tmp/tempfile-a-784897-628d6ac249c58, line 5; "
        "fatal   : Unsupported .version 8.4; current version is '8.2'\n"
        "ptxas fatal   : Ptx assembly aborted due to errors\n",
        1,
        "ptxas (CUDA's PTX assembler)",
        "Unsupported .version 8.4; current version is '8.2'",
        "nvidia-cuda-nvcc-cu12",
    ),
    # vllm-project/tpu-inference#508: a VMEM report without its figures
    (
        "```\njaxlib._jax.XlaRuntimeError: RESOURCE_EXHAUSTED: Ran out of memory in memory "
        "space vmem \n```",
        2,
        "libtpu (XLA's TPU compiler)",
        "Ran out of memory in memory space vmem",
        "vmem_limit_bytes",
    ),
    # vllm#8318's SMEM report, its wrapper and figures cut off: SMEM's own advice
    (
        "RESOURCE_EXHAUSTED: Ran out of memory in memory space smem",
        1,
        "libtpu (XLA's TPU compiler)",
        "Ran out of memory in memory space smem",
        "Scalar-prefetch operands",
    ),
    # google-deepmind/weathernext#132: jaxlib and libtpu that do not go together
    (
        "`XlaRuntimeError: INTERNAL: Failed to deserialize the Mosaic module`",
        1,
        "libtpu (Mosaic's TPU compiler)",
        "Failed to deserialize the Mosaic module",
        "pip install -U 'jax[tpu]'",
    ),
    # jax-ml/jax#19350: Triton's tl.dot, called by JAX 0.4.23's Pallas lowering
    (
        '  File "/envs/pallas/lib/python3.10/site-packages/triton/language/semantic.py", line '
        "1254, in dot\n    and rhs.shape[1].value >= 16, \\\nAssertionError: All values in both "
        "first input shape ([constexpr[2], constexpr[4]]) and second input shape "
        "([constexpr[4], constexpr[8]]) must be >= 16!",
        3,
        "Triton (tl.dot)",
        "All values in both first input shape ([constexpr[2], constexpr[4]]) and second input "
        "shape ([constexpr[4], constexpr[8]]) must be >= 16!",
        "pad the blocks to 16",
    ),
    # jax-ml/jax#19453: Triton's tl.dot of bfloat16 and float32 under JAX 0.4.20's Pallas;
    # the frame's source line prints the same words, with the f-string's fields
    (
        '  File "/venv/lib/python3.10/site-packages/triton/language/semantic.py", line 1264, '
        'in dot\n    assert lhs.dtype == rhs.dtype, f"First input ({lhs.dtype}) and second '
        'input ({rhs.dtype}) must have the same dtype!"\nAssertionError: First input (bf16) '
        "and second input (fp32) must have the same dtype!\n",
        3,
        "Triton (tl.dot)",
        "First input (bf16) and second input (fp32) must have the same dtype!",
        "x.astype(y.dtype)",
    ),
    # jax-ml/jax#26799: Pallas's GPU kernels on Colab's T4
    (
        "```\nXlaRuntimeError: FAILED_PRECONDITION: Triton support is only enabled for Ampere "
        "GPUs (compute capability 8.0) and up, but got compute capability 7.5.\n```\n",
        2,
        "XLA's GPU compiler",
        "Triton support is only enabled for Ampere GPUs (compute capability 8.0) and up, but got "
        "compute capability 7.5.",
        "interpret=True",
    ),
    # jax-ml/jax#34689: Pallas on an AMD GPU, given to Mosaic GPU by JAX 0.9.0's default
    (
        "Pallas tests fail on AMD ROCm GPUs with the error:\n\n```\nValueError: invalid literal "
        "for int() with base 10: 'gfx950'\n```\n",
        4,
        "Python, in Mosaic GPU's _infer_arch",
        "invalid literal for int() with base 10: 'gfx950'",
        "backend='triton'",
    ),
    # jax-ml/jax#19825: Pallas's Triton kernels under jaxlib 0.4.24
    (
        "When I try to running a pallas kernel, I get an error:\n`LLVM ERROR: Trying to "
        "register different dialects for the same namespace: builtin`\n",
        2,
        "LLVM (MLIR's dialect registry)",
        "Trying to register different dialects for the same namespace: builtin",
        "jaxlib 0.4.25",
    ),
    # vllm-project/tpu-inference#3194: libtpu's error code, in a summary of failed tests
    (
        "All 8 failures are `E1001 CompileTimeScopedVmemOom` in `jit(xpose_pipeline)`:\n",
        1,
        "libtpu (XLA's TPU compiler)",
        "E1001 CompileTimeScopedVmemOom",
        "vmem_limit_bytes",
    ),
    # pytorch/helion#2753: Mosaic's error code alone, in a pull request's description
    (
        "- eliminating Mosaic DMA verification crashes "
        "(`CompileTimeMosaicUnprovenMemoryAccessAlignment`) on tiny tensors.\n",
        1,
        "libtpu (Mosaic's TPU compiler)",
        "CompileTimeMosaicUnprovenMemoryAccessAlignment",
        "pl.multiple_of",
    ),
    # jax-ml/jax-triton#225: XLA's runtime, the same error logged again and again
    (
        "2023-08-28 03:06:51.319566: W external/xla/xla/service/gpu/runtime/support.cc:58] "
        "Intercepted XLA runtime error:\nINTERNAL: Shared memory requested exceeds device "
        "resources.\nINTERNAL: Failed to execute XLA Runtime executable: run time error: "
        "custom call 'xla.gpu.custom_call' failed: Shared memory requested exceeds device "
        "resources.; current tracing scope: custom-call.371\n",
        2,
        "XLA's GPU runtime",
        "Shared memory requested exceeds device resources.",
        "num_stages",
    ),
]


@pytest.mark.parametrize(("paste", "line", "compiler", "message", "advice"), REPORTED)
def test_a_message_a_compiler_prints_whole_names_itself_once(
    paste: str, line: int, compiler: str, message: str, advice: str
) -> None:
    [said] = compiler_messages(paste)
    assert (said.line, said.compiler, said.message) == (line, compiler, message)
    assert advice in said.why


def test_a_whole_message_behind_a_wrapper_is_the_wrappers_alone() -> None:
    """vllm#8318: XLA's TPU wrapper holds the report; it is listed once, with what the
    report says to do."""
    paste = (
        "RuntimeError: Bad StatusOr access: RESOURCE_EXHAUSTED: XLA:TPU compile permanent "
        "error. Ran out of memory in memory space smem. Used 1.00M of 1.00M smem."
    )
    [said] = compiler_messages(paste)
    assert said.compiler == "libtpu (XLA's TPU compiler)"
    assert said.message.startswith("Ran out of memory in memory space smem.")
    assert "Scalar-prefetch operands" in said.why  # what the message says of itself


# --- the curated records of compilers' messages: each reachable from a paste ----------------

WHOLE = compiler_records("whole")
WRAPPED = compiler_records("wrapped")
VERIFIER = compiler_records("verifier")


@cache
def _messages() -> dict[str, str]:
    """Each record's own message, by id: the curated files', and XLA's catalogue's."""
    curated = [
        json.loads(path.read_text(encoding="utf-8"))["record"]
        for path in COMPILER_RECORDS.glob(COMPILER_RECORD_FILES)
    ]
    lines = map(json.loads, XLA_ERRORS_FILE.read_text(encoding="utf-8").splitlines())
    mined = [line["record"] for line in lines if "record" in line]
    return {record["id"]: record["errorMessage"] for record in [*curated, *mined]}


def _message(record: CompilerRecord) -> str:
    return _messages()[record.record_id]


@pytest.mark.parametrize("record", WHOLE, ids=lambda r: r.record_id)
def test_a_message_printed_whole_is_answered_with_its_records_advice(
    record: CompilerRecord,
) -> None:
    """Alone in a log line, and behind a compiler's wrapper, where it names itself."""
    message = _message(record)
    for paste, line in (
        (f"E1205 12:00:01 runner.py:88] {message}\n", 1),
        (
            f"Traceback (most recent call last):\n  ...\nXlaRuntimeError: INTERNAL: Mosaic failed "
            f"to compile TPU kernel: {message}\n",
            3,
        ),
    ):
        [said] = compiler_messages(paste)
        assert (said.line, said.compiler, said.why) == (line, record.compiler, record.advice)


@pytest.mark.parametrize("record", WRAPPED, ids=lambda r: r.record_id)
def test_a_libtpu_message_behind_its_wrapper_is_answered_with_its_records_advice(
    record: CompilerRecord,
) -> None:
    wrapper = "jax.errors.JaxRuntimeError: INTERNAL: Mosaic failed to compile TPU kernel"
    paste = f"{wrapper}: {_message(record)}\n"
    [said] = compiler_messages(paste)
    assert said.compiler == "libtpu (Mosaic's TPU compiler)"
    advice = "libtpu's Mosaic compiler said it; it ships in libtpu, not in JAX's source. "
    advice += record.advice
    # what the figures in the message work out follows (a slice's sizes)
    assert said.why == advice or said.why.startswith(f"{advice}. Here the ")


@pytest.mark.parametrize("record", VERIFIER, ids=lambda r: r.record_id)
def test_an_upstream_ops_diagnostic_is_answered_with_its_records_advice(
    record: CompilerRecord,
) -> None:
    paste = f"MLIRError: Verification failed:\nerror: loc(unknown): {_message(record)}\n"
    [said] = compiler_messages(paste)
    assert said.compiler == "MLIR's verifier"
    assert said.why.endswith(f"which is not JAX's source. {record.advice}")
    assert said.why.startswith(f"'{record.op}' is upstream MLIR's")


def test_the_answer_is_the_records_documentation_then_its_solutions_word_for_word() -> None:
    [said] = compiler_messages("RESOURCE_EXHAUSTED: Ran out of memory in memory space vmem\n")
    assert said.why == (
        "the TPU compiler's report of a kernel over its VMEM, here without the figures; it "
        "ships in libtpu, not in JAX's source. Shrink the block shapes (Pallas double-buffers "
        "every input and output block) or raise the scoped limit with "
        "pltpu.CompilerParams(vmem_limit_bytes=…)"
    )


def test_an_e2002_block_is_worked_out_as_its_record_says() -> None:
    """The record of E2002 says its figures work out a block (``workOut``)."""
    [e2002] = [record for record in WRAPPED if record.work_out == "misalignedBlock"]
    paste = ADVISED[1][0]
    [said] = compiler_messages(paste)
    assert said.why.startswith(
        "libtpu's Mosaic compiler said it; it ships in libtpu, not in JAX's source. "
        + e2002.advice
        + ". Here the block fits"
    )
