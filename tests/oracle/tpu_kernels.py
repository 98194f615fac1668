"""JAX itself as the TPU oracle: a copy ``pallas_call`` with one BlockSpec, lowered for TPU
on the CPU (``lowering_platforms=("tpu",)``: no TPU needed), with the chip faked through
``tpu_info.registry`` so the rank-1 rule can ask for its sublanes and lanes.

    python -m tests.oracle.tpu_kernels "[256, 256]" "[100, 100]" float32
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import jax
import jax.numpy as jnp
from jax._src.pallas.mosaic import tpu_info
from jax.experimental import pallas as pl

from .tpu_facts import CHIPS

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


@functools.cache
def jax_verdict(array: tuple[int, ...], block: Block, dtype: str, chip: str = "v5e") -> Verdict:
    """JAX's verdict on a copy kernel whose input and output take ``block``."""
    spec = pl.BlockSpec(block, index_map(block))
    aval = jax.ShapeDtypeStruct(array, jnp.dtype(dtype))
    kernel = pl.pallas_call(
        copy, grid=grid_for(array, block), in_specs=[spec], out_specs=spec, out_shape=aval
    )
    # 64-bit off, as most users run: the index map's constants print as i32.
    with jax.enable_x64(False), as_chip(chip):
        try:
            jax.jit(kernel).trace(aval).lower(lowering_platforms=("tpu",))
        except Exception as error:
            while type(error).__name__ in WRAPPER_CLASSES and error.__cause__ is not None:
                error = error.__cause__  # type: ignore[assignment]
            return type(error).__name__, str(error)
    return None, None


if __name__ == "__main__":
    print(jax_verdict(*(tuple(json.loads(arg)) for arg in sys.argv[1:3]), *sys.argv[3:]))
