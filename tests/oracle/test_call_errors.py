"""Python's own errors at Pallas's calls of user code, raised by JAX 0.10.2 itself.

Pallas calls the kernel with its refs, each BlockSpec's index map with the grid's indices,
and a pipeline's body with each step's blocks. A function of the wrong arity makes Python
raise ``TypeError: kernel() takes 2 positional arguments but 3 were given`` at that call:
words any call prints. The curated records of these mistakes are bound to the functions of
Pallas that make the call, so each mistake below is traced by JAX, its traceback pasted
(filtered as by default, and not) and matched to its record, the call's frame pinned to
0.10.2; the same words raised by the user's own code, inside a kernel or an index map, or
by a pipeline's index map are not read as any of them; a body that ``plgpu.kernel`` calls
through ``pl.run_scoped`` is read as ``plgpu.kernel``'s, not as run_scoped's.
"""

from __future__ import annotations

import functools
import traceback
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import pytest
from jax import lax
from jax._src import config as jax_config
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import tpu as pltpu

from app.answers.catalog import Catalog
from app.answers.match import MatchService
from app.jaxref.templates import compile_pattern
from app.schemas.match import MatchRequest
from tests.oracle.jax_kernels import user_facing_error
from tests.oracle.test_curated_records import curated_records
from tests.oracle.test_curated_records import tpu_pipeline as curated_tpu_pipeline

pytestmark = pytest.mark.oracle

ARRAY = jax.ShapeDtypeStruct((16, 128), jnp.float32)
PIPELINED = jax.ShapeDtypeStruct((256, 128), jnp.float32)


class Call(NamedTuple):
    """A function of Pallas's to trace, what it is called with, and the platform it lowers for."""

    function: Callable[..., Any]
    arguments: list[jax.ShapeDtypeStruct]
    platform: str = "tpu"


def copy(x_ref: Any, o_ref: Any) -> None:
    o_ref[...] = x_ref[...]


def add(x_ref: Any, y_ref: Any, o_ref: Any) -> None:
    o_ref[...] = x_ref[...] + y_ref[...]


def kernel_call(kernel: Callable[..., None], operands: int) -> Call:
    return Call(pl.pallas_call(kernel, out_shape=ARRAY), [ARRAY] * operands)


def gridded_copy(grid: tuple[int, ...], in_map: Callable[..., Any]) -> Call:
    """A copy over ``grid`` whose input's index map is ``in_map``; the output's is right."""
    out_map = (lambda i: (i, 0)) if len(grid) == 1 else (lambda i, j: (i, j))
    call = pl.pallas_call(
        copy,
        grid=grid,
        in_specs=[pl.BlockSpec((8, 128), in_map)],
        out_specs=pl.BlockSpec((8, 128), out_map),
        out_shape=ARRAY,
    )
    return Call(call, [ARRAY])


def tpu_pipeline(body: Callable[..., None], in_map: Callable[..., Any] | None = None) -> Call:
    """A kernel of refs in HBM that pipelines ``body`` over two (128, 128) blocks."""
    return Call(*curated_tpu_pipeline((128, 128), body, in_map))


def gpu_pipeline(body: Callable[..., Any], in_map: Callable[..., Any] = lambda i: (i, 0)) -> Call:
    """A Mosaic GPU kernel that pipelines ``body`` over four (64, 128) blocks."""
    block = plgpu.BlockSpec((64, 128), lambda i: (i, 0))

    def kernel(x_gmem: Any, o_gmem: Any) -> None:
        pipeline = plgpu.emit_pipeline(
            body, grid=(4,), in_specs=[plgpu.BlockSpec((64, 128), in_map)], out_specs=[block]
        )
        pipeline(x_gmem, o_gmem)

    return Call(plgpu.kernel(kernel, out_type=PIPELINED), [PIPELINED], "cuda")


def incremented(x_ref: Any, o_ref: Any) -> None:
    o_ref[...] = x_ref[...] + 1


def incremented_in_place(x_ref: Any) -> None:
    x_ref[...] += 1


def incremented_at(indices: Any, x_ref: Any, o_ref: Any) -> None:
    o_ref[...] = x_ref[...] + 1


def incremented_with_a_carry(indices: Any, x_ref: Any, o_ref: Any, carry: Any) -> Any:
    o_ref[...] = x_ref[...] + 1
    return carry


def kernel_with_a_one_parameter_loop_body(x_ref: Any, o_ref: Any) -> None:
    o_ref[...] = lax.fori_loop(0, 4, lambda carry: carry, x_ref[...])


def gpu_kernel(body: Callable[..., None], operands: int) -> Call:
    return Call(plgpu.kernel(body, out_type=ARRAY), [ARRAY] * operands, "cuda")


def scoped_copy(body: Callable[..., None], *scratch: Any) -> Callable[[Any, Any], None]:
    """A kernel copying its block through the refs ``pl.run_scoped`` allocates for ``body``."""

    def kernel(x_ref: Any, o_ref: Any) -> None:
        pl.run_scoped(functools.partial(body, x_ref, o_ref), *scratch)

    return kernel


def through_one_scratch(x_ref: Any, o_ref: Any, scratch_ref: Any) -> None:
    scratch_ref[...] = x_ref[...]
    o_ref[...] = scratch_ref[...]


def through_two_scratches(x_ref: Any, o_ref: Any, scratch_ref: Any, other_ref: Any) -> None:
    through_one_scratch(x_ref, o_ref, scratch_ref)


VMEM = pltpu.VMEM((16, 128), jnp.float32)


def kernel_with_a_carry_of_two_parameters(x_ref: Any, o_ref: Any) -> None:
    def body(i: Any, total: Any, count: Any) -> Any:
        return total + x_ref[...], count + 1

    total, count = lax.fori_loop(0, 4, body, (jnp.zeros((16, 128), jnp.float32), 0))
    o_ref[...] = total / count


def kernel_looping_with_a_carry(x_ref: Any, o_ref: Any) -> None:
    def body(i: Any, carry: Any) -> Any:
        total, count = carry
        return total + x_ref[...], count + 1

    total, count = lax.fori_loop(0, 4, body, (jnp.zeros((16, 128), jnp.float32), 0))
    o_ref[...] = total / count


# Record id → (the mistake, its fix), as the record's example fix writes them.
CALLS: dict[str, tuple[Callable[[], Call], Callable[[], Call]]] = {
    "55680b56dfb441e2": (lambda: kernel_call(copy, 2), lambda: kernel_call(add, 2)),
    "cd74ab1e53186b20": (lambda: kernel_call(add, 1), lambda: kernel_call(add, 2)),
    "1a76475e93593be9": (
        lambda: gridded_copy((2, 1), lambda i: (i, 0)),
        lambda: gridded_copy((2, 1), lambda i, j: (i, j)),
    ),
    "52298c751508dd25": (
        lambda: gridded_copy((2,), lambda i, j: (i, 0)),
        lambda: gridded_copy((2,), lambda i: (i, 0)),
    ),
    "7c9146c7ea5987f5": (
        lambda: tpu_pipeline(incremented_in_place),
        lambda: tpu_pipeline(incremented),
    ),
    "0463b618153c96b5": (
        lambda: tpu_pipeline(incremented_at),
        lambda: tpu_pipeline(incremented),
    ),
    "e79453e9303494ab": (
        lambda: gpu_pipeline(incremented),
        lambda: gpu_pipeline(incremented_at),
    ),
    "f95742ff653432c0": (
        lambda: gpu_pipeline(incremented_with_a_carry),
        lambda: gpu_pipeline(incremented_at),
    ),
    "0ecd193aeae7fd67": (
        lambda: kernel_call(kernel_with_a_one_parameter_loop_body, 1),
        lambda: kernel_call(kernel_looping_with_a_carry, 1),
    ),
    "fb875935cd810cc0": (
        lambda: kernel_call(kernel_with_a_carry_of_two_parameters, 1),
        lambda: kernel_call(kernel_looping_with_a_carry, 1),
    ),
    "4d9a65bdd4ad4c17": (lambda: gpu_kernel(incremented_in_place, 1), lambda: gpu_kernel(copy, 1)),
    "b6c5c1c89e8f6d61": (lambda: gpu_kernel(add, 1), lambda: gpu_kernel(add, 2)),
    "ac132fca5ec29a76": (
        lambda: kernel_call(scoped_copy(through_one_scratch, VMEM, VMEM), 1),
        lambda: kernel_call(scoped_copy(through_two_scratches, VMEM, VMEM), 1),
    ),
    "ccb66fd614c5a354": (
        lambda: kernel_call(scoped_copy(through_two_scratches, VMEM), 1),
        lambda: kernel_call(scoped_copy(through_two_scratches, VMEM, VMEM), 1),
    ),
}


def one_index(i: Any) -> Any:
    return i


def kernel_calling_a_helper_wrongly(x_ref: Any, o_ref: Any) -> None:
    o_ref[...] = x_ref[...] + one_index(x_ref[...], 1)


def kernel_building_its_loop_body_wrongly(x_ref: Any, o_ref: Any) -> None:
    """``lax.fori_loop``'s line calls the user's own function with one argument too many."""

    def body_adding(step: Any) -> Callable[[Any, Any], Any]:
        return lambda i, carry: carry + step

    o_ref[...] = lax.fori_loop(0, 4, body_adding(x_ref[...], 1), x_ref[...])


# The user's own code raising the same words inside what Pallas called.
NEAR_MISSES: dict[str, Callable[[], Call]] = {
    "a helper called wrongly in the kernel": lambda: kernel_call(
        kernel_calling_a_helper_wrongly, 1
    ),
    "a loop body built by a call on the loop's line": lambda: kernel_call(
        kernel_building_its_loop_body_wrongly, 1
    ),
    "a helper called wrongly in an index map": lambda: gridded_copy(
        (2,), lambda i: (one_index(i, 0), 0)
    ),
    # Called by the pipeline itself, as it starts each step's copies.
    "an index map of two indices in a TPU pipeline": lambda: tpu_pipeline(
        incremented, lambda i, j: (i, 0)
    ),
    "an index map of two indices in a Mosaic GPU pipeline": lambda: gpu_pipeline(
        incremented_at, lambda i, j: (i, 0)
    ),
}


def traced(call: Call) -> jax.stages.Traced:
    return jax.jit(call.function).trace(*call.arguments)


def raised_by(case: Callable[[], Call], filtering: str) -> BaseException:
    with jax_config.traceback_filtering(filtering), pytest.raises(TypeError) as caught:
        traced(case())
    return user_facing_error(caught.value)


def pasted(error: BaseException) -> str:
    return "".join(traceback.format_exception(error))


def call_frame(record: dict[str, Any], error: BaseException) -> traceback.FrameSummary:
    """The frame of the call the record names: the innermost one in a function of its
    ``calledBy`` in the record's file. The record shows that call's line in the newest
    release; the installed JAX has it on a line of its own."""
    callers = {(caller["file"], caller["function"]) for caller in record["calledBy"]}
    return [
        frame
        for frame in traceback.extract_tb(error.__traceback__)
        if frame.filename.endswith(record["filePath"])
        and (record["filePath"], frame.name) in callers
    ][-1]


@pytest.mark.usefixtures("cpu_as_tpu")
@pytest.mark.parametrize("record_id", sorted(CALLS))
def test_the_mistake_raises_pythons_error_inside_the_call_the_record_names(
    record_id: str,
) -> None:
    """Python raised it in JAX's code, below the record's caller at the record's line (every
    frame after that one is JAX's), with words the record's pattern reads; the fix lowers."""
    record = curated_records()[record_id]
    before, after = CALLS[record_id]
    error = raised_by(before, "off")
    assert compile_pattern(record["matchPattern"]).search(str(error)), str(error)
    frames = traceback.extract_tb(error.__traceback__)
    at = frames.index(call_frame(record, error))
    assert all("/jax/_src/" in frame.filename for frame in frames[at:])
    fixed = after()
    traced(fixed).lower(lowering_platforms=(fixed.platform,))


@pytest.mark.usefixtures("cpu_as_tpu")  # a TPU pipeline reads the chip while it is traced
@pytest.mark.parametrize("filtering", ["auto", "off"])
@pytest.mark.parametrize("record_id", sorted(CALLS))
def test_the_pasted_traceback_is_answered_with_the_call_that_raised_it(
    record_id: str, filtering: str, full_catalog: Catalog
) -> None:
    record = curated_records()[record_id]
    paste = pasted(raised_by(CALLS[record_id][0], filtering))
    answer = MatchService(full_catalog).match(MatchRequest(text=paste))
    [found] = answer.matches
    assert found.errorId == record_id, paste
    if found.why.calledBy is None:  # JAX hid all its frames: the user's line shows the call
        assert filtering == "auto" and record.get("calledUnder"), paste
        assert (found.source, found.sourceUrl) == (None, record["githubUrl"])
        return
    line = call_frame(record, raised_by(CALLS[record_id][0], "off")).lineno
    place, function = found.why.calledBy.split(" ")
    assert place == f"{record['filePath']}:{line}"
    assert {"file": record["filePath"], "function": function} in record["calledBy"]
    assert found.source is not None
    assert (found.source.filePath, found.source.line) == (record["filePath"], line)
    # The frames read the releases whose lines they stand on: 0.10.2 among them.
    assert answer.release is not None and jax.__version__ in answer.release.releases
    assert found.source.release in answer.release.releases
    assert found.sourceUrl is not None and found.sourceUrl.endswith(
        f"{record['filePath']}#L{line}-L{line}"
    )


@pytest.mark.usefixtures("cpu_as_tpu")
@pytest.mark.parametrize("filtering", ["auto", "off"])
@pytest.mark.parametrize("mistake", sorted(NEAR_MISSES))
def test_the_same_words_raised_in_the_users_own_code_are_no_call_error(
    mistake: str, filtering: str, full_catalog: Catalog
) -> None:
    error = raised_by(NEAR_MISSES[mistake], filtering)
    readers = [compile_pattern(curated_records()[rid]["matchPattern"]) for rid in CALLS]
    assert any(reader.search(str(error)) for reader in readers), str(error)  # same words
    answer = MatchService(full_catalog).match(MatchRequest(text=pasted(error)))
    named = {rid for found in answer.matches for rid in (found.errorId, *found.alternatives)}
    assert not named & set(CALLS), answer.matches
