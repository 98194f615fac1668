"""JAX itself as the TPU oracle: a copy ``pallas_call`` with one BlockSpec, lowered for TPU
on the CPU (``lowering_platforms=("tpu",)``: no TPU needed), with the chip faked through
``tpu_info.registry`` so the rank-1 rule can ask for its sublanes and lanes.

    python -m tests.oracle.tpu_kernels "[256, 256]" "[100, 100]" float32
    python -m tests.oracle.tpu_kernels - < cases.json     # [[array, block, dtype, chip], ...]
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

try:
    from jax._src.pallas.mosaic import tpu_info
except ImportError:  # up to 0.8.0: no check asks the chip
    tpu_info = None

# Exceptions JAX wraps around the real error; the user-facing error is below them.
WRAPPER_CLASSES = frozenset({"JaxStackTraceBeforeTransformation", "LoweringError"})
Block = tuple[int | None, ...]
# (error class, message), or (None, None) when the kernel lowers.
Verdict = tuple[str | None, str | None]


def copy(x_ref, o_ref):  # type: ignore[no-untyped-def]
    o_ref[...] = x_ref[...]


# What JAX's messages call the kernel: its debug info's ``func_src_info``.
KERNEL = f"copy at {copy.__code__.co_filename}:{copy.__code__.co_firstlineno}"


@contextmanager
def as_chip(chip: str) -> Iterator[None]:
    """Lower as for ``chip``: the CPU device's kind answers with that chip's TpuInfo."""
    if not hasattr(tpu_info, "get_tpu_info_for_chip"):  # before 0.9.2 no check asks the chip
        yield
        return
    from .tpu_facts import CHIPS  # only a release with a tpu_info has it

    saved = tpu_info.registry.get("cpu")
    tpu_info.registry["cpu"] = lambda: tpu_info.get_tpu_info_for_chip(CHIPS[chip], 1)
    tpu_info.get_tpu_info.cache_clear()
    try:
        yield
    finally:
        if saved is None:
            del tpu_info.registry["cpu"]
        else:
            tpu_info.registry["cpu"] = saved
        tpu_info.get_tpu_info.cache_clear()


def index_map(block: Block) -> Callable[..., tuple[int, ...]]:
    """One grid index per unsqueezed dimension, in order; 0 for a squeezed one."""

    def mapping(*grid):  # type: ignore[no-untyped-def]
        indices = iter(grid)
        return tuple(0 if size is None else next(indices) for size in block)

    return mapping


def grid_for(array: tuple[int, ...], block: Block) -> tuple[int, ...]:
    if len(array) != len(block):
        return (1,) * sum(size is not None for size in block)
    return tuple(-(-a // b) for a, b in zip(array, block, strict=True) if b is not None)


def fixed_block(block: Block, fix_shape: tuple[int, ...]) -> Block:
    """The block a fix names: the engine changes only the axes a check reads (the last two,
    or the only one), so a squeezed leading dimension stays squeezed."""
    kept = range(len(block) - 2 if len(block) >= 2 else 0)
    return tuple(
        None if block[axis] is None and axis in kept else size
        for axis, size in enumerate(fix_shape)
    )


def _x64_off() -> AbstractContextManager[object]:
    """64-bit off for the lowering (``jax.enable_x64`` exists from 0.8.0; before it, a
    release's own process never turns it on)."""
    if not jax.config.jax_enable_x64:
        return nullcontext()
    return jax.enable_x64(False)


@functools.cache
def jax_verdict(array: tuple[int, ...], block: Block, dtype: str, chip: str = "v5e") -> Verdict:
    """JAX's verdict on a copy kernel whose input and output take ``block``."""
    spec = pl.BlockSpec(block, index_map(block))
    aval = jax.ShapeDtypeStruct(array, jnp.dtype(dtype))
    kernel = pl.pallas_call(
        copy, grid=grid_for(array, block), in_specs=[spec], out_specs=spec, out_shape=aval
    )
    # 64-bit off, as most users run: the index map's constants print as i32.
    with _x64_off(), as_chip(chip):
        try:
            jax.jit(kernel).trace(aval).lower(lowering_platforms=("tpu",))
        except Exception as error:
            while type(error).__name__ in WRAPPER_CLASSES and error.__cause__ is not None:
                error = error.__cause__  # type: ignore[assignment]
            return type(error).__name__, str(error)
    return None, None


if __name__ == "__main__":
    if sys.argv[1:] == ["-"]:  # a JSON list of cases on stdin: their verdicts on stdout
        cases = json.load(sys.stdin)
        print(
            json.dumps(
                [
                    jax_verdict(tuple(array), tuple(block), dtype, chip)
                    for array, block, dtype, chip in cases
                ]
            )
        )
    else:
        print(jax_verdict(*(tuple(json.loads(arg)) for arg in sys.argv[1:3]), *sys.argv[3:]))
