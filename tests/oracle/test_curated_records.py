"""The curated records of the most reported errors, checked against JAX itself.

For each record whose fix can be lowered on a CPU, the smallest kernel of its example fix is
built twice: the "before" must raise the record's error from the record's own site (class,
file and line of JAX 0.10.2, and a message the record's match pattern reads), and the
"after" must lower. Mosaic GPU and Triton kernels lower for CUDA, TPU kernels for TPU:
neither needs the device. TPU lowering asks the device for its chip's tiling, so the CPU
device is registered as a TPU v5e for these tests. The safe_zip record's error is raised
from three places of Pallas: the Mosaic GPU pipeline (its site), the TPU one and the Triton
lowering, checked too; the safe_map record's from two of the Mosaic GPU pipeline: the slices
of an input's block (its site) and the loop body's comparison of an output's indices; Mosaic
GPU's tiling record's by a broadcast to 16 rows (its case) and by a read of a 16-row block of
a tiled SMEM ref, from the same line. A check of Mosaic's C++ dialect that Pallas's own
verification of the kernel runs while lowering has no Python frame at its line: its
diagnostic, under Pallas's VerificationError, must be in the record's words.
"""

from __future__ import annotations

import functools
import json
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import pytest
from jax._src import config as jax_config
from jax._src.lib.mlir import ir
from jax._src.pallas.mosaic import error_handling, tpu_info
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import triton as pltriton
from jax.sharding import AbstractMesh, NamedSharding
from jax.sharding import PartitionSpec as P

from app.answers.catalog import Catalog
from app.answers.match import MatchService
from app.config import REPO_ROOT
from app.jaxref.files import FUNCTIONS_FILE
from app.jaxref.releases import newest_release
from app.jaxref.templates import compile_pattern
from app.schemas.match import MatchRequest
from tests.data.test_site_records import UNMINED, mined_sites
from tests.oracle.answers import answers_to_the_raised_error
from tests.oracle.conftest import v5e
from tests.oracle.jax_kernels import user_facing_error
from tests.oracle.test_lowering_errors import (
    block_scaled,
    copy_on_triton,
    copy_through_smem,
    dot_with_float16,
    program_id_of_a_grid_of_one,
    tpu_add,
    wgmma_into,
)

pytestmark = pytest.mark.oracle

f32 = jnp.float32
f16 = jnp.float16
# Built inside a test, so that the oracle's JAX configuration (CPU only, x64) holds first.
Lowering = Callable[[], tuple[Callable[..., Any], list[jax.ShapeDtypeStruct], str]]


def spec(shape: tuple[int, ...], dtype: Any = f32, **kwargs: Any) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(shape, dtype, **kwargs)


def mosaic_gpu(warpgroup: bool = False) -> plgpu.CompilerParams:
    if warpgroup:
        return plgpu.CompilerParams(lowering_semantics=plgpu.LoweringSemantics.Warpgroup)
    return plgpu.CompilerParams()


def copy_kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...]


def add_one_kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...] + 1


# --- Mosaic GPU -----------------------------------------------------------------------------


def layout_casts(conflicting: bool) -> Any:
    def kernel(x_ref, o_ref):
        x = plgpu.layout_cast(x_ref[...], plgpu.Layout.WGMMA)
        other = x
        if conflicting:
            strided = plgpu.Layout.WG_STRIDED((128, 128), vec_size=1)
            other = plgpu.layout_cast(x_ref[...], strided)
            x = plgpu.layout_cast(x_ref[...], plgpu.Layout.WGMMA)
            other = plgpu.layout_cast(x, strided)
        o_ref[...] = x + other

    call = pl.pallas_call(kernel, out_shape=spec((128, 128)), compiler_params=mosaic_gpu(True))
    return call, [spec((128, 128))], "cuda"


def remote_copy(warpgroup: bool) -> Any:
    def body(x_gmem, o_gmem, smem, barrier):
        peer = plgpu.remote_ref(x_gmem, 1, device_id_type=pl.DeviceIdType.LOGICAL)
        plgpu.copy_gmem_to_smem(peer, smem, barrier)
        plgpu.barrier_wait(barrier)

    kernel = plgpu.kernel(
        body,
        out_type=spec((128,)),
        scratch_types=[plgpu.SMEM((128,), f32), plgpu.Barrier()],
        compiler_params=mosaic_gpu(warpgroup),
    )
    return kernel, [spec((128,))], "cuda"


def copy_pipeline(in_spec: Any, out_spec: Any, **options: Any) -> Any:
    """plgpu.emit_pipeline copying a (256, 128) float16 array through SMEM in 4 steps, with
    these BlockSpecs and pipeline options."""

    def body(x_gmem, o_gmem):
        def step(indices, x_smem, o_smem):
            o_smem[...] = x_smem[...]

        pipeline = plgpu.emit_pipeline(
            step, grid=(4,), in_specs=[in_spec], out_specs=[out_spec], **options
        )
        pipeline(x_gmem, o_gmem)

    kernel = plgpu.kernel(body, out_type=spec((256, 128), jnp.float16))
    return kernel, [spec((256, 128), jnp.float16)], "cuda"


def delayed_pipeline(max_concurrent_steps: int) -> Any:
    block = (64, 128)
    return copy_pipeline(
        plgpu.BlockSpec(block, lambda i: (i, 0), delay_release=1),
        plgpu.BlockSpec(block, lambda i: (i, 0)),
        max_concurrent_steps=max_concurrent_steps,
    )


def pipeline_refs(refs: int) -> Any:
    """plgpu.emit_pipeline with one input and one output spec, called with ``refs`` refs."""
    block = plgpu.BlockSpec((64, 128), lambda i: (i, 0))

    def body(x_gmem, y_gmem, o_gmem):
        def step(indices, x_smem, o_smem):
            o_smem[...] = x_smem[...]

        pipeline = plgpu.emit_pipeline(step, grid=(4,), in_specs=[block], out_specs=[block])
        pipeline(*((x_gmem, y_gmem, o_gmem) if refs == 3 else (x_gmem, o_gmem)))

    kernel = plgpu.kernel(body, out_type=spec((256, 128), jnp.float16))
    return kernel, [spec((256, 128), jnp.float16)] * 2, "cuda"


def pipeline_index_maps(one_index: str | None) -> Any:
    """plgpu.emit_pipeline copying (64, 128) blocks of a (256, 128) array, the index map of
    whose input (``one_index="in"``) or output (``"out"``) BlockSpec returns one index for the
    block's two dimensions; with neither, each returns two."""
    block = (64, 128)

    def index_map(of: str) -> Callable[..., Any]:
        return (lambda i: (i,)) if of == one_index else (lambda i: (i, 0))

    return copy_pipeline(
        plgpu.BlockSpec(block, index_map("in")), plgpu.BlockSpec(block, index_map("out"))
    )


def pipelined_sum(max_concurrent_steps: int) -> Any:
    """Two (128, 128) float16 blocks in, one out, over 8 sequential steps: 96 KiB a step."""
    block = pl.BlockSpec((128, 128), lambda i: (i, 0))

    def kernel(x_ref, y_ref, o_ref):
        o_ref[...] = x_ref[...] + y_ref[...]

    params = plgpu.CompilerParams(
        max_concurrent_steps=max_concurrent_steps, dimension_semantics=["sequential"]
    )
    call = pl.pallas_call(
        kernel,
        out_shape=spec((1024, 128), jnp.float16),
        grid=(8,),
        in_specs=[block, block],
        out_specs=block,
        compiler_params=params,
    )
    return call, [spec((1024, 128), jnp.float16)] * 2, "cuda"


def wgmma_lhs(transformed: bool) -> Any:
    transforms = (plgpu.TilingTransform((8, 64)), plgpu.SwizzleTransform(128))

    def body(a_gmem, b_gmem, o_gmem, a_smem, b_smem, barrier):
        plgpu.copy_gmem_to_smem(a_gmem, a_smem, barrier)
        plgpu.copy_gmem_to_smem(b_gmem, b_smem, barrier)
        plgpu.barrier_wait(barrier)

        def accumulate(acc):
            plgpu.wgmma(acc, a_smem, b_smem)
            plgpu.wgmma_wait(0)
            return acc[...]

        o_gmem[...] = pl.run_scoped(accumulate, plgpu.ACC((64, 64), f32))

    operand = spec((64, 64), jnp.float16)
    kernel = plgpu.kernel(
        body,
        out_type=spec((64, 64)),
        scratch_types=[
            plgpu.SMEM((64, 64), jnp.float16, transforms=transforms if transformed else ()),
            plgpu.SMEM((64, 64), jnp.float16, transforms=transforms),
            plgpu.Barrier(num_arrivals=2),
        ],
    )
    return kernel, [operand, operand], "cuda"


def prefix_sum_in_kernel(inside: bool, params: Any, platform: str) -> Any:
    def kernel(x_ref, o_ref):
        o_ref[...] = jnp.cumsum(x_ref[...], axis=-1) if inside else x_ref[...]

    call = pl.pallas_call(kernel, out_shape=spec((8, 128)), compiler_params=params)
    if inside:
        return call, [spec((8, 128))], platform
    return (lambda x: call(jnp.cumsum(x, axis=-1))), [spec((8, 128))], platform


def iota(cast: bool) -> Any:
    def body(o_ref):
        value = jax.lax.broadcasted_iota(jnp.int32, (128,), 0)
        if cast:
            value = plgpu.layout_cast(value, plgpu.Layout.WG_STRIDED((128,), vec_size=1))
        o_ref[...] = value

    return plgpu.kernel(body, out_type=spec((128,), jnp.int32)), [], "cuda"


def swizzled(shape: tuple[int, ...], dtype: Any) -> plgpu.SMEM:
    """An SMEM buffer tiled and swizzled by 128 bytes, as wgmma and tcgen05_mma read them."""
    columns = 128 // jnp.dtype(dtype).itemsize
    transforms = (plgpu.TilingTransform((8, columns)), plgpu.SwizzleTransform(128))
    return plgpu.SMEM(shape, dtype, transforms=transforms)


def wgmma_kernel(multiply: Callable[..., None], out_type: Any, operands: Any = f16) -> Any:
    """A ``plgpu.kernel`` that copies a (64, 128) lhs and a (128, 128) rhs of ``operands``
    into swizzled SMEM, then writes what ``multiply(a_smem, b_smem, o_gmem)`` makes of them."""

    def body(a_gmem, b_gmem, o_gmem, a_smem, b_smem, barrier):
        plgpu.copy_gmem_to_smem(a_gmem, a_smem, barrier)
        plgpu.copy_gmem_to_smem(b_gmem, b_smem, barrier)
        plgpu.barrier_wait(barrier)
        multiply(a_smem, b_smem, o_gmem)

    shapes = [(64, 128), (128, 128)]
    scratch = [*(swizzled(shape, operands) for shape in shapes), plgpu.Barrier(num_arrivals=2)]
    kernel = plgpu.kernel(body, out_type=out_type, scratch_types=scratch)
    return kernel, [spec(shape, operands) for shape in shapes], "cuda"


def int8_wgmma_into(acc_dtype: Any) -> Any:
    """``wgmma`` of a (64, 128) int8 lhs by a (128, 128) int8 rhs, the rhs held as (N, K)
    (8-bit wgmma reads it K-major), into a (64, 128) accumulator of ``acc_dtype``."""

    def multiply(a_smem, bt_smem, o_gmem):
        def accumulate(acc):
            plgpu.wgmma(acc, a_smem, plgpu.transpose_ref(bt_smem, (1, 0)))
            plgpu.wgmma_wait(0)
            return acc[...]

        o_gmem[...] = pl.run_scoped(accumulate, plgpu.ACC((64, 128), acc_dtype))

    return wgmma_kernel(multiply, spec((64, 128), acc_dtype), jnp.int8)


def tcgen05_mma_into(acc_shape: tuple[int, int]) -> Any:
    """``tcgen05_mma`` of a (128, 128) float16 lhs by a (128, 64) rhs into a TMEM
    accumulator of ``acc_shape``."""

    def body(a_gmem, b_gmem, o_gmem, a_smem, b_smem, acc_tmem, barrier, mma_barrier):
        plgpu.copy_gmem_to_smem(a_gmem, a_smem, barrier)
        plgpu.copy_gmem_to_smem(b_gmem, b_smem, barrier)
        plgpu.barrier_wait(barrier)
        plgpu.tcgen05_mma(acc_tmem, a_smem, b_smem, mma_barrier, accumulate=False)
        plgpu.barrier_wait(mma_barrier)
        o_gmem[...] = plgpu.async_load_tmem(acc_tmem)

    kernel = plgpu.kernel(
        body,
        out_type=spec(acc_shape),
        scratch_types=[
            swizzled((128, 128), f16),
            swizzled((128, 64), f16),
            plgpu.TMEM(acc_shape, f32),
            plgpu.Barrier(num_arrivals=2),
            plgpu.Barrier(orders_tensor_core=True),
        ],
    )
    return kernel, [spec((128, 128), f16), spec((128, 64), f16)], "cuda"


def wgmma_through_run_state(as_accumulator: bool, loaded_after: bool = False) -> Any:
    """A (64, 128) by (128, 128) float16 ``wgmma`` whose accumulator is carried as a value
    into ``pl.run_state``: wrapped in ``plgpu.ACC.init`` or not, its result written out
    as it is or passed again to ``plgpu.wgmma_accumulator_load``."""

    def multiply(a_smem, b_smem, o_gmem):
        def accumulate(acc_ref):
            plgpu.wgmma(acc_ref, a_smem, b_smem)
            plgpu.wgmma_wait(0)

        zeros = plgpu.layout_cast(jnp.zeros((64, 128), f32), plgpu.Layout.WGMMA)
        acc = pl.run_state(accumulate)(plgpu.ACC.init(zeros) if as_accumulator else zeros)
        o_gmem[...] = plgpu.wgmma_accumulator_load(acc) if loaded_after else acc

    return wgmma_kernel(multiply, spec((64, 128)))


def wgmma_product(a_smem: Any, b_smem: Any) -> Any:
    """The (64, 128) float32 result of a ``wgmma`` of the two SMEM operands, in the WGMMA
    layout."""

    def accumulate(acc):
        plgpu.wgmma(acc, a_smem, b_smem)
        plgpu.wgmma_wait(0)
        return acc[...]

    return pl.run_scoped(accumulate, plgpu.ACC((64, 128), f32))


def sum_of_a_wgmma(one_axis_at_a_time: bool) -> Any:
    """The sum of all elements of a (64, 128) by (128, 128) float16 ``wgmma``'s result:
    over both axes at once, or over its rows then the row sums."""

    def multiply(a_smem, b_smem, o_gmem):
        product = wgmma_product(a_smem, b_smem)
        if one_axis_at_a_time:
            o_gmem[...] = jnp.sum(jnp.sum(product, axis=1), axis=0)
        else:
            o_gmem[...] = jnp.sum(product)

    return wgmma_kernel(multiply, spec(()))


def column_sums_broadcast(rows: int) -> Any:
    """The column sums of a (64, 128) by (128, 128) float16 ``wgmma``'s result (a vector laid
    out as the WGMMA layout's columns) broadcast to ``rows`` rows, which the WGMMA layout the
    broadcast picks fits only in multiples of 64 (jax-ml/jax#38595 quotes 16's error)."""

    def multiply(a_smem, b_smem, o_gmem):
        column_sums = jnp.sum(wgmma_product(a_smem, b_smem), axis=0)
        o_gmem[...] = jnp.broadcast_to(column_sums, (rows, 128))

    return wgmma_kernel(multiply, spec((rows, 128)))


def tiled_block_read(rows: int) -> Any:
    """A (rows, 128) float32 block copied into an SMEM buffer tiled and swizzled for wgmma,
    read (in the WGMMA layout, as Lane semantics read such a ref) and doubled."""

    def body(x_gmem, o_gmem, smem, barrier):
        plgpu.copy_gmem_to_smem(x_gmem, smem, barrier)
        plgpu.barrier_wait(barrier)
        o_gmem[...] = smem[...] * 2

    scratch = [swizzled((rows, 128), f32), plgpu.Barrier()]
    kernel = plgpu.kernel(body, out_type=spec((rows, 128)), scratch_types=scratch)
    return kernel, [spec((rows, 128))], "cuda"


def entries_less_their_column_means(one_entry_at_a_time: bool) -> Any:
    """Each (128, 32) entry of a (4, 128, 32) float32 buffer tiled and swizzled for wgmma, less
    the means of its columns (jax-ml/jax#39999): reduced over axis 1 of the whole rank-3 value,
    whose rows the reduction's lowering takes for columns, or over axis 0 of one entry at a
    time."""
    shape = (4, 128, 32)

    def body(x_gmem, o_gmem, smem, barrier):
        plgpu.copy_gmem_to_smem(x_gmem, smem, barrier)
        plgpu.barrier_wait(barrier)
        if not one_entry_at_a_time:
            x = smem[...]
            o_gmem[...] = x - jax.lax.broadcast_in_dim(jnp.sum(x, axis=1) / 128, shape, (0, 2))
            return
        for i in range(shape[0]):
            x = smem[i]
            o_gmem[i] = x - jax.lax.broadcast_in_dim(jnp.sum(x, axis=0) / 128, x.shape, (1,))

    scratch = [swizzled(shape, f32), plgpu.Barrier()]
    kernel = plgpu.kernel(body, out_type=spec(shape), scratch_types=scratch)
    return kernel, [spec(shape)], "cuda"


# --- TPU ------------------------------------------------------------------------------------


def sharded_call(shard_mapped: bool) -> Any:
    mesh = AbstractMesh((2,), ("x",))

    def per_block(block):
        return pl.pallas_call(add_one_kernel, out_shape=spec(block.shape))(block)

    def f(x):
        if not shard_mapped:
            return per_block(x)
        mapped = jax.shard_map(
            per_block, mesh=mesh, in_specs=P("x"), out_specs=P("x"), check_vma=False
        )
        return mapped(x)

    return f, [spec((16, 128), sharding=NamedSharding(mesh, P("x")))], "tpu"


def gather_rows(vector_index: bool) -> Any:
    def kernel(x_ref, idx_ref, o_ref):
        if vector_index:
            o_ref[...] = x_ref[idx_ref[...], :]
            return
        for row in range(8):
            o_ref[pl.ds(row, 1), :] = x_ref[pl.ds(idx_ref[row], 1), :]

    call = pl.pallas_call(
        kernel,
        out_shape=spec((8, 128)),
        in_specs=[
            pl.BlockSpec(memory_space=pltpu.VMEM),
            pl.BlockSpec(memory_space=pltpu.VMEM if vector_index else pltpu.SMEM),
        ],
    )
    return call, [spec((64, 128)), spec((8,), jnp.int32)], "tpu"


def tpu_prefix_sum(as_matmul: bool) -> Any:
    if not as_matmul:
        return prefix_sum_in_kernel(True, None, "tpu")

    def kernel(x_ref, tri_ref, o_ref):
        o_ref[...] = jnp.dot(x_ref[...], tri_ref[...], preferred_element_type=f32)

    call = pl.pallas_call(kernel, out_shape=spec((8, 128)))
    return (lambda x: call(x, jnp.triu(jnp.ones((128, 128), f32)))), [spec((8, 128))], "tpu"


def tiled_copy(shape: tuple[int, ...], block: tuple[int, ...], grid: tuple[int, ...]) -> Any:
    def index_map(*indices):
        return indices

    block_spec = pl.BlockSpec(block, index_map)
    call = pl.pallas_call(
        copy_kernel, out_shape=spec(shape), grid=grid, in_specs=[block_spec], out_specs=block_spec
    )
    return call, [spec(shape)], "tpu"


def read_any_ref(with_dma: bool) -> Any:
    def direct(x_hbm, o_ref):
        o_ref[...] = x_hbm[...]

    def through_vmem(x_hbm, o_ref, buffer, semaphore):
        copy = pltpu.make_async_copy(x_hbm, buffer, semaphore)
        copy.start()
        copy.wait()
        o_ref[...] = buffer[...]

    scratch = [pltpu.VMEM((8, 128), f32), pltpu.SemaphoreType.DMA] if with_dma else []
    call = pl.pallas_call(
        through_vmem if with_dma else direct,
        out_shape=spec((8, 128)),
        in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
        scratch_shapes=scratch,
    )
    return call, [spec((8, 128))], "tpu"


def triton_product_jvp(with_custom_jvp: bool) -> Any:
    """The forward derivative of a Triton kernel's product ``x * y``, ``y`` under
    ``lax.stop_gradient`` (jax-ml/jax#37267): differentiated by JAX, or by a ``custom_jvp``
    whose rule calls the kernel on the tangents."""

    def product_kernel(x_ref, y_ref, o_ref):
        o_ref[...] = x_ref[...] * y_ref[...]

    def product(x: jax.Array, y: jax.Array) -> jax.Array:
        call = pl.pallas_call(
            product_kernel, out_shape=spec((128,)), compiler_params=pltriton.CompilerParams()
        )
        return call(x, y)

    if with_custom_jvp:
        product = jax.custom_jvp(product)

        @product.defjvp
        def _(primals: Any, tangents: Any) -> Any:
            (x, y), (dx, dy) = primals, tangents
            return product(x, y), product(dx, y) + product(x, dy)

    def loss(x: jax.Array, y: jax.Array) -> jax.Array:
        return product(x, jax.lax.stop_gradient(y)).sum()

    def forward(x: jax.Array, y: jax.Array) -> Any:
        return jax.jvp(loss, (x, y), (x, y))

    return forward, [spec((128,)), spec((128,))], "cuda"


def tpu_pipeline(
    block: tuple[int, ...],
    step: Callable[..., None] = copy_kernel,
    in_map: Callable[..., Any] | None = None,
) -> Any:
    """pltpu.emit_pipeline running ``step`` over a (256, 128) array in HBM, read through
    ``block``-shaped blocks (indexed by ``in_map``, else by the step alone) and written
    through (128, 128) ones.

    Traced with x64 off, as TPU programs run: under the oracle's x64 the pipeline's loop
    compares its int32 step with a 64-bit bound, which Mosaic's verifier rejects."""

    def body(x_hbm, o_hbm):
        pltpu.emit_pipeline(
            step,
            grid=(2,),
            in_specs=[pl.BlockSpec(block, in_map or (lambda i: (i, 0)[: len(block)]))],
            out_specs=[pl.BlockSpec((128, 128), lambda i: (i, 0))],
        )(x_hbm, o_hbm)

    call = pl.pallas_call(
        body,
        out_shape=spec((256, 128)),
        in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
        out_specs=pl.BlockSpec(memory_space=pl.ANY),
    )

    def f(x):
        with jax.enable_x64(False):
            return call(x)

    return f, [spec((256, 128))], "tpu"


def row_maxima(dtype: Any, in_int32: bool) -> Any:
    """Each row's maximum of an (8, 128) block of ``dtype``: reduced in its own dtype, or
    widened to int32, reduced, and cast back."""

    def kernel(x_ref, o_ref):
        x = x_ref[...].astype(jnp.int32) if in_int32 else x_ref[...]
        o_ref[...] = jnp.max(x, axis=1, keepdims=True).astype(o_ref.dtype)

    call = pl.pallas_call(kernel, out_shape=spec((8, 1), dtype))
    return call, [spec((8, 128), dtype)], "tpu"


def copied_from_hbm(semaphore: Any) -> Any:
    """An (8, 128) block left in HBM, copied into VMEM by a DMA that signals ``semaphore``."""

    def kernel(x_hbm, o_ref, buffer, sem):
        copy = pltpu.make_async_copy(x_hbm, buffer, sem)
        copy.start()
        copy.wait()
        o_ref[...] = buffer[...]

    call = pl.pallas_call(
        kernel,
        out_shape=spec((8, 128)),
        in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
        scratch_shapes=[pltpu.VMEM((8, 128), f32), semaphore],
    )
    return call, [spec((8, 128))], "tpu"


def masked_by_a_mask_in_hbm(as_int32: bool) -> Any:
    """A block zeroed where a boolean mask left in HBM is false, the mask copied into VMEM
    by a DMA: as bools, or passed as int32 and compared with 0 in the kernel."""
    mask_dtype = jnp.int32 if as_int32 else jnp.bool_

    def kernel(x_ref, mask_hbm, o_ref, mask_vmem, sem):
        copy = pltpu.make_async_copy(mask_hbm, mask_vmem, sem)
        copy.start()
        copy.wait()
        mask = mask_vmem[...] != 0 if as_int32 else mask_vmem[...]
        o_ref[...] = jnp.where(mask, x_ref[...], 0.0)

    call = pl.pallas_call(
        kernel,
        out_shape=spec((8, 128)),
        in_specs=[pl.BlockSpec(memory_space=pltpu.VMEM), pl.BlockSpec(memory_space=pl.ANY)],
        scratch_shapes=[pltpu.VMEM((8, 128), mask_dtype), pltpu.SemaphoreType.DMA],
    )

    def f(x, mask):
        return call(x, mask.astype(mask_dtype))

    return f, [spec((8, 128)), spec((8, 128), jnp.bool_)], "tpu"


def valid_rows_kept(by_where: bool) -> Any:
    """The first ``n`` rows of a (16, 128) bfloat16 block kept, the rest zeroed, ``n`` read
    from SMEM: by a masked store over zeros, or by ``jnp.where``."""

    def kernel(n_ref, x_ref, o_ref):
        x = x_ref[...]
        valid = jax.lax.broadcasted_iota(jnp.int32, x.shape, 0) < n_ref[0]
        if by_where:
            o_ref[...] = jnp.where(valid, x, jnp.zeros_like(x))
        else:
            o_ref[...] = jnp.zeros_like(x)
            pltpu.store(o_ref, x, mask=valid)

    call = pl.pallas_call(
        kernel,
        out_shape=spec((16, 128), jnp.bfloat16),
        in_specs=[pl.BlockSpec(memory_space=pltpu.SMEM), pl.BlockSpec(memory_space=pltpu.VMEM)],
    )
    return call, [spec((1,), jnp.int32), spec((16, 128), jnp.bfloat16)], "tpu"


def columns_permuted(in_registers: bool) -> Any:
    """An (8, 128) block with each row's columns in the order ``perm`` gives: gathered from
    the ref by integer arrays of shapes (8, 1) and (1, 128), or from the loaded block by
    ``jnp.take_along_axis``."""

    def kernel(perm_ref, x_ref, o_ref):
        perm = perm_ref[...]
        if in_registers:
            columns = jnp.broadcast_to(perm, o_ref.shape)
            o_ref[...] = jnp.take_along_axis(x_ref[...], columns, axis=1)
        else:
            rows = jax.lax.broadcasted_iota(jnp.int32, (8, 1), 0)
            o_ref[...] = x_ref[rows, perm]

    call = pl.pallas_call(kernel, out_shape=spec((8, 128)))
    return call, [spec((1, 128), jnp.int32), spec((8, 128))], "tpu"


def tile_product(preferred: Any) -> Any:
    """A (512, 512) by (512, 256) bfloat16 product written out as bfloat16: by ``@`` when
    ``preferred`` is None (a bfloat16 dot_general, so a bfloat16 accumulator), else by
    ``jnp.dot`` accumulating in ``preferred``, then cast."""

    def kernel(x_ref, w_ref, o_ref):
        if preferred is None:
            o_ref[...] = x_ref[...] @ w_ref[...]
            return
        acc = jnp.dot(x_ref[...], w_ref[...], preferred_element_type=preferred)
        o_ref[...] = acc.astype(o_ref.dtype)

    bf16 = jnp.bfloat16
    call = pl.pallas_call(kernel, out_shape=spec((512, 256), bf16))
    return call, [spec((512, 512), bf16), spec((512, 256), bf16)], "tpu"


# --- any backend: tracing -------------------------------------------------------------------


def captured_table(passed_in: bool) -> Any:
    table = jnp.arange(128, dtype=f32)

    def capturing(x_ref, o_ref):
        o_ref[...] = x_ref[...] + table

    def reading(x_ref, table_ref, o_ref):
        o_ref[...] = x_ref[...] + table_ref[...]

    if not passed_in:
        return pl.pallas_call(capturing, out_shape=spec((128,))), [spec((128,))], "tpu"
    call = pl.pallas_call(reading, out_shape=spec((128,)))
    return (lambda x: call(x, table)), [spec((128,))], "tpu"


def core_map_table(passed_in: bool) -> Any:
    table = jnp.arange(128, dtype=f32)

    def f(x):
        @pl.run_state
        def run(refs):
            x_ref, table_ref, o_ref = refs

            @pl.core_map(plgpu.Mesh())
            def _():
                o_ref[...] = x_ref[...] + (table_ref[...] if passed_in else table)

        return run((x, table, jnp.zeros_like(x)))[2]

    return f, [spec((128,))], "cuda"


def grid_scaled(x_ref, o_ref):
    o_ref[...] = x_ref[...] * (pl.program_id(0) + 1).astype(f32)


def differentiated(written_out: bool) -> Any:
    """``jax.grad`` through a kernel that reads its grid index: by JAX's JVP of the kernel,
    else by a custom_vjp whose backward pass is the same kernel (d(x * s)/dx = s)."""
    block = pl.BlockSpec((128, 128), lambda i: (i, 0))
    call = pl.pallas_call(
        grid_scaled, out_shape=spec((256, 128)), grid=(2,), in_specs=[block], out_specs=block
    )
    if not written_out:
        return (lambda x: jax.grad(lambda y: call(y).sum())(x)), [spec((256, 128))], "tpu"

    @jax.custom_vjp
    def scaled(x: jax.Array) -> jax.Array:
        return call(x)

    scaled.defvjp(lambda x: (call(x), None), lambda _, g: (call(g),))
    return (lambda x: jax.grad(lambda y: scaled(y).sum())(x)), [spec((256, 128))], "tpu"


def blocked_copy(in_spec: pl.BlockSpec, inputs: int = 1) -> Any:
    def kernel(*refs):
        refs[-1][...] = refs[0][...]

    call = pl.pallas_call(
        kernel,
        out_shape=spec((256, 256)),
        grid=(2,),
        in_specs=[in_spec] * inputs,
        out_specs=pl.BlockSpec((128, 256), lambda i: (i, 0)),
    )
    return call, [spec((256, 256))] * max(inputs, 1), "tpu"


def two_inputs(specs: int) -> Any:
    call, _, platform = blocked_copy(pl.BlockSpec((128, 256), lambda i: (i, 0)), specs)
    return call, [spec((256, 256))] * 2, platform


def two_outputs(spec_per_output: bool) -> Any:
    """A block copied to two outputs, given one BlockSpec for both or one each."""

    def kernel(x_ref, a_ref, b_ref):
        a_ref[...] = x_ref[...]
        b_ref[...] = x_ref[...]

    block = pl.BlockSpec((8, 128), lambda i: (i, 0))
    call = pl.pallas_call(
        kernel,
        out_shape=[spec((16, 128))] * 2,
        grid=(2,),
        in_specs=[block],
        out_specs=[block, block] if spec_per_output else block,
    )
    return call, [spec((16, 128))], "tpu"


def filled_block(broadcast: bool) -> Any:
    """An (8, 128) block set to one value: stored as a scalar, or broadcast to its shape."""

    def kernel(x_ref, o_ref):
        o_ref[...] = jnp.full(o_ref.shape, -1e30, o_ref.dtype) if broadcast else -1e30

    call = pl.pallas_call(kernel, out_shape=spec((8, 128)))
    return call, [spec((8, 128))], "tpu"


def scores_of_two_blocks(transposed: bool) -> Any:
    """Attention's scores ``q @ k.T`` of two (8, 128) blocks: ``jnp.dot(q, k)`` contracts
    q's 128 columns with k's 8 rows; contracting both on their last dimension does not."""

    def kernel(q_ref, k_ref, o_ref):
        q, k = q_ref[...], k_ref[...]
        if transposed:
            o_ref[...] = jax.lax.dot_general(q, k, (((1,), (1,)), ((), ())))
        else:
            o_ref[...] = jnp.dot(q, k)

    call = pl.pallas_call(kernel, out_shape=spec((8, 8)))
    return call, [spec((8, 128))] * 2, "tpu"


def doubled_in_float32(cast: bool, backend: str = "tpu") -> Any:
    """A bfloat16 block doubled in float32 and stored: as it is, or cast back to the
    output's dtype. On Mosaic GPU, whose ``atomic_store`` words the same check."""

    def kernel(x_ref, o_ref):
        doubled = x_ref[...].astype(f32) * 2
        o_ref[...] = doubled.astype(o_ref.dtype) if cast else doubled

    block = spec((8, 128), jnp.bfloat16)
    if backend == "mosaic_gpu":
        return plgpu.kernel(kernel, out_type=block), [block], "cuda"
    return pl.pallas_call(kernel, out_shape=block), [block], "tpu"


def rows_less_their_maximum(keepdims: bool) -> Any:
    """Softmax's first step, ``x - x.max(axis=1)``: a reduction without ``keepdims`` leaves
    an (8,) vector, which lines up with the (8, 128) block's 128 columns, not its 8 rows."""

    def kernel(x_ref, o_ref):
        x = x_ref[...]
        o_ref[...] = x - x.max(axis=1, keepdims=keepdims)

    call = pl.pallas_call(kernel, out_shape=spec((8, 128)))
    return call, [spec((8, 128))], "tpu"


def blocks_added(second_block_rows: int) -> Any:
    """Two (16, 128) inputs added block by block: the second tiled by ``second_block_rows``."""

    def kernel(x_ref, y_ref, o_ref):
        o_ref[...] = x_ref[...] + y_ref[...]

    rows = pl.BlockSpec((8, 128), lambda i: (i, 0))
    second = pl.BlockSpec((second_block_rows, 128), lambda i: (i * 8 // second_block_rows, 0))
    call = pl.pallas_call(
        kernel,
        out_shape=spec((16, 128)),
        grid=(2,),
        in_specs=[rows, second],
        out_specs=rows,
    )
    return call, [spec((16, 128))] * 2, "tpu"


def scaled_in_place(x_index: int) -> Any:
    """A (16, 128) array scaled by a factor prefetched into scalar memory, the result written
    over the array: its index in ``input_output_aliases`` counts the factor as input 0."""

    def kernel(factor_ref, x_ref, o_ref):
        o_ref[...] = x_ref[...] * factor_ref[0].astype(f32)

    block = pl.BlockSpec((8, 128), lambda i, factor: (i, 0))
    grid_spec = pltpu.PrefetchScalarGridSpec(
        num_scalar_prefetch=1, grid=(2,), in_specs=[block], out_specs=block
    )
    call = pl.pallas_call(
        kernel,
        out_shape=spec((16, 128)),
        grid_spec=grid_spec,
        input_output_aliases={x_index: 0},
    )
    return call, [spec((1,), jnp.int32), spec((16, 128))], "tpu"


def copied_and_incremented(aliases: dict[int, int]) -> Any:
    """One input written to two outputs, a copy and the input plus one, on Triton."""

    def kernel(x_ref, copy_ref, o_ref):
        copy_ref[...] = x_ref[...]
        o_ref[...] = x_ref[...] + 1

    call = pl.pallas_call(
        kernel,
        out_shape=[spec((128,))] * 2,
        input_output_aliases=aliases,
        compiler_params=pltriton.CompilerParams(),
    )
    return call, [spec((128,))], "cuda"


def sum_of_three(aliases: dict[int, int]) -> Any:
    """Three inputs summed into one output, on Triton."""

    def kernel(x_ref, y_ref, z_ref, o_ref):
        o_ref[...] = x_ref[...] + y_ref[...] + z_ref[...]

    call = pl.pallas_call(
        kernel,
        out_shape=spec((128,)),
        input_output_aliases=aliases,
        compiler_params=pltriton.CompilerParams(),
    )
    return call, [spec((128,))] * 3, "cuda"


def first_rows_loaded(mask_per_row: bool) -> Any:
    """The first 10 rows of a (16, 128) block loaded on Triton, the others read as zeros: the
    rows' mask as a (16,) vector, or as a (16, 1) column that broadcasts to the block."""

    def kernel(x_ref, o_ref):
        rows = jnp.arange(16) < 10
        mask = rows[:, None] if mask_per_row else rows
        o_ref[...] = pltriton.load(x_ref, mask=mask, other=0.0)

    call = pl.pallas_call(
        kernel, out_shape=spec((16, 128)), compiler_params=pltriton.CompilerParams()
    )
    return call, [spec((16, 128))], "cuda"


# --- Triton ---------------------------------------------------------------------------------


def triton_add_one(size: int) -> Any:
    call = pl.pallas_call(
        add_one_kernel, out_shape=spec((size,)), compiler_params=pltriton.CompilerParams()
    )
    return call, [spec((size,))], "cuda"


def triton_set_first(with_where: bool) -> Any:
    def kernel(x_ref, o_ref):
        x = x_ref[...]
        if with_where:
            o_ref[...] = jnp.where(jnp.arange(128, dtype=jnp.int32) == 0, 0.0, x)
        else:
            o_ref[...] = x.at[0].set(0.0)

    call = pl.pallas_call(kernel, out_shape=spec((128,)), compiler_params=pltriton.CompilerParams())
    return call, [spec((128,))], "cuda"


# The safe_zip length mismatch: raised from the GPU pipeline (its record's site) and the TPU one.
def block_incremented(through_removed_functions: bool) -> Any:
    """A block read, incremented and written: with ``pl.load`` and ``pl.store``, which JAX
    0.9.0 removed, or by indexing the refs."""

    def kernel(x_ref, o_ref):
        if through_removed_functions:
            whole = (slice(None), slice(None))
            pl.store(o_ref, whole, pl.load(x_ref, whole) + 1)
        else:
            o_ref[...] = x_ref[...] + 1

    call = pl.pallas_call(kernel, out_shape=spec((8, 128)))
    return call, [spec((8, 128))], "tpu"


def accumulated_from_the_first_step(staged: bool) -> Any:
    """An accumulator zeroed on the first grid step: by ``pl.when``, or by Python's ``if``
    on the traced step index."""

    def kernel(x_ref, o_ref):
        if staged:

            @pl.when(pl.program_id(0) == 0)
            def _():
                o_ref[...] = jnp.zeros(o_ref.shape, o_ref.dtype)

        elif pl.program_id(0) == 0:
            o_ref[...] = jnp.zeros(o_ref.shape, o_ref.dtype)
        o_ref[...] += x_ref[...]

    call = pl.pallas_call(
        kernel,
        out_shape=spec((8, 128)),
        grid=(4,),
        in_specs=[pl.BlockSpec((8, 128), lambda i: (i, 0))],
        out_specs=pl.BlockSpec((8, 128), lambda i: (0, 0)),
    )
    return call, [spec((32, 128))], "tpu"


def copied_through_scratch(in_vmem: bool) -> Any:
    """A block copied through a scratch buffer given as ``pltpu.VMEM``, or as an output's
    ``ShapeDtypeStruct``."""

    def kernel(x_ref, o_ref, scratch_ref):
        scratch_ref[...] = x_ref[...]
        o_ref[...] = scratch_ref[...]

    scratch = pltpu.VMEM((8, 128), f32) if in_vmem else spec((8, 128))
    call = pl.pallas_call(kernel, out_shape=spec((8, 128)), scratch_shapes=[scratch])
    return call, [spec((8, 128))], "tpu"


def prefix_copied(masked: bool) -> Any:
    """The first ``n`` rows of a (16, 128) block copied, ``n`` read from scalar memory: by
    slices of that traced size, or by masking the whole block."""

    def kernel(n_ref, x_ref, o_ref):
        if masked:
            rows = jax.lax.broadcasted_iota(jnp.int32, x_ref.shape, 0)
            o_ref[...] = jnp.where(rows < n_ref[0], x_ref[...], 0.0)
        else:
            n = n_ref[0]
            o_ref[pl.ds(0, n), :] = x_ref[pl.ds(0, n), :]

    call = pl.pallas_call(
        kernel,
        out_shape=spec((16, 128)),
        in_specs=[
            pl.BlockSpec(memory_space=pltpu.SMEM),
            pl.BlockSpec(memory_space=pltpu.VMEM),
        ],
    )
    return call, [spec((1,), jnp.int32), spec((16, 128))], "tpu"


def on_triton(kernel: Any, out_shape: Any, inputs: list[jax.ShapeDtypeStruct], **kw: Any) -> Any:
    call = pl.pallas_call(
        kernel, out_shape=out_shape, compiler_params=pltriton.CompilerParams(), **kw
    )
    return call, inputs, "cuda"


def merged_atomically(op: Any, acc_dtype: Any, reduce: Any, x_dtype: Any = f16) -> Any:
    """A (512,) array reduced by 4 programs: each reduces its (128,) block with ``reduce``
    and merges the result with the atomic ``op`` into a scalar accumulator of ``acc_dtype``,
    which starts as the value given for it (aliased to the output)."""

    def kernel(x_ref, init_ref, o_ref):
        op(o_ref, (), reduce(x_ref[...]).astype(o_ref.dtype))

    scalar = pl.BlockSpec((), lambda i: ())
    return on_triton(
        kernel,
        spec((), acc_dtype),
        [spec((512,), x_dtype), spec((), acc_dtype)],
        grid=(4,),
        in_specs=[pl.BlockSpec((128,), lambda i: (i,)), scalar],
        out_specs=scalar,
        input_output_aliases={1: 0},
    )


def maximum_of_blocks(acc_dtype: Any) -> Any:
    """A float16 array's maximum, merged into an ``acc_dtype`` scalar by atomic_max."""
    return merged_atomically(pltriton.atomic_max, acc_dtype, jnp.max)


def positives_counted(counter_dtype: Any) -> Any:
    """A float32 array's positive entries, counted into a ``counter_dtype`` scalar by
    atomic_add."""
    return merged_atomically(
        pltriton.atomic_add, counter_dtype, lambda x: jnp.sum(x > 0), x_dtype=f32
    )


def halves_stacked(by_stores: bool) -> Any:
    """Two (16, 128) blocks stacked into a (32, 128) one: by jnp.concatenate on axis 0, or
    by storing each into its rows of the output."""

    def kernel(x_ref, y_ref, o_ref):
        if by_stores:
            o_ref[:16, :] = x_ref[...]
            o_ref[16:, :] = y_ref[...]
        else:
            o_ref[...] = jnp.concatenate([x_ref[...], y_ref[...]], axis=0)

    return on_triton(kernel, spec((32, 128)), [spec((16, 128))] * 2)


def batched_matmul(grid_over_batch: bool) -> Any:
    """jnp.matmul of two (4, 32, 32) arrays: in one program on the whole 3-D blocks, or one
    program per batch entry, its (32, 32) matrices picked by BlockSpecs that squeeze the
    batch dimension."""

    def kernel(x_ref, y_ref, o_ref):
        o_ref[...] = jnp.matmul(x_ref[...], y_ref[...])

    shape = (4, 32, 32)
    if not grid_over_batch:
        return on_triton(kernel, spec(shape), [spec(shape)] * 2)
    block = pl.BlockSpec((None, 32, 32), lambda b: (b, 0, 0))
    return on_triton(
        kernel, spec(shape), [spec(shape)] * 2, grid=(4,), in_specs=[block] * 2, out_specs=block
    )


SAFE_ZIP = "75054f2533d302a4"
INT_INDEXING = "01643aa0e9d8645a"
TPU_SAFE_ZIP = (lambda: tpu_pipeline((128,)), lambda: tpu_pipeline((128, 128)))
TPU_SAFE_ZIP_SITE = ("jax/_src/pallas/mosaic/pipeline.py", 190)
TRITON_SAFE_ZIP = (lambda: triton_product_jvp(False), lambda: triton_product_jvp(True))
TRITON_SAFE_ZIP_SITE = ("jax/_src/pallas/triton/lowering.py", 413)
# safe_map: an input's index map of one index for a 2-D block is the record's own case (its
# site, the slices of the block); an output's raises from the pipeline's loop body.
SAFE_MAP = "70e5cd726730fb78"
OUTPUT_SAFE_MAP = (lambda: pipeline_index_maps("out"), lambda: pipeline_index_maps(None))
OUTPUT_SAFE_MAP_SITE = ("jax/_src/pallas/mosaic_gpu/pipeline.py", 398)
# A store of the wrong dtype on Mosaic GPU, whose atomic_store words the same message.
STORE_DTYPE = "690b51c339dac8c7"
GPU_STORE_DTYPE = (
    lambda: doubled_in_float32(False, "mosaic_gpu"),
    lambda: doubled_in_float32(True, "mosaic_gpu"),
)


def tpu_compiler_params(as_object: bool) -> Any:
    """A parallel grid's semantics for TPU, given as JAX 0.6 took them or as an object."""
    semantics = ("parallel",)
    params = (
        pltpu.CompilerParams(dimension_semantics=semantics)
        if as_object
        else dict(mosaic=dict(dimension_semantics=semantics))
    )
    block = pl.BlockSpec((8, 128), lambda i: (i, 0))
    call = pl.pallas_call(
        copy_kernel,
        out_shape=spec((16, 128)),
        grid=(2,),
        in_specs=[block],
        out_specs=block,
        compiler_params=params,
    )
    return call, [spec((16, 128))], "tpu"


# Mosaic GPU's tiling of a value that its layout's tiles do not divide: the record's own case is
# a broadcast to 16 rows; a 16-row block read from a tiled, swizzled SMEM ref raises it too.
TILING = "81636859129e8f9d"
TILED_BLOCK_READ = (lambda: tiled_block_read(16), lambda: tiled_block_read(64))
TILING_OF_16_ROWS = "Tiling ((64, 8), (16, 8), (8, 8), (2,)) does not apply to shape (16, 128)"


# Record id -> (before, after): the record's example fix as kernels to lower.
CASES: dict[str, tuple[Lowering, Lowering]] = {
    "33bc240ef4ec1a11": (lambda: layout_casts(True), lambda: layout_casts(False)),
    "74b1a75927341b0d": (lambda: remote_copy(True), lambda: remote_copy(False)),
    "29fc3c30ba686b22": (lambda: delayed_pipeline(1), lambda: delayed_pipeline(2)),
    SAFE_ZIP: (lambda: pipeline_refs(3), lambda: pipeline_refs(2)),
    SAFE_MAP: (lambda: pipeline_index_maps("in"), lambda: pipeline_index_maps(None)),
    "c2b669b5684f2ea3": (lambda: wgmma_lhs(False), lambda: wgmma_lhs(True)),
    "7f1f1f89e56deefe": (lambda: pipelined_sum(4), lambda: pipelined_sum(2)),
    "bd89797078361e38": (
        lambda: prefix_sum_in_kernel(True, mosaic_gpu(), "cuda"),
        lambda: prefix_sum_in_kernel(False, mosaic_gpu(), "cuda"),
    ),
    "2ca0e88b1e0680e2": (lambda: iota(False), lambda: iota(True)),
    "57a42e356c0fbc17": (lambda: sharded_call(False), lambda: sharded_call(True)),
    "01643aa0e9d8645a": (lambda: gather_rows(True), lambda: gather_rows(False)),
    "a3223b78387e9fa8": (lambda: tpu_prefix_sum(False), lambda: tpu_prefix_sum(True)),
    "22e71e6cb4e9f1e9": (
        lambda: tiled_copy((256, 512), (128, 100), (2, 4)),
        lambda: tiled_copy((256, 512), (128, 128), (2, 4)),
    ),
    "7ea3dc8f696c31b9": (
        lambda: tiled_copy((3000,), (1000,), (3,)),
        lambda: tiled_copy((4096,), (1024,), (4,)),
    ),
    "6f33718193000ea0": (lambda: read_any_ref(False), lambda: read_any_ref(True)),
    "d7bae62d587340e9": (lambda: captured_table(False), lambda: captured_table(True)),
    "abade3148550af82": (lambda: core_map_table(False), lambda: core_map_table(True)),
    "5893f88bb396a312": (
        lambda: blocked_copy(pl.BlockSpec((128,), lambda i: (i,))),
        lambda: blocked_copy(pl.BlockSpec((128, 256), lambda i: (i, 0))),
    ),
    "4e20488acc3c39bd": (
        lambda: blocked_copy(pl.BlockSpec((128, 256), lambda i: (i,))),
        lambda: blocked_copy(pl.BlockSpec((128, 256), lambda i: (i, 0))),
    ),
    "0ca44b88894ac56d": (lambda: two_inputs(1), lambda: two_inputs(2)),
    "5ed0e727a784d30b": (lambda: two_outputs(False), lambda: two_outputs(True)),
    "981ee78357db4dfe": (lambda: differentiated(False), lambda: differentiated(True)),
    "a03b8d2a9ac41191": (lambda: filled_block(False), lambda: filled_block(True)),
    STORE_DTYPE: (
        lambda: doubled_in_float32(False),
        lambda: doubled_in_float32(True),
    ),
    "ae7cc2ae06856c21": (
        lambda: scores_of_two_blocks(False),
        lambda: scores_of_two_blocks(True),
    ),
    "f0710954f7e032d8": (
        lambda: rows_less_their_maximum(False),
        lambda: rows_less_their_maximum(True),
    ),
    "afe8c70019988486": (lambda: blocks_added(16), lambda: blocks_added(8)),
    "10bcf841a8fa7518": (lambda: block_incremented(True), lambda: block_incremented(False)),
    "2e313c69be09d2a0": (lambda: prefix_copied(False), lambda: prefix_copied(True)),
    "b2a4e36f14596cb3": (
        lambda: accumulated_from_the_first_step(False),
        lambda: accumulated_from_the_first_step(True),
    ),
    "8297cfa907b1d24a": (
        lambda: copied_through_scratch(False),
        lambda: copied_through_scratch(True),
    ),
    "a607d0599b2b8b0d": (lambda: triton_add_one(100), lambda: triton_add_one(128)),
    "dd2a9428be805b30": (lambda: triton_set_first(False), lambda: triton_set_first(True)),
    "0a1202e0eac3a720": (lambda: tpu_compiler_params(False), lambda: tpu_compiler_params(True)),
    "cc1a76980e23c3b1": (
        lambda: program_id_of_a_grid_of_one(2),
        lambda: program_id_of_a_grid_of_one(0),
    ),
    "916b766de56f7e79": (lambda: tpu_add((4.0,)), lambda: tpu_add((4,))),
    "25ed327b2e5878c7": (
        lambda: tpu_add((4, 2), ("parallel",)),
        lambda: tpu_add((4, 2), ("parallel", "arbitrary")),
    ),
    "38a7a0bb074000df": (lambda: block_scaled(), lambda: block_scaled(pltpu.VMEM)),
    "a52ff9d0aab3aede": (lambda: dot_with_float16(jnp.int8), lambda: dot_with_float16(f16)),
    "8b7535d9abe8ea6f": (
        lambda: copy_through_smem((128, 128)),
        lambda: copy_through_smem((256, 128)),
    ),
    "8ea6420807cf9254": (lambda: wgmma_into(64), lambda: wgmma_into(128)),
    "8634568ded61eb9d": (lambda: copy_on_triton(True), lambda: copy_on_triton(False)),
    "5d4960595c6598ea": (lambda: int8_wgmma_into(jnp.uint32), lambda: int8_wgmma_into(jnp.int32)),
    "ff92fc688f1e9cf1": (lambda: int8_wgmma_into(f32), lambda: int8_wgmma_into(jnp.int32)),
    "8d3a37996d5915c1": (lambda: tcgen05_mma_into((64, 128)), lambda: tcgen05_mma_into((128, 64))),
    "9477715715eede71": (
        lambda: wgmma_through_run_state(False),
        lambda: wgmma_through_run_state(True),
    ),
    "1f915c202bd8ab3d": (
        lambda: wgmma_through_run_state(True, loaded_after=True),
        lambda: wgmma_through_run_state(True),
    ),
    "bd962479cfe4d6c6": (lambda: sum_of_a_wgmma(False), lambda: sum_of_a_wgmma(True)),
    "5a9f036f3ec19988": (
        lambda: entries_less_their_column_means(False),
        lambda: entries_less_their_column_means(True),
    ),
    TILING: (lambda: column_sums_broadcast(16), lambda: column_sums_broadcast(64)),
    "6c650f5c929ea23b": (
        lambda: row_maxima(jnp.int8, False),
        lambda: row_maxima(jnp.int8, True),
    ),
    "f1f25f2c692e55c8": (
        lambda: row_maxima(jnp.uint8, False),
        lambda: row_maxima(jnp.uint8, True),
    ),
    "e4e7fb90f9a4a3df": (
        lambda: copied_from_hbm(pltpu.SemaphoreType.REGULAR),
        lambda: copied_from_hbm(pltpu.SemaphoreType.DMA),
    ),
    "096a32b4fb8149a5": (
        lambda: masked_by_a_mask_in_hbm(False),
        lambda: masked_by_a_mask_in_hbm(True),
    ),
    "68ca1b663bf13134": (lambda: valid_rows_kept(False), lambda: valid_rows_kept(True)),
    "46c1ddec04c03e42": (lambda: scaled_in_place(0), lambda: scaled_in_place(1)),
    "4c290ca5abd01c54": (
        lambda: copied_and_incremented({1: 0}),
        lambda: copied_and_incremented({0: 1}),
    ),
    "1edef8ed850950fa": (lambda: sum_of_three({0: 2}), lambda: sum_of_three({2: 0})),
    "08bd976b478f84a5": (lambda: first_rows_loaded(False), lambda: first_rows_loaded(True)),
    "5e51015f07eb0216": (lambda: maximum_of_blocks(f16), lambda: maximum_of_blocks(f32)),
    "6a1dffc8ce83cc8c": (
        lambda: positives_counted(jnp.int8),
        lambda: positives_counted(jnp.int32),
    ),
    "5a2d4296409b12c8": (lambda: halves_stacked(False), lambda: halves_stacked(True)),
    "4563df526b2319f2": (lambda: batched_matmul(False), lambda: batched_matmul(True)),
    "f08356065fd65d10": (lambda: columns_permuted(False), lambda: columns_permuted(True)),
    "00790911811c47ce": (lambda: tile_product(None), lambda: tile_product(f32)),
}


@functools.cache
def curated_records() -> dict[str, dict[str, Any]]:
    """The records written by hand outside the catalog's rules, by id; not those of a
    compiler's message (``saidBy``), which no lowering by JAX raises."""
    found = {}
    for path in sorted((REPO_ROOT / "data" / "records").glob("*.json")):
        record = json.loads(path.read_text(encoding="utf-8"))["record"]
        if record.get("rule") is None and record.get("saidBy") is None:
            found[record["id"]] = record
    return found


def lower(case: Lowering) -> None:
    function, arguments, platform = case()
    jax.jit(function).trace(*arguments).lower(lowering_platforms=(platform,))


def raised_by(case: Lowering, filtering: str = "off") -> BaseException:
    """The error lowering ``case`` raises, its traceback filtered as ``filtering`` says: off
    by default, which keeps the frame that raised it (JAX hides a ref store's)."""
    with jax_config.traceback_filtering(filtering), pytest.raises(Exception) as raised:
        lower(case)
    return user_facing_error(raised.value)


@functools.cache
def pasted_traceback(case: Lowering) -> str:
    """The traceback a user would paste: the before's error, formatted as Python prints it."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(tpu_info.registry, "cpu", v5e)
        error = raised_by(case, "auto")  # as JAX prints it by default
    return "".join(traceback.format_exception(error))


def assert_raised_at(error: BaseException, record: dict[str, Any], path: str, line: int) -> None:
    """``error`` is the record's, raised from ``path`` at ``line`` (its last frame), in words
    one of its patterns reads (the installed JAX's may be an older wording)."""
    if path.endswith(".cc"):
        assert_refused_by_mosaics_verifier(error, record)
        return
    assert type(error).__name__ == record["errorClass"], error
    site = traceback.extract_tb(error.__traceback__)[-1]
    assert site.filename.endswith(path), site
    assert site.lineno == line, site
    patterns = [record["matchPattern"], *(w["pattern"] for w in record["olderWordings"])]
    if record["matchPattern"]:
        assert any(compile_pattern(p).search(str(error)) for p in patterns), str(error)
    else:  # a bare assert: no message; the frame's source line is an assert
        assert str(error) == ""
        assert site.line is not None and site.line.startswith("assert ")


def assert_refused_by_mosaics_verifier(error: BaseException, record: dict[str, Any]) -> None:
    """``error`` is the record's check of Mosaic's C++ dialect (an op's ``verify``), run
    when Pallas verifies the kernel it lowered: Pallas re-raises the bindings' MLIRError, the
    record's class, as a VerificationError. No frame stands at the C++ line (the installed
    release's site is the mined one), so the verifier's first diagnostic, and the error as
    printed, must be in words one of the record's patterns reads."""
    assert isinstance(error, error_handling.VerificationError), error
    cause = error.__cause__
    assert isinstance(cause, ir.MLIRError), cause
    assert type(cause).__name__ == record["errorClass"], cause
    diagnostic = cause.error_diagnostics[0].message
    patterns = [record["matchPattern"], *(w["pattern"] for w in record["olderWordings"])]
    for said in (diagnostic, str(error)):
        assert any(compile_pattern(p).search(said) for p in patterns), said


@functools.cache
def committed_spans() -> dict[str, Any]:
    """Where each mined release defines its functions (``data/jax-functions.json``)."""
    return dict(json.loads(FUNCTIONS_FILE.read_text(encoding="utf-8")))


def installed_site(record: dict[str, Any]) -> tuple[str, int]:
    """Where the installed JAX has the record's site: its line in that release (a curated
    record shows the newest release's). A site mining does not reach is the line of the
    installed source that holds the record's statement, in the function holding it in the
    newest release."""
    site = mined_sites().get(record["id"])
    if site is not None:
        [entry] = [e for e in site["releases"] if e["release"] == jax.__version__]
        return entry.get("filePath", site["filePath"]), entry["lineNumber"]
    path = record["filePath"]
    [statement] = [
        statement
        for file, (_, statement) in UNMINED.items()
        if json.loads(file.read_text(encoding="utf-8"))["record"]["id"] == record["id"]
    ]
    source = (Path(jax.__file__).parent.parent / path).read_text(encoding="utf-8").splitlines()
    spans = committed_spans()
    functions = spans["files"].get(path)
    if functions is None:  # a file no frame is placed in: the statement is its own
        [line] = [n for n, text in enumerate(source, 1) if statement in text]
        return path, line
    newest, installed = (
        1 << spans["releases"].index(r) for r in (newest_release(), jax.__version__)
    )
    _, function = min(  # the innermost function holding the line in the newest release
        (last - first, name)
        for name, lines in functions.items()
        for first, last, releases in lines
        if releases & newest and first <= record["lineNumber"] <= last
    )
    [line] = [
        number
        for first, last, releases in functions[function]
        if releases & installed
        for number in range(first, last + 1)
        if statement in source[number - 1]
    ]
    return path, line


@pytest.mark.usefixtures("cpu_as_tpu")
@pytest.mark.parametrize("record_id", sorted(CASES))
def test_before_raises_the_record_from_its_site_and_after_lowers(record_id: str) -> None:
    record = curated_records()[record_id]
    before, after = CASES[record_id]
    assert_raised_at(raised_by(before), record, *installed_site(record))
    lower(after)


@pytest.mark.usefixtures("cpu_as_tpu")
def test_the_tpu_pipeline_raises_the_safe_zip_record_from_its_block_shape_check() -> None:
    """The second place Pallas calls safe_zip on specs, named in the record's documentation."""
    record = curated_records()[SAFE_ZIP]
    before, after = TPU_SAFE_ZIP
    path, line = TPU_SAFE_ZIP_SITE
    assert_raised_at(raised_by(before), record, path, line)
    assert f"{path}#L{line}" in record["documentation"]
    lower(after)


def test_the_triton_lowering_raises_the_safe_zip_record_for_a_zero_tangent(
    catalog: Catalog,
) -> None:
    """A third place: the Triton lowering zips the kernel's inputs with their block
    mappings, one short when JAX drops a zero tangent. The record names it, the answer to
    the traceback links the lowering's line (not the record's pinned pipeline), and the rule
    it advises lowers."""
    record = curated_records()[SAFE_ZIP]
    before, after = TRITON_SAFE_ZIP
    path, line = TRITON_SAFE_ZIP_SITE
    assert_raised_at(raised_by(before), record, path, line)
    assert "lower_jaxpr_to_triton_ir" in record["documentation"]
    assert any("jax.custom_jvp" in solution for solution in record["solutions"])
    answer = MatchService(catalog).match(MatchRequest(text=pasted_traceback(before)))
    [found] = [m for m in answer.matches if m.errorId == SAFE_ZIP]
    assert found.why.calledBy == f"{path}:{line} lower_jaxpr_to_triton_ir"
    assert found.source is not None and found.source.filePath == path
    assert found.sourceUrl is not None and f"/{path}#L" in found.sourceUrl
    lower(after)


def test_the_gpu_pipeline_raises_the_safe_map_record_from_an_outputs_index_map(
    catalog: Catalog,
) -> None:
    """The record's second place: the pipeline's loop body compares an output's new block
    indices with those it stored last, one per block dimension, so one index for a 2-D block
    is "shorter" where an input's is "longer", as the record says. The answer to the
    traceback names loop_body and links its line, not the record's pinned slice of a block."""
    record = curated_records()[SAFE_MAP]
    before, after = OUTPUT_SAFE_MAP
    path, line = OUTPUT_SAFE_MAP_SITE
    error = raised_by(before)
    assert_raised_at(error, record, path, line)
    assert str(error) == "safe_map() argument 2 is shorter than argument 1"
    assert str(raised_by(CASES[SAFE_MAP][0])) == "safe_map() argument 2 is longer than argument 1"
    assert f"line {line} in {jax.__version__}" in record["documentation"]
    assert "'argument 2 is shorter than argument 1', the reverse" in record["documentation"]
    answer = MatchService(catalog).match(MatchRequest(text=pasted_traceback(before)))
    [found] = [m for m in answer.matches if m.errorId == SAFE_MAP]
    assert found.why.calledBy == f"{path}:{line} loop_body"
    assert found.source is not None and (found.source.filePath, found.source.line) == (path, line)
    assert found.sourceUrl is not None and f"/{path}#L{line}" in found.sourceUrl
    lower(after)


@pytest.mark.usefixtures("cpu_as_tpu")
def test_a_vmap_over_refs_lowers_as_the_int_indexing_record_says() -> None:
    """jax-ml/jax#32272: ``jax.vmap`` over a function of refs inside a TPU kernel indexed
    them with an integer vector until 0.7.2, which raised ``Cannot do int indexing on TPU``;
    the record says JAX 0.8.0 and later lower it, and so does the installed JAX."""
    record = curated_records()[INT_INDEXING]
    assert any("jax.vmap" in s and "0.8.0 and later" in s for s in record["solutions"])

    def doubled(x_ref: Any, o_ref: Any) -> None:
        o_ref[...] = x_ref[...] * 2

    def kernel(x_ref: Any, o_ref: Any) -> None:
        jax.vmap(doubled)(x_ref, o_ref)

    call = pl.pallas_call(kernel, out_shape=spec((4, 8, 128)))
    lower(lambda: (call, [spec((4, 8, 128))], "tpu"))


def test_a_mosaic_gpu_store_raises_the_store_dtype_record_from_its_site() -> None:
    """Not from Mosaic GPU's atomic_store, which prints the same message."""
    record = curated_records()[STORE_DTYPE]
    before, after = GPU_STORE_DTYPE
    assert_raised_at(raised_by(before), record, *installed_site(record))
    lower(after)


def test_a_tiled_block_of_16_rows_raises_the_tiling_record_from_its_site() -> None:
    """The record's other way in, which JAX 0.11.0 did not change as it did the broadcast's:
    read in Lane semantics, a tiled, swizzled SMEM block takes the WGMMA layout, whose 64-row
    tile 16 rows do not fill. Both print the message of jax-ml/jax#38595 word for word."""
    record = curated_records()[TILING]
    before, after = TILED_BLOCK_READ
    error = raised_by(before)
    assert_raised_at(error, record, *installed_site(record))
    assert str(error) == str(raised_by(CASES[TILING][0])) == TILING_OF_16_ROWS
    assert "jax-ml/jax#38595" in record["documentation"]
    lower(after)


@pytest.mark.parametrize(
    ("record_id", "before"),
    [
        *(pytest.param(rid, CASES[rid][0], id=rid) for rid in sorted(CASES)),
        pytest.param(SAFE_ZIP, TPU_SAFE_ZIP[0], id=f"{SAFE_ZIP}-tpu"),
        pytest.param(SAFE_ZIP, TRITON_SAFE_ZIP[0], id=f"{SAFE_ZIP}-triton"),
        pytest.param(SAFE_MAP, OUTPUT_SAFE_MAP[0], id=f"{SAFE_MAP}-output"),
        pytest.param(STORE_DTYPE, GPU_STORE_DTYPE[0], id=f"{STORE_DTYPE}-mosaic-gpu"),
        pytest.param(TILING, TILED_BLOCK_READ[0], id=f"{TILING}-read"),
    ],
)
def test_the_pasted_traceback_is_matched_to_the_record(
    record_id: str, before: Lowering, catalog: Catalog
) -> None:
    answer = MatchService(catalog).match(MatchRequest(text=pasted_traceback(before)))
    # Dated by its frames, JAX's machinery's (jit, lowering) where those are all it shows.
    assert answer.release is not None and jax.__version__ in answer.release.releases
    if not answer.matches:  # a bare assert has no message: the frame that raised it names it
        assert not curated_records()[record_id]["matchPattern"], answer
        assert [found.errorId for found in answer.raisePoints][:1] == [record_id], answer
        return
    named = [found.errorId for found in answers_to_the_raised_error(answer.matches)]
    assert named[:1] == [record_id], answer


def test_records_say_lowered_exactly_when_they_are() -> None:
    lowered = {rid for rid, r in curated_records().items() if r["verifiedBy"].startswith("Lowered")}
    assert lowered == set(CASES)
