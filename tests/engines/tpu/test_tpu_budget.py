"""The TPU engine's arithmetic where only libtpu decides: VMEM, tiling, matmul dtypes.

Figures are the chip's facts from JAX's tpu_info and what a TPU v5e with JAX 0.10.2 was
seen to do (stack notes): an int4 (32, 256) block "has tiling (64, 128)", a bfloat16
block of 8 rows compiled, bf16 accumulation is refused.
"""

from __future__ import annotations

import pytest

from app.engines.tpu import (
    InputValueError,
    VmemBlock,
    block_fixes,
    check_blocks,
    dynamic_offset_advice,
    get_chip,
    matmul_support,
    operand_tiling,
    padded_bytes,
    vmem_budget,
)
from app.jaxref.dtypes import parse_dtype

MIB = 2**20


def test_block_fix_for_the_issue_example_tiles_the_array() -> None:
    fixes = block_fixes((256, 256), (100, 100), "float32", "v5e")
    assert fixes[0].shape == (128, 128)
    assert "grid (2, 2)" in fixes[0].description
    assert fixes[0].code.before.startswith("grid=(3, 3), in_specs=[pl.BlockSpec((100, 100)")
    assert (
        fixes[0].code.after
        == "grid=(2, 2), in_specs=[pl.BlockSpec((128, 128), lambda i, j: (i, j))]"
    )
    assert all(check_blocks((256, 256), fix.shape, "float32").ok for fix in fixes)


def test_tiles_pad_blocks() -> None:
    v5e = get_chip("v5e")
    assert padded_bytes(v5e, (8, 128), parse_dtype("float32")) == 4096
    assert padded_bytes(v5e, (1, 100), parse_dtype("float32")) == 4096  # one (8, 128) tile
    assert padded_bytes(v5e, (32, 256), parse_dtype("int4")) == 64 * 256 // 2


def test_vmem_over_the_default_limit_gets_a_limit_and_smaller_blocks() -> None:
    blocks = [
        VmemBlock((2048, 1024), "float32", "input", array_shape=(8192, 1024)),
        VmemBlock((2048, 1024), "float32", "output", array_shape=(8192, 1024)),
    ]
    budget = vmem_budget(blocks, "v5e")
    assert budget.total_bytes == 32 * MIB  # 8 MiB per buffer, two buffers each
    assert budget.limit_bytes == 16 * MIB and budget.limit_is_default
    assert budget.over_bytes == 16 * MIB
    kinds = {fix.kind: fix for fix in budget.fixes}
    assert kinds["vmem_limit"].code.after.endswith(f"vmem_limit_bytes={32 * MIB})")
    shrunk = [fix for fix in budget.fixes if fix.kind == "block"]
    assert (1024, 1024) in [fix.shape for fix in shrunk]


def test_vmem_over_physical_gets_no_limit_fix() -> None:
    blocks = [
        VmemBlock((8192, 8192), "float32", role, array_shape=(8192, 8192))
        for role in ("input", "output")
    ]
    budget = vmem_budget(blocks, "v5e", vmem_limit_bytes=128 * MIB)
    assert budget.needed_limit_bytes is None
    assert all(fix.kind == "block" for fix in budget.fixes)
    assert {fix.shape for fix in budget.fixes} == {(1024, 8192), (8192, 1024)}


def test_single_buffering_an_input_when_it_covers_the_excess() -> None:
    blocks = [
        VmemBlock((1024, 1024), "float32", "input"),
        VmemBlock((512, 1024), "float32", "output"),
    ]
    budget = vmem_budget(blocks, "v5e")  # 8 + 4 = 12 MiB... under 16
    assert budget.fits and not budget.fixes
    budget = vmem_budget(blocks, "v5e", vmem_limit_bytes=9 * MIB)
    buffered = [fix for fix in budget.fixes if fix.kind == "buffered"]
    assert buffered and "pl.Buffered(1)" in buffered[0].code.after


def test_buffered_count_and_scratch_count() -> None:
    blocks = [
        VmemBlock((8, 128), "float32", "input", buffer_count=3),
        VmemBlock((8, 128), "float32", "scratch"),
    ]
    assert vmem_budget(blocks).total_bytes == 4 * 4096


def test_e2002_int4_tiling_as_libtpu_said() -> None:
    tiling = operand_tiling((32, 256), "int4", "v5e")
    assert tiling.tile == (64, 128) and not tiling.aligned
    assert tiling.blocks == ((64, 256),)
    assert operand_tiling((8, 256), "bfloat16", "v5e").aligned


def test_bf16_accumulation_is_refused_with_f32_kept_inputs() -> None:
    support = matmul_support("bfloat16", "bfloat16", "v5e", "bfloat16")
    assert not support.supported
    assert "Expected matmul acc to be 32-bit" in support.reason
    assert support.alternatives[0] == ("bfloat16", "bfloat16", "float32")


def test_int8_matmul_by_generation() -> None:
    assert matmul_support("int8", "int8", "v5e").supported
    refused = matmul_support("int8", "int8", "v7x")
    assert not refused.supported and refused.alternatives[0][:2] == ("bfloat16", "bfloat16")


def test_e2003_advice() -> None:
    assert "pl.multiple_of(start, 128)" in dynamic_offset_advice("lane", "float32", "v5e", 256)
    assert "pltpu.roll" in dynamic_offset_advice("lane", "float32", "v5e")


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda: check_blocks((2**62, 2**62), (8, 128), "float32"), "array_shape"),
        (lambda: check_blocks((0, 128), (8, 128), "float32"), "array_shape"),
        (lambda: check_blocks((8, 128), (-8, 128), "float32"), "block_shape"),
        (lambda: check_blocks((8, 128), (8, 128), "float32", "v9z"), "chip"),
        (lambda: check_blocks((8, 128), (8, 128), "float32", None, "0.4.20"), "jax_version"),
        (lambda: check_blocks((8, 128), (8, 128), "complex64"), "dtype"),
        (lambda: check_blocks((8, 128), (8, 128), "notatype"), "dtype"),
        (lambda: vmem_budget([VmemBlock((8, 128), "float32", "weights")]), "blocks.0.role"),
    ],
)
def test_bad_input_names_the_field(call, field) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InputValueError) as raised:
        call()
    assert raised.value.field == field
