"""block_fixes(): BlockSpecs that pass every check of ``check_blocks``, nearest first.

They also pass what libtpu checks of a block (E2002): rows in whole tiles of the dtype (32
for int8 on a v5e, 64 for int4), or the array's own. A real v5e refused 8-row int8 and int4
blocks that JAX's own check takes (``data/tpu-verdicts/``).

Only the dimensions a check reads change: the last two (the last one for a 1-D block).
For each, the candidates are the array's own size and, on either side of the user's size,
the nearest size the rule takes and the nearest one that also divides the array (no ragged
last block). Blocks whose two pipeline buffers fit the chip's default scoped VMEM come
first, then those that tile the array exactly, then those nearest the user's (by ratio).
Each is re-checked before it is returned.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from itertools import product

from app.engines.verdicts import CodeChange, Fix
from app.jaxref.dtypes import DType

from .blocks import (
    LANE_MULTIPLE,
    SUBLANE_MULTIPLE,
    BlockCase,
    BlockShape,
    block_grid,
    check_case,
    lane_passes,
    python_tuple,
    rank1_limits,
    rank1_passes,
    resolve_block,
    sublane_passes,
)
from .chips import operand_tile, padded_bytes
from .mosaic_checks import operand_tiling

# How many multiples of the rule's step a search walks from the user's size for one that
# divides the array: past that, a ragged last block is the nearer answer anyway.
DIVISOR_STEPS = 64


def _near_multiples(size: int, array: int, step: int) -> set[int]:
    """Around ``size``: the nearest multiples of ``step`` below and above, and the nearest
    ones that divide ``array``; all within (0, array]."""
    found: set[int] = set()
    below, above = size // step * step, -(-size // step) * step
    found.update(s for s in (below, above) if 0 < s <= array)
    for direction in (-1, 1):
        multiple = (below if direction < 0 else above) // step
        for _ in range(DIVISOR_STEPS):
            if multiple < 1 or multiple * step > array:
                break
            if array % (multiple * step) == 0:
                found.add(multiple * step)
                break
            multiple += direction
    return found


def _powers_of_two(size: int, array: int, least: int) -> set[int]:
    """The powers of two of at least ``least`` nearest ``size`` on either side, up to the
    array's size."""
    above = max(least, 1 << max(0, (size - 1).bit_length()))
    below = max(least, above >> 1)
    return {s for s in (below, above) if s <= array}


def _axis_options(case: BlockCase) -> list[tuple[int, set[int]]]:
    """(axis, passing sizes to try) for each axis a check reads."""
    block, array = case.sizes, case.array_shape
    if len(block) == 1:
        chunk, least, _ = rank1_limits(case)
        sizes = {array[0], *_near_multiples(block[0], array[0], chunk)}
        sizes |= _near_multiples(block[0], array[0], least)
        sizes |= _powers_of_two(block[0], array[0], least)
        return [(0, {s for s in sizes if rank1_passes(s, case)})]
    rows, lanes = operand_tile(case.chip, case.dtype)
    rules: list[tuple[int, int, Callable[[int, int], bool]]] = [
        (len(block) - 2, math.lcm(SUBLANE_MULTIPLE, rows), sublane_passes),
        (len(block) - 1, math.lcm(LANE_MULTIPLE, lanes), lane_passes),
    ]
    options = []
    for axis, step, passes in rules:
        sizes = {block[axis], array[axis], *_near_multiples(block[axis], array[axis], step)}
        options.append((axis, {s for s in sizes if passes(s, array[axis])}))
    return options


def _candidates(case: BlockCase) -> Iterator[BlockShape]:
    if len(case.block_shape) != len(case.array_shape) or not case.block_shape:
        return
    options = _axis_options(case)
    for sizes in product(*(sorted(choices) for _, choices in options)):
        block = list(case.block_shape)
        for (axis, _), size in zip(options, sizes, strict=True):
            block[axis] = size
        yield tuple(block)


def _rank(case: BlockCase, block: BlockShape) -> tuple[bool, bool, float, int]:
    """Blocks whose two buffers fit the default scoped VMEM first, then those tiling the
    array exactly, then the nearest to the user's, then the smaller."""
    sizes = tuple(size or 1 for size in block)
    fits = 2 * padded_bytes(case.chip, sizes, case.dtype) <= case.chip.default_scoped_vmem_bytes
    ragged = any(
        size is not None and array % size
        for size, array in zip(block, case.array_shape, strict=True)
    )
    distance = sum(
        abs(math.log((new or 1) / (old or 1)))
        for new, old in zip(block, case.block_shape, strict=True)
    )
    return not fits, ragged, round(distance, 9), math.prod(sizes)


def _index_map(block: BlockShape) -> str:
    """``lambda i, j: (0, i, j)``: one grid index per unsqueezed dimension, 0 for the rest."""
    names = iter("ijklmnop")
    outputs = [next(names) if size is not None else "0" for size in block]
    arguments = ", ".join(name for name in outputs if name != "0")
    return f"lambda {arguments}: {python_tuple(outputs)}"


def code_line(case: BlockCase, block: BlockShape, specs: str = "in_specs") -> str:
    """The pallas_call arguments that give ``block``: its grid and its BlockSpec (among
    ``in_specs`` or ``out_specs``)."""
    grid = python_tuple(block_grid(case, block))
    return f"grid={grid}, {specs}=[pl.BlockSpec({python_tuple(block)}, {_index_map(block)})]"


def validation(case: BlockCase, block: BlockShape) -> str:
    """A standalone check of the rule for ``block``, as the release runs it, with the
    dtype's tile rows where libtpu asks more than 8."""
    lines = [f"block, array = {python_tuple(block)}, {python_tuple(case.array_shape)}"]
    if len(block) == 1:
        chunk, least, _ = rank1_limits(case)
        if case.wording.rank1 == "tiling":
            lines.append(f"assert block[0] == array[0] or block[0] % {least} == 0")
        else:
            lines.append(
                f"assert block[0] == array[0] or block[0] % {chunk} == 0 "
                f"or (block[0] >= {least} and block[0] & (block[0] - 1) == 0)"
            )
    else:
        rows, lanes = operand_tile(case.chip, case.dtype)
        lane, row = math.lcm(LANE_MULTIPLE, lanes), math.lcm(SUBLANE_MULTIPLE, rows)
        lines.append(f"assert block[-1] == array[-1] or block[-1] % {lane} == 0")
        tiles = f"  # {case.dtype.name}'s tile on the {case.chip.name}" if row > 8 else ""
        lines.append(f"assert block[-2] == array[-2] or block[-2] % {row} == 0{tiles}")
    return "\n".join(lines) + "\n"


def _as_fix(case: BlockCase, block: BlockShape) -> Fix | None:
    if not check_case(replace(case, block_shape=block)).ok or not _whole_tiles(case, block):
        return None
    sizes = tuple(size or 1 for size in block)
    grid = block_grid(case, block)
    ragged = _rank(case, block)[1]
    return Fix(
        kind="block",
        axis=None,
        shape=sizes,
        dtype=case.dtype.name,
        target_dtype=None,
        added_bytes=_added_bytes(case, sizes, case.dtype),
        verified=True,
        code=CodeChange(code_line(case, case.block_shape), code_line(case, block)),
        validation=validation(case, block),
        description=f"use blocks of {python_tuple(block)} with grid {grid}",
        note=_note(case, block, ragged),
    )


def _whole_tiles(case: BlockCase, block: BlockShape) -> bool:
    """libtpu's E2002: a block of 2 or more dimensions is whole tiles, or the array's own."""
    if len(block) < 2:
        return True
    sizes = [size or 1 for size in block]
    return operand_tiling(sizes, case.dtype, case.chip.name, case.array_shape).aligned


def _note(case: BlockCase, block: BlockShape, ragged: bool) -> str:
    """What else the new block asks of the kernel."""
    notes = []
    if any(
        old is None and new is not None for old, new in zip(case.block_shape, block, strict=True)
    ):
        notes.append("a squeezed (None) dimension becomes a real one: the kernel's ref has it")
    if ragged:
        notes.append("the last block along an axis is partial: mask what it reads past the array")
    return "; ".join(notes)


def _added_bytes(case: BlockCase, sizes: tuple[int, ...], dtype: DType) -> float:
    """VMEM one buffer of the new block takes beyond the old one, tiles padded."""
    return float(padded_bytes(case.chip, sizes, dtype) - padded_bytes(case.chip, case.sizes, dtype))


def fixes_for_case(case: BlockCase, limit: int = 5) -> list[Fix]:
    if check_case(case).ok:
        return []
    fixes: list[Fix] = []
    for block in sorted(set(_candidates(case)), key=lambda block: _rank(case, block)):
        if len(fixes) == limit:
            break
        fix = _as_fix(case, block)
        if fix is not None:
            fixes.append(fix)
    return fixes


def block_fixes(
    array_shape: Sequence[int],
    block_shape: Sequence[int | None],
    dtype: str | DType,
    chip: str | None = None,
    jax_version: str | None = None,
    limit: int = 5,
) -> list[Fix]:
    """Up to ``limit`` BlockSpecs that pass every check, those tiling the array exactly
    first, then nearest the user's; [] when the block passes already. A block whose rank
    differs from the array's gets none: which dimension is missing is the user's call."""
    return fixes_for_case(resolve_block(array_shape, block_shape, dtype, chip, jax_version), limit)
