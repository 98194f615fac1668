"""The shared-memory budget of a pipelined Mosaic GPU kernel, counted as JAX counts it.

JAX 0.10.2 (``pallas/mosaic_gpu/pipeline.py`` and ``lowering.py``) gives each input and output
block of a ``pallas_call`` or ``emit_pipeline`` one SMEM buffer of shape
``(max_concurrent_steps, *block)``, rounds each allocation up to 1024 bytes, and adds one
8-byte barrier per concurrent step when any input is copied in; the depth is capped at the
number of sequential grid steps. ``mosaic/gpu/core.py`` then compares the total with the
device's opt-in SMEM per block (227 KiB when no GPU is there to ask). The largest depth and
the largest blocks that fit are searched here, each block re-checked by the engine's own
``pallas_call`` checks so that a smaller block does not trade this error for another.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from app.jaxref.dtypes import DType, parse_dtype
from app.jaxref.inputs import InputValueError
from app.jaxref.shapes import Dims, as_shape_spec

from .operations import LANE, MBARRIER_BYTES, OPERATIONS, evaluate, one_shape, smem_aligned
from .rule_types import MAX_SMEM_BYTES
from .versions import Version, parse_version, render_version

ROLES = ("input", "output", "scratch")
_PALLAS_CALL = OPERATIONS["pallas_call"]
_CAPACITY = "MGPU-SMEM-CAPACITY"
_NOT_BLOCKS = frozenset({_CAPACITY, "MGPU-PALLAS-CALL-UNREGISTERED"})
MAX_DEPTH = 64


@dataclass(frozen=True)
class Gpu:
    """A GPU family by compute capability, with its opt-in shared memory per block."""

    name: str
    compute_capability: str
    max_smem_bytes: int
    aliases: tuple[str, ...]


# NVIDIA's "Technical specifications per compute capability" (CUDA C++ Programming Guide),
# maximum shared memory per thread block with opt-in; the limits users' error reports print
# agree (232448 on H100, 166912 on A100, 101376 on RTX 3090, 65536 on T4).
GPUS = (
    Gpu("V100", "7.0", 96 * 1024, ("v100",)),
    Gpu("T4 / RTX 20", "7.5", 64 * 1024, ("t4", "rtx 20", "rtx20", "turing")),
    Gpu("A100 / A30", "8.0", 163 * 1024, ("a100", "a30")),
    Gpu("RTX 30 / A10 / A40", "8.6", 99 * 1024, ("a10", "a40", "rtx 30", "rtx30", "rtx 3090")),
    Gpu("Jetson Orin", "8.7", 163 * 1024, ("orin", "jetson orin")),
    Gpu("L4 / L40 / RTX 40", "8.9", 99 * 1024, ("l4", "l40", "l40s", "rtx 40", "rtx 4090")),
    Gpu("H100 / H200", "9.0", 227 * 1024, ("h100", "h200", "h800", "gh200", "hopper")),
    Gpu("B200 / GB200", "10.0", 227 * 1024, ("b200", "gb200", "blackwell")),
    Gpu("B300 / GB300", "10.3", 227 * 1024, ("b300", "gb300")),
    Gpu("RTX 50 / RTX PRO 6000", "12.0", 99 * 1024, ("rtx 50", "rtx 5090", "rtx pro 6000")),
    Gpu("DGX Spark (GB10)", "12.1", 99 * 1024, ("gb10", "dgx spark")),
)
DEFAULT_GPU = "H100"
assert any(gpu.max_smem_bytes == MAX_SMEM_BYTES for gpu in GPUS)


def parse_gpu(text: str | None) -> Gpu:
    """``H100``, ``a100``, ``sm_90``, ``sm90a``, ``9.0`` or ``compute_80``; ``None``: H100."""
    key = (text or DEFAULT_GPU).strip().lower().replace("nvidia ", "")
    capability = key.removeprefix("compute_").removeprefix("sm_").removeprefix("sm").rstrip("af")
    if capability.isdigit() and len(capability) >= 2:
        capability = f"{capability[:-1]}.{capability[-1]}"
    for gpu in GPUS:
        if key in gpu.aliases or capability == gpu.compute_capability:
            return gpu
    known = ", ".join(
        f"{gpu.aliases[0]} (sm_{gpu.compute_capability.replace('.', '')})" for gpu in GPUS
    )
    raise InputValueError("gpu", f"unknown GPU {text!r}; known: {known}")


def gpus_with_limit(limit: int) -> tuple[Gpu, ...]:
    """The GPUs whose opt-in limit this is: what a pasted ``max_smem_bytes`` names."""
    return tuple(gpu for gpu in GPUS if gpu.max_smem_bytes == limit)


def gpus_fitting(smem_bytes: int) -> tuple[Gpu, ...]:
    """The GPUs whose opt-in limit holds ``smem_bytes``."""
    return tuple(gpu for gpu in GPUS if smem_bytes <= gpu.max_smem_bytes)


@dataclass(frozen=True)
class SmemBuffer:
    """One SMEM allocation: a pipelined input or output block, or a scratch buffer."""

    dims: Dims
    dtype: DType
    role: str = "input"

    @property
    def pipelined(self) -> bool:
        return self.role != "scratch"

    def slot_bytes(self) -> int:
        """One copy of the block; JAX allocates a byte per bool."""
        elements = int(np.prod(self.dims, dtype=np.int64))
        bits = 8 if self.dtype.kind == "bool" else self.dtype.bits
        return elements * bits // 8

    def allocated(self, depth: int) -> int:
        slots = depth if self.pipelined else 1
        return smem_aligned(slots * self.slot_bytes())


@dataclass(frozen=True)
class BlockFit:
    """The largest size of one axis of one block shape (every buffer of that shape with it)."""

    dims: Dims
    axis: int
    size: int
    smem_bytes: int

    @property
    def new_dims(self) -> Dims:
        return (*self.dims[: self.axis], self.size, *self.dims[self.axis + 1 :])


@dataclass(frozen=True)
class Budget:
    buffers: tuple[SmemBuffer, ...]
    depth: int  # the concurrent steps JAX allocates (capped at the sequential steps)
    barriers: int  # scratch barriers besides the pipeline's
    gpu: Gpu
    jax_version: str
    buffer_bytes: tuple[int, ...]
    barrier_bytes: int
    smem_bytes: int
    fitting_depth: int | None  # the largest depth up to ``depth`` that fits; None: not even 1
    fitting_blocks: tuple[BlockFit, ...]  # only when the budget does not fit

    @property
    def limit(self) -> int:
        return self.gpu.max_smem_bytes

    @property
    def fits(self) -> bool:
        return self.smem_bytes <= self.limit

    @property
    def over_bytes(self) -> int:
        return max(0, self.smem_bytes - self.limit)

    @property
    def over_percent(self) -> float:
        return over_percent(self.smem_bytes, self.limit)

    @property
    def fits_on(self) -> tuple[Gpu, ...]:
        return gpus_fitting(self.smem_bytes)


def over_percent(smem_bytes: int, limit: int) -> float:
    """How far over the limit, in per cent of the limit (0 when it fits)."""
    return round(100 * max(0, smem_bytes - limit) / limit, 1) if limit else 0.0


def smem_budget(
    buffers: Sequence[tuple[str | Sequence[int], str | None, str]],
    max_concurrent_steps: int = 1,
    sequential_steps: int | None = None,
    barriers: int = 0,
    gpu: str | None = None,
    jax_version: str | None = None,
) -> Budget:
    """The kernel's SMEM as JAX counts it, for ``(shape, dtype, role)`` buffers.

    ``role`` is ``input`` or ``output`` (a pipelined block) or ``scratch``. Raises
    ``InputValueError`` naming the field (``buffers.N.shape``, ``gpu``…) for bad input.
    """
    if not buffers:
        raise InputValueError("buffers", "give at least one buffer")
    parsed = tuple(_buffer(index, *buffer) for index, buffer in enumerate(buffers))
    if not 1 <= max_concurrent_steps <= MAX_DEPTH:
        raise InputValueError(
            "max_concurrent_steps", f"max_concurrent_steps must be 1 to {MAX_DEPTH}"
        )
    if sequential_steps is not None and sequential_steps < 1:
        raise InputValueError("sequential_steps", "sequential_steps must be at least 1")
    if barriers < 0:
        raise InputValueError("barriers", "barriers cannot be negative")
    version = parse_version(jax_version)
    device = parse_gpu(gpu)
    depth = min(max_concurrent_steps, sequential_steps or max_concurrent_steps)
    sizes = tuple(buffer.allocated(depth) for buffer in parsed)
    total = _total(parsed, depth, barriers)
    fitting_depth = next(
        (d for d in range(depth, 0, -1) if _total(parsed, d, barriers) <= device.max_smem_bytes),
        None,
    )
    blocks = (
        ()
        if total <= device.max_smem_bytes
        else _fitting_blocks(parsed, depth, barriers, device, version)
    )
    return Budget(
        parsed,
        depth,
        barriers,
        device,
        render_version(version),
        sizes,
        total - sum(sizes),
        total,
        fitting_depth,
        blocks,
    )


def _buffer(index: int, shape: str | Sequence[int], dtype: str | None, role: str) -> SmemBuffer:
    field = f"buffers.{index}"
    if role not in ROLES:
        raise InputValueError(f"{field}.role", f"role must be one of {', '.join(ROLES)}")
    try:
        spec = as_shape_spec(shape)
    except InputValueError as exc:
        raise InputValueError(f"{field}.shape", str(exc)) from None
    if dtype is None and spec.dtype is None:
        raise InputValueError(f"{field}.dtype", "a dtype is required")
    resolved = parse_dtype(dtype, f"{field}.dtype") if dtype is not None else spec.dtype
    assert resolved is not None
    return SmemBuffer(spec.dims, resolved, role)


def _pipeline_barriers(buffers: Sequence[SmemBuffer], depth: int) -> int:
    """emit_pipeline allocates one barrier per concurrent step when it copies an input in."""
    return depth if any(buffer.role == "input" for buffer in buffers) else 0


def _total(buffers: Sequence[SmemBuffer], depth: int, barriers: int) -> int:
    allocated = sum(buffer.allocated(depth) for buffer in buffers)
    return allocated + (_pipeline_barriers(buffers, depth) + barriers) * MBARRIER_BYTES


def _fitting_blocks(
    buffers: tuple[SmemBuffer, ...], depth: int, barriers: int, gpu: Gpu, version: Version
) -> tuple[BlockFit, ...]:
    """For each pipelined block shape and axis, the largest divisor of that axis (so the
    array stays evenly tiled) with which the kernel fits and the block passes every other
    check of the engine's ``pallas_call`` (its TMA copy and its load)."""
    fits = []
    for dims in dict.fromkeys(buffer.dims for buffer in buffers if buffer.pipelined):
        for axis, size in enumerate(dims):
            for smaller in (d for d in range(size - 1, 0, -1) if size % d == 0):
                candidate = (*dims[:axis], smaller, *dims[axis + 1 :])
                resized = [
                    SmemBuffer(candidate, b.dtype, b.role) if b.pipelined and b.dims == dims else b
                    for b in buffers
                ]
                total = _total(resized, depth, barriers)
                dtypes = {b.dtype for b in resized if b.dims == candidate}
                if total <= gpu.max_smem_bytes and all(
                    _passes_other_checks(candidate, dtype, version) for dtype in dtypes
                ):
                    fits.append(BlockFit(dims, axis, smaller, total))
                    break
    return tuple(sorted(fits, key=lambda fit: -fit.smem_bytes))


def _passes_other_checks(dims: Dims, dtype: DType, version: Version) -> bool:
    """The block passes every check of a Lane pallas_call but the SMEM capacity, counted
    above (and the assertion of releases without one: there only the SMEM is counted)."""
    results = evaluate(_PALLAS_CALL, one_shape(dims), dtype, None, version, LANE)
    return not any(failing[0] for step, failing in results if step.rule.id not in _NOT_BLOCKS)
