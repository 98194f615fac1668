"""tiling_fixes(): a ``plgpu.TilingTransform`` that does not divide its ref, made to.

``TilingTransform.transform_type`` asserts that every tiled dimension is divisible by its
tile and says nothing more (MGPU-TILINGTRANSFORM-DIVISIBILITY: a bare ``AssertionError``).
There are two ways out, each re-checked against what the tiled copy meets next:

- a tiling that divides the ref: along each tiled axis the largest tile, at most the user's,
  that divides it; the minor tile a multiple of 128 bits, which an async copy moves
  (MGPU-TMA-LASTDIM-128BITS), or exactly one swizzle wide under a ``SwizzleTransform``
  (MGPU-TILING-SWIZZLE-FIT). It changes one line; it comes first where its row tiles stay
  multiples of 8.
- the ref padded to whole tiles: the array passed in, ``out_shape`` and the scratch change
  with it, and the result is cut back.

JAX 0.10.2 lowering for CUDA on a CPU confirms both (``tests/oracle``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from app.jaxref.inputs import InputValueError
from app.jaxref.shapes import Dims, validate_dims

from .rules import RULES
from .versions import parse_version

TMA_ROW_BITS = 128  # an async copy moves a multiple of 128 bits along the last dimension
SWIZZLES = (32, 64, 128)
ROW_TILE = 8  # the rows of a WGMMA operand's tile


@dataclass(frozen=True)
class TilingFix:
    kind: Literal["tiling", "pad"]
    shape: Dims  # the ref's shape after the fix
    tiling: Dims  # the tiling after the fix
    description: str


def tiling_divides(
    shape: Sequence[int], tiling: Sequence[int], jax_version: str | None = None
) -> bool:
    """Whether ``transform_type``'s assert holds: every tiled dimension a multiple of its tile."""
    rule = RULES["MGPU-TILINGTRANSFORM-DIVISIBILITY"]
    tiled = {"tiled_dims": tuple(shape[-len(tiling) :]), "tiling": tuple(tiling)}
    return not bool(rule.fails(tiled, parse_version(jax_version)))


def tiling_fixes(
    shape: Sequence[int],
    tiling: Sequence[int],
    bits: int | None,
    swizzle: int | None = None,
    jax_version: str | None = None,
) -> list[TilingFix]:
    """A tiling that divides ``shape`` (where the element's ``bits`` are known), then the
    shape padded to whole tiles; nothing when the tiling already divides it."""
    dims = validate_dims(shape, "shape")
    tiles = validate_dims(tiling, "tiling")
    if not 0 < len(tiles) <= len(dims) or min(tiles) < 1:
        raise InputValueError("tiling", "a tiling has 1 to rank-of-the-ref positive sizes")
    if swizzle is not None and swizzle not in SWIZZLES:
        raise InputValueError("swizzle", f"swizzle must be one of {SWIZZLES}")
    if tiling_divides(dims, tiles, jax_version):
        return []
    fixes = []
    dividing = _dividing_tiling(dims, tiles, bits, swizzle)
    if dividing is not None and tiling_divides(dims, dividing, jax_version):
        fixes.append(TilingFix("tiling", dims, dividing, f"tile by {dividing} instead of {tiles}"))
    lead = len(dims) - len(tiles)
    padded = (*dims[:lead], *(-(-d // t) * t for d, t in zip(dims[lead:], tiles, strict=True)))
    if tiling_divides(padded, tiles, jax_version):
        fixes.append(TilingFix("pad", padded, tiles, f"pad the ref from {dims} to {padded}"))
    # A row tile off the 8 rows of an MMA tile (5 for 100 rows) lowers for a copy, but a
    # kernel that multiplies the ref needs the user's: then the pad comes first.
    return sorted(fixes, key=lambda fix: fix.kind == "tiling" and not _whole_rows(fix.tiling))


def _whole_rows(tiling: Dims) -> bool:
    return all(tile % ROW_TILE == 0 for tile in tiling[:-1])


def _dividing_tiling(dims: Dims, tiles: Dims, bits: int | None, swizzle: int | None) -> Dims | None:
    """Per tiled axis the largest divisor of the dimension at most the user's tile; the
    minor one a whole number of copy rows (or one swizzle). None where an axis has none, or
    the minor tile's constraint is unknown (no ``bits``)."""
    tiled = dims[len(dims) - len(tiles) :]
    chosen = []
    for axis, (dim, tile) in enumerate(zip(tiled, tiles, strict=True)):
        minor = axis == len(tiles) - 1
        if minor and bits is None:
            return None
        fitting = [
            size
            for size in range(min(dim, tile), 0, -1)
            if dim % size == 0 and (not minor or _minor_fits(size, bits or 0, swizzle))
        ]
        if not fitting:
            return None
        chosen.append(fitting[0])
    return tuple(chosen)


def _minor_fits(size: int, bits: int, swizzle: int | None) -> bool:
    if swizzle is not None:
        return size == swizzle * 8 // bits
    return size * bits % TMA_ROW_BITS == 0
