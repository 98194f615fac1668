"""The computed parts of the answers, checked against JAX 0.10.2 lowering for CUDA on a CPU.

The SMEM budget must be the ``smem_bytes`` JAX reports, and the depth and blocks it says fit
must lower. Each curated primitive rewrite is executed as written: its before raises the
backend's unimplemented-primitive error exactly when the mined lowering rules say 0.10.2 has
no rule for it, and its after lowers.
"""

from __future__ import annotations

import json
import re
from typing import Any

import jax
import jax.numpy as jnp
import pytest
from jax.experimental import pallas as pl
from jax.experimental.mosaic.gpu import core as mosaic_core
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import triton as pltriton

from app.config import REPO_ROOT
from app.engines.mosaic_gpu.smem import parse_gpu, smem_budget
from app.jaxref.templates import compile_pattern
from app.knowledge.primitives import Rewrite, primitive_lowering, rewrites
from tests.oracle.jax_kernels import user_facing_error

pytestmark = pytest.mark.oracle

f16 = jnp.float16
_SMEM_ERROR = re.compile(r"smem_bytes=(\d+) > max_smem_bytes=(\d+)")


def pipelined_sum(block: tuple[int, int], steps: int) -> tuple[Any, list[Any]]:
    """x + y over 8 sequential steps of ``block`` float16 tiles: two inputs, one output."""
    spec = pl.BlockSpec(block, lambda i: (i, 0))
    shape = jax.ShapeDtypeStruct((block[0] * 8, block[1]), f16)

    def kernel(x_ref, y_ref, o_ref):
        o_ref[...] = x_ref[...] + y_ref[...]

    params = plgpu.CompilerParams(max_concurrent_steps=steps, dimension_semantics=["sequential"])
    call = pl.pallas_call(
        kernel, out_shape=shape, grid=(8,), in_specs=[spec, spec], out_specs=spec,
        compiler_params=params,
    )  # fmt: skip
    return call, [shape, shape]


def jax_smem_bytes(block: tuple[int, int], steps: int, limit: int) -> int | None:
    """What JAX counts, or None when the kernel lowers within ``limit``."""
    call, arguments = pipelined_sum(block, steps)
    with mosaic_core.artificial_shared_memory_limit(limit):
        try:
            jax.jit(call).trace(*arguments).lower(lowering_platforms=("cuda",))
        except ValueError as error:
            found = _SMEM_ERROR.search(str(user_facing_error(error)))
            assert found and int(found[2]) == limit, error
            return int(found[1])
    return None


def budget(block: tuple[int, int], steps: int, gpu: str) -> Any:
    buffers = [(list(block), "float16", "input")] * 2 + [(list(block), "float16", "output")]
    return smem_budget(buffers, steps, sequential_steps=8, gpu=gpu)


@pytest.mark.parametrize(
    ("block", "steps", "gpu"),
    [((128, 128), 4, "H100"), ((128, 128), 3, "H100"), ((128, 128), 4, "A100"),
     ((256, 64), 2, "sm_120"), ((64, 64), 8, "H100")],
)  # fmt: skip
def test_budget_is_what_jax_counts_and_what_it_says_fits_lowers(
    block: tuple[int, int], steps: int, gpu: str
) -> None:
    limit = parse_gpu(gpu).max_smem_bytes
    counted = budget(block, steps, gpu)
    assert jax_smem_bytes(block, steps, limit) == (None if counted.fits else counted.smem_bytes)
    if counted.fits:
        return
    assert counted.fitting_depth is not None
    assert jax_smem_bytes(block, counted.fitting_depth, limit) is None
    assert counted.fitting_depth == steps or jax_smem_bytes(block, counted.fitting_depth + 1, limit)
    for fit in counted.fitting_blocks:
        new_block = fit.new_dims
        assert len(new_block) == 2
        assert jax_smem_bytes((new_block[0], new_block[1]), steps, limit) is None, fit


# --- primitive rewrites ---------------------------------------------------------------------

_PARAMS = {"mosaic_gpu": plgpu.CompilerParams, "triton": pltriton.CompilerParams}
_RECORDS = {
    "mosaic_gpu": "mgpu-unimplemented-primitive",
    "triton": "triton-unimplemented-primitive",
}


def lower_snippet(rewrite: Rewrite, code: str) -> None:
    """Run the snippet as written: it defines ``kernel``, and ``outside`` for work done in
    plain JAX before the pallas_call."""
    namespace: dict[str, Any] = {"jax": jax, "jnp": jnp, "pl": pl, "plgpu": plgpu}
    exec(code, namespace)  # the project's own curated snippet, as served
    call = pl.pallas_call(
        namespace["kernel"],
        out_shape=jax.ShapeDtypeStruct(rewrite.output, jnp.float32),
        compiler_params=_PARAMS[rewrite.backend](),
    )
    outside = namespace.get("outside")
    function = (lambda *arrays: call(*outside(*arrays))) if outside else call
    arguments = [jax.ShapeDtypeStruct(shape, jnp.float32) for shape in rewrite.inputs]
    jax.jit(function).trace(*arguments).lower(lowering_platforms=("cuda",))


def record_pattern(backend: str) -> str:
    path = REPO_ROOT / "data" / "records" / f"{_RECORDS[backend]}.json"
    return str(json.loads(path.read_text(encoding="utf-8"))["record"]["matchPattern"])


@pytest.mark.parametrize("rewrite", rewrites(), ids=lambda r: f"{r.primitive}-{r.backend}")
def test_rewrite_lowers_and_its_before_fails_where_no_rule_exists(rewrite: Rewrite) -> None:
    semantics = "Lane" if rewrite.backend == "mosaic_gpu" else "default"
    rule = primitive_lowering(rewrite.primitive, rewrite.backend).lowered_under(semantics)
    if rule is None or "0.10.2" not in rule.releases:
        with pytest.raises(NotImplementedError) as raised:
            lower_snippet(rewrite, rewrite.before)
        message = str(user_facing_error(raised.value))
        found = compile_pattern(record_pattern(rewrite.backend)).search(message)
        assert found and found["name"] == rewrite.primitive, message
    else:
        lower_snippet(rewrite, rewrite.before)
    lower_snippet(rewrite, rewrite.after)
