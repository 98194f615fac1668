"""A fix as a change of the user's own code, wherever the paste shows it.

A block's shape is written in several places: the array passed in (``jnp.zeros((7,), …)``),
``out_shape``, the scratch or BlockSpec, and the call whose result has that shape. A fix
that changes one of them alone moves the error to the next line (a shape mismatch), so the
change is made on every line of the paste's code that writes the shape, and where a fix
pads, the call's result is cut back to the user's shape (and dtype).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from app.engines.mosaic_gpu import render_list, render_tuple
from app.engines.mosaic_gpu.snippets import jnp_spelling
from app.jaxref.dtypes import parse_dtype
from app.schemas.compute import FixOut

# Lines that are not the user's code though they may print a shape: a comment, an exception's line
# ("ValueError: …", "jax._src….JaxStackTraceBeforeTransformation: ValueError: …"), a
# traceback's frame line, its carets.
_NOT_CODE = re.compile(r"^[>\s]*(?:#|[A-Za-z_][\w.]*: |File \"|Traceback \(|[~^\s]+$)")
# A call of the kernel on one array, its result kept or not: ``out = kernel(x)``.
_CALL = re.compile(
    r"^(?P<head>(?:[A-Za-z_][\w.]*\s*=\s*)?)(?P<call>[A-Za-z_][\w.]*\((?P<arg>\w+)\))\s*$"
)
_LIMIT_SET = re.compile(r"vmem_limit_bytes\s*=\s*(?P<value>\d[\d_]{0,12}(?:\s*\*\s*\d{1,6}){0,3})")
MAX_EDITED_LINES = 16  # a script writes a block's shape in a few places
_ASSIGNED = re.compile(r"^\s*(?P<name>[A-Za-z_]\w*)\s*=")


@dataclass(frozen=True)
class Edit:
    """The user's lines before and after, in the paste's order."""

    before: str
    after: str
    cut_back: bool = False  # the last line is the kernel's call, its result cut back


def with_edit(fix: FixOut, edit: Edit | None) -> FixOut:
    """``fix`` showing ``edit`` as its code (its validation kept); as it was without one."""
    if edit is None:
        return fix
    code = fix.code.model_copy(update={"before": edit.before, "after": edit.after})
    return fix.model_copy(update={"code": code})


@lru_cache(maxsize=64)
def shape_literal(shape: tuple[int, ...]) -> re.Pattern[str]:
    """The shape as code writes it: a tuple (a rank-1 one with its comma) or a list, spaced
    any way, with a trailing comma or not."""
    items = r"\s*,\s*".join(str(size) for size in shape)
    comma = r"\s*,\s*" if len(shape) == 1 else r"\s*,?\s*"
    return re.compile(rf"(?<![\w.])(?:\(\s*{items}{comma}\)|\[\s*{items}\s*,?\s*\])")


def code_lines(text: str, written: re.Pattern[str]) -> list[str]:
    """The paste's lines of code that write ``written`` once as an argument or a value
    (after ``(``, ``,``, ``[`` or ``=``, or first on its line: not a sentence's "shape
    (7,)"), stripped, each once (a traceback repeats a line of the code block above it)."""
    return list(_code_lines(text, written))


@lru_cache(maxsize=8)  # each fix of one answer asks of the same paste and shape
def _code_lines(text: str, written: re.Pattern[str]) -> tuple[str, ...]:
    lines: dict[str, None] = {}
    for line in text.splitlines():
        code = line.strip().removeprefix(">").strip()
        found = list(written.finditer(code))
        if (
            len(found) == 1
            and code[: found[0].start()].rstrip()[-1:] in ("", "(", ",", "[", "=")
            and not _NOT_CODE.match(line)
        ):
            lines[code] = None
            if len(lines) > MAX_EDITED_LINES:
                return ()  # a log of values, not a script's few lines: no edit of it
    return tuple(lines)


@lru_cache(maxsize=8)
def _calls(text: str) -> tuple[str, ...]:
    """The paste's lines that call a function on one name: ``out = kernel(x)``."""
    return tuple(line.strip() for line in text.splitlines() if _CALL.match(line.strip()))


def resized(
    text: str,
    call: str | None,
    shape: Sequence[int],
    dtype: str,
    new_shape: Sequence[int],
    new_dtype: str,
) -> Edit | None:
    """Every line of the paste's code that writes ``shape``, with ``new_shape`` and
    ``new_dtype`` written instead, and the kernel's call on an array those lines make
    (``call``, the user's frame line, or the code's first) cut back to ``shape`` and
    ``dtype``. None where the paste's code writes the shape nowhere, or writes the dtype
    on a line otherwise."""
    lines = code_lines(text, shape_literal(tuple(shape)))
    if not lines:
        return None
    after = [_rewritten(line, shape, dtype, new_shape, new_dtype) for line in lines]
    if any(line is None for line in after):
        return None
    fixed = [line for line in after if line is not None]
    if (tuple(new_shape), new_dtype) == (tuple(shape), dtype):
        return Edit("\n".join(lines), "\n".join(fixed))
    # the user's frame line first, else the code's first call of the kernel on the array
    calls = [call.strip()] if call is not None else []
    for candidate in [*calls, *_calls(text)]:
        cut = _cut_back(candidate, lines, shape, dtype, new_shape, new_dtype)
        if cut is not None:
            return Edit("\n".join([*lines, candidate]), "\n".join([*fixed, cut]), True)
    return Edit("\n".join(lines), "\n".join(fixed))


def reblocked(
    text: str, array: Sequence[int], block: Sequence[int], new_block: Sequence[int]
) -> Edit | None:
    """Every line of the paste's code that writes ``block`` (the BlockSpecs in and out)
    with ``new_block``, and its ``grid=`` over ``array`` with the grid the new block takes;
    None where the grid changes and the code does not write it as a tuple."""
    edit = resized(text, None, block, "float32", new_block, "float32")  # no dtype is written
    if edit is None:
        return None
    old_grid, new_grid = (_grid(array, each) for each in (block, new_block))
    if old_grid == new_grid:
        return edit
    grid = replaced(text, render_tuple(old_grid), render_tuple(new_grid), "grid=")
    if grid is None:  # a grid written otherwise (x.shape[0] // 512): the construct's diff
        return None
    return Edit(f"{grid.before}\n{edit.before}", f"{grid.after}\n{edit.after}")


def _grid(array: Sequence[int], block: Sequence[int]) -> tuple[int, ...]:
    return tuple(-(-size // step) for size, step in zip(array, block, strict=True))


def set_limit(text: str, limit: int) -> Edit | None:
    """``vmem_limit_bytes`` as the paste's code sets it, set to ``limit`` (whole MiB as
    ``N * 1024 * 1024`` where the code writes a product); where the code sets none, the
    line that adds it after the call's ``out_specs``."""
    code = (line for line in text.splitlines() if not _NOT_CODE.match(line))
    found = next((hit for line in code if (hit := _LIMIT_SET.search(line))), None)
    if found is not None:
        written = found["value"]
        new = _bytes(limit) if "*" in written else str(limit)
        return replaced(text, f"vmem_limit_bytes={written}", f"vmem_limit_bytes={new}", "vmem")
    specs = [line.strip() for line in text.splitlines() if line.strip().startswith("out_specs=")]
    if len(specs) != 1:
        return None
    added = f"compiler_params=pltpu.CompilerParams(vmem_limit_bytes={_bytes(limit)}),"
    return Edit(specs[0], f"{specs[0]}\n{added}")


def _bytes(size: int) -> str:
    """Whole MiB as code writes them, ``64 * 1024 * 1024``; else the number."""
    return f"{size // 2**20} * 1024 * 1024" if size % 2**20 == 0 else str(size)


def located(edit: Edit, line: str, place: str) -> Edit:
    """``edit`` with the comment ``place`` ("# kernel.py, line 12") above ``line`` (the
    user's frame line, which the traceback places) where the edit changes it."""
    before, after = edit.before.splitlines(), edit.after.splitlines()
    if line.strip() not in before:
        return edit
    at = before.index(line.strip())
    return Edit(
        "\n".join([*before[:at], place, *before[at:]]),
        "\n".join([*after[:at], place, *after[at:]]),
        edit.cut_back,
    )


def replaced(text: str, old: str, new: str, context: str) -> Edit | None:
    """The paste's one line of code holding both ``context`` and ``old`` (``TilingTransform``
    and its tuple), with ``new`` written instead."""
    lines = [line for line in code_lines(text, re.compile(re.escape(old))) if context in line]
    if len(lines) != 1:
        return None
    return Edit(lines[0], lines[0].replace(old, new))


def _rewritten(
    line: str, shape: Sequence[int], dtype: str, new_shape: Sequence[int], new_dtype: str
) -> str | None:
    found = shape_literal(tuple(shape)).search(line)
    if found is None:
        return None
    render = render_list if line[found.start()] == "[" else render_tuple
    after = line[: found.start()] + render(tuple(new_shape)) + line[found.end() :]
    if new_dtype == dtype:
        return after
    # as jnp names it, or as a string: jnp.int4, 'int4', "int4"
    olds, news = (_spellings(name) for name in (dtype, new_dtype))
    counts = [after.count(old) for old in olds]
    if sum(counts) > 1:
        return None
    for old, new in zip(olds, news, strict=True):
        after = after.replace(old, new)
    return after


def _spellings(dtype: str) -> tuple[str, str, str]:
    name = parse_dtype(dtype).name
    return jnp_spelling(parse_dtype(dtype)), f"'{name}'", f'"{name}"'


def _cut_back(
    call: str,
    lines: Sequence[str],
    shape: Sequence[int],
    dtype: str,
    new_shape: Sequence[int],
    new_dtype: str,
) -> str | None:
    """``call`` with its result sliced to ``shape`` and cast back to ``dtype``, where it
    calls on an array one of ``lines`` assigns."""
    found = _CALL.match(call)
    made = {m["name"] for line in lines if (m := _ASSIGNED.match(line))}
    if found is None or found["arg"] not in made or len(new_shape) != len(shape):
        return None  # a fix of another rank: the result is the user's to reshape
    cut = found["call"]
    if tuple(new_shape) != tuple(shape):
        slices = [
            f":{old}" if old != new else ":" for old, new in zip(shape, new_shape, strict=True)
        ]
        cut += f"[{', '.join(slices)}]"
    if new_dtype != dtype:
        cut += f".astype({jnp_spelling(parse_dtype(dtype))})"
    return found["head"] + cut
