"""Errors JAX raises while it traces a kernel's body, raised by JAX 0.10.2 itself.

A kernel's body is ordinary JAX: ``o_ref[...] = y`` and ``x_ref[i]`` go through
``jax/_src/state/``, its arithmetic through ``jax/_src/lax/`` and ``jax/_src/numpy/``. A value
of the wrong shape or dtype, an index the ref cannot take, operands that do not line up or a
loop whose carry changes type raises there while the kernel is traced, on every backend. Each
kernel below is traced by JAX, its error formatted as Python prints it (JAX's frames filtered
as by default, as users see them), and the paste must be matched to the record of the site
that raised it (mined, or curated on top of the mined site), with its source pinned to the
release the paste's frames read.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import pytest
from jax import lax
from jax._src import config as jax_config
from jax.experimental import pallas as pl

from app.answers.catalog import Catalog
from app.answers.match import MatchService
from app.jaxref.scope import backend_of
from app.schemas.match import MatchRequest
from tests.data.test_site_records import mined_sites
from tests.oracle.answers import answers_to_the_raised_error
from tests.oracle.jax_kernels import user_facing_error

pytestmark = pytest.mark.oracle

BLOCK = jax.ShapeDtypeStruct((8, 128), jnp.float32)
Kernel = Callable[[Any, Any], None]


def transposed_store(x_ref: Any, o_ref: Any) -> None:
    o_ref[...] = x_ref[...].T


def integer_store(x_ref: Any, o_ref: Any) -> None:
    o_ref[...] = x_ref[...].astype(jnp.int32)


def store_to_a_smaller_window(x_ref: Any, o_ref: Any) -> None:
    o_ref[pl.ds(0, 4), :] = x_ref[...]


def three_indices_on_two_dimensions(x_ref: Any, o_ref: Any) -> None:
    o_ref[...] = jnp.broadcast_to(x_ref[0, 0, 0], (8, 128))


def slice_past_the_end(x_ref: Any, o_ref: Any) -> None:
    o_ref[pl.ds(0, 4), :] = x_ref[pl.ds(6, 4), :]


def square_dot_of_a_wide_block(x_ref: Any, o_ref: Any) -> None:
    o_ref[...] = jnp.dot(x_ref[...], x_ref[...])


def rows_added_to_a_block(x_ref: Any, o_ref: Any) -> None:
    o_ref[...] = x_ref[...] + x_ref[0:3, :]


def rows_broadcast_to_a_block(x_ref: Any, o_ref: Any) -> None:
    o_ref[...] = jnp.broadcast_to(x_ref[0:3, :], (8, 128))


def rows_chosen_beside_a_block(x_ref: Any, o_ref: Any) -> None:
    o_ref[...] = jnp.where(x_ref[...] > 0, x_ref[...], x_ref[0:3])


def column_concatenated_to_a_block(x_ref: Any, o_ref: Any) -> None:
    o_ref[...] = jnp.concatenate([x_ref[...], x_ref[:, 0]], axis=0)


def slice_past_the_value(x_ref: Any, o_ref: Any) -> None:
    o_ref[...] = lax.slice(x_ref[...], (0, 0), (16, 128))


def dynamic_slice_past_the_value(x_ref: Any, o_ref: Any) -> None:
    o_ref[...] = lax.dynamic_slice(x_ref[...], (0, 0), (16, 128))


def reshape_to_fewer_elements(x_ref: Any, o_ref: Any) -> None:
    o_ref[...] = jnp.broadcast_to(x_ref[...].reshape(3, 128), (8, 128))


def sum_over_a_third_axis(x_ref: Any, o_ref: Any) -> None:
    o_ref[...] = jnp.broadcast_to(x_ref[...].sum(axis=2), (8, 128))


def loop_carry_changes_dtype(x_ref: Any, o_ref: Any) -> None:
    o_ref[...] = lax.fori_loop(0, 4, lambda i, carry: carry.astype(jnp.int32), x_ref[...])


def branches_of_two_shapes(x_ref: Any, o_ref: Any) -> None:
    o_ref[...] = lax.cond(x_ref[0, 0] > 0, lambda: x_ref[...], lambda: x_ref[0])


# Each kernel, the file under ``jax/_src/`` whose site raises its error, and words of that
# message.
CASES: dict[str, tuple[Kernel, str, str]] = {
    "transposed_store": (transposed_store, "state/primitives.py", "Invalid shape for `swap`"),
    "integer_store": (integer_store, "state/primitives.py", "Invalid dtype for `swap`"),
    "store_to_a_smaller_window": (
        store_to_a_smaller_window,
        "state/primitives.py",
        "Expected shape: (4, 128). Value shape: (8, 128)",
    ),
    "three_indices_on_two_dimensions": (
        three_indices_on_two_dimensions,
        "state/indexing.py",
        "`indices` must not be longer than `shape`",
    ),
    "slice_past_the_end": (
        slice_past_the_end,
        "state/indexing.py",
        "Out of bound slice: start=6",
    ),
    "square_dot_of_a_wide_block": (
        square_dot_of_a_wide_block,
        "lax/lax.py",
        "contracting dimensions to have the same shape, got (128,) and (8,)",
    ),
    "rows_added_to_a_block": (
        rows_added_to_a_block,
        "lax/lax.py",
        "add got incompatible shapes for broadcasting: (8, 128), (3, 128).",
    ),
    "rows_broadcast_to_a_block": (
        rows_broadcast_to_a_block,
        "lax/lax.py",
        "input type=float32[3,128] and requested type=float32[8,128]",
    ),
    "rows_chosen_beside_a_block": (
        rows_chosen_beside_a_block,
        "lax/lax.py",
        "Incompatible shapes for broadcasting: shapes=[(8, 128), (8, 128), (3, 128)]",
    ),
    "column_concatenated_to_a_block": (
        column_concatenated_to_a_block,
        "lax/lax.py",
        "Cannot concatenate arrays with different numbers of dimensions",
    ),
    "slice_past_the_value": (
        slice_past_the_value,
        "lax/slicing.py",
        "got limit_indices (16, 128) for operand shape (8, 128)",
    ),
    "dynamic_slice_past_the_value": (
        dynamic_slice_past_the_value,
        "lax/slicing.py",
        "got slice_sizes (16, 128) for operand shape (8, 128)",
    ),
    "reshape_to_fewer_elements": (
        reshape_to_fewer_elements,
        "numpy/array_methods.py",
        "cannot reshape array of shape (8, 128) (size 1024) into shape (3, 128)",
    ),
    "sum_over_a_third_axis": (
        sum_over_a_third_axis,
        "util.py",
        "axis 2 is out of bounds for array of dimension 2",
    ),
    "loop_carry_changes_dtype": (
        loop_carry_changes_dtype,
        "lax/control_flow/loops.py",
        "carry input and carry output must have equal types",
    ),
    "branches_of_two_shapes": (
        branches_of_two_shapes,
        "lax/control_flow/conditionals.py",
        "cond branches must have equal output types",
    ),
}


def raised(kernel: Kernel, filtering: str) -> BaseException:
    """JAX's error for ``kernel``, its traceback filtered as ``jax_traceback_filtering`` says."""
    call = pl.pallas_call(kernel, out_shape=BLOCK)
    with (
        jax_config.traceback_filtering(filtering),
        pytest.raises((TypeError, ValueError)) as caught,
    ):
        jax.jit(call).trace(BLOCK)
    return user_facing_error(caught.value)


def mined_at(records: dict[str, dict[str, Any]], path: str, line: int) -> list[str]:
    """The record ids of the sites the installed JAX has at ``path``, ``line``."""
    return [
        record_id
        for record_id, record in records.items()
        for release in record["releases"]
        if release["release"] == jax.__version__
        and release["lineNumber"] == line
        and release.get("filePath", record["filePath"]) == path
    ]


@pytest.mark.parametrize("case", sorted(CASES))
def test_an_error_of_the_traced_body_is_named_by_its_mined_site_and_release(
    case: str, full_catalog: Catalog
) -> None:
    kernel, module, words = CASES[case]
    records = mined_sites()
    # Where JAX raised it, read with its internal frames kept: a site mined for 0.10.2.
    site = traceback.extract_tb(raised(kernel, "off").__traceback__)[-1]
    path = site.filename[site.filename.rindex("jax/_src/") :]
    assert path == f"jax/_src/{module}"
    [raising] = mined_at(records, path, site.lineno)
    # What users paste: JAX's frames filtered as by default (a swap's state frames are not
    # shown; an index's are; lax's and jax.numpy's are not).
    paste = "".join(traceback.format_exception(raised(kernel, "auto")))
    assert words in paste
    answer = MatchService(full_catalog).match(MatchRequest(text=paste))
    assert answer.matches, paste
    best = answers_to_the_raised_error(answer.matches)[0]
    assert (best.variant, best.why.truncated) == ("current", False)  # 0.10.2's words, whole
    named = [best.errorId, *best.alternatives]
    assert raising in named, named
    # Only another site of Pallas's core raising the same words (``pl.store``'s swap) may
    # come first: no backend's own site, which the paste shows no sign of.
    ahead = [records[rid]["filePath"] for rid in named[: named.index(raising)]]
    assert all(backend_of(path) == "core" for path in ahead), ahead
    # The frames read the releases whose lines they stand on: 0.10.2 among them, and the
    # source pinned to one of them.
    assert answer.release is not None and jax.__version__ in answer.release.releases
    assert best.source is not None and best.source.release in answer.release.releases
    assert best.sourceUrl is not None
    assert f"{records[best.errorId]['filePath']}#L{best.source.line}" in best.sourceUrl
