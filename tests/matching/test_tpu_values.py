"""The values Pallas TPU errors state, typed for the TPU engine, and the texts that state none."""

from __future__ import annotations

import pytest

from app.matching.tpu_values import (
    MAX_CHIP_NAMES,
    MAX_READ,
    KernelSource,
    TpuBlockValues,
    TpuDynamicOffset,
    TpuMatmulValues,
    TpuTilingValues,
    TpuVmemValues,
    find_chip,
    read_tpu_values,
)

from .catalog import PASTES

MIB = 1 << 20
REPRO = "/home/user/repro.py"


def paste(name: str) -> str:
    """A fixture paste without its header (the comment lines saying where it came from)."""
    lines = (PASTES / name).read_text().splitlines(keepends=True)
    while lines and lines[0].startswith("#"):
        lines.pop(0)
    return "".join(lines)


def test_a_block_off_the_8_by_128_tiles_is_read_once_with_the_kernels_line() -> None:
    """JAX 0.10.2 on the CPU, lowering for TPU; the message is printed twice (the chained
    JaxStackTraceBeforeTransformation and the error itself) and read once."""
    reading = read_tpu_values(paste("tpu-block-not-aligned.txt"))
    [block] = reading.values
    assert isinstance(block, TpuBlockValues)
    assert (block.rule, block.block_shape, block.array_shape) == (
        "tiles-8-128",
        (100, 100),
        (256, 256),
    )
    assert (block.origin, block.rank1, block.bit_width) == ("args[0]", False, None)
    assert block.memory_space == "<MemorySpace.DEFAULT: 'default'>"
    assert block.kernel == KernelSource("copy_kernel", REPRO, 6)
    assert reading.frame is not None and reading.frame.line == 21
    assert reading.chip is None  # a lowering on the CPU names no chip


@pytest.mark.parametrize(
    ("name", "block", "array", "bits"),
    [
        ("tpu-rank1-block.txt", (500,), (4000,), 32),
        ("tpu-int4-rank1-block.txt", (512,), (8192,), 4),
    ],
)
def test_a_rank_1_block_gives_the_bit_width_its_wording_states(
    name: str, block: tuple[int, ...], array: tuple[int, ...], bits: int
) -> None:
    [value] = read_tpu_values(paste(name)).values
    assert isinstance(value, TpuBlockValues) and value.rank1
    assert (value.block_shape, value.array_shape, value.bit_width) == (block, array, bits)


def test_an_int8_block_of_4_rows_is_read() -> None:
    [value] = read_tpu_values(paste("tpu-int8-block-rows.txt")).values
    assert isinstance(value, TpuBlockValues)
    assert (value.rule, value.block_shape, value.array_shape) == (
        "tiles-8-128",
        (4, 256),
        (64, 256),
    )


@pytest.mark.parametrize("release", ["0.4.35", "0.6.0"])
@pytest.mark.parametrize(
    ("name", "rule", "block", "array", "bits"),
    [
        ("block-not-aligned", "tiles-8-128", (100, 100), (256, 256), None),
        ("int8-block-rows", "tiles-8-128", (4, 256), (64, 256), None),
        ("rank1-block", "rank-1", (500,), (4000,), 32),
        ("int4-rank1-block", "rank-1", (512,), (8192,), 4),
    ],
)
def test_the_same_blocks_refused_by_older_releases_are_read_alike(
    release: str,
    name: str,
    rule: str,
    block: tuple[int, ...],
    array: tuple[int, ...],
    bits: int | None,
) -> None:
    """Captured with JAX 0.4.35 and 0.6.0: plain integers for the block, the memory space
    printed as None, and the rank-1 rule's older wording (a multiple of the tiling size)."""
    [value] = read_tpu_values(paste(f"tpu-{name}-{release}.txt")).values
    assert isinstance(value, TpuBlockValues)
    assert (value.rule, value.block_shape, value.array_shape, value.bit_width) == (
        rule,
        block,
        array,
        bits,
    )
    assert value.memory_space == "None"
    assert value.kernel == KernelSource("copy_kernel", REPRO, 6)


def test_a_bfloat16_accumulator_under_0_6_0_is_read_alike() -> None:
    [value] = read_tpu_values(paste("tpu-matmul-bf16-acc-0.6.0.txt")).values
    assert isinstance(value, TpuMatmulValues)
    assert (value.rule, value.acc_dtype, value.kernel) == (
        "acc-32-bit",
        "bfloat16",
        KernelSource("matmul_kernel", REPRO, 7),
    )


OLD_SENTENCE = (
    "ValueError: The Pallas TPU lowering currently requires that the last two dimensions of "
    "your block shape are divisible by 8 and 128 respectively, or be equal to the respective "
    "dimensions of the overall array. "
)


@pytest.mark.parametrize(
    ("details", "block", "origin"),
    [
        # 0.4.31: no kernel named, ``Mapped`` for a squeezed dimension
        (
            "Block spec for inputs[0] has block shape (Mapped, 100), array shape (4, 256), and "
            "index_map returning [a, b], in memory space None.",
            (None, 100),
            "inputs[0]",
        ),
        # 0.6.0: plain integers, the kernel named
        (
            "Block spec for args[1] in pallas_call kernel at /home/user/k.py:3 has block shape "
            "(8, 100), array shape (64, 256), and index_map { lambda ; a:i32[]. let  in (a, 0) "
            "}, in memory space None.",
            (8, 100),
            "args[1]",
        ),
        # 0.7 on: a squeezed dimension and an Element one
        (
            "Block spec for outputs[0] in pallas_call k at k.py:9 has block shape (Squeezed(), "
            "Element(block_size=4, padding=(0, 0)), Blocked(block_size=100)), array shape (2, "
            "64, 256), and index_map { lambda ; a:i32[]. let  in (a, 0, 0) }, in memory space "
            "<MemorySpace.DEFAULT: 'default'>.",
            (None, 4, 100),
            "outputs[0]",
        ),
    ],
)
def test_each_releases_printing_of_a_block_shape_is_read(
    details: str, block: tuple[int | None, ...], origin: str
) -> None:
    [value] = read_tpu_values(OLD_SENTENCE + details).values
    assert isinstance(value, TpuBlockValues)
    assert (value.block_shape, value.origin) == (block, origin)


def test_the_rank_1_wording_before_0_9_2_gives_the_bit_width_too() -> None:
    text = (
        "ValueError: The Pallas TPU lowering currently requires that rank 1 block shapes, "
        "either 1) the first (and only) dimension of the block shape is equal to the first "
        "(and only) dimension of the array shape, or 2) the first (and only) dimension of the "
        "block shape is a multiple of the tiling size (256 = 128 * (32 // 16)) of the array "
        "shape. Block spec for args[0] in pallas_call k at k.py:1 has block shape (100,), "
        "array shape (1000,), and index_map { lambda ; a:i32[]. let  in (a,) }, in memory "
        "space None."
    )
    [value] = read_tpu_values(text).values
    assert isinstance(value, TpuBlockValues)
    assert (value.rule, value.block_shape, value.bit_width) == ("rank-1", (100,), 16)


def test_the_dtype_of_a_block_comes_from_the_code_the_paste_shows() -> None:
    text = (
        "x = jax.ShapeDtypeStruct((256, 256), jnp.bfloat16)\n"
        + OLD_SENTENCE
        + "Block spec for args[0] in pallas_call k at k.py:1 has block shape (100, 100), array "
        "shape (256, 256), and index_map { lambda ; a:i32[]. let  in (a, 0) }, in memory space "
        "None."
    )
    [value] = read_tpu_values(text).values
    assert isinstance(value, TpuBlockValues) and value.dtype == "bfloat16"


@pytest.mark.parametrize(
    ("name", "operand", "shape", "tiling", "block", "dtype"),
    [
        ("tpu-e2002-int4-rows.txt", "input 0", (256, 256), (64, 128), (32, 256), None),
        ("tpu-e2002-int8-rows.txt", "input 1", (64, 256), (32, 128), (8, 256), "int8"),
    ],
)
def test_e2002_gives_the_operand_its_tiling_and_the_block(
    name: str,
    operand: str,
    shape: tuple[int, ...],
    tiling: tuple[int, int],
    block: tuple[int, ...],
    dtype: str | None,
) -> None:
    [value] = read_tpu_values(paste(name)).values
    assert isinstance(value, TpuTilingValues)
    assert (value.operand, value.operand_shape, value.tiling, value.block_shape) == (
        operand,
        shape,
        tiling,
        block,
    )
    assert value.leading_elided and value.dtype == dtype


def test_e1001_at_the_default_limit() -> None:
    reading = read_tpu_values(paste("tpu-e1001-default-limit.txt"))
    [value] = reading.values
    assert isinstance(value, TpuVmemValues)
    assert (value.report, value.requested, value.limit, value.over) == (
        "scoped",
        32 * MIB,
        16 * MIB,
        16 * MIB,
    )
    assert value.vmem_limit_bytes is None and not value.exact
    assert reading.frame is not None and reading.frame.source == "out = scale(x)"


def test_e1001_under_an_explicit_limit_gives_the_limit_blocks_and_dtype() -> None:
    reading = read_tpu_values(paste("tpu-e1001-explicit-limit.txt"))
    [value] = reading.values
    assert isinstance(value, TpuVmemValues)
    assert (value.requested, value.limit, value.vmem_limit_bytes) == (8 * MIB, 2 * MIB, 2 * MIB)
    assert (value.block_shapes, value.dtype) == (((512, 1024), (512, 1024)), "float32")
    assert reading.chip == "v5e"


def test_xlas_allocation_gives_exact_bytes_and_the_allocations_shape() -> None:
    [value] = read_tpu_values(paste("tpu-vmem-allocation.txt")).values
    assert isinstance(value, TpuVmemValues)
    assert (value.report, value.requested, value.limit, value.exact) == (
        "allocation",
        268435456,
        134217728,
        True,
    )
    assert (value.allocation_shape, value.allocation_dtype) == ((8192, 8192), "float32")
    assert value.vmem_limit_bytes == 128 * MIB


def test_a_vmem_report_without_figures_is_not_read() -> None:
    """vllm-project/tpu-inference#508: nothing to compute from."""
    text = "jaxlib._jax.XlaRuntimeError: RESOURCE_EXHAUSTED: Ran out of memory in memory space vmem"
    assert read_tpu_values(text).values == ()


@pytest.mark.parametrize(
    ("written", "limit"),
    [
        ("vmem_limit_bytes=64 * 1024 * 1024", 64 * MIB),
        ("vmem_limit_bytes = 1 << 26", 64 * MIB),
        ("vmem_limit_bytes=2**27", 128 * MIB),
        ("vmem_limit_bytes=100_000_000", 100_000_000),
        ("'vmem_limit_bytes': 32 * 2**20", 32 * MIB),
        ("LIBTPU_INIT_ARGS=--xla_tpu_scoped_vmem_limit_kib=65536", 64 * MIB),
        ("vmem_limit_bytes=2**2**40", None),  # past any VMEM: not computed
        ("vmem_limit_bytes=1 << 1000", None),
        ("vmem_limit_bytes=None", None),
    ],
)
def test_the_vmem_limit_the_paste_sets(written: str, limit: int | None) -> None:
    text = (
        f"{written}\nScoped allocation with size 8.00M and limit 2.00M exceeded scoped vmem limit"
    )
    [value] = read_tpu_values(text).values
    assert isinstance(value, TpuVmemValues) and value.vmem_limit_bytes == limit


def test_e2003_gives_the_dimension_the_multiple_and_the_ref() -> None:
    [value] = read_tpu_values(paste("tpu-e2003-dynamic-lane.txt")).values
    assert isinstance(value, TpuDynamicOffset)
    assert (value.error_code, value.op, value.dimension, value.multiple) == (
        "E2003",
        "vector.load",
        1,
        128,
    )
    assert (value.ref_shape, value.ref_dtype, value.axis) == ((8, 512), "float32", "lane")


def test_the_older_wording_of_an_unproven_offset_has_no_code_and_no_ref() -> None:
    """jax#36770's words behind the wrapper of JAX 0.8.1 and before."""
    text = (
        "MosaicError: INTERNAL: Mosaic failed to compile TPU kernel: cannot statically prove "
        "that index in dimension 0 is a multiple of 8"
    )
    [value] = read_tpu_values(text).values
    assert isinstance(value, TpuDynamicOffset)
    assert (value.error_code, value.op, value.dimension, value.multiple, value.axis) == (
        None,
        None,
        0,
        8,
        None,
    )


def test_a_bfloat16_accumulator_gives_the_operands_dtypes_and_the_kernels_line() -> None:
    """JAX 0.10.2's verifier on the CPU: the MLIRError names the kernel's line, the
    VerificationError after it does not; the two are read as one."""
    reading = read_tpu_values(paste("tpu-matmul-bf16-acc.txt"))
    [value] = reading.values
    assert isinstance(value, TpuMatmulValues)
    assert (value.rule, value.lhs_dtype, value.rhs_dtype, value.acc_dtype) == (
        "acc-32-bit",
        "bfloat16",
        "bfloat16",
        "bfloat16",
    )
    assert (value.lhs_shape, value.rhs_shape) == ((512, 512), (512, 256))
    assert value.kernel == KernelSource("matmul_kernel", REPRO, 7)
    assert reading.frame is not None and reading.frame.source is not None
    assert "@" in reading.frame.source


def test_an_int8_matmul_a_v4_refuses() -> None:
    reading = read_tpu_values(paste("tpu-e2001-int8-matmul-v4.txt"))
    [value] = reading.values
    assert isinstance(value, TpuMatmulValues)
    assert (value.rule, value.error_code) == ("unsupported-rhs-type", "E2001")
    assert (value.lhs_dtype, value.rhs_dtype, value.acc_dtype) == ("int8", "int8", "int32")
    assert reading.chip == "v4"


def test_an_unsupported_rhs_type_without_the_operation_gives_the_rhs_alone() -> None:
    """jax#37367's message as people quote it, the operation after it left out."""
    text = "INTERNAL: Mosaic failed to compile TPU kernel: E2001: "
    text += "CompileTimeMosaicUnsupportedRhsType: Unsupported matmul RHS type on target: "
    text += "vector<128x128xi8>"
    [value] = read_tpu_values(text).values
    assert isinstance(value, TpuMatmulValues)
    assert (value.rule, value.lhs_dtype, value.rhs_dtype, value.rhs_shape) == (
        "unsupported-rhs-type",
        None,
        "int8",
        (128, 128),
    )


def test_a_bad_lhs_type_whose_operation_a_log_prefix_broke_across_lines() -> None:
    """jax#21408's operation, its operands wrapped onto a "[rank0]: " line."""
    [value] = read_tpu_values(paste("tpu-bad-lhs-type-logged.txt")).values
    assert isinstance(value, TpuMatmulValues)
    assert (value.rule, value.lhs_dtype, value.rhs_dtype, value.acc_dtype) == (
        "bad-lhs-type",
        "bfloat16",
        "bfloat16",
        "float32",
    )
    assert (value.lhs_shape, value.rhs_shape) == ((512, 128), (128, 128))


def test_the_kernels_place_after_the_words() -> None:
    """jax#23989: libtpu's "at location: loc(…)" after the message names the kernel."""
    text = (
        "XlaRuntimeError: INTERNAL: Mosaic failed to compile TPU kernel: Unsupported input "
        'data type in matrix multiplication.\n\nat location: loc("/dot_general"(callsite('
        '"_splash_attention"("/pkgs/splash_attention_kernel.py":2277:0) at callsite('
        '"__call__"("/pkgs/splash_attention_kernel.py":2312:0))))\n'
    )
    [value] = read_tpu_values(text).values
    assert isinstance(value, TpuMatmulValues)
    assert value.rule == "unsupported-input-type"
    assert value.kernel == KernelSource(
        "_splash_attention", "/pkgs/splash_attention_kernel.py", 2277
    )


@pytest.mark.parametrize(
    ("text", "chip"),
    [
        ("Device kind: TPU v5 lite", "v5e"),
        ("TpuDevice(id=0, process_index=0, coords=(0,0,0), core_on_chip=0) TPU v6 lite", "v6e"),
        ("on a TPU v5e", "v5e"),
        ("device_kind='TPU v5'", "v5p"),
        ("jax.devices() -> [TPU7x]", "v7x"),
        ("gcloud ... --accelerator-type=v5litepod-8", "v5e"),
        ("a v6e-8 slice", "v6e"),
        ("tpu-v4-32", "v4"),
        ("on v5p, but not on v5e", "v5p"),  # the first named
    ],
)
def test_the_chip_a_paste_names(text: str, chip: str) -> None:
    assert find_chip(text) == chip


def test_a_chip_is_looked_for_among_the_first_names_like_one() -> None:
    """A paste of names like a chip's that name none ("TPU v4x") is not searched to its end."""
    assert find_chip("TPU v4x " * (MAX_CHIP_NAMES - 1) + "on a v6e") == "v6e"
    assert find_chip("TPU v4x " * MAX_CHIP_NAMES + "on a v6e") is None


@pytest.mark.parametrize(
    "text",
    [
        "XLA:TPU compile permanent error",
        "Mosaic failed to compile TPU kernel",
        "request id is a uuid v4",
        "jax v0.4.35 on a GPU",
        "H100 SXM5",
    ],
)
def test_texts_that_name_no_chip(text: str) -> None:
    assert find_chip(text) is None


@pytest.mark.parametrize(
    "text",
    [
        # Mosaic GPU's shared memory, and Triton's block shapes
        "ValueError: Mosaic GPU kernel exceeds available shared memory: smem_bytes=262160 > "
        "max_smem_bytes=232448",
        "triton.compiler.errors.CompilationError: at 12:8: the number of elements in a block "
        "must be a multiple of 128",
        "ValueError: The Pallas Triton lowering currently requires that all operations have "
        "array arguments and results whose size is a power of 2. Encountered an array of "
        "shape (100, 100)",
        "Shared memory size limit exceeded: requested 262144, available: 232448",
        # prose about the same things, without their figures
        "Every kernel has block shape (8, 128) here; array shape is whatever.",
        "The operand of shape (64, 256) has tiling issues on TPU.",
        "It says it cannot statically prove that the index is aligned.",
        "The matmul was fine; Expected results were wrong.",
        "",
    ],
)
def test_texts_that_state_no_tpu_values(text: str) -> None:
    assert read_tpu_values(text).values == ()


def test_the_distractors_paste_of_tpu_and_triton_words_states_no_values() -> None:
    assert read_tpu_values(paste("distractors-tpu-triton.txt")).values == ()


def test_a_paste_repeating_a_message_is_read_up_to_the_cap() -> None:
    """A hostile 1 MiB paste: distinct messages past ``MAX_READ`` are not read, and open
    parentheses after the words cost one bounded scan each."""
    message = OLD_SENTENCE + (
        "Block spec for args[0] has block shape ({n}, 100), array shape (256, 256), and "
        "index_map returning [a], in memory space None.\n"
    )
    text = "".join(message.format(n=n) for n in range(MAX_READ * 4))
    assert len(read_tpu_values(text).values) == MAX_READ
    hostile = (OLD_SENTENCE + "has block shape " + "(" * 4000 + "\n") * 200
    assert read_tpu_values(hostile).values == ()
