"""Code written for another JAX release, run on JAX 0.10.2: Python's errors reading a name
or module of Pallas that this release lacks, pasted and answered.

Each mistake below runs on the installed JAX and its traceback is pasted whole. The answer
must be the mined record of that very message (found in ``data/mined/jax-api.jsonl`` by its
words), the paste dated by it to releases without the name, and the record's advice must
hold on this JAX: the name it says to use instead is served.
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
from jax.experimental.pallas import tpu as pltpu

from app.knowledge.api import MINED_API
from app.services.catalog import Catalog
from app.services.match import MatchRequest, MatchService

pytestmark = pytest.mark.oracle


@cache
def api_records() -> dict[str, dict[str, Any]]:
    """The mined records by their message."""
    lines = MINED_API.read_text(encoding="utf-8").splitlines()
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


MISTAKES: dict[str, tuple[Callable[[], None], type[BaseException]]] = {
    "TPUCompilerParams": (old_compiler_params, AttributeError),
    "from-import of TPUMemorySpace": (old_import, ImportError),
    "pallas.gpu": (removed_module, ModuleNotFoundError),
    "TPUMemorySpace in a kernel": (memory_space_in_a_kernel, AttributeError),
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
def test_the_pasted_error_is_answered_with_its_releases_and_where_the_name_went(
    mistake: str, filtering: str, full_catalog: Catalog
) -> None:
    paste = raised(*MISTAKES[mistake], filtering)
    [record] = [r for message, r in api_records().items() if message in paste]
    answer = MatchService(full_catalog).match(MatchRequest(text=paste))
    assert answer.matches[0].errorId == record["id"], paste
    release = answer.release
    assert release is not None and jax.__version__ in release.releases
    assert set(release.releases) <= set(record["missingIn"])
    # Without JAX frames, the message alone dated it; with them, it agreed with them.
    assert release.frames > 0 or any(e.kind == "wording" for e in release.evidence)


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
