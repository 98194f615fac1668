"""The tiled SMEM refs a paste's code writes: for the bare ``AssertionError`` of
``TilingTransform.transform_type``, whose message holds no values.

    tiling = plgpu.TilingTransform((8, 32))
    plgpu.SMEM((16, 48), jnp.float16, transforms=(tiling, plgpu.SwizzleTransform(64)))

Each ``SMEM(shape, dtype, transforms=…)`` or ``BlockSpec(shape, …, transforms=…)`` whose
transforms name a ``TilingTransform`` (written there, or a name bound to one) is read, with
its swizzle where one is named the same way. The code is the paste's: a notebook cell, a
script, an issue's code block.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import suppress
from dataclasses import dataclass
from itertools import islice

from app.jaxref.dtypes import parse_dtype
from app.jaxref.inputs import InputValueError

_DIMS = r"\(\s*\d{1,9}(?:\s*,\s*\d{1,9}){0,7}\s*,?\s*\)"
_TILING = re.compile(rf"TilingTransform\(\s*(?P<dims>{_DIMS})\s*\)")
_SWIZZLE = re.compile(r"SwizzleTransform\(\s*(?P<bytes>\d{1,4})\s*\)")
_BOUND = re.compile(
    r"(?P<name>[A-Za-z_]\w{0,60})\s*=\s*(?:[\w.]{0,60}\.)?"
    rf"(?P<value>TilingTransform\(\s*{_DIMS}\s*\)|SwizzleTransform\(\s*\d{{1,4}}\s*\))"
)
_REF = re.compile(r"(?<![\w.])(?:[\w.]{0,40}\.)?(?P<kind>SMEM|BlockSpec)\(")
_FIRST_DIMS = re.compile(rf"^\s*(?:block_shape\s*=\s*)?(?P<dims>{_DIMS})")
_DTYPE = re.compile(r"^\s*,\s*(?:dtype\s*=\s*)?(?:jnp|np|jax\.numpy|numpy)\.(?P<name>\w{1,30})")
_TRANSFORMS = re.compile(r"transforms\s*=\s*(?P<list>[\[(].*)", re.S)
CALL_CHARS = 800  # a call's arguments read, over lines as a formatter wraps them
MAX_READ = 32  # refs read from one paste
MAX_CALLS = 256  # SMEM( and BlockSpec( calls looked into: a paste of them is no kernel


@dataclass(frozen=True)
class TiledRef:
    line_number: int
    shape: tuple[int, ...]
    dtype: str | None  # numpy / ml_dtypes name; None where the code does not write it here
    tiling: tuple[int, ...]
    tiling_written: str  # the tiling's tuple as the code writes it: "(8, 32)"
    swizzle: int | None


def read_tiled_refs(text: str) -> list[TiledRef]:
    """Every ref of the paste's code that a tiling transform tiles, in the paste's order."""
    bound = {found["name"]: found["value"] for found in _BOUND.finditer(text)}
    return list(islice(_refs(text, bound), MAX_READ))


def _refs(text: str, bound: dict[str, str]) -> Iterator[TiledRef]:
    for found in islice(_REF.finditer(text), MAX_CALLS):
        arguments = _arguments(text, found.end())
        dims = _FIRST_DIMS.match(arguments)
        transforms = _TRANSFORMS.search(arguments)
        if dims is None or transforms is None:
            continue
        written = _expanded(transforms["list"], bound)
        tiling = _TILING.search(written)
        if tiling is None:
            continue
        swizzle = _SWIZZLE.search(written)
        rest = arguments[dims.end() :]
        yield TiledRef(
            line_number=text.count("\n", 0, found.start()) + 1,
            shape=_integers(dims["dims"]),
            dtype=_dtype(rest) if found["kind"] == "SMEM" else None,
            tiling=_integers(tiling["dims"]),
            tiling_written=tiling["dims"],
            swizzle=int(swizzle["bytes"]) if swizzle else None,
        )


def _arguments(text: str, start: int) -> str:
    """The call's arguments from ``start`` (after its parenthesis) to the one closing it,
    within CALL_CHARS."""
    depth = 1
    for at in range(start, min(len(text), start + CALL_CHARS)):
        depth += {"(": 1, "[": 1, ")": -1, "]": -1}.get(text[at], 0)
        if depth == 0:
            return text[start:at]
    return text[start : start + CALL_CHARS]


def _expanded(transforms: str, bound: dict[str, str]) -> str:
    """The transforms with each name bound to a transform replaced by what it is bound to."""
    return re.sub(r"[A-Za-z_]\w*", lambda name: bound.get(name[0], name[0]), transforms)


def _dtype(rest: str) -> str | None:
    found = _DTYPE.match(rest)
    if found is None:
        return None
    with suppress(InputValueError):
        return parse_dtype(found["name"]).name
    return None


def _integers(dims: str) -> tuple[int, ...]:
    return tuple(int(size) for size in re.findall(r"\d+", dims))
