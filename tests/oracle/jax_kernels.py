"""JAX itself as the oracle: the smallest Pallas Mosaic GPU kernel per operation.

Each operation of the alignment engine names one JAX construct. This module
builds that construct for a given ``(shape, dtype)``, lowers it for CUDA on
the CPU (no GPU needed: only ``.compile()`` would need one) and reports JAX's
own verdict: the class and message of the error the user would see, or
``None``/``None`` when the kernel lowers cleanly.

    python -m tests.oracle.jax_kernels copy_gmem_to_smem "[7]" int4
    python -m tests.oracle.jax_kernels smem_bitcast "[3]" uint8 int16
"""

from __future__ import annotations

import ast
import functools
import inspect
import math
import sys
from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax._src import dtypes as jax_dtypes
from jax._src.lib.mlir import ir
from jax._src.pallas.mosaic_gpu import core as gpu_core
from jax._src.pallas.mosaic_gpu import lowering as gpu_lowering
from jax._src.state import types as state_types
from jax.experimental import pallas as pl
from jax.experimental.mosaic.gpu import utils as mgpu_utils
from jax.experimental.pallas import mosaic_gpu as plgpu

# Lowering for CUDA needs no GPU, so never look for one. 64-bit dtypes exist only with
# x64 on (off, JAX narrows the GMEM operands to 32 bits behind the kernel's back); it
# changes no verdict for 32-bit and narrower dtypes.
jax.config.update("jax_platforms", "cpu")
jax.config.update("jax_enable_x64", True)

Shape = tuple[int, ...]
# A kernel to lower, and the specs of its arguments.
Kernel = tuple[Callable, list[jax.ShapeDtypeStruct]]

# Exceptions JAX wraps around the real error; the user-facing error is below them.
WRAPPER_CLASSES = frozenset({"JaxStackTraceBeforeTransformation", "LoweringError"})


# The kernel and pallas_call spellings changed across releases: 0.9 chose the backend by
# the compiler params, not ``backend="mosaic_gpu"``; 0.10.2 took ``out_type=`` and
# ``scratch_types=`` where 0.6 to 0.10.1 took ``out_shape=`` and ``scratch_shapes=``; 0.5 had
# no scratch argument at all (scratch came from ``pl.run_scoped`` in the body).
JAX_VERSION = tuple(int(part) for part in jax.__version__.split(".")[:3])
_NEW_SPELLINGS = (0, 9, 0)


def compiler_params(semantics: str | None) -> dict[str, object]:
    """The keyword that asks for ``semantics`` ("Lane" or "Warpgroup"); none for the
    release's default (Lane up to 0.10.2, Warpgroup from 0.11.0)."""
    if semantics is None:
        return {}
    chosen = getattr(plgpu.LoweringSemantics, semantics)
    return {"compiler_params": plgpu.CompilerParams(lowering_semantics=chosen)}


def gpu_kernel(
    body: Callable, out: jax.ShapeDtypeStruct, scratch: list, **mesh: object
) -> Callable:
    """``plgpu.kernel(body, out, scratch, **mesh)`` as this release spells it."""
    parameters = inspect.signature(plgpu.kernel).parameters
    if "out_type" in parameters:
        return plgpu.kernel(body, out_type=out, scratch_types=scratch, **mesh)
    if "scratch_shapes" in parameters:
        return plgpu.kernel(body, out_shape=out, scratch_shapes=scratch, **mesh)

    def scoped(*refs):
        pl.run_scoped(lambda *scratch_refs: body(*refs, *scratch_refs), *scratch)

    return plgpu.kernel(scoped, out_shape=out, **mesh)


def gpu_pallas_call(kernel: Callable, out: jax.ShapeDtypeStruct, semantics: str | None) -> Callable:
    """``pl.pallas_call`` on the Mosaic GPU backend, as this release selects it."""
    if JAX_VERSION >= _NEW_SPELLINGS:  # the compiler params' class selects the backend
        options = compiler_params(semantics) or {"compiler_params": plgpu.CompilerParams()}
        return pl.pallas_call(kernel, out_shape=out, **options)
    return pl.pallas_call(kernel, out_shape=out, backend="mosaic_gpu", **compiler_params(semantics))


def barrier() -> object:
    return plgpu.Barrier(num_arrivals=1)


class Verdict(NamedTuple):
    """What JAX says about one case: the user-facing error, or None/None."""

    error_class: str | None
    message: str | None

    @property
    def ok(self) -> bool:
        return self.error_class is None


def _copy_body(x_gmem, o_gmem, smem, barrier):
    """Copy the whole GMEM input into ``smem`` (TMA, sm90) and wait for it."""
    plgpu.copy_gmem_to_smem(x_gmem, smem, barrier)
    plgpu.barrier_wait(barrier)


def copy_gmem_to_smem(
    shape: Shape, dtype: jnp.dtype, target_dtype: None, semantics: str | None
) -> Kernel:
    """``plgpu.kernel`` with an ``SMEM(shape, dtype)`` scratch filled by one copy."""
    spec = jax.ShapeDtypeStruct(shape, dtype)
    scratch = [plgpu.SMEM(shape, dtype), barrier()]
    kernel = gpu_kernel(_copy_body, spec, scratch, **compiler_params(semantics))
    return kernel, [spec]


def pallas_call(
    shape: Shape, dtype: jnp.dtype, target_dtype: None, semantics: str | None
) -> Kernel:
    """The Pallas quickstart ``add_vectors`` on the Mosaic GPU backend, no grid."""

    def add_vectors_kernel(x_ref, y_ref, o_ref):
        o_ref[...] = x_ref[...] + y_ref[...]

    spec = jax.ShapeDtypeStruct(shape, dtype)
    kernel = gpu_pallas_call(add_vectors_kernel, spec, semantics)
    return kernel, [spec, spec]


def ref_union(shape: Shape, dtype: jnp.dtype, target_dtype: None, semantics: str | None) -> Kernel:
    """A one-member SMEM ``RefUnion`` scratch, then a copy into the member.

    The union is built while ``jit`` traces (a kernel factory called from the
    jitted function, the usual style), so its own check raises at trace time.
    """
    spec = jax.ShapeDtypeStruct(shape, dtype)

    def body(x_gmem, o_gmem, union, barrier):
        (member,) = union
        _copy_body(x_gmem, o_gmem, member, barrier)

    def run(x):
        union = plgpu.RefUnion(plgpu.SMEM(shape, dtype))
        return gpu_kernel(body, spec, [union, barrier()], **compiler_params(semantics))(x)

    return run, [spec]


def smem_alias(shape: Shape, dtype: jnp.dtype, target_dtype: None, semantics: str | None) -> Kernel:
    """An SMEM byte buffer viewed as ``(shape, dtype)``, then a copy into the view.

    ``RefUnion`` rejects a non-byte-aligned member before the alias transform
    is ever lowered, so this applies JAX's internal ``ExtractAliasedRef``
    transform (what a union member is) to a plain int8 scratch buffer.
    """
    spec = jax.ShapeDtypeStruct(shape, dtype)
    n_bytes = max(1, -(-math.prod(shape) * bit_width(dtype) // 8))
    # Offset 0 in alias group 0, no TMEM layout: whichever of these the release's has.
    fields = inspect.signature(gpu_core.ExtractAliasedRef).parameters
    options = {"offset": 0, "alias_group_idx": 0, "layout": None}
    alias = gpu_core.ExtractAliasedRef(
        dtype=dtype,
        shape=shape,
        **{name: value for name, value in options.items() if name in fields},
    )

    def body(x_gmem, o_gmem, buffer, barrier):
        view = state_types.TransformedRef(buffer, (alias,))
        _copy_body(x_gmem, o_gmem, view, barrier)

    scratch = [plgpu.SMEM((n_bytes,), jnp.int8), barrier()]
    kernel = gpu_kernel(body, spec, scratch, **compiler_params(semantics))
    return kernel, [spec]


def smem_bitcast(
    shape: Shape, dtype: jnp.dtype, target_dtype: jnp.dtype | None, semantics: str | None
) -> Kernel:
    """An ``SMEM(shape, dtype)`` buffer (normally 1-D uint8) viewed as ``target_dtype``.

    JAX only bitcasts exact byte slices of a RefUnion, so no public construct
    reaches a bad region size; the kernel calls JAX's own
    ``_handle_dtype_bitcast`` on the scratch ref from inline Mosaic GPU code.
    """
    if target_dtype is None:
        raise ValueError("smem_bitcast needs a target_dtype")

    def body(o_gmem, buffer):
        @plgpu.inline_mgpu(arg_types=(plgpu.RefType(),))
        def bitcast(ctx, ref):
            source = ir.MemRefType(ref.type).element_type
            target = mgpu_utils.dtype_to_ir_type(target_dtype)
            gpu_lowering._handle_dtype_bitcast(ref, source, target)

        bitcast(buffer)

    out = jax.ShapeDtypeStruct((1,), jnp.int32)
    kernel = gpu_kernel(body, out, [plgpu.SMEM(shape, dtype)], **compiler_params(semantics))
    return kernel, []


def copy_smem_to_gmem(
    shape: Shape, dtype: jnp.dtype, target_dtype: None, semantics: str | None
) -> Kernel:
    """The reverse TMA copy: an ``SMEM(shape, dtype)`` scratch stored to the output."""

    def body(o_gmem, smem):
        plgpu.copy_smem_to_gmem(smem, o_gmem)
        plgpu.wait_smem_to_gmem(0)

    out = jax.ShapeDtypeStruct(shape, dtype)
    kernel = gpu_kernel(body, out, [plgpu.SMEM(shape, dtype)], **compiler_params(semantics))
    return kernel, []


def async_store(
    shape: Shape, dtype: jnp.dtype, target_dtype: None, semantics: str | None
) -> Kernel:
    """``plgpu.async_store_smem`` of a ``(shape, dtype)`` value into the peer block's SMEM.

    Lane semantics only store into a tiled and swizzled ref, from a value in a
    tiled register layout: here the usual pair, a 128-byte swizzle with
    ``(8, 128 bytes)`` tiles and the WGMMA layout.
    """
    swizzle = 128
    tiling = (8, swizzle * 8 // bit_width(dtype))

    def body(o_gmem, smem, barrier):
        value = plgpu.layout_cast(jnp.zeros(shape, dtype), plgpu.Layout.WGMMA)
        peer = 1 - jax.lax.axis_index("x")
        plgpu.async_store_smem(value, smem, barrier, cluster_idx=peer, cluster_dim="x")
        plgpu.barrier_wait(barrier)

    transforms = (plgpu.TilingTransform(tiling), plgpu.SwizzleTransform(swizzle))
    kernel = gpu_kernel(
        body,
        jax.ShapeDtypeStruct((1,), jnp.int32),
        [plgpu.SMEM(shape, dtype, transforms=transforms), plgpu.Barrier()],
        cluster=(2,),
        cluster_names=("x",),
        **compiler_params(semantics or "Lane"),  # the construct the engine models is Lane's
    )
    return kernel, []


KERNELS: dict[str, Callable[[Shape, jnp.dtype, jnp.dtype | None, str | None], Kernel]] = {
    "copy_gmem_to_smem": copy_gmem_to_smem,
    "pallas_call": pallas_call,
    "ref_union": ref_union,
    "smem_alias": smem_alias,
    "smem_bitcast": smem_bitcast,
    "copy_smem_to_gmem": copy_smem_to_gmem,
    "async_store": async_store,
}
OPERATIONS = tuple(KERNELS)


def bit_width(dtype: jnp.dtype) -> int:
    """Bits per element as Mosaic GPU counts them (``bool`` is ``i1``)."""
    if dtype == jnp.bool_:
        return 1
    # itemsize_bits arrived in 0.6; bit_width is its older name.
    return (getattr(jax_dtypes, "itemsize_bits", None) or jax_dtypes.bit_width)(dtype)


def user_facing_error(error: BaseException) -> BaseException:
    """The error at the bottom of the traceback, below JAX's wrappers.

    By default JAX re-raises the original error (its ``__cause__`` is a
    ``JaxStackTraceBeforeTransformation``); with JAX_PALLAS_VERBOSE_ERRORS=1
    it raises a ``LoweringError`` chained from that block and the original.
    """
    while type(error).__name__ in WRAPPER_CLASSES and error.__cause__ is not None:
        error = error.__cause__
    return error


def build(
    operation: str,
    shape: Shape,
    dtype: str,
    target_dtype: str | None = None,
    semantics: str | None = None,
) -> Kernel:
    """The kernel of ``operation`` for this case; bad arguments raise here, not in JAX."""
    if operation not in KERNELS:
        raise ValueError(f"unknown operation {operation!r}; known: {', '.join(OPERATIONS)}")
    target = None if target_dtype is None else jnp.dtype(target_dtype)
    return KERNELS[operation](tuple(shape), jnp.dtype(dtype), target, semantics)


def _lower(kernel: Kernel) -> None:
    function, specs = kernel
    jax.jit(function).trace(*specs).lower(lowering_platforms=("cuda",))


def lower(operation: str, shape: Shape, dtype: str, target_dtype: str | None = None) -> None:
    """Build and lower the kernel of ``operation`` for CUDA; raises what JAX raises."""
    _lower(build(operation, shape, dtype, target_dtype))


@functools.cache
def jax_verdict(
    operation: str,
    shape: Shape,
    dtype: str,
    target_dtype: str | None = None,
    semantics: str | None = None,
) -> Verdict:
    """JAX's verdict on one case; cached, since a case always lowers the same way."""
    kernel = build(operation, shape, dtype, target_dtype, semantics)
    try:
        _lower(kernel)
    except Exception as error:
        root = user_facing_error(error)
        return Verdict(type(root).__name__, str(root))
    return Verdict(None, None)


def parse_shape(text: str) -> Shape:
    """Accept ``[7]``, ``(3, 5)``, ``7`` or ``3,5``."""
    value = ast.literal_eval(text)
    return (value,) if isinstance(value, int) else tuple(value)


def main(argv: list[str]) -> int:
    if len(argv) not in (3, 4):
        print(
            "usage: python -m tests.oracle.jax_kernels OPERATION SHAPE DTYPE [TARGET_DTYPE]\n"
            f"operations: {', '.join(OPERATIONS)}",
            file=sys.stderr,
        )
        return 2
    operation, shape, dtype, *target = argv
    try:
        verdict = jax_verdict(operation, parse_shape(shape), dtype, *target)
    except (ValueError, TypeError, SyntaxError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if verdict.ok:
        print("OK: lowers cleanly")
        return 0
    print(f"{verdict.error_class}: {verdict.message}")
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
