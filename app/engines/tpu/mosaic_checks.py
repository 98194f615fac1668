"""What only Mosaic (libtpu) checks, answered from the chip's facts.

- ``operand_tiling``: E2002 ``CompileTimeMosaicMisalignedBlockAndTiling``. An operand of
  2 or more dimensions is laid out in (rows, lanes) tiles, rows from JAX's
  ``get_sublane_tiling`` (a v5e: 8 for 16 and 32-bit types, 32 for 8-bit, 64 for 4-bit;
  libtpu asked an int4 (32, 256) block for "tiling (64, 128)", and a bfloat16 block of 8
  rows compiled). A block whose last two dimensions are not whole tiles, nor the array's
  own, is refused; the answer is the nearest block of whole tiles.
- ``matmul_support``: whether Mosaic compiles a dot of two dtypes into an accumulator, by
  the rules a v5e's verdicts show (``data/tpu-verdicts/``): the accumulator is 32-bit and
  of the operands' kind, two integer operands are one type, 16-bit floats are not
  contracted at ``precision=HIGHEST``, float16 is not loaded at all, and an operand the MXU
  lacks (``is_matmul_supported``) is converted when the other is a float; the answer keeps
  the user's dtypes where the chip allows.
- ``dynamic_offset_advice``: E2003 ``CompileTimeMosaicUnprovenMemoryAccessAlignment``, a
  dynamic start on the lane or sublane axis the compiler cannot prove aligned.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.jaxref.dtypes import DType, parse_dtype
from app.jaxref.inputs import InputValueError
from app.jaxref.shapes import Dims, validate_dims

from .chips import Chip, check_tpu_dtype, get_chip, operand_tile

ACCUMULATORS = ("float32", "int32")


@dataclass(frozen=True)
class OperandTiling:
    tile: tuple[int, int]  # (rows, lanes)
    aligned: bool
    blocks: tuple[Dims, ...]  # the nearest blocks of whole tiles (down, up), when not aligned


def _dtype(dtype: str | DType, field: str = "dtype") -> DType:
    return check_tpu_dtype(dtype if isinstance(dtype, DType) else parse_dtype(dtype, field), field)


def operand_tiling(
    block_shape: Sequence[int],
    dtype: str | DType,
    chip: str | None = None,
    array_shape: Sequence[int] | None = None,
) -> OperandTiling:
    """The tile Mosaic lays a block of ``dtype`` out in on ``chip``, whether the block is
    whole tiles (or the array's own last two dimensions), and if not the nearest that is."""
    block = validate_dims(block_shape, "block_shape")
    if len(block) < 2:
        raise InputValueError("block_shape", "tiling applies to blocks of 2 or more dimensions")
    array = validate_dims(array_shape, "array_shape") if array_shape is not None else None
    tpu = get_chip(chip)
    tile = operand_tile(tpu, _dtype(dtype))
    axes = (len(block) - 2, len(block) - 1)

    def whole(axis: int, size: int, step: int) -> bool:
        return size % step == 0 or (array is not None and size == array[axis])

    if all(whole(axis, block[axis], step) for axis, step in zip(axes, tile, strict=True)):
        return OperandTiling(tile, True, ())
    options = []
    for round_up in (False, True):
        sizes = list(block)
        for axis, step in zip(axes, tile, strict=True):
            if not whole(axis, block[axis], step):
                rounded = -(-block[axis] // step) * step if round_up else block[axis] // step * step
                sizes[axis] = rounded or step
        options.append(tuple(sizes))
    return OperandTiling(tile, False, tuple(dict.fromkeys(options)))


@dataclass(frozen=True)
class MatmulSupport:
    supported: bool
    reason: str  # "" when supported: the compiler's words for each refusal, joined by "; "
    alternatives: tuple[tuple[str, str, str], ...]  # (lhs, rhs, accumulator), nearest first


def matmul_support(
    lhs: str | DType,
    rhs: str | DType,
    chip: str | None = None,
    accumulator: str | None = None,
    precision: str | None = None,
) -> MatmulSupport:
    """Whether ``chip`` compiles ``lhs`` times ``rhs`` into ``accumulator`` (default:
    float32 for floats, int32 for integers) at ``precision`` ("highest" or the default);
    if not, the combinations it takes that keep the most of the user's dtypes."""
    tpu = get_chip(chip)
    left, right = _dtype(lhs, "lhs"), _dtype(rhs, "rhs")
    acc = _dtype(accumulator or _natural_accumulator(left, right), "accumulator")
    reasons = _refusals(tpu, left, right, acc, precision)
    if not reasons:
        return MatmulSupport(True, "", ())
    return MatmulSupport(False, "; ".join(reasons), _alternatives(tpu, left, right, precision))


def _natural_accumulator(left: DType, right: DType) -> str:
    return "int32" if _is_int(left) and _is_int(right) else "float32"


def _is_int(dtype: DType) -> bool:
    return dtype.kind in ("int", "uint")


def _refusals(
    chip: Chip, left: DType, right: DType, acc: DType, precision: str | None
) -> list[str]:
    """What Mosaic says of the dot, in its words (each seen on a v5e, JAX 0.10.2)."""
    operands = (left, right)
    reasons = []
    if any(dtype.name == "float16" for dtype in operands):
        reasons.append("Invalid vector type for load (float16)")
    if acc.bits != 32:
        reasons.append("Expected matmul acc to be 32-bit")
    both_int = _is_int(left) and _is_int(right)
    if both_int and not _is_int(acc):
        reasons.append("float acc with int lhs. Expected float lhs.")
    if both_int and left != right and right.name not in chip.matmul_operands.get(left.name, ()):
        reasons.append("Mix int/int - NYI")
    elif both_int and right.name not in chip.matmul_operands.get(left.name, ()):
        reasons.append(f"the {chip.name} MXU does not take {left.name} × {right.name}")
    if precision == "highest" and any(d.kind == "float" and d.bits == 16 for d in operands):
        reasons.append("Bad lhs type")
    return reasons


def _alternatives(
    chip: Chip, left: DType, right: DType, precision: str | None
) -> tuple[tuple[str, str, str], ...]:
    """Pairs the MXU takes natively that compile at ``precision``, nearest first."""
    pairs = [
        (lhs, rhs)
        for lhs, rhses in chip.matmul_operands.items()
        for rhs in rhses
        if not _refusals(chip, *_pair(lhs, rhs), _dtype(_natural_accumulator(*_pair(lhs, rhs))),
                         precision)
    ]  # fmt: skip

    def distance(pair: tuple[str, str]) -> tuple[int, int, int, int]:
        """Most of the user's dtypes kept, then the fewest changes of kind, then no float8
        the user does not already use (few values survive it), then the fewest bits."""
        new = (_dtype(pair[0]), _dtype(pair[1]))
        kept = (new[0] == left) + (new[1] == right)
        kinds = (_family(new[0]) != _family(left)) + (_family(new[1]) != _family(right))
        bits = abs(new[0].bits - left.bits) + abs(new[1].bits - right.bits)
        user = {_family(left), _family(right)}
        narrow = sum(d.kind == "float" and d.bits == 8 and "float8" not in user for d in new)
        return -kept, kinds, narrow, bits

    ranked = sorted(pairs, key=distance)[:3]
    return tuple((lhs, rhs, _natural_accumulator(*_pair(lhs, rhs))) for lhs, rhs in ranked)


def _pair(lhs: str, rhs: str) -> tuple[DType, DType]:
    return _dtype(lhs), _dtype(rhs)


def _family(dtype: DType) -> str:
    if dtype.kind == "float" and dtype.bits == 8:
        return "float8"
    return "int" if dtype.kind in ("int", "uint") else dtype.kind


def dynamic_offset_advice(
    axis: str, dtype: str | DType, chip: str | None = None, start_multiple: int | None = None
) -> str:
    """What to write for a dynamic start on ``axis`` ("lane" or "sublane"): a hint when the
    start is a multiple of the tile (``start_multiple``), else an aligned load and a roll."""
    if axis not in ("lane", "sublane"):
        raise InputValueError("axis", "axis must be lane or sublane")
    rows, lanes = operand_tile(get_chip(chip), _dtype(dtype))
    tile = lanes if axis == "lane" else rows
    if start_multiple is not None and start_multiple % tile == 0:
        return f"start = pl.multiple_of(start, {tile}): the compiler then knows it is aligned"
    return (
        f"load from the aligned start (start // {tile} * {tile}) a block {tile} wider, then "
        f"pltpu.roll it by start % {tile} along the {axis} axis (or mask the extra values)"
    )
