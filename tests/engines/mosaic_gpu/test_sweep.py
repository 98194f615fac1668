"""sweep(): valid block sizes over a range, the same as checking each size."""

from __future__ import annotations

import numpy as np
import pytest

from app.engines.mosaic_gpu import MAX_SWEEP, InputValueError, check, sweep


@pytest.mark.parametrize(
    ("operation", "dtype", "other_dims", "axis"),
    [
        ("copy_gmem_to_smem", "int4", None, -1),
        ("pallas_call", "float32", None, -1),
        ("pallas_call", "bfloat16", [8], -1),
        ("copy_gmem_to_smem", "float32", [64], 0),
        ("copy_smem_to_gmem", "int8", [2, 16], 1),
    ],
)
def test_sweep_matches_check_size_by_size(operation, dtype, other_dims, axis) -> None:
    sizes = sweep(operation, dtype, 0, 400, axis=axis, other_dims=other_dims)
    others = list(other_dims or [])
    position = axis % (len(others) + 1)
    expected = [
        n
        for n in range(400)
        if check(operation, [*others[:position], n, *others[position:]], dtype).ok
    ]
    assert sizes.tolist() == expected


def test_quickstart_sizes() -> None:
    assert sweep("pallas_call", "float32", 1, 1000).tolist() == [128, 256]


def test_bitcast_sweep_takes_a_target() -> None:
    assert sweep("smem_bitcast", "uint8", 1, 17, target_dtype="float32").tolist() == [4, 8, 12, 16]


def test_returns_an_int_array() -> None:
    sizes = sweep("copy_gmem_to_smem", "int4", 0, 10)
    assert isinstance(sizes, np.ndarray)
    assert sizes.dtype == np.int64


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"start": 0, "stop": MAX_SWEEP + 1}, "stop"),
        ({"start": 5, "stop": 4}, "start"),
        ({"start": -1, "stop": 4}, "start"),
        ({"start": 0, "stop": 4, "axis": 2}, "axis"),
        ({"start": 2**31 - 4, "stop": 2**31 + 2}, "stop"),
        ({"start": 0, "stop": 4, "other_dims": [-2]}, "other_dims"),
    ],
)
def test_bad_ranges(kwargs: dict, field: str) -> None:
    with pytest.raises(InputValueError) as raised:
        sweep("copy_gmem_to_smem", "int4", **kwargs)
    assert raised.value.field == field
