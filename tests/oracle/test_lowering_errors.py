"""Errors JAX 0.10.2 raises while it lowers a kernel for its backend, raised by JAX itself.

Each kernel below carries a mistake people make (a swizzle no GPU has, a grid given as a
float, an accumulator of the wrong shape, a dot of two dtypes on Triton, ...). It is lowered
for its backend on the CPU, its error formatted as Python prints it (JAX's frames filtered
as by default), and the paste must be matched to the record of the site that raised it, in
the words 0.10.2 prints (not an older wording that happens to read the same text), dated
to 0.10.2 with nothing contradicting it, its source pinned to that release.
"""

from __future__ import annotations

import functools
import traceback
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import pytest
from jax._src import config as jax_config
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import triton as plt

from app.answers.catalog import Catalog
from app.answers.match import MatchService
from app.jaxref.releases import release_commits
from app.schemas.match import MatchRequest
from tests.data.test_site_records import mined_sites
from tests.oracle.answers import answers_to_the_raised_error
from tests.oracle.test_traced_body_errors import mined_at

pytestmark = [pytest.mark.oracle, pytest.mark.usefixtures("cpu_as_tpu")]

f16, f32 = jnp.float16, jnp.float32
# What to lower: the function, its arguments' specs, and the platform.
Lowering = tuple[Callable[..., Any], list[jax.ShapeDtypeStruct], str]


def spec(shape: tuple[int, ...], dtype: Any = f32) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(shape, dtype)


def copy_through_smem(smem_shape: tuple[int, ...], swizzle: int | None = None) -> Lowering:
    """A Mosaic GPU copy of a (256, 128) float16 array into SMEM of ``smem_shape``."""

    def body(x_gmem: Any, o_gmem: Any, smem: Any, barrier: Any) -> None:
        plgpu.copy_gmem_to_smem(x_gmem, smem, barrier)
        plgpu.barrier_wait(barrier)

    transforms = ()
    if swizzle is not None:
        transforms = (plgpu.TilingTransform((8, 64)), plgpu.SwizzleTransform(swizzle))
    scratch = [plgpu.SMEM(smem_shape, f16, transforms=transforms), plgpu.Barrier(num_arrivals=1)]
    call = plgpu.kernel(body, out_type=spec((1,), jnp.int32), scratch_types=scratch)
    return call, [spec((256, 128), f16)], "cuda"


def wgmma_into(acc_columns: int) -> Lowering:
    """``wgmma`` of (64, 128) by (128, 128) into a (64, ``acc_columns``) accumulator."""

    def body(a_gmem: Any, b_gmem: Any, o_gmem: Any, *scratch: Any) -> None:
        a_smem, b_smem, acc, barrier = scratch
        plgpu.copy_gmem_to_smem(a_gmem, a_smem, barrier)
        plgpu.copy_gmem_to_smem(b_gmem, b_smem, barrier)
        plgpu.barrier_wait(barrier)
        plgpu.wgmma(acc, a_smem, b_smem)
        plgpu.wgmma_wait(0)

    tiled = (plgpu.TilingTransform((8, 64)), plgpu.SwizzleTransform(128))
    scratch = [
        plgpu.SMEM((64, 128), f16, transforms=tiled),
        plgpu.SMEM((128, 128), f16, transforms=tiled),
        plgpu.ACC((64, acc_columns), f32),
        plgpu.Barrier(num_arrivals=2),
    ]
    call = plgpu.kernel(body, out_type=spec((64, 128)), scratch_types=scratch)
    return call, [spec((64, 128), f16), spec((128, 128), f16)], "cuda"


def program_id_of_a_grid_of_one(axis: int) -> Lowering:
    def kernel(x_ref: Any, o_ref: Any) -> None:
        o_ref[...] = x_ref[...] + pl.program_id(axis).astype(f32)

    block = pl.BlockSpec((128,), lambda i: (i,))
    call = pl.pallas_call(
        kernel, out_shape=spec((256,)), grid=(2,), in_specs=[block], out_specs=block,
        compiler_params=plgpu.CompilerParams(),
    )  # fmt: skip
    return call, [spec((256,))], "cuda"


def tpu_add(
    grid: tuple[Any, ...],
    semantics: tuple[str, ...] | None = None,
    block_shape: tuple[int, int] = (8, 128),
) -> Lowering:
    """x + 1 over blocks of a (32, 256) array, (8, 128) unless ``block_shape`` says."""

    def kernel(x_ref: Any, o_ref: Any) -> None:
        o_ref[...] = x_ref[...] + 1

    block = pl.BlockSpec(block_shape, lambda *ij: (*ij, 0)[:2])
    params = pltpu.CompilerParams(dimension_semantics=semantics) if semantics else None
    call = pl.pallas_call(
        kernel, out_shape=spec((32, 256)), grid=grid, in_specs=[block], out_specs=block,
        compiler_params=params,
    )  # fmt: skip
    return call, [spec((32, 256))], "tpu"


def block_scaled(block_in: Any = pltpu.SMEM) -> Lowering:
    """An (8, 128) block scaled by a scalar from SMEM; the block in SMEM too, unless
    ``block_in`` says: SMEM holds scalars only."""

    def kernel(scale_ref: Any, x_ref: Any, o_ref: Any) -> None:
        o_ref[...] = x_ref[...] * scale_ref[0, 0]

    in_specs = [pl.BlockSpec(memory_space=pltpu.SMEM), pl.BlockSpec(memory_space=block_in)]
    call = pl.pallas_call(kernel, out_shape=spec((8, 128)), in_specs=in_specs)
    return call, [spec((1, 1)), spec((8, 128))], "tpu"


def triton(kernel: Callable[..., None], inputs: list[jax.ShapeDtypeStruct], **kw: Any) -> Lowering:
    call = pl.pallas_call(
        kernel, out_shape=spec((32, 32)), compiler_params=plt.CompilerParams(), **kw
    )
    return call, inputs, "cuda"


def dot_with_float16(lhs_dtype: Any) -> Lowering:
    """A Triton dot of a ``lhs_dtype`` block and a float16 one."""

    def kernel(x_ref: Any, y_ref: Any, o_ref: Any) -> None:
        o_ref[...] = jnp.dot(x_ref[...], y_ref[...], preferred_element_type=f32)

    return triton(kernel, [spec((32, 32), lhs_dtype), spec((32, 32), f16)])


def erf_inv_of_float16() -> Lowering:
    def kernel(x_ref: Any, o_ref: Any) -> None:
        o_ref[...] = jax.lax.erf_inv(x_ref[...]).astype(f32)

    return triton(kernel, [spec((32, 32), f16)])


def copy_on_triton(through_scratch: bool) -> Lowering:
    """A block copied on Triton, through a scratch buffer or straight."""

    def kernel(x_ref: Any, o_ref: Any, *scratch: Any) -> None:
        for acc_ref in scratch:
            acc_ref[...] = x_ref[...]
            o_ref[...] = acc_ref[...]
        if not scratch:
            o_ref[...] = x_ref[...]

    if not through_scratch:
        return triton(kernel, [spec((32, 32))])
    return triton(kernel, [spec((32, 32))], scratch_shapes=[pltpu.VMEM((32, 32), f32)])


# Name -> (the kernel to lower, words of the message JAX prints).
CASES: dict[str, tuple[Callable[[], Lowering], str]] = {
    "smem_of_half_the_rows": (
        lambda: copy_through_smem((128, 128)),
        "same shape as the transformed slice: (128, 128) != (256, 128)",
    ),
    "swizzle_of_100_bytes": (
        lambda: copy_through_smem((256, 128), swizzle=100),
        "Swizzle 100 is not supported",
    ),
    "accumulator_of_half_the_columns": (
        lambda: wgmma_into(64),
        "Incompatible shapes for matrix multiplication",
    ),
    "third_program_id_of_a_grid_of_one": (
        lambda: program_id_of_a_grid_of_one(2),
        "Axis 2 is out of bounds for grid (2,)",
    ),
    "grid_of_floats": (lambda: tpu_add((4.0,)), "Grid must be a tuple of integers"),
    "one_semantics_for_two_grid_dimensions": (
        lambda: tpu_add((4, 2), ("parallel",)),
        "Length of grid does not match length of dimension semantics",
    ),
    "block_of_10_by_100": (
        lambda: tpu_add((4, 2), block_shape=(10, 100)),
        "divisible by 8 and 128 respectively",
    ),
    "vector_in_smem": (block_scaled, "Can only load scalars from SMEM"),
    "dot_of_int8_and_float16": (
        lambda: dot_with_float16(jnp.int8),
        "a and b must have the same element",
    ),
    "erf_inv_of_float16": (erf_inv_of_float16, "erf_inv_lowering_helper not implemented"),
    "scratch_on_triton": (lambda: copy_on_triton(True), "scratch memory not implemented"),
}


def masked_load_of_another_shape() -> Lowering:
    """A Triton load of 32 values under a mask of 16: JAX tries to broadcast the mask,
    catches lax's error and raises its own."""

    def kernel(x_ref: Any, o_ref: Any) -> None:
        mask = jnp.arange(16) < 10
        o_ref[...] = plt.load(x_ref.at[pl.ds(0, 32)], mask=mask, other=0.0) * 3.0

    return triton(kernel, [spec((32,))])


def barrier_of_no_arrivals() -> Lowering:
    """A Mosaic GPU barrier that nothing arrives at: ``Barrier`` and ``ClusterBarrier``
    raise the same words from the same statement."""
    scratch = [plgpu.SMEM((128, 128), f16), plgpu.Barrier(num_arrivals=0)]
    call = plgpu.kernel(lambda *refs: None, out_type=spec((1,), jnp.int32), scratch_types=scratch)
    return call, [spec((128, 128), f16)], "cuda"


# The first answer to each is the error JAX raised, at its site: not an error JAX caught on
# the way, nor another site of the same words.
FIRST_ANSWERS: dict[str, tuple[Callable[[], Lowering], str]] = {
    "masked_load_of_another_shape": (masked_load_of_another_shape, "Cannot broadcast mask"),
    "barrier_of_no_arrivals": (barrier_of_no_arrivals, "Num arrivals must be at least 1"),
}


def raised(case: Callable[[], Lowering], filtering: str) -> BaseException:
    with jax_config.traceback_filtering(filtering), pytest.raises(Exception) as caught:
        function, arguments, platform = case()  # some mistakes raise as the call is built
        jax.jit(function).trace(*arguments).lower(lowering_platforms=(platform,))
    return caught.value


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_lowering_error_is_named_by_its_mined_site_in_its_releases_words(
    case: str, full_catalog: Catalog
) -> None:
    lowering, words = CASES[case]
    site = traceback.extract_tb(raised(lowering, "off").__traceback__)[-1]
    path = site.filename[site.filename.rindex("jax/") :]
    [raising] = mined_at(mined_sites(), path, site.lineno)
    paste = "".join(traceback.format_exception(raised(lowering, "auto")))
    assert words in paste
    answer = MatchService(full_catalog).match(MatchRequest(text=paste))
    best = answers_to_the_raised_error(answer.matches)[0]
    assert raising in [best.errorId, *best.alternatives], paste
    assert (best.variant, best.why.truncated) == ("current", False)  # 0.10.2's words, whole
    # The frames read the releases whose lines they stand on: 0.10.2 among them, and the
    # source pinned to one of them.
    release = answer.release
    assert release is not None and jax.__version__ in release.releases
    assert release.contradiction is None, release.contradiction
    assert best.source is not None and best.source.release in release.releases


@pytest.mark.parametrize("filtering", ["auto", "off"])
@pytest.mark.parametrize("case", sorted(FIRST_ANSWERS))
def test_the_first_answer_is_the_error_jax_raised_at_its_own_site(
    case: str, filtering: str, full_catalog: Catalog
) -> None:
    lowering, words = FIRST_ANSWERS[case]
    site = traceback.extract_tb(raised(lowering, "off").__traceback__)[-1]
    path = site.filename[site.filename.rindex("jax/") :]
    [raising] = mined_at(mined_sites(), path, site.lineno)
    paste = "".join(traceback.format_exception(raised(lowering, filtering)))
    assert words in paste
    answer = MatchService(full_catalog).match(MatchRequest(text=paste))
    assert answer.matches[0].errorId == raising, paste


def barrier_mixed_up(where: str) -> Lowering:
    """A Mosaic GPU copy into SMEM whose barrier is mixed up with the SMEM ref: swapped in
    ``copy_gmem_to_smem`` (``"copy"``: JAX's lowering reads ``dst.type`` of the barrier, on
    a line that holds no ``raise`` in 0.10.2, where 0.10.1 raised the integer-bytes error),
    or given to ``barrier_wait`` (``"wait"``: the lowering calls ``.wait()`` on the ref)."""

    def body(x_gmem: Any, o_gmem: Any, smem: Any, barrier: Any) -> None:
        into, arriving = (barrier, smem) if where == "copy" else (smem, barrier)
        plgpu.copy_gmem_to_smem(x_gmem, into, arriving)
        plgpu.barrier_wait(smem if where == "wait" else barrier)

    scratch = [plgpu.SMEM((128, 128), f16), plgpu.Barrier(num_arrivals=1)]
    call = plgpu.kernel(body, out_type=spec((1,), jnp.int32), scratch_types=scratch)
    return call, [spec((128, 128), f16)], "cuda"


@pytest.mark.parametrize("filtering", ["auto", "off"])
@pytest.mark.parametrize("where", ["copy", "wait"])
def test_pythons_error_inside_jax_is_named_by_the_raising_frames_own_line(
    where: str, filtering: str, full_catalog: Catalog
) -> None:
    """No release has a site on the line: the raise point is the frame itself, its JAX
    function and line, pinned to a release the paste reads."""
    case = functools.partial(barrier_mixed_up, where)
    site = traceback.extract_tb(raised(case, "off").__traceback__)[-1]
    path = site.filename[site.filename.rindex("jax/") :]
    paste = "".join(traceback.format_exception(raised(case, filtering)))
    answer = MatchService(full_catalog).match(MatchRequest(text=paste))
    assert answer.matches == [] and answer.release is not None
    [point] = answer.raisePoints
    assert (point.errorId, point.filePath, point.line, point.function) == (
        None,
        path,
        site.lineno,
        site.name,
    )
    assert jax.__version__ in point.releases
    assert set(point.releases) <= set(answer.release.releases)
    pinned = {
        f"{release_commits()[release]}/{path}#L{site.lineno}-L{site.lineno}"
        for release in point.releases
    }
    assert point.sourceUrl is not None and point.sourceUrl.split("/blob/")[1] in pinned


@pytest.mark.parametrize("filtering", ["auto", "off"])
def test_a_site_that_stood_on_the_raising_line_in_another_release_is_not_named(
    filtering: str, full_catalog: Catalog
) -> None:
    copy_into_the_barrier = functools.partial(barrier_mixed_up, "copy")
    error = raised(copy_into_the_barrier, "off")
    site = traceback.extract_tb(error.__traceback__)[-1]
    path = site.filename[site.filename.rindex("jax/") :]
    assert isinstance(error, AttributeError) and not mined_at(mined_sites(), path, site.lineno)
    elsewhere = [
        record_id
        for record_id, facts in mined_sites().items()
        for entry in facts["releases"]
        if entry.get("filePath", facts["filePath"]) == path and entry["lineNumber"] == site.lineno
    ]
    assert elsewhere  # the line held a raise in another release
    paste = "".join(traceback.format_exception(raised(copy_into_the_barrier, filtering)))
    answer = MatchService(full_catalog).match(MatchRequest(text=paste))
    assert answer.release is not None and jax.__version__ in answer.release.releases
    assert not {point.errorId for point in answer.raisePoints} & set(elsewhere), paste
