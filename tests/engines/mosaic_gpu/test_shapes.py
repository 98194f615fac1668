"""Shape and memref parsing, limits, and rendering round trips."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.engines.mosaic_gpu import (
    DTYPES,
    MemRef,
    ShapeError,
    parse_dtype,
    parse_memref,
    parse_shape,
    render_list,
    render_memref,
    render_tuple,
)
from app.jaxref.shapes import MAX_DIM, MAX_ELEMENTS, SMEM, validate_dims

dims_strategy = st.lists(st.integers(0, 4096), max_size=4).map(tuple)


@pytest.mark.parametrize(
    ("text", "dims"),
    [
        ("[7]", (7,)),
        ("[3, 5]", (3, 5)),
        ("(7,)", (7,)),
        ("(3, 5)", (3, 5)),
        ("(7)", (7,)),
        ("7x8", (7, 8)),
        ("7 × 8", (7, 8)),
        ("7", (7,)),
        ("3,5", (3, 5)),
        ("()", ()),
        ("[]", ()),
        ("[0, 32]", (0, 32)),
        (" [ 64 , 128 ] ", (64, 128)),
    ],
)
def test_plain_shapes(text: str, dims: tuple[int, ...]) -> None:
    spec = parse_shape(text)
    assert spec.dims == dims
    assert spec.dtype is None


@pytest.mark.parametrize(
    ("text", "dims", "dtype"),
    [
        ("int4(7,)", (7,), "int4"),
        ("int4(3, 5)", (3, 5), "int4"),
        ("f32[3,5]", (3, 5), "float32"),
        ("bf16[128]", (128,), "bfloat16"),
        ("memref<7xi4>", (7,), "int4"),
        ("memref<64x128xbf16, #gpu.address_space<workgroup>>", (64, 128), "bfloat16"),
    ],
)
def test_shapes_carrying_a_dtype(text: str, dims: tuple[int, ...], dtype: str) -> None:
    spec = parse_shape(text)
    assert spec.dims == dims
    assert spec.dtype is DTYPES[dtype]


def test_pipeline_memref() -> None:
    memref = parse_memref("memref<32xf32, strided<[1], offset: ?>, #gpu.address_space<workgroup>>")
    assert memref == MemRef((32,), DTYPES["float32"], SMEM, (1,), None)


def test_gmem_memref_has_no_memory_space() -> None:
    memref = parse_memref("memref<7xi4>")
    assert (memref.dims, memref.memory_space, memref.strides) == ((7,), "gmem", None)


def test_scalar_memref() -> None:
    assert parse_memref("memref<f32>").dims == ()


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[-1]", "negative dimension -1"),
        ("[2147483649]", "above the limit"),
        ("[1, 2, 3, 4, 5, 6, 7, 8, 9]", "rank 9"),
        ("[2147483648, 2147483648]", "elements"),
        ("[None]", "None"),
        ("[3.5]", "3.5"),
        ("(3]", "mismatched"),
        ("", "empty"),
        ("memref<?xf32>", "dynamic"),
        ("memref<4xf32, affine_map<(d0) -> (d0)>>", "unsupported memref attribute"),
        ("memref<4x4xf32, strided<[1]>>", "1 strides for a rank-2"),
    ],
)
def test_rejected_shapes_name_the_problem(text: str, problem: str) -> None:
    with pytest.raises(ShapeError) as raised:
        parse_shape(text)
    assert problem in str(raised.value)
    assert raised.value.field == "shape"


def test_limits_are_inclusive() -> None:
    assert validate_dims([MAX_DIM]) == (MAX_DIM,)
    assert validate_dims([2**24, 2**24]) == (2**24, 2**24)
    assert np.prod([2**24, 2**24], dtype=object) == MAX_ELEMENTS
    with pytest.raises(ShapeError):
        validate_dims([True])


def test_renderers() -> None:
    assert render_list((3, 5)) == "[3, 5]"
    assert render_tuple((7,)) == "(7,)"
    assert render_tuple((3, 5)) == "(3, 5)"
    assert render_tuple(()) == "()"
    scratch = MemRef((256,), DTYPES["int4"], SMEM)
    assert render_memref(scratch) == "memref<256xi4, #gpu.address_space<workgroup>>"


@given(dims_strategy)
def test_list_tuple_and_x_forms_round_trip(dims: tuple[int, ...]) -> None:
    assert parse_shape(render_list(dims)).dims == dims
    assert parse_shape(render_tuple(dims)).dims == dims
    if dims:
        assert parse_shape("x".join(map(str, dims))).dims == dims


@given(
    dims_strategy,
    st.sampled_from(sorted({parse_dtype(d.mlir) for d in DTYPES.values()}, key=str)),
    st.sampled_from(["smem", "gmem"]),
    st.booleans(),
    st.one_of(st.none(), st.integers(0, 64)),
)
def test_memref_round_trip(dims, dtype, space, strided, offset) -> None:
    strides = tuple(range(len(dims), 0, -1)) if strided else None
    memref = MemRef(dims, dtype, space, strides, offset if strided else 0)
    assert parse_memref(render_memref(memref)) == memref
