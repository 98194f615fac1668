"""Shapes as users paste them, and as JAX renders them in messages.

Accepted: ``[7]``, ``[3, 5]``, ``(7,)``, ``(3, 5)``, ``7x8``, ``7``, ``()``, a shape
with a dtype in front (``int4(7,)`` as RefUnion prints it, ``f32[3,5]`` as JAX
prints avals), and MLIR memref types (``memref<7xi4>``,
``memref<32xf32, strided<[1], offset: ?>, #gpu.address_space<workgroup>>``).

Limits (so that every count fits comfortably in int64, even in bits):
rank <= 8, each dimension <= 2**31, and at most 2**48 elements in total.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Sequence
from dataclasses import dataclass

from app.jaxref.dtypes import DType, parse_dtype
from app.jaxref.inputs import InputValueError, ShapeError

MAX_RANK = 8
MAX_DIM = 2**31
MAX_ELEMENTS = 2**48


def largest_size(other_dims: Sequence[int]) -> int:
    """The largest size one dimension may take beside ``other_dims`` within the limits."""
    others = math.prod(other_dims)
    return MAX_DIM if others == 0 else min(MAX_DIM, MAX_ELEMENTS // others)


Dims = tuple[int, ...]

SMEM = "smem"
GMEM = "gmem"
_WORKGROUP = "#gpu.address_space<workgroup>"


@dataclass(frozen=True)
class ShapeSpec:
    """A parsed shape, with the dtype when the text carried one."""

    dims: Dims
    dtype: DType | None = None


@dataclass(frozen=True)
class MemRef:
    """An MLIR memref type: shape, element type, memory space and optional strided layout."""

    dims: Dims
    dtype: DType
    memory_space: str = GMEM  # SMEM for #gpu.address_space<workgroup>
    strides: Dims | None = None  # only when the text had a strided<...> layout
    offset: int | None = 0  # None renders as the dynamic offset "?"


def validate_dims(value: Sequence[object], field: str = "shape") -> Dims:
    """Check a sequence of dimensions against the limits; returns plain ints."""
    if isinstance(value, (str, bytes)):
        raise ShapeError(f"expected a sequence of integers, got {value!r}", field)
    if len(value) > MAX_RANK:
        raise ShapeError(f"rank {len(value)} is above the limit of {MAX_RANK}", field)
    dims: list[int] = []
    for axis, dim in enumerate(value):
        if isinstance(dim, bool) or not hasattr(dim, "__index__"):
            raise ShapeError(f"dimension {dim!r} at axis {axis} is not an integer", field)
        size = operator.index(dim)
        if size < 0:
            raise ShapeError(f"negative dimension {size} at axis {axis}", field)
        if size > MAX_DIM:
            raise ShapeError(f"dimension {size} at axis {axis} is above the limit of 2**31", field)
        dims.append(size)
    if math.prod(dims) > MAX_ELEMENTS:
        raise ShapeError(f"{math.prod(dims)} elements is above the limit of 2**48 elements", field)
    return tuple(dims)


_INTEGER = re.compile(r"^[+-]?\d[\d_]*$")
_BRACKETED = re.compile(
    r"^(?P<dtype>[A-Za-z_][\w.]*)?\s*(?P<open>[\[(])(?P<body>.*)(?P<close>[\])])$"
)
_MEMREF = re.compile(r"^memref<(?P<body>.*)>$", re.DOTALL)
_MEMREF_SHAPE = re.compile(r"^(?P<dims>(?:(?:\d+|\?)x)*)(?P<element>.+)$")
_STRIDED = re.compile(r"^strided<\[(?P<strides>[^\]]*)\](?:,\s*offset:\s*(?P<offset>\?|\d+))?>$")


def _parse_dim_list(tokens: list[str], text: str, field: str) -> Dims:
    dims: list[int] = []
    for token in tokens:
        token = token.strip()
        if not _INTEGER.match(token):
            raise ShapeError(f"cannot read dimension {token!r} in shape {text!r}", field)
        dims.append(int(token))
    return validate_dims(dims, field)


def parse_shape(text: str, field: str = "shape") -> ShapeSpec:
    """Read any supported shape spelling; see the module docstring."""
    cleaned = text.strip()
    if not cleaned:
        raise ShapeError("empty shape", field)
    if cleaned.startswith("memref<"):
        memref = parse_memref(cleaned, field)
        return ShapeSpec(memref.dims, memref.dtype)
    bracketed = _BRACKETED.match(cleaned)
    if bracketed:
        if (bracketed["open"], bracketed["close"]) not in (("[", "]"), ("(", ")")):
            raise ShapeError(f"mismatched brackets in shape {text!r}", field)
        dtype = parse_dtype(bracketed["dtype"], field) if bracketed["dtype"] else None
        body = bracketed["body"].strip().removesuffix(",")
        tokens = body.split(",") if body.strip() else []
        return ShapeSpec(_parse_dim_list(tokens, text, field), dtype)
    separator = "," if "," in cleaned else "x"
    return ShapeSpec(_parse_dim_list(cleaned.replace("×", "x").split(separator), text, field))


def _split_top_level(text: str) -> list[str]:
    """Split on commas that are not inside <...> or [...]."""
    parts, depth, start = [], 0, 0
    for index, char in enumerate(text):
        if char in "<[":
            depth += 1
        elif char in ">]":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:index].strip())
            start = index + 1
    parts.append(text[start:].strip())
    return parts


def parse_memref(text: str, field: str = "shape") -> MemRef:
    """Read an MLIR memref type as Mosaic GPU prints it."""
    match = _MEMREF.match(text.strip())
    if match is None:
        raise ShapeError(f"not a memref type: {text!r}", field)
    shape_and_type, *attributes = _split_top_level(match["body"])
    layout = _MEMREF_SHAPE.match(shape_and_type)
    if layout is None:
        raise ShapeError(f"cannot read memref shape {shape_and_type!r}", field)
    dim_tokens = layout["dims"].split("x")[:-1]
    element = layout["element"]
    if "?" in dim_tokens:
        raise ShapeError(f"dynamic dimensions are not supported: {text!r}", field)
    dims = _parse_dim_list(dim_tokens, text, field)
    dtype = parse_dtype(element, field)
    memory_space, strides = GMEM, None
    offset: int | None = 0
    for attribute in attributes:
        strided = _STRIDED.match(attribute)
        if attribute == _WORKGROUP:
            memory_space = SMEM
        elif attribute == "#gpu.address_space<global>":
            memory_space = GMEM
        elif strided:
            stride_text = strided["strides"].strip()
            strides = _parse_dim_list(stride_text.split(",") if stride_text else [], text, field)
            offset = None if strided["offset"] == "?" else int(strided["offset"] or 0)
        else:
            raise ShapeError(f"unsupported memref attribute {attribute!r}", field)
    if strides is not None and len(strides) != len(dims):
        raise ShapeError(f"{len(strides)} strides for a rank-{len(dims)} memref: {text!r}", field)
    return MemRef(dims, dtype, memory_space, strides, offset)


def as_shape_spec(shape: str | Sequence[int] | ShapeSpec, field: str = "shape") -> ShapeSpec:
    """Accept a shape as text, as a sequence of ints, or already parsed."""
    if isinstance(shape, ShapeSpec):
        return shape
    if isinstance(shape, str):
        return parse_shape(shape, field)
    try:
        return ShapeSpec(validate_dims(shape, field))
    except TypeError as error:
        raise InputValueError(field, f"cannot read shape {shape!r}") from error


def render_list(dims: Dims) -> str:
    """``[3, 5]``: how Mosaic GPU renders ``MemRefType.shape``."""
    return repr(list(dims))


def render_tuple(dims: Dims) -> str:
    """``(3, 5)`` / ``(7,)``: how Pallas-level messages render a shape."""
    return repr(tuple(dims))


def contiguous_strides(dims: Dims) -> Dims:
    """Row-major element strides."""
    strides, stride = [], 1
    for dim in reversed(dims):
        strides.append(stride)
        stride *= dim
    return tuple(reversed(strides))


def render_memref(memref: MemRef) -> str:
    """MLIR text of a memref type, e.g. ``memref<256xi4, #gpu.address_space<workgroup>>``."""
    parts = ["x".join([*map(str, memref.dims), memref.dtype.mlir])]
    if memref.strides is not None:
        offset = (
            ""
            if memref.offset == 0
            else f", offset: {'?' if memref.offset is None else memref.offset}"
        )
        parts.append(f"strided<{render_list(memref.strides)}{offset}>")
    if memref.memory_space == SMEM:
        parts.append(_WORKGROUP)
    return f"memref<{', '.join(parts)}>"
