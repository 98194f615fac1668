"""tiling_fixes: the ways out of TilingTransform's bare assert, re-checked (JAX lowers them:
tests/oracle/test_tiling_vs_jax.py)."""

from __future__ import annotations

import pytest

from app.engines.mosaic_gpu.tiling import tiling_divides, tiling_fixes
from app.jaxref.inputs import InputValueError


def test_a_tiling_that_divides_needs_no_fix() -> None:
    assert tiling_divides((16, 64), (8, 32))
    assert tiling_fixes((16, 64), (8, 32), 16) == []


def test_the_largest_dividing_tile_comes_first_when_its_rows_stay_whole() -> None:
    tiling, pad = tiling_fixes((16, 48), (8, 32), 16)
    assert (tiling.kind, tiling.tiling, tiling.shape) == ("tiling", (8, 24), (16, 48))
    assert (pad.kind, pad.shape, pad.tiling) == ("pad", (16, 64), (8, 32))


def test_the_minor_tile_keeps_to_whole_copy_rows_and_to_the_swizzle() -> None:
    # 48 int8 elements: 24 would be 192 bits, a copy row is 128; 16 is, and divides 48
    assert tiling_fixes((16, 48), (8, 32), 8)[0].tiling == (8, 16)
    # under a 32-byte swizzle a float16 minor tile is exactly 16 elements
    assert tiling_fixes((16, 48), (8, 32), 16, swizzle=32)[0].tiling == (8, 16)
    # a 128-byte swizzle is 64 float16 elements, which 48 is not: only the pad is left
    assert [fix.kind for fix in tiling_fixes((16, 48), (8, 64), 16, swizzle=128)] == ["pad"]


def test_odd_row_tiles_rank_after_the_pad_and_unknown_bits_give_the_pad_alone() -> None:
    fixes = tiling_fixes((100, 64), (8, 64), 16, swizzle=128)
    assert [(f.kind, f.shape, f.tiling) for f in fixes] == [
        ("pad", (104, 64), (8, 64)),
        ("tiling", (100, 64), (5, 64)),
    ]
    assert [fix.kind for fix in tiling_fixes((16, 48), (8, 32), None)] == ["pad"]


def test_leading_dimensions_are_kept_and_padded_only_where_tiled() -> None:
    pad, tiling = tiling_fixes((3, 5, 64), (8, 64), 32)
    assert (pad.shape, tiling.tiling) == ((3, 8, 64), (5, 64))


@pytest.mark.parametrize(
    ("shape", "tiling", "swizzle", "field"),
    [
        ((16, 48), (8, 0), None, "tiling"),
        ((16,), (8, 32), None, "tiling"),
        ((16, -48), (8, 32), None, "shape"),
        ((16, 48), (8, 32), 48, "swizzle"),
    ],
)
def test_bad_values_name_their_field(
    shape: tuple[int, ...], tiling: tuple[int, ...], swizzle: int | None, field: str
) -> None:
    with pytest.raises(InputValueError) as raised:
        tiling_fixes(shape, tiling, 16, swizzle)
    assert raised.value.field == field
