"""The JAX constructs the engine knows, each as the ordered checks JAX runs on it.

Orders were confirmed by lowering each construct for CUDA on a CPU (sm90) with every
release modelled, under each lowering semantics: the first failing check is the error the
user sees.
Quantities are computed for a whole batch of candidate shapes at once, so the
fix search and the sweep evaluate thousands of shapes in a few numpy operations.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from app.jaxref.dtypes import DType
from app.jaxref.shapes import (
    SMEM,
    Dims,
    MemRef,
    contiguous_strides,
    render_list,
    render_memref,
    render_tuple,
)

from .rule_types import WARPGROUP_SIZE, Condition, Quantities, Rule
from .rules import RULES
from .versions import OLDEST_MODELLED, Version

SMEM_ALIGNMENT = 1024
MBARRIER_BYTES = 8
# JAX 0.10.0 moved the TMA box check after the last-dimension check and gave
# contiguous SMEM->GMEM copies a bulk path that skips the box and descriptor checks.
_BULK_PATH = (0, 10, 0)
_BEFORE_BULK_PATH = (0, 9, 2)
# Up to 0.7.1 a pallas_call's x_ref[...] load asserted whole-byte elements before it looked
# for a register layout.
_LAST_LOAD_BYTEWIDTH = (0, 7, 1)
# Up to _LAST_LATE_PIPELINE a pallas_call lowered the kernel's body (the x_ref[...] load)
# before it built the pipeline's TMA descriptors and sized its SMEM (lowered with each release).
_LAST_LATE_PIPELINE = (0, 8, 1)
# Up to 0.9.1 a strided layout's vector was 8 bytes (or elements // 128) even where that did
# not divide the elements; 0.9.2 halves it until it does (found by lowering 0.7.0).
_LAST_UNHALVED_VECTOR = (0, 9, 1)
_EARLY_PIPELINE = (0, 8, 2)
# A kernel's lowering semantics (``plgpu.CompilerParams(lowering_semantics=...)``): Lane
# until 0.10.2, Warpgroup from 0.11.0 unless the compiler params ask for Lane.
LANE, WARPGROUP = "Lane", "Warpgroup"
SEMANTICS = (LANE, WARPGROUP)
_WARPGROUP_DEFAULT = (0, 11, 0)
# What a step checks, whatever its release: its rule, whether it measures the target dtype,
# and the condition in force.
Check = tuple[str, bool, Condition]
# 0.12.0 checks the GMEM strides after the rank, and copies a slice of unit dimensions
# as one element (up to 0.11.2 it failed to pick a last dimension).
_LAST_EARLY_STRIDES = (0, 11, 2)
_LATE_STRIDES = (0, 12, 0)
# 0.11.2 dropped the Mosaic GPU lowering of pl.pallas_call; 0.12.0 the dtype bitcast of SMEM.
_LAST_PALLAS_CALL = (0, 11, 1)
_LAST_DTYPE_BITCAST = (0, 11, 2)


def default_semantics(version: Version) -> str:
    """The lowering semantics a release gives a kernel whose compiler params name none."""
    return WARPGROUP if version >= _WARPGROUP_DEFAULT else LANE


@dataclass(frozen=True)
class Step:
    """One check of an operation, possibly only in some releases or under one semantics."""

    rule: Rule
    on_target: bool = False  # measures the target dtype (a bitcast's view)
    since: Version | None = None
    until: Version | None = None
    semantics: str | None = None  # None: under both

    def applies(self, version: Version, semantics: str) -> bool:
        return (
            self.rule.exists_in(version)
            and (self.since is None or self.since <= version)
            and (self.until is None or version <= self.until)
            and (self.semantics is None or self.semantics == semantics)
        )


@dataclass(frozen=True)
class SmemBudget:
    """What the construct allocates in SMEM: copies of the block, and barriers."""

    buffers: int = 1
    barriers: int = 1
    bool_bits: int = 8  # JAX allocates a byte per bool, unless the buffer is raw bytes


@dataclass(frozen=True)
class Unmodelled:
    """Releases in which JAX lowers the construct, under these semantics, in a way the
    engine does not model."""

    since: Version
    until: Version
    semantics: str
    reason: str

    def covers(self, version: Version, semantics: str) -> bool:
        return self.since <= version <= self.until and semantics == self.semantics


# Confirmed by lowering from 0.10.2 on; 0.10.0 and 0.9.2, lowered the same way, check copies
# under Warpgroup semantics otherwise (a unit-dimension slice, whole multiples of bytes).
_EARLY_WARPGROUP = Unmodelled(
    OLDEST_MODELLED,
    (0, 10, 1),
    WARPGROUP,
    "errata models Warpgroup semantics from JAX 0.10.2 on; earlier releases check copies "
    "under them in ways it does not model",
)


@dataclass(frozen=True)
class Operation:
    name: str
    summary: str
    steps: tuple[Step, ...]
    code: str  # the user's line, formatted with shape/dtype/target (JAX spellings)
    smem: SmemBudget = SmemBudget()
    since: Version = OLDEST_MODELLED
    until: Version | None = None  # the last release that has the construct
    semantics: tuple[str, ...] = SEMANTICS  # those it is modelled under
    unmodelled: tuple[Unmodelled, ...] = (_EARLY_WARPGROUP,)
    needs_target: bool = False
    pipeline_buffer: bool = False  # SMEM is a pallas_call pipeline slot (strided memref)

    def steps_for(self, version: Version, semantics: str) -> tuple[Step, ...]:
        return tuple(step for step in self.steps if step.applies(version, semantics))

    def checks(self, version: Version, semantics: str) -> frozenset[Check]:
        """What decides whether a shape passes in a release: the conditions its steps check,
        whatever their order and words. Releases with equal checks pass the same shapes."""
        return frozenset(
            (step.rule.id, step.on_target, step.rule.condition_in(version))
            for step in self.steps_for(version, semantics)
        )

    def is_noop(self, dtype: DType, target: DType | None) -> bool:
        """A bitcast to the same MLIR type returns the ref untouched."""
        return self.needs_target and target is not None and target.mlir == dtype.mlir

    def smem_memref(self, dims: Dims, dtype: DType) -> MemRef:
        """The SMEM ref as its error messages render it."""
        if self.pipeline_buffer:
            return MemRef(dims, dtype, SMEM, contiguous_strides(dims), None)
        return MemRef(dims, dtype, SMEM)


def _steps(*ids: str, **options: Any) -> tuple[Step, ...]:
    return tuple(Step(RULES[rule_id], **options) for rule_id in ids)


def _ending(steps: tuple[Step, ...], last: Version) -> tuple[Step, ...]:
    """``steps`` as checked up to release ``last`` only."""
    return tuple(
        replace(step, until=last if step.until is None else min(step.until, last)) for step in steps
    )


_CAPACITY = Step(RULES["MGPU-SMEM-CAPACITY"])
# mgpu.bitwidth(): no width for complex types, then only powers of two.
_BITWIDTH = _steps("MGPU-BITWIDTH-UNSUPPORTED-TYPE", "MGPU-BITWIDTH-POW2")
_COPY_BYTES = (
    Step(RULES["MGPU-COPY-INTEGER-BYTES"]),
    Step(RULES["MGPU-COPY-WARPGROUP-BYTES"], semantics=LANE),
)
_STRIDES = RULES["MGPU-TMA-GMEM-STRIDES-16B"]
_TMA_PREPARE = (
    Step(RULES["MGPU-GMEM-CONTIGUOUS"]),
    Step(_STRIDES, until=_LAST_EARLY_STRIDES),
    Step(RULES["MGPU-TMA-RANK-5"]),
    Step(RULES["MGPU-TMA-EMPTY-SLICE"], until=_LAST_EARLY_STRIDES),
    Step(_STRIDES, since=_LATE_STRIDES),
)
_TMA_DESCRIPTOR = _steps("MGPU-TMA-INTEGER-BITWIDTH", "MGPU-TMA-DTYPE")
_BOX = RULES["MGPU-TMA-BOX-256"]
_LAST_DIM = Step(RULES["MGPU-TMA-LASTDIM-128BITS"])
# GMEM -> SMEM copies always take the tensor-map path (out-of-bounds fill ZEROS).
_TMA_LOAD = (
    *_TMA_PREPARE,
    Step(_BOX, until=_BEFORE_BULK_PATH),
    _LAST_DIM,
    Step(_BOX, since=_BULK_PATH),
    *_TMA_DESCRIPTOR,
)
# The SMEM budget is checked when the kernel launches, before its body is lowered.
_KERNEL_COPY = (_CAPACITY, *_BITWIDTH, *_COPY_BYTES, *_TMA_LOAD)

# The quickstart's pallas_call, as the releases that lower it check it.
_PALLAS_CALL_LOWERING = (
    Step(RULES["MGPU-PIPELINE-EMPTY-BLOCK"]),
    Step(_CAPACITY.rule, since=_EARLY_PIPELINE),
    *_BITWIDTH,
    *_COPY_BYTES,
    *_TMA_PREPARE,
    Step(_BOX, until=_BEFORE_BULK_PATH),
    _LAST_DIM,
    Step(_BOX, since=_BULK_PATH),
    *(Step(step.rule, since=_EARLY_PIPELINE) for step in _TMA_DESCRIPTOR),
    Step(RULES["MGPU-LOAD-BYTEWIDTH"], until=_LAST_LOAD_BYTEWIDTH),
    Step(RULES["MGPU-WGSTRIDED-ELEMENT-MULTIPLE"]),
    Step(RULES["MGPU-WGSTRIDED-VECTOR-MULTIPLE"], until=_LAST_UNHALVED_VECTOR),
    *(Step(step.rule, until=_LAST_LATE_PIPELINE) for step in _TMA_DESCRIPTOR),
    Step(_CAPACITY.rule, until=_LAST_LATE_PIPELINE),
    Step(RULES["MGPU-POINTWISE-NARROW-BITWIDTH"]),
)

OPERATIONS: dict[str, Operation] = {
    operation.name: operation
    for operation in (
        Operation(
            "copy_gmem_to_smem",
            "plgpu.copy_gmem_to_smem of a whole GMEM array into an SMEM scratch (TMA, sm90)",
            _KERNEL_COPY,
            "plgpu.SMEM({shape}, {dtype})",
        ),
        Operation(
            "copy_smem_to_gmem",
            "plgpu.copy_smem_to_gmem of an SMEM scratch into the whole GMEM output",
            (
                _CAPACITY,
                *_BITWIDTH,
                *_TMA_PREPARE,
                Step(_BOX, until=_BEFORE_BULK_PATH),
                _LAST_DIM,
                *(Step(step.rule, until=_BEFORE_BULK_PATH) for step in _TMA_DESCRIPTOR),
            ),
            "plgpu.SMEM({shape}, {dtype})",
            smem=SmemBudget(barriers=0),
        ),
        Operation(
            "pallas_call",
            "the quickstart add_vectors: pallas_call without a grid, kernel reads x_ref[...]",
            (
                Step(RULES["MGPU-PALLAS-CALL-UNREGISTERED"]),
                *_ending(_PALLAS_CALL_LOWERING, _LAST_PALLAS_CALL),
            ),
            "jax.ShapeDtypeStruct({shape}, {dtype})",
            smem=SmemBudget(buffers=3),  # x, y and the output block
            unmodelled=(
                Unmodelled(
                    OLDEST_MODELLED,
                    _LAST_PALLAS_CALL,
                    WARPGROUP,
                    "under Warpgroup semantics (the default from JAX 0.11.0) a pallas_call's "
                    "blocks go through Mosaic GPU's layout inference, which errata does not "
                    "model; ask for Lane semantics to check the Lane lowering",
                ),
            ),
            pipeline_buffer=True,
        ),
        Operation(
            "ref_union",
            "plgpu.RefUnion(plgpu.SMEM(shape, dtype)) scratch, then a copy into the member",
            (
                *_steps("MGPU-REFUNION-UNSUPPORTED-DTYPE", "MGPU-REFUNION-BYTE-ALIGNED-SHAPES"),
                _CAPACITY,
                *_BITWIDTH,
                Step(RULES["MGPU-REFUNION-EMPTY"]),
                *_COPY_BYTES,
                *_TMA_LOAD,
            ),
            "plgpu.RefUnion(plgpu.SMEM({shape}, {dtype}))",
            since=(0, 6, 1),
        ),
        Operation(
            "smem_alias",
            "an SMEM byte buffer viewed as (shape, dtype) by the RefUnion alias transform, "
            "then a copy into the view",
            (
                _CAPACITY,
                *_BITWIDTH,
                Step(RULES["MGPU-ALIAS-BYTE-ALIGNED-BITCAST"]),
                *_COPY_BYTES,
                *_TMA_LOAD,
            ),
            "plgpu.RefUnion(plgpu.SMEM({shape}, {dtype}))",
            smem=SmemBudget(bool_bits=1),
            since=(0, 6, 1),
        ),
        Operation(
            "smem_bitcast",
            "a 1-D contiguous uint8 SMEM buffer of N bytes viewed as another dtype",
            (
                _CAPACITY,
                *_steps("MGPU-DTYPE-BITCAST-FROM-I8", "MGPU-DTYPE-BITCAST-1D"),
                *(Step(step.rule, on_target=True) for step in _BITWIDTH),
                Step(RULES["MGPU-DTYPE-BITCAST-REGION"]),
            ),
            "plgpu.SMEM({shape}, {dtype})  # viewed as {target}",
            smem=SmemBudget(barriers=0),
            since=(0, 6, 1),
            until=_LAST_DTYPE_BITCAST,
            needs_target=True,
        ),
        Operation(
            "async_store",
            "plgpu.async_store_smem of a register value into a cluster peer's SMEM (Lane)",
            _steps("MGPU-ASYNC-STORE-INTEGER-BYTES", "MGPU-ASYNC-STORE-WARPGROUP-BYTES"),
            "jax.ShapeDtypeStruct({shape}, {dtype})  # value passed to plgpu.async_store_smem",
            smem=SmemBudget(buffers=0, barriers=0),
            since=(0, 10, 1),
            semantics=(LANE,),
        ),
        Operation(
            "async_store_warpgroup",
            "plgpu.async_store_smem under Warpgroup lowering semantics (the dialect op)",
            (*_BITWIDTH, Step(RULES["MGPU-DIALECT-ASYNC-STORE-BITS"])),
            "jax.ShapeDtypeStruct({shape}, {dtype})  # value passed to plgpu.async_store_smem",
            smem=SmemBudget(buffers=0, barriers=0),
            since=(0, 10, 1),
            semantics=(WARPGROUP,),
            unmodelled=(),  # the catalog's dialect rule, from 0.10.1
        ),
    )
}


def _suffix_products(dims: np.ndarray) -> np.ndarray:
    """Row-major strides as MLIR computes them: zero-sized dimensions count as 1."""
    sizes = np.maximum(dims, 1)
    reversed_products = np.cumprod(sizes[:, :0:-1], axis=1)
    ones = np.ones((dims.shape[0], 1), dtype=np.int64)
    return np.concatenate([reversed_products[:, ::-1], ones], axis=1)[:, : dims.shape[1]]


def smem_aligned[Bytes: (int, np.ndarray)](nbytes: Bytes) -> Bytes:
    """``nbytes`` (an int or an array of them) as JAX allocates SMEM: rounded up to 1024."""
    return -(-nbytes // SMEM_ALIGNMENT) * SMEM_ALIGNMENT


def measure(
    dims: np.ndarray, dtype: DType, target: DType | None = None, smem: SmemBudget = SmemBudget()
) -> dict[str, Any]:
    """The quantities every rule reads, for a batch of shapes of one rank (n × rank)."""
    dims = np.asarray(dims, dtype=np.int64)
    elements = np.prod(dims, axis=1, dtype=np.int64)
    total_bits = elements * dtype.bits
    non_unit = dims != 1
    positions = np.arange(dims.shape[1])
    last_non_unit = np.where(non_unit, positions, -1).max(axis=1, initial=-1)
    # A 0-d block has no dimension to pick: JAX reads its slice as empty.
    picked = (
        np.take_along_axis(dims, np.maximum(last_non_unit, 0)[:, None], axis=1)[:, 0]
        if dims.shape[1]
        else np.zeros(len(dims), dtype=np.int64)
    )
    alloc_bits = smem.bool_bits if dtype.kind == "bool" else dtype.bits
    buffer_bytes = elements * alloc_bits // 8
    return {
        "rank": dims.shape[1],
        "elements": elements,
        "bits": dtype.bits,
        "total_bits": total_bits,
        "bytes": total_bits // 8,
        "kind": dtype.kind,
        "element_type": dtype.mlir,
        "dtype_name": dtype.name,
        "gmem_strides": _suffix_products(dims)[:, :-1],
        "zero_inner_dim": np.any(dims[:, 1:] == 0, axis=1),
        "slice_rank": non_unit.sum(axis=1),
        "slice_last": np.where(last_non_unit >= 0, picked, 0),
        # From 0.12.0 a slice of unit dimensions copies one element along its last one.
        "slice_minor": np.where(last_non_unit >= 0, picked, 1),
        "slice_max": dims.max(axis=1, initial=0),
        # The vector WGStridedFragLayout gave each thread up to 0.9.1: 8 bytes, never shortened.
        "unhalved_vector": np.minimum(64 // dtype.bits, elements // WARPGROUP_SIZE),
        "region_bits": total_bits,
        "region_bytes": total_bits // 8,
        "target_bits": target.bits if target else 0,
        "smem_buffers": smem.buffers,
        "smem_barriers": smem.barriers,
        "smem_buffer_bytes": buffer_bytes,
        "smem_bytes": smem.buffers * smem_aligned(buffer_bytes) + smem.barriers * MBARRIER_BYTES,
    }


def evaluate(
    operation: Operation,
    dims: np.ndarray,
    dtype: DType,
    target: DType | None,
    version: Version,
    semantics: str,
) -> list[tuple[Step, np.ndarray]]:
    """Each applicable step with a bool array: which shapes of the batch fail it."""
    count = len(dims)
    steps = operation.steps_for(version, semantics)
    if operation.is_noop(dtype, target):  # only the allocation is left to check
        steps = tuple(step for step in steps if step.rule is _CAPACITY.rule)
    measured = _Measured(operation, dims, dtype, target)
    results = []
    for step in steps:
        failing = step.rule.fails(measured.of(step.on_target), version)
        results.append((step, np.broadcast_to(np.asarray(failing, dtype=bool), (count,))))
    return results


def passes(
    operation: Operation,
    dims: np.ndarray,
    dtype: DType,
    target: DType | None,
    checks: frozenset[Check],
) -> np.ndarray:
    """Which shapes of the batch pass every one of ``checks`` (``Operation.checks`` of a
    release, or their union over several)."""
    if operation.is_noop(dtype, target):  # only the allocation is left to check
        checks = frozenset(check for check in checks if check[0] == _CAPACITY.rule.id)
    measured = _Measured(operation, dims, dtype, target)
    passing = np.ones(len(dims), dtype=bool)
    for _, on_target, condition in checks:
        passing &= ~np.asarray(condition(measured.of(on_target)), dtype=bool)
    return passing


class _Measured:
    """A batch's quantities, of the dtype and, when a check asks, of the target dtype."""

    def __init__(self, operation: Operation, dims: np.ndarray, dtype: DType, target: DType | None):
        self.operation, self.dims, self.target = operation, dims, target
        self.quantities = measure(dims, dtype, target, operation.smem)
        self._of_target: dict[str, Any] | None = None

    def of(self, on_target: bool) -> dict[str, Any]:
        if not on_target or self.target is None:
            return self.quantities
        if self._of_target is None:
            self._of_target = measure(self.dims, self.target, self.target, self.operation.smem)
        return self._of_target


def vary_axis(dims: Dims, axis: int, sizes: np.ndarray) -> np.ndarray:
    """A batch of ``dims`` with ``axis`` taking each of ``sizes`` in turn."""
    batch = np.repeat(np.array([dims], dtype=np.int64), len(sizes), axis=0)
    batch[:, axis] = sizes
    return batch


def one_shape(dims: Dims) -> np.ndarray:
    """A batch holding one shape (the reshape keeps a rank-0 shape a row of its own)."""
    return np.array([dims], dtype=np.int64).reshape(1, len(dims))


def case_quantities(
    operation: Operation, dims: Dims, dtype: DType, target: DType | None, on_target: bool
) -> Quantities:
    """Quantities of one case as Python values, plus the texts messages render."""
    subject = target if on_target and target is not None else dtype
    measured = measure(one_shape(dims), subject, target, operation.smem)
    scalar: dict[str, Any] = {key: _first(value) for key, value in measured.items()}
    zero_axes = [axis for axis, dim in enumerate(dims) if dim == 0]
    scalar.update(
        shape_list=render_list(dims),
        shape_tuple=render_tuple(dims),
        slice_shape_tuple=render_tuple(tuple(dim for dim in dims if dim != 1)),
        zeroth_bits=scalar["slice_minor"] * subject.bits,
        ref_ty=render_memref(operation.smem_memref(dims, subject)),
        pipeline_zero_axis=1 + (zero_axes[0] if zero_axes else 0),
        pipeline_buffer_shape=render_list((1, *dims)),
    )
    return scalar


def _first(value: Any) -> Any:
    """The single case's value: a Python int/bool, or a tuple for per-axis arrays."""
    if isinstance(value, np.ndarray):
        row = value[0]
        return tuple(int(v) for v in row) if np.ndim(row) else row.item()
    return value
