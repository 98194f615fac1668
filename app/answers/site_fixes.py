"""Fixes for a site known by its frame, whose exception says nothing: computed from the
values the paste's code writes.

A bare ``AssertionError`` from ``TilingTransform.transform_type`` (the record of rule
MGPU-TILINGTRANSFORM-DIVISIBILITY) holds no values, but the code that raised it is often in
the paste: ``plgpu.SMEM((16, 48), jnp.float16, transforms=(plgpu.TilingTransform((8, 32)),))``.
Its one ref the tiling does not divide gets the engine's fixes as changes of those lines.
"""

from __future__ import annotations

from app.answers.code_edits import Edit, replaced, resized
from app.engines.mosaic_gpu import render_tuple
from app.engines.mosaic_gpu.tiling import TilingFix, tiling_divides, tiling_fixes
from app.jaxref.dtypes import parse_dtype
from app.jaxref.inputs import InputValueError
from app.matching.tiling_values import TiledRef, read_tiled_refs
from app.schemas.match import CodeFixOut

TILING_RULE = "MGPU-TILINGTRANSFORM-DIVISIBILITY"


def site_fixes(rule: str | None, text: str) -> tuple[str | None, list[CodeFixOut]]:
    """What failed and the fixes, for a site of ``rule``; (None, []) where the engine
    computes nothing for it or the paste's code does not show one failing ref."""
    if rule != TILING_RULE:
        return None, []
    failing = [ref for ref in read_tiled_refs(text) if not tiling_divides(ref.shape, ref.tiling)]
    if len(failing) != 1:
        return None, []
    [ref] = failing
    bits = parse_dtype(ref.dtype).bits if ref.dtype else None
    try:
        fixes = tiling_fixes(ref.shape, ref.tiling, bits, ref.swizzle)
    except InputValueError:
        return None, []
    found = [out for fix in fixes if (out := _code_fix(ref, fix, text)) is not None]
    return _failure(ref), found


def _failure(ref: TiledRef) -> str:
    tiled = ref.shape[len(ref.shape) - len(ref.tiling) :]
    off = [f"{d} % {t} = {d % t}" for d, t in zip(tiled, ref.tiling, strict=True) if d % t]
    return (
        f"The tiling {render_tuple(ref.tiling)} does not divide the ref's "
        f"{render_tuple(ref.shape)}: {'; '.join(off)}"
    )


def _code_fix(ref: TiledRef, fix: TilingFix, text: str) -> CodeFixOut | None:
    edit: Edit | None
    if fix.kind == "tiling":
        edit = replaced(text, ref.tiling_written, render_tuple(fix.tiling), "TilingTransform")
        title = f"Tile by {render_tuple(fix.tiling)} instead of {render_tuple(ref.tiling)}"
        note = f"every tiled dimension of {render_tuple(ref.shape)} is whole tiles; " + (
            f"the minor tile stays one {ref.swizzle}-byte swizzle wide"
            if ref.swizzle
            else "the minor tile is a multiple of 128 bits, as an async copy needs"
        )
    else:
        dtype = ref.dtype or "float32"  # unchanged: only the shape is rewritten
        edit = resized(text, None, ref.shape, dtype, fix.shape, dtype)
        title = f"Pad the ref from {render_tuple(ref.shape)} to {render_tuple(fix.shape)}"
        if edit is None:
            return None
        cut = "is cut back" if edit.cut_back else "is then yours to cut back"
        note = (
            f"whole {render_tuple(fix.tiling)} tiles; the array passed in and the output "
            f"change with it, and the result {cut} to {render_tuple(ref.shape)}"
        )
    if edit is None:
        return None
    return CodeFixOut(title=title, note=note, before=edit.before, after=edit.after)
