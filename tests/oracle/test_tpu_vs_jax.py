"""The TPU engine against JAX's own TPU lowering, on the CPU, case by case.

For each case of the grid (dtypes × array shapes × block shapes, ranks 0 to 3, chips), the
engine's first error must be JAX's, class and message exactly, or both must say the kernel
lowers; and every fix the engine returns must lower.
"""

from __future__ import annotations

import pytest

from app.engines.tpu import block_fixes, check_blocks

from .tpu_kernels import KERNEL, Block, jax_verdict

pytestmark = pytest.mark.oracle

DTYPES = ("float32", "bfloat16", "int8", "int4", "float8_e4m3fn")
# Array shape → the block shapes tried on it: on either side of each rule's boundaries
# (multiples of 8 and 128, equal to the array, squeezed, powers of two for rank 1).
BLOCKS: dict[tuple[int, ...], tuple[Block, ...]] = {
    (1000,): ((100,), (128,), (1000,), (1024,), (None,)),
    (4096,): ((64,), (256,), (512,), (768,), (1024,), (2048,), (3072,)),
    (256, 256): ((100, 100), (128, 128), (8, 128), (64, 64), (256, 100), (None, 256), (128,)),
    (16, 100): ((8, 100), (16, 100), (8, 128), (4, 100), (16, 64)),
    (300, 500): ((100, 100), (104, 128), (300, 500), (8, 500), (None, 128)),
    (1, 128): ((None, 128), (1, 128), (1, 64)),
    (4, 256, 256): (
        (None, 100, 128),
        (1, 128, 128),
        (None, 8, 128),
        (2, 256, 100),
        (None, None, 256),
    ),
    (2, 16, 384): ((2, 16, 384), (None, 16, 100), (1, 8, 384), (2, 12, 128)),
    (): ((),),
}
# The rank-1 rule reads the chip: the rank-1 arrays again as a v7x and a v4 see them.
OTHER_CHIPS = ("v4", "v7x")
Case = tuple[tuple[int, ...], Block, str, str]


def _grid() -> list[Case]:
    cases = [
        (array, block, dtype, "v5e")
        for array, blocks in BLOCKS.items()
        for block in blocks
        for dtype in DTYPES
    ]
    cases += [
        (array, block, dtype, chip)
        for chip in OTHER_CHIPS
        for array, blocks in BLOCKS.items()
        if len(array) == 1
        for block in blocks
        for dtype in DTYPES
    ]
    return cases


def _case_id(case: Case) -> str:
    array, block, dtype, chip = case
    shape = "x".join(map(str, array)) or "scalar"
    return f"{shape}-by-{'x'.join('N' if b is None else str(b) for b in block)}-{dtype}-{chip}"


GRID = _grid()
CASES = [pytest.param(*case, id=_case_id(case)) for case in GRID]
PARAMETERS = ("array", "block", "dtype", "chip")


def test_grid_is_large_enough() -> None:
    assert len(GRID) >= 300
    verdicts = {jax_verdict(*case)[0] is None for case in GRID}
    assert verdicts == {True, False}  # some lower, some fail


@pytest.mark.parametrize(PARAMETERS, CASES)
def test_engine_verdict_is_jax_verdict(
    array: tuple[int, ...], block: Block, dtype: str, chip: str
) -> None:
    result = check_blocks(array, block, dtype, chip, kernel=KERNEL)
    first = result.first_violation
    engine = (first.error_class, first.message) if first else (None, None)
    assert engine == jax_verdict(array, block, dtype, chip)


@pytest.mark.parametrize(PARAMETERS, CASES)
def test_every_fix_lowers_in_jax(
    array: tuple[int, ...], block: Block, dtype: str, chip: str
) -> None:
    fixes = block_fixes(array, block, dtype, chip, limit=3)
    failing = {}
    for fix in fixes:
        # The engine changes only the axes a check reads: the last two, or the only one.
        kept = range(len(block) - 2 if len(block) >= 2 else 0)
        fixed = tuple(
            None if block[axis] is None and axis in kept else size
            for axis, size in enumerate(fix.shape)
        )
        verdict = jax_verdict(array, fixed, dtype, chip)
        if verdict[0] is not None:
            failing[fix.shape] = verdict
    assert not failing
    if not check_blocks(array, block, dtype, chip).ok and len(block) == len(array) and block:
        assert fixes  # a block of the array's rank always has one: the whole array
