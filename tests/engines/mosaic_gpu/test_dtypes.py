"""The dtype registry: true bit widths, MLIR names, and every spelling users paste."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.engines.mosaic_gpu import DTYPES, InputValueError, UnknownDTypeError, parse_dtype

names = st.sampled_from(sorted(DTYPES))


@pytest.mark.parametrize("name", sorted(set(DTYPES) - {"bool", "complex64", "complex128"}))
def test_bits_are_ml_dtypes_bits_not_itemsize(name: str) -> None:
    scalar = np.dtype(getattr(ml_dtypes, name, name)).type
    info = ml_dtypes.finfo if DTYPES[name].kind == "float" else ml_dtypes.iinfo
    assert DTYPES[name].bits == info(scalar).bits


def test_sub_byte_widths() -> None:
    widths = {name: DTYPES[name].bits for name in ("bool", "int2", "int4", "uint4")}
    assert widths == {"bool": 1, "int2": 2, "int4": 4, "uint4": 4}
    assert DTYPES["float4_e2m1fn"].bits == 4
    assert DTYPES["float6_e2m3fn"].bits == 6
    assert DTYPES["complex64"].bits == 64


@pytest.mark.parametrize(
    ("name", "mlir"),
    [
        ("bool", "i1"),
        ("int4", "i4"),
        ("uint4", "i4"),
        ("uint8", "i8"),
        ("bfloat16", "bf16"),
        ("float8_e4m3fn", "f8E4M3FN"),
        ("float4_e2m1fn", "f4E2M1FN"),
        ("float32", "f32"),
        ("complex64", "complex<f32>"),
    ],
)
def test_mlir_names_as_mosaic_gpu_renders_them(name: str, mlir: str) -> None:
    assert DTYPES[name].mlir == mlir


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("int4", "int4"),
        ("jnp.int4", "int4"),
        ("jax.numpy.int4", "int4"),
        ("ml_dtypes.int4", "int4"),
        ("np.float32", "float32"),
        ("numpy.float32", "float32"),
        ("dtype('int4')", "int4"),
        ('jnp.dtype("bfloat16")', "bfloat16"),
        ("dtype=int4", "int4"),
        ("<class 'numpy.float32'>", "float32"),
        ("<f4", "float32"),
        ("|b1", "bool"),
        ("<c8", "complex64"),
        ("float", "float32"),
        ("int", "int32"),
        ("i4", "int4"),  # MLIR / JAX short name, not numpy's int32 typecode
        ("u4", "uint4"),
        ("i1", "bool"),
        ("si8", "int8"),
        ("ui16", "uint16"),
        ("bf16", "bfloat16"),
        ("f8E4M3FN", "float8_e4m3fn"),
        ("F8E4M3FN", "float8_e4m3fn"),
        ("f8_e4m3fn", "float8_e4m3fn"),
        ("BFLOAT16", "bfloat16"),
        ("  'int8'  ", "int8"),
        ("half", "float16"),
        ("jnp.bool_", "bool"),
    ],
)
def test_spellings(text: str, name: str) -> None:
    assert parse_dtype(text).name == name


@given(names)
def test_every_name_reads_in_every_wrapper(name: str) -> None:
    dtype = DTYPES[name]
    for text in (name, name.upper(), f"jnp.{name}", f"dtype('{name}')", f"dtype={name}"):
        assert parse_dtype(text) is dtype


@given(names)
def test_mlir_text_reads_back_to_the_same_width(name: str) -> None:
    parsed = parse_dtype(DTYPES[name].mlir)
    assert (parsed.bits, parsed.mlir) == (DTYPES[name].bits, DTYPES[name].mlir)


def test_unknown_dtype_lists_closest_names() -> None:
    with pytest.raises(UnknownDTypeError) as raised:
        parse_dtype("int5")
    assert raised.value.field == "dtype"
    assert isinstance(raised.value, InputValueError)
    assert {"int4", "int8"} <= set(raised.value.suggestions)
    assert "int4" in str(raised.value)


def test_unknown_dtype_close_to_a_long_name() -> None:
    with pytest.raises(UnknownDTypeError) as raised:
        parse_dtype("flaot32")
    assert raised.value.suggestions[0] == "float32"


def test_a_prefix_suggests_its_extensions() -> None:
    with pytest.raises(UnknownDTypeError) as raised:
        parse_dtype("float8")
    assert "float8_e4m3fn" in raised.value.suggestions


def test_bare_numpy_typecode_is_not_guessed() -> None:
    with pytest.raises(UnknownDTypeError):
        parse_dtype("f4")  # numpy float32, or float4? Ask for "<f4" or a name.
