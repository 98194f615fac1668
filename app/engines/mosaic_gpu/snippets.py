"""Code the user can paste: the line to change, and a validation using true bit widths."""

from __future__ import annotations

from collections.abc import Sequence

from app.jaxref.dtypes import DType
from app.jaxref.shapes import Dims, render_tuple

from .operations import Operation
from .rule_types import MAX_SMEM_BYTES, SUB_BYTE_STRIDED_LAYOUTS
from .versions import Version

_CURRENT_SMEM_LIMIT = (0, 7, 1)  # before it JAX capped SMEM at 228000 bytes
_OLD_SMEM_LIMIT = 228000

_BYTES = 'assert elements * bits % 8 == 0, "not a whole number of bytes"'
_WARPGROUP_BYTES = 'assert elements * bits // 8 % 128 == 0, "bytes not a multiple of 128"'
_STRIDED_LAYOUT = (
    "assert elements % 128 == 0 and elements > 0 and bits % 8 == 0, "
    '"x_ref[...] needs a multiple of 128 elements of at least 8 bits"'
)
_STRIDED_LAYOUT_SUB_BYTE = (
    'assert elements % 128 == 0 and elements > 0, "x_ref[...] needs a multiple of 128 elements"'
)

# One assertion per shape-dependent rule; dtype-only rules have none.
_ASSERTIONS = {
    "MGPU-COPY-INTEGER-BYTES": _BYTES,
    "MGPU-ALIAS-BYTE-ALIGNED-BITCAST": _BYTES,
    "MGPU-REFUNION-BYTE-ALIGNED-SHAPES": _BYTES,
    "MGPU-ASYNC-STORE-INTEGER-BYTES": _BYTES,
    "MGPU-COPY-WARPGROUP-BYTES": _WARPGROUP_BYTES,
    "MGPU-ASYNC-STORE-WARPGROUP-BYTES": _WARPGROUP_BYTES,
    "MGPU-DIALECT-ASYNC-STORE-BITS": (
        'assert elements * bits % 1024 == 0, "bits not a multiple of 1024"'
    ),
    "MGPU-TMA-GMEM-STRIDES-16B": (
        "assert all(math.prod(shape[i + 1:]) * bits % 128 == 0 for i in range(len(shape) - 1)), "
        '"a GMEM row stride is not a multiple of 16 bytes"'
    ),
    "MGPU-TMA-RANK-5": 'assert sum(d != 1 for d in shape) <= 5, "TMA handles at most 5 dimensions"',
    "MGPU-TMA-LASTDIM-128BITS": (
        "assert next((d for d in reversed(shape) if d != 1), 0) * bits % 128 == 0, "
        '"last dimension is not a multiple of 128 bits"'
    ),
    "MGPU-TMA-BOX-256": (
        'assert max(shape, default=0) <= 256, "TMA copies at most 256 elements per dimension"'
    ),
    "MGPU-WGSTRIDED-ELEMENT-MULTIPLE": _STRIDED_LAYOUT,
    "MGPU-WGSTRIDED-VECTOR-MULTIPLE": (
        "assert elements % (128 * min(64 // bits, elements // 128)) == 0, "
        '"x_ref[...] needs whole 8-byte vectors per thread (JAX 0.9.1 and earlier)"'
    ),
    "MGPU-DTYPE-BITCAST-1D": 'assert len(shape) == 1, "only 1-D buffers can be bitcast"',
    "MGPU-DTYPE-BITCAST-REGION": (
        "assert elements * bits % target_bits == 0, "
        '"the region is not a whole number of target elements"'
    ),
}


def jnp_spelling(dtype: DType) -> str:
    return f"jnp.{dtype.jnp_name}"


def code_line(operation: Operation, dims: Dims, dtype: DType, target: DType | None) -> str:
    """The user's construct with these values, e.g. ``plgpu.SMEM((7,), jnp.int4)``."""
    return operation.code.format(
        shape=render_tuple(dims),
        dtype=jnp_spelling(dtype),
        target=jnp_spelling(target) if target else "",
    )


def _bits_expression(dtype: DType, variable: str) -> str:
    if dtype.kind == "bool":
        return "1  # bool is i1 in Mosaic GPU"
    if dtype.kind == "complex":
        return f"2 * ml_dtypes.finfo({variable}).bits"
    info = "finfo" if dtype.kind == "float" else "iinfo"
    return f"ml_dtypes.{info}({variable}).bits  # true width: itemsize * 8 is wrong for int4"


def validation(
    operation: Operation,
    dims: Dims,
    dtype: DType,
    target: DType | None,
    releases: Sequence[tuple[Version, str]],
) -> str:
    """A standalone Python check of the operation's arithmetic for these values, as each
    release (under its lowering semantics) checks it."""
    lines = [
        "import math",
        "",
        "import jax.numpy as jnp",
        "import ml_dtypes",
        "",
        f"shape, dtype = {render_tuple(dims)}, {jnp_spelling(dtype)}",
        f"bits = {_bits_expression(dtype, 'dtype')}",
        "elements = math.prod(shape)",
    ]
    if target is not None:
        lines.append(f"target = {jnp_spelling(target)}")
        lines.append(f"target_bits = {_bits_expression(target, 'target')}")
    for version, semantics in releases:
        for step in operation.steps_for(version, semantics):
            assertion = _assertion(step.rule.id, operation, dtype, version)
            if assertion and assertion not in lines:
                lines.append(assertion)
    return "\n".join(lines) + "\n"


def _assertion(rule_id: str, operation: Operation, dtype: DType, version: Version) -> str | None:
    if rule_id == "MGPU-SMEM-CAPACITY":
        return _capacity_assertion(operation, dtype, version)
    if rule_id == "MGPU-WGSTRIDED-ELEMENT-MULTIPLE" and version >= SUB_BYTE_STRIDED_LAYOUTS:
        return _STRIDED_LAYOUT_SUB_BYTE
    return _ASSERTIONS.get(rule_id)


def _capacity_assertion(operation: Operation, dtype: DType, version: Version) -> str:
    """SMEM use as JAX allocates it: each buffer rounded up to 1024 bytes, 8 per barrier."""
    budget = operation.smem
    alloc_bits = "8" if dtype.kind == "bool" and budget.bool_bits == 8 else "bits"
    limit = MAX_SMEM_BYTES if version >= _CURRENT_SMEM_LIMIT else _OLD_SMEM_LIMIT
    return (
        f"assert {budget.buffers} * (-(-(elements * {alloc_bits} // 8) // 1024) * 1024) "
        f'+ {budget.barriers * 8} <= {limit}, "the kernel\'s SMEM exceeds {limit} bytes"'
    )
