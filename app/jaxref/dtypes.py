"""One registry of the dtypes Mosaic GPU kernels use, and every way users spell them.

Bit widths come from ``ml_dtypes.iinfo``/``finfo`` (``bool`` is ``i1``, 1 bit):
``itemsize * 8`` is 8 for ``int4`` because numpy stores one per byte, and that
mistake makes every alignment check pass.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

import ml_dtypes
import numpy as np

from app.jaxref.inputs import UnknownDTypeError


@dataclass(frozen=True)
class DType:
    """A dtype as the alignment checks see it."""

    name: str  # numpy / ml_dtypes name, as JAX prints it in Pallas-level messages
    bits: int  # true storage bit width
    mlir: str  # MLIR element type as Mosaic GPU prints it (signless integers)
    kind: str  # "bool", "int", "uint", "float" or "complex"

    @property
    def jnp_name(self) -> str:
        """The ``jax.numpy`` attribute for this dtype (``bool`` is ``jnp.bool_``)."""
        return "bool_" if self.name == "bool" else self.name


# (name, MLIR text, kind); the MLIR text is what Mosaic GPU renders (uint4 -> i4).
_TABLE: tuple[tuple[str, str, str], ...] = (
    ("bool", "i1", "bool"),
    ("int2", "i2", "int"),
    ("uint2", "i2", "uint"),
    ("int4", "i4", "int"),
    ("uint4", "i4", "uint"),
    ("float4_e2m1fn", "f4E2M1FN", "float"),
    ("float6_e2m3fn", "f6E2M3FN", "float"),
    ("float6_e3m2fn", "f6E3M2FN", "float"),
    ("int8", "i8", "int"),
    ("uint8", "i8", "uint"),
    ("float8_e4m3fn", "f8E4M3FN", "float"),
    ("float8_e5m2", "f8E5M2", "float"),
    ("float8_e4m3", "f8E4M3", "float"),
    ("float8_e3m4", "f8E3M4", "float"),
    ("float8_e4m3fnuz", "f8E4M3FNUZ", "float"),
    ("float8_e5m2fnuz", "f8E5M2FNUZ", "float"),
    ("float8_e4m3b11fnuz", "f8E4M3B11FNUZ", "float"),
    ("float8_e8m0fnu", "f8E8M0FNU", "float"),
    ("bfloat16", "bf16", "float"),
    ("float16", "f16", "float"),
    ("int16", "i16", "int"),
    ("uint16", "i16", "uint"),
    ("float32", "f32", "float"),
    ("int32", "i32", "int"),
    ("uint32", "i32", "uint"),
    ("float64", "f64", "float"),
    ("int64", "i64", "int"),
    ("uint64", "i64", "uint"),
    ("complex64", "complex<f32>", "complex"),
    ("complex128", "complex<f64>", "complex"),
)

# Spellings that are not a dtype's name, MLIR text or JAX short name. Bare Python
# types follow JAX's default canonicalization (x64 disabled): float -> float32.
_EXTRA_ALIASES = {
    "bool_": "bool",
    "float": "float32",
    "int": "int32",
    "uint": "uint32",
    "complex": "complex64",
    "half": "float16",
    "single": "float32",
    "double": "float64",
    "fp16": "float16",
    "fp32": "float32",
    "fp64": "float64",
}

_MODULE_PREFIX = re.compile(r"^(?:jax\.numpy|jnp|numpy|np|ml_dtypes|jax\.dtypes)\.")
_WRAPPER = re.compile(
    r"^(?:(?:jax\.numpy|jnp|numpy|np)\.)?dtype\((.*)\)$|^<class (.*)>$|^dtype\s*=\s*(.*)$"
)
# numpy array-protocol type strings need their byte-order mark here ("<f4", "|b1"):
# bare "i4"/"u4" already mean int4/uint4 as MLIR and JAX print them.
_TYPESTR = re.compile(r"^[<>=|][biufc]\d{1,2}$")


def _true_bits(name: str, kind: str) -> int:
    if kind == "bool":
        return 1
    scalar = np.dtype(getattr(ml_dtypes, name, name)).type
    if kind == "complex":
        return 2 * ml_dtypes.finfo(np.finfo(scalar).dtype).bits
    info = ml_dtypes.finfo if kind == "float" else ml_dtypes.iinfo
    return int(info(scalar).bits)


def _jax_short_name(name: str) -> str:
    """JAX's short aval name: float32 -> f32, uint4 -> u4, float8_e4m3fn -> f8_e4m3fn."""
    if name == "bfloat16":
        return "bf16"
    for long, short in (("complex", "c"), ("float", "f"), ("uint", "u"), ("int", "i")):
        if name.startswith(long):
            return short + name[len(long) :]
    return name


DTYPES: dict[str, DType] = {
    name: DType(name, _true_bits(name, kind), mlir, kind) for name, mlir, kind in _TABLE
}


def _build_aliases() -> dict[str, str]:
    aliases: dict[str, str] = {}
    for dtype in DTYPES.values():  # signed before unsigned: MLIR "i4" is int4
        for spelling in (dtype.name, dtype.mlir, _jax_short_name(dtype.name)):
            aliases.setdefault(spelling.lower(), dtype.name)
        if dtype.kind in ("int", "uint"):  # MLIR's signed/unsigned integer types
            aliases.setdefault(f"{'si' if dtype.kind == 'int' else 'ui'}{dtype.bits}", dtype.name)
    aliases.update(_EXTRA_ALIASES)
    return aliases


_ALIASES = _build_aliases()


def _unwrap(text: str) -> str:
    """Strip quotes, ``dtype(...)``/``dtype=`` wrappers and module prefixes."""
    previous = None
    while text != previous:
        previous = text
        text = text.strip().strip("'\"`").strip()
        match = _WRAPPER.match(text)
        if match:
            text = next(group for group in match.groups() if group is not None)
        text = _MODULE_PREFIX.sub("", text)
    return text


def parse_dtype(text: str | DType, field: str = "dtype") -> DType:
    """Read any common spelling: ``int4``, ``i4``, ``jnp.int4``, ``dtype('int4')``, ``<f4``...

    Case-insensitive. Unknown spellings raise :class:`UnknownDTypeError` listing
    the closest known names.
    """
    if isinstance(text, DType):
        return text
    key = _unwrap(text).lower()
    if key in _ALIASES:
        return DTYPES[_ALIASES[key]]
    if _TYPESTR.match(key):
        try:
            numpy_name = np.dtype(key).name
        except TypeError:
            numpy_name = ""
        if numpy_name in DTYPES:
            return DTYPES[numpy_name]
    raise UnknownDTypeError(text, closest_names(key), field=field)


def closest_names(text: str, limit: int = 3) -> list[str]:
    """Known dtype names nearest to ``text``: extensions of it, close names, close spellings."""
    by_prefix = [name for name in DTYPES if text and name.startswith(text)]
    by_name = difflib.get_close_matches(text, list(DTYPES), n=limit, cutoff=0.6)
    by_alias = difflib.get_close_matches(text, list(_ALIASES), n=2 * limit, cutoff=0.6)
    names = [*by_prefix, *by_name, *(_ALIASES[alias] for alias in by_alias)]
    return list(dict.fromkeys(names))[:limit]
