"""The example fix of the Mosaic GPU ``pallas_call`` record, lowered by whichever JAX release
this interpreter has (see ``test_releases.py``).

Writes ``{"before": verdict, "after": verdict, "pasted": text}`` as JSON, a verdict being
``null`` where the kernel lowers, else ``[class, message, file under jax/, line]`` of the frame
that raised, and ``text`` the before's traceback as Python prints it (``null`` if it lowers).

    python -m tests.oracle.release_examples
"""

from __future__ import annotations

import json
import sys
import traceback

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

from .jax_kernels import user_facing_error

jax.config.update("jax_platforms", "cpu")


def add_vectors_kernel(x_ref, y_ref, o_ref):
    o_ref[...] = x_ref[...] + y_ref[...]


def through_pallas_call(x, y):
    """The record's before: the quickstart on the Mosaic GPU backend."""
    return pl.pallas_call(
        add_vectors_kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        compiler_params=plgpu.CompilerParams(),
    )(x, y)


def through_kernel(x, y):
    """The record's after: plgpu.kernel with the blocks run through emit_pipeline."""
    block = pl.BlockSpec((128,), lambda i: (i,))

    def body(x_gmem, y_gmem, o_gmem):
        plgpu.emit_pipeline(
            lambda _, x_smem, y_smem, o_smem: add_vectors_kernel(x_smem, y_smem, o_smem),
            grid=(x.shape[0] // 128,),
            in_specs=[block, block],
            out_specs=[block],
        )(x_gmem, y_gmem, o_gmem)

    return plgpu.kernel(body, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype))(x, y)


def raised(function, size: int) -> Exception | None:
    spec = jax.ShapeDtypeStruct((size,), jnp.float32)
    try:
        jax.jit(function).trace(spec, spec).lower(lowering_platforms=("cuda",))
    except Exception as error:
        return error
    return None


def verdict(error: Exception | None) -> list[object] | None:
    if error is None:
        return None
    root = user_facing_error(error)
    frame = traceback.extract_tb(root.__traceback__)[-1]
    path = frame.filename[frame.filename.rindex("jax/") :]
    return [type(root).__name__, str(root), path, frame.lineno]


def main() -> int:
    before = raised(through_pallas_call, 128)
    answer = {
        "before": verdict(before),
        "after": verdict(raised(through_kernel, 1024)),
        "pasted": "".join(traceback.format_exception(before)) if before else None,
    }
    json.dump(answer, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
