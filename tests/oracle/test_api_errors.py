"""Code written for another JAX release, run on JAX 0.10.2: Python's errors reading a name
or module of Pallas that this release lacks, or calling a function of Pallas with arguments
it does not take, pasted and answered.

Each mistake below runs on the installed JAX and its traceback is pasted whole. The answer
must be the mined record of that very message (found in ``data/mined/jax-api.jsonl`` or
``jax-calls.jsonl`` by its words), the paste dated by it to releases raising it, and the
record's advice must hold on this JAX: the name it says to use instead is served.
"""

from __future__ import annotations

import json
import traceback
import warnings
from collections.abc import Callable
from functools import cache
from typing import Any

import jax
import jax.numpy as jnp
import pytest
from jax._src import config as jax_config
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import tpu as pltpu

from app.answers.cards import match_answers
from app.answers.catalog import Catalog
from app.answers.links import Links
from app.answers.match import MatchService
from app.jaxref.releases import newest_release
from app.knowledge.calls import MINED_CALLS
from app.knowledge.public_names import MINED_API
from app.schemas.match import MatchRequest

pytestmark = pytest.mark.oracle


@cache
def api_records() -> dict[str, dict[str, Any]]:
    """The mined records of Pallas's public API by their message."""
    lines = [
        line for path in (MINED_API, MINED_CALLS) for line in path.read_text("utf-8").splitlines()
    ]
    return {r["errorMessage"]: r for r in (json.loads(line)["record"] for line in lines)}


def old_compiler_params() -> None:
    pltpu.TPUCompilerParams(dimension_semantics=("parallel",))


def old_import() -> None:
    exec("from jax.experimental.pallas.tpu import TPUMemorySpace", {})


def removed_module() -> None:
    exec("import jax.experimental.pallas.gpu", {})


ARRAY = jax.ShapeDtypeStruct((8, 128), jnp.float32)


def scoped_copy(scratch_buffer: Callable[[], Any]) -> Callable[[Any, Any], None]:
    """A kernel copying its input through the scratch buffer ``scratch_buffer`` gives."""

    def kernel(x_ref: Any, o_ref: Any) -> None:
        def body(scratch: Any) -> None:
            scratch[...] = x_ref[...]
            o_ref[...] = scratch[...]

        pl.run_scoped(body, scratch_buffer())

    return kernel


def memory_space_in_a_kernel() -> None:
    kernel = scoped_copy(lambda: pltpu.TPUMemorySpace.VMEM(ARRAY.shape, ARRAY.dtype))
    jax.jit(pl.pallas_call(kernel, out_shape=ARRAY)).trace(ARRAY)


def copy_without_a_barrier() -> None:
    """A Mosaic GPU kernel copying to shared memory the way no release allows: without the
    barrier the copy arrives on."""

    def kernel(x_gmem: Any, o_ref: Any, smem: Any, barrier: Any) -> None:
        plgpu.copy_gmem_to_smem(x_gmem, smem)
        plgpu.barrier_wait(barrier)
        o_ref[...] = smem[...]

    call = pl.pallas_call(
        kernel,
        out_shape=jax.ShapeDtypeStruct((128,), jnp.float32),
        in_specs=[pl.BlockSpec(memory_space=plgpu.GMEM)],
        scratch_shapes=[plgpu.SMEM((128,), jnp.float32), plgpu.Barrier(num_arrivals=1)],
        compiler_params=plgpu.CompilerParams(),
    )
    jax.jit(call).trace(jax.ShapeDtypeStruct((128,), jnp.float32))


def old_backend_keyword() -> None:
    pl.pallas_call(lambda x_ref, o_ref: None, out_shape=ARRAY, backend="mosaic_tpu")


def barrier_arrivals_by_position() -> None:
    plgpu.Barrier(1)


def smem_transforms_by_position() -> None:
    plgpu.SMEM((128,), jnp.float32, ())


def old_kernel_out_shape() -> None:
    pl.kernel(lambda o_ref: None, out_shape=ARRAY, mesh=plgpu.Mesh())


MISTAKES: dict[str, tuple[Callable[[], None], type[BaseException]]] = {
    "TPUCompilerParams": (old_compiler_params, AttributeError),
    "from-import of TPUMemorySpace": (old_import, ImportError),
    "pallas.gpu": (removed_module, ModuleNotFoundError),
    "TPUMemorySpace in a kernel": (memory_space_in_a_kernel, AttributeError),
    "copy_gmem_to_smem without a barrier": (copy_without_a_barrier, TypeError),
    "pallas_call's backend keyword": (old_backend_keyword, TypeError),
    "Barrier's arrivals by position": (barrier_arrivals_by_position, TypeError),
    "kernel's out_shape keyword": (old_kernel_out_shape, TypeError),
    "SMEM's transforms by position": (smem_transforms_by_position, TypeError),
}


def raised(mistake: Callable[[], None], error_class: type[BaseException], filtering: str) -> str:
    with (
        jax_config.traceback_filtering(filtering),
        warnings.catch_warnings(),
        pytest.raises(error_class) as caught,
    ):
        warnings.simplefilter("ignore", DeprecationWarning)
        mistake()
    return "".join(traceback.format_exception(caught.value))


@pytest.mark.parametrize("filtering", ["auto", "off"])
@pytest.mark.parametrize("mistake", sorted(MISTAKES))
def test_the_pasted_error_is_answered_with_its_releases_and_what_to_write_instead(
    mistake: str, filtering: str, full_catalog: Catalog
) -> None:
    paste = raised(*MISTAKES[mistake], filtering)
    [record] = [r for message, r in api_records().items() if message in paste]
    answer = MatchService(full_catalog).match(MatchRequest(text=paste))
    assert answer.matches[0].errorId == record["id"], paste
    # Read whole, with what Python adds (the module's file, "Did you mean: …?").
    assert answer.matches[0].score == 1.0, answer.matches[0]
    release = answer.release
    assert release is not None and jax.__version__ in release.releases
    raising = record.get("missingIn", record.get("raisedIn"))
    assert set(release.releases) <= set(raising)
    # An upgrade is advised where the newest release no longer raises it, and only there
    # (0.11.1 made copy_gmem_to_smem's barrier optional).
    upgrade = any("upgrade" in advice for advice in record["solutions"])
    assert upgrade == (newest_release() not in raising), record["solutions"]
    # Without JAX frames, the message alone dated it; with them, it agreed with them.
    assert release.frames > 0 or any(e.kind == "wording" for e in release.evidence)


def test_the_call_records_advice_is_what_this_jax_takes() -> None:
    """The new name of a keyword, and the keyword an argument given by position needs."""
    out_shape = api_records()["kernel() got an unexpected keyword argument 'out_shape'"]
    assert out_shape["solutions"][0].endswith("calls it `out_type`: pass out_type=… instead.")
    by_position = api_records()["Barrier.__init__() takes 1 positional argument but 2 were given"]
    assert by_position["solutions"][0].startswith("Pass every argument by keyword.")
    assert "num_arrivals=…" in by_position["solutions"][0]
    assert plgpu.Barrier(num_arrivals=1).num_arrivals == 1
    pl.kernel(lambda o_ref: None, out_type=ARRAY, mesh=plgpu.Mesh())


def test_the_records_advice_names_what_this_jax_serves_instead() -> None:
    """JAX's deprecation notices, kept by the records, name the replacements: they lower."""
    for old, new in (("TPUCompilerParams", "CompilerParams"), ("TPUMemorySpace", "MemorySpace")):
        record = api_records()[f"module 'jax.experimental.pallas.tpu' has no attribute '{old}'"]
        assert any(f"use {new} instead" in s for s in record["solutions"]), record["solutions"]

    call = pl.pallas_call(
        scoped_copy(lambda: pltpu.MemorySpace.VMEM(ARRAY.shape, ARRAY.dtype)),
        out_shape=ARRAY,
        compiler_params=pltpu.CompilerParams(dimension_semantics=()),
    )
    jax.jit(call).trace(ARRAY).lower(lowering_platforms=("tpu",))


@cache
def call_record_ids() -> frozenset[str]:
    lines = MINED_CALLS.read_text(encoding="utf-8").splitlines()
    return frozenset(json.loads(line)["record"]["id"] for line in lines)


def kernel(x_ref: Any, o_ref: Any) -> None:
    """A kernel the user named as ``plgpu.kernel`` is named (at module level, so that
    Python's messages name it ``kernel``)."""
    o_ref[...] = x_ref[...]


def kernel_of_the_wrong_arity() -> None:
    """``kernel`` given one ref too many: JAX's call of it raises ``kernel() takes 2
    positional arguments but 3 were given``, the words ``plgpu.kernel`` of 0.6.0–0.10.1
    raises at a call of it with three."""
    jax.jit(lambda a, b: pl.pallas_call(kernel, out_shape=ARRAY)(a, b)).trace(ARRAY, ARRAY)


@pytest.mark.parametrize("filtering", ["auto", "off"])
def test_a_call_error_of_jaxs_call_of_user_code_is_not_a_call_of_jaxs_function(
    filtering: str, full_catalog: Catalog
) -> None:
    paste = raised(kernel_of_the_wrong_arity, TypeError, filtering)
    assert "\nTypeError: kernel() takes 2 positional arguments but 3 were given" in paste
    answer = MatchService(full_catalog).match(MatchRequest(text=paste))
    assert answer.matches, paste
    assert not {m.errorId for m in answer.matches} & call_record_ids()
    assert answer.matches[0].errorClass == "TypeError"


def test_the_message_alone_is_answered_with_the_call_record_and_another_call_is_not(
    full_catalog: Catalog,
) -> None:
    """Without a traceback nothing tells who called: the call's record answers. A traceback
    whose last line, the user's, calls something else is not a call of JAX's function."""
    message = "TypeError: copy_gmem_to_smem() missing 1 required positional argument: 'barrier'"
    [record] = [r for m, r in api_records().items() if m in message]
    service = MatchService(full_catalog)
    assert service.match(MatchRequest(text=message)).matches[0].errorId == record["id"]
    elsewhere = (
        "Traceback (most recent call last):\n"
        '  File "/home/me/kernels/copy.py", line 12, in kernel\n'
        "    my_copy(x_gmem, smem)\n"
        f"{message}\n"
    )
    answer = service.match(MatchRequest(text=elsewhere))
    assert record["id"] not in {m.errorId for m in answer.matches}
    called = elsewhere.replace("my_copy(x_gmem, smem)", "plgpu.copy_gmem_to_smem(x_gmem, smem)")
    assert service.match(MatchRequest(text=called)).matches[0].errorId == record["id"]


class Model:
    def kernel(self, x_ref: Any, o_ref: Any) -> None:
        """A method named as ``plgpu.kernel`` is."""


def python_says(call: Callable[[], None]) -> str:
    with pytest.raises(TypeError) as caught:
        call()
    return f"TypeError: {caught.value}"


def test_a_users_own_function_named_as_jaxs_is_not_jaxs(full_catalog: Catalog) -> None:
    """``kernel(a, b, c)`` is ``plgpu.kernel``'s mistake only where the paste could be
    JAX's: it shows JAX, and defines no ``kernel`` of its own; a method's message names its
    class. Python's messages are Python's own, at calls of functions named as JAX's."""
    bare = python_says(lambda: kernel(1, 2, 3))  # type: ignore[call-arg]
    method = python_says(lambda: Model().kernel(1, 2, 3))  # type: ignore[call-arg]
    [record] = [r for m, r in api_records().items() if m in bare]
    service = MatchService(full_catalog)

    def answers(paste: str) -> set[str]:
        return {m.errorId for m in service.match(MatchRequest(text=paste)).matches}

    frames = '  File "/home/me/run.py", line 9, in main\n    out = kernel(x, y, z)\n'
    traceback_ = f"Traceback (most recent call last):\n{frames}{bare}\n"
    assert record["id"] not in answers(traceback_)
    imported = f"from jax.experimental.pallas.mosaic_gpu import kernel\n\n{traceback_}"
    assert record["id"] in answers(imported)
    defined = f"{imported}\ndef kernel(x_ref, o_ref):\n    ...\n"
    assert record["id"] not in answers(defined)
    called = traceback_.replace("= kernel(", "= plgpu.kernel(")
    assert record["id"] in answers(called)
    assert record["id"] not in answers(called.replace(bare, method))
    assert record["id"] not in answers(method)


def kernel_copying(x_ref: Any, o_ref: Any) -> None:
    o_ref[...] = x_ref[...]


def compiler_option_passed_to_the_call() -> None:
    pl.pallas_call(kernel_copying, out_shape=ARRAY, grid=(1,), dimension_semantics=("parallel",))


def misspelled_block_keyword() -> None:
    pl.BlockSpec(block_shap=(8, 128), index_map=lambda i: (i, 0))


@pytest.mark.parametrize("filtering", ["auto", "off"])
def test_a_keyword_no_release_takes_is_answered_with_where_it_belongs(
    filtering: str, full_catalog: Catalog
) -> None:
    """``dimension_semantics`` passed to ``pallas_call``: the TPU compiler parameters take
    it, which lower; ``block_shap``: the block's own ``block_shape`` is named."""
    service = MatchService(full_catalog)
    paste = raised(compiler_option_passed_to_the_call, TypeError, filtering)
    [match] = service.match(MatchRequest(text=paste)).matches
    assert match.errorId in call_record_ids()
    assert match.keyword is not None and match.keyword.keyword == "dimension_semantics"
    takers = {spelled for taker in match.keyword.takenBy for spelled in taker.calledAs}
    assert "pltpu.CompilerParams" in takers
    answer = service.match(MatchRequest(text=paste))
    [card] = match_answers(answer, full_catalog.records, Links(""))
    assert any(
        "is a parameter of" in text and "pltpu.CompilerParams" in text for text in card.notes
    )
    call = pl.pallas_call(
        kernel_copying,
        out_shape=ARRAY,
        grid=(1,),
        compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel",)),
    )
    jax.jit(call).trace(ARRAY).lower(lowering_platforms=("tpu",))

    paste = raised(misspelled_block_keyword, TypeError, filtering)
    [match] = service.match(MatchRequest(text=paste)).matches
    assert match.keyword is not None and match.keyword.closeTo == ["block_shape"]
    pl.BlockSpec(block_shape=(8, 128), index_map=lambda i: (i, 0))
