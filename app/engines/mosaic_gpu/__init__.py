"""The alignment engine: JAX Pallas / Mosaic GPU alignment checks, verdicts and fixes.

Plain Python, numpy and ml_dtypes; the API layer maps these dataclasses to JSON.
"""

from app.engines.verdicts import CodeChange, Fix, Violation
from app.jaxref.dtypes import DTYPES, DType, parse_dtype
from app.jaxref.inputs import InputValueError, ShapeError, UnknownDTypeError
from app.jaxref.shapes import (
    MemRef,
    ShapeSpec,
    parse_memref,
    parse_shape,
    render_list,
    render_memref,
    render_tuple,
)

from .engine import CheckResult, check, resolve
from .fixes import fixes_for, suggest_fixes
from .operations import OPERATIONS, SEMANTICS, Operation
from .rule_types import Rule, Wording
from .rules import RULES
from .sweep import MAX_SWEEP, sweep
from .versions import DEFAULT_JAX_VERSION, parse_version, read_version

__all__ = [
    "DEFAULT_JAX_VERSION",
    "DTYPES",
    "MAX_SWEEP",
    "OPERATIONS",
    "RULES",
    "SEMANTICS",
    "CheckResult",
    "CodeChange",
    "DType",
    "Fix",
    "InputValueError",
    "MemRef",
    "Operation",
    "Rule",
    "ShapeError",
    "ShapeSpec",
    "UnknownDTypeError",
    "Violation",
    "Wording",
    "check",
    "fixes_for",
    "parse_dtype",
    "parse_memref",
    "parse_shape",
    "parse_version",
    "read_version",
    "render_list",
    "render_memref",
    "render_tuple",
    "resolve",
    "suggest_fixes",
    "sweep",
]
