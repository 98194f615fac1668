"""code_edits: a fix written into every line of the user's code that needs it."""

from __future__ import annotations

from app.answers.answer import code_diff
from app.answers.code_edits import (
    MAX_EDITED_LINES,
    code_lines,
    reblocked,
    replaced,
    resized,
    set_limit,
    shape_literal,
)

PASTE = """Here is my kernel; the shape (7,) fails:
```python
x = jnp.zeros((7,), jnp.int4)
kernel = plgpu.kernel(
    body,
    out_type=jax.ShapeDtypeStruct((7,), jnp.int4),
    scratch_types=[plgpu.SMEM((7,), jnp.int4), plgpu.Barrier()],
)
y = kernel(x)
```
Traceback (most recent call last):
  File "repro.py", line 9, in <module>
    y = kernel(x)
ValueError: Can only transfer integer bytes (shape=[7], dtype=i4)
"""


def test_the_lines_of_code_are_found_not_the_prose_nor_the_message() -> None:
    assert code_lines(PASTE, shape_literal((7,))) == [
        "x = jnp.zeros((7,), jnp.int4)",
        "out_type=jax.ShapeDtypeStruct((7,), jnp.int4),",
        "scratch_types=[plgpu.SMEM((7,), jnp.int4), plgpu.Barrier()],",
    ]


def test_a_pad_changes_every_line_and_cuts_the_result_back() -> None:
    edit = resized(PASTE, "y = kernel(x)", (7,), "int4", (256,), "int4")
    assert edit is not None and edit.cut_back
    assert edit.after.splitlines() == [
        "x = jnp.zeros((256,), jnp.int4)",
        "out_type=jax.ShapeDtypeStruct((256,), jnp.int4),",
        "scratch_types=[plgpu.SMEM((256,), jnp.int4), plgpu.Barrier()],",
        "y = kernel(x)[:7]",
    ]
    assert code_diff(edit.before, edit.after).splitlines()[:2] == [
        "-x = jnp.zeros((7,), jnp.int4)",
        "+x = jnp.zeros((256,), jnp.int4)",
    ]


def test_a_wider_dtype_is_written_and_cast_back_and_a_call_is_found_without_a_frame() -> None:
    edit = resized(PASTE, None, (7,), "int4", (128,), "int8")
    assert edit is not None
    assert edit.after.splitlines()[0] == "x = jnp.zeros((128,), jnp.int8)"
    assert edit.after.splitlines()[-1] == "y = kernel(x)[:7].astype(jnp.int4)"


def test_no_edit_where_the_code_does_not_write_the_shape_and_no_cut_for_another_rank() -> None:
    assert resized("ValueError: shape=[7]", None, (7,), "int4", (8,), "int4") is None
    edit = resized(PASTE, "y = kernel(x)", (7,), "int4", (1, 256), "int4")
    assert edit is not None and not edit.cut_back and "y = kernel" not in edit.after


def test_a_literal_is_replaced_on_its_one_line() -> None:
    code = "t = plgpu.TilingTransform((8, 32))\nprint((8, 32))\n"
    edit = replaced(code, "(8, 32)", "(8, 24)", "TilingTransform")
    assert edit is not None and edit.after == "t = plgpu.TilingTransform((8, 24))"
    assert replaced(code * 2, "(8, 32)", "(8, 24)", "TilingTransform") == edit  # a repeat is one
    assert replaced(code, "(8, 32)", "(8, 24)", "SwizzleTransform") is None


def test_a_log_of_many_lines_writing_the_shape_is_no_script_to_edit() -> None:
    log = "".join(f"y{n} = jnp.zeros((7,), jnp.int4)\n" for n in range(MAX_EDITED_LINES + 1))
    assert resized(log, None, (7,), "int4", (256,), "int4") is None
    repeated = "x = jnp.zeros((7,), jnp.int4)\n" * 1000  # one line, however often
    assert resized(repeated, None, (7,), "int4", (8,), "int4") is not None


KERNEL = """x = jnp.ones((64, 256), jnp.int8)
copy = pl.pallas_call(
    copy_kernel,
    out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
    grid=(8, 1),
    in_specs=[pl.BlockSpec((8, 256), lambda i, j: (i, j))],
    out_specs=pl.BlockSpec((8, 256), lambda i, j: (i, j)),{params}
)
"""


def test_a_new_block_changes_both_specs_and_the_grid() -> None:
    edit = reblocked(KERNEL.format(params=""), (64, 256), (8, 256), (32, 256))
    assert edit is not None
    assert code_diff(edit.before, edit.after).splitlines() == [
        "-grid=(8, 1),",
        "+grid=(2, 1),",
        "-in_specs=[pl.BlockSpec((8, 256), lambda i, j: (i, j))],",
        "+in_specs=[pl.BlockSpec((32, 256), lambda i, j: (i, j))],",
        "-out_specs=pl.BlockSpec((8, 256), lambda i, j: (i, j)),",
        "+out_specs=pl.BlockSpec((32, 256), lambda i, j: (i, j)),",
    ]
    computed = KERNEL.format(params="").replace("grid=(8, 1)", "grid=(x.shape[0] // 8, 1)")
    assert reblocked(computed, (64, 256), (8, 256), (32, 256)) is None  # the construct's diff


def test_the_limit_is_set_as_the_code_writes_it_or_added_after_out_specs() -> None:
    product = KERNEL.format(
        params="\n    compiler_params=pltpu.CompilerParams(vmem_limit_bytes=2 * 1024 * 1024),"
    )
    edit = set_limit("# vmem_limit_bytes=2 in a comment\n" + product, 8 * 2**20)
    assert edit is not None and edit.after.endswith("(vmem_limit_bytes=8 * 1024 * 1024),")
    plain = set_limit(product.replace("2 * 1024 * 1024", "2097152"), 8 * 2**20 + 1)
    assert plain is not None and plain.after.endswith("(vmem_limit_bytes=8388609),")
    added = set_limit(KERNEL.format(params=""), 32 * 2**20)
    assert added is not None
    assert code_diff(added.before, added.after).splitlines() == [
        " out_specs=pl.BlockSpec((8, 256), lambda i, j: (i, j)),",
        "+compiler_params=pltpu.CompilerParams(vmem_limit_bytes=32 * 1024 * 1024),",
    ]
