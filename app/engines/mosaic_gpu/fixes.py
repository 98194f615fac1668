"""suggest_fixes(): the smallest changes that make every check of an operation pass.

Each candidate is searched with numpy over a batch of sizes, then re-checked
with ``check`` before it is returned: an unverified fix is never returned.

Fixes that keep the user's dtypes come first (pads, then reshapes), fewest added
bytes first; changes of type come after them, however few bytes they add, since
converting or reinterpreting the data is rarely what the user meant. A reshape
keeps the element count; a new shape with more elements is a pad, and says so.

Why a bounded window is enough: along one axis every check is either periodic
in the size (bits or elements modulo a power of two at most 8192: the widest is
1024 bits, or 128 elements times a vector of up to 64) or a threshold that only
gets worse as the size grows (256 elements per TMA box, the SMEM budget). So
the first passing size, if there is one, lies within 8192 sizes of the start.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cache

import ml_dtypes
import numpy as np

from app.engines.verdicts import CodeChange, Fix
from app.jaxref.dtypes import DTYPES, DType
from app.jaxref.shapes import Dims, largest_size, render_tuple

from .engine import Case, DTypeLike, ShapeLike, check_case, resolve
from .operations import one_shape, passes, vary_axis
from .rule_types import TMA_MAX_BOX
from .snippets import code_line, validation

SEARCH_WINDOW = 8192
# Searches check shapes in batches, in the order the answer is chosen from, and stop at
# the first batch holding a passing shape; each batch is this many times the last.
FIRST_BATCH, BATCH_GROWTH = 512, 8
KIND_ORDER = {"pad": 0, "reshape": 1, "promote": 2, "view": 3}

# Wider dtypes to store instead, nearest first. 8-bit types are included: they
# fix copies, while arithmetic in pallas_call needs 16 bits or more.
PROMOTIONS: dict[str, tuple[str, ...]] = {
    "bool": ("int8", "int16", "int32"),
    "int2": ("int4", "int8", "int16", "int32"),
    "uint2": ("uint4", "uint8", "uint16", "uint32"),
    "int4": ("int8", "int16", "int32"),
    "uint4": ("uint8", "uint16", "uint32"),
    "int8": ("int16", "int32"),
    "uint8": ("uint16", "uint32"),
    "int16": ("int32",),
    "uint16": ("uint32",),
    "float4_e2m1fn": ("float8_e4m3fn", "bfloat16", "float32"),
    "float6_e2m3fn": ("float8_e4m3fn", "bfloat16", "float32"),
    "float6_e3m2fn": ("float8_e5m2", "bfloat16", "float32"),
    **{name: ("bfloat16", "float16", "float32") for name in DTYPES if name.startswith("float8_")},
    "bfloat16": ("float32",),
    "float16": ("float32",),
    "float64": ("float32",),  # TMA has no f64: narrowing is the only way through
}


@dataclass(frozen=True)
class _Candidate:
    kind: str
    axis: int | None
    dims: Dims
    dtype: DType
    target: DType | None
    description: str
    note: str = ""

    def keeps_types(self, case: Case) -> bool:
        return self.dtype == case.dtype and self.target == case.target

    def keeps_axes(self, case: Case) -> bool:
        """Every axis stays, only grown: the data is padded where it is, not laid out anew
        (a flatten or reshape changes what every index of the kernel reads)."""
        return len(self.dims) == len(case.dims) and all(
            new >= old for new, old in zip(self.dims, case.dims, strict=True)
        )

    def added_bytes(self, case: Case) -> float:
        before = math.prod(case.dims) * case.dtype.bits
        return (math.prod(self.dims) * self.dtype.bits - before) / 8

    def key(self) -> tuple[Dims, str, str | None]:
        return self.dims, self.dtype.name, self.target.name if self.target else None


def _passes(case: Case, batch: np.ndarray, dtype: DType, target: DType | None) -> np.ndarray:
    """Which shapes of the batch pass every check in every release of the case."""
    return passes(case.operation, batch, dtype, target, case.checks)


def _first_passing(case: Case, batch: np.ndarray, dtype: DType, target: DType | None) -> int | None:
    """The index of the first shape in ``batch`` that passes every check, if one does.

    Checks are per shape, so the batch is checked in growing slices: most searches end in
    the first slice instead of checking every candidate.
    """
    start, size = 0, FIRST_BATCH
    while start < len(batch):
        stop = min(len(batch), start + size)
        hits = np.flatnonzero(_passes(case, batch[start:stop], dtype, target))
        if hits.size:
            return start + int(hits[0])
        start, size = stop, size * BATCH_GROWTH
    return None


@cache
def _blocks() -> np.ndarray:
    """Every 2-D block of 2..256 × 2..256, fewest elements first, then widest rows first."""
    side = np.arange(2, TMA_MAX_BOX + 1, dtype=np.int64)
    rows, cols = (grid.ravel() for grid in np.meshgrid(side, side, indexing="ij"))
    order = np.lexsort((-cols, rows * cols))
    blocks = np.stack([rows[order], cols[order]], axis=1)
    blocks.setflags(write=False)
    return blocks


@cache
def _block_sizes() -> np.ndarray:
    sizes = _blocks().prod(axis=1)
    sizes.setflags(write=False)
    return sizes


def smallest_passing_size(
    case: Case, dims: Dims, axis: int, dtype: DType, start: int
) -> int | None:
    """The smallest size >= start for ``axis`` that passes every check, if any nearby."""
    stop = min(start + SEARCH_WINDOW, largest_size(dims[:axis] + dims[axis + 1 :]) + 1)
    if stop <= start:
        return None
    sizes = np.arange(start, stop, dtype=np.int64)
    first = _first_passing(case, vary_axis(dims, axis, sizes), dtype, case.target)
    return int(sizes[first]) if first is not None else None


def _axis_label(axis: int, rank: int) -> int:
    return -1 if axis == rank - 1 else axis


def _padded(dims: Dims, axis: int, size: int) -> Dims:
    return (*dims[:axis], size, *dims[axis + 1 :])


def _pads(case: Case, dtype: DType) -> list[_Candidate]:
    """Per axis, the smallest larger size that passes (the same dtype or a promoted one)."""
    found = []
    for axis in range(len(case.dims)):
        start = case.dims[axis] + (1 if dtype == case.dtype else 0)
        size = smallest_passing_size(case, case.dims, axis, dtype, start)
        if size is None:
            continue
        label = _axis_label(axis, len(case.dims))
        where = "the block" if len(case.dims) == 1 else f"axis {label}"
        found.append(
            _Candidate(
                "pad",
                label,
                _padded(case.dims, axis, size),
                dtype,
                case.target,
                f"pad {where} from {case.dims[axis]} to {size} elements",
            )
        )
    return found


def _promotions(case: Case) -> list[_Candidate]:
    if case.operation.needs_target:  # a bitcast's buffer is bytes by construction
        return []
    found = []
    same_shape = one_shape(case.dims)
    for name in PROMOTIONS.get(case.dtype.name, ()):
        wider = DTYPES[name]
        if _passes(case, same_shape, wider, case.target)[0]:
            options = [_Candidate("promote", None, case.dims, wider, case.target, "")]
        else:
            options = [*_pads(case, wider), *_reshapes(case, wider), *_padded_reshapes(case, wider)]
        if not options:
            continue
        best = min(options, key=lambda option: option.added_bytes(case))
        description = f"store {wider.name} instead of {case.dtype.name}"
        if best.description:
            description = f"{description}, and {best.description}"
        found.append(
            _Candidate(
                "promote",
                best.axis,
                best.dims,
                wider,
                case.target,
                description,
                _conversion_note(case.dtype, wider),
            )
        )
    return found


def _conversion_note(dtype: DType, wider: DType) -> str:
    """What storing another type asks of the data: converting it, and whether that is exact."""
    convert = f"convert the data to {wider.name} (x.astype(jnp.{wider.jnp_name})) before it"
    if _holds_every_value(dtype, wider):
        return f"{convert} is stored; every {dtype.name} value is exact in {wider.name}"
    return f"{convert} is stored; {wider.name} cannot hold every {dtype.name} value exactly"


def _holds_every_value(dtype: DType, wider: DType) -> bool:
    if dtype.kind == "bool":
        return True
    if dtype.kind == "float" or wider.kind == "float":
        if dtype.kind != wider.kind:
            return False
        narrow, broad = (ml_dtypes.finfo(_scalar(d)) for d in (dtype, wider))
        return bool(
            broad.nmant >= narrow.nmant
            and broad.maxexp >= narrow.maxexp
            and broad.minexp <= narrow.minexp
        )
    low, high = (ml_dtypes.iinfo(_scalar(d)) for d in (dtype, wider))
    return bool(high.min <= low.min and high.max >= low.max)


def _scalar(dtype: DType) -> type:
    return np.dtype(getattr(ml_dtypes, dtype.name, dtype.name)).type


def _exotic(dtype: DType) -> str | None:
    """The family of a type few users mean unless they already use it: narrow floats
    (float8, float6, float4), sub-byte integers, bool."""
    if dtype.kind == "float" and dtype.bits < 16:
        return "narrow float"
    if dtype.kind in ("int", "uint") and dtype.bits < 8:
        return "sub-byte integer"
    return "bool" if dtype.kind == "bool" else None


def _views(case: Case, limit: int = 3) -> list[_Candidate]:
    """Other dtypes to view a bitcast buffer as, nearest to the requested one first; an
    exotic type only when the user's types are of its family."""
    wanted = case.target
    if wanted is None:
        return []
    families = {_exotic(case.dtype), _exotic(wanted)}
    others = [
        dtype
        for dtype in DTYPES.values()
        if dtype.name != wanted.name
        and dtype.mlir != case.dtype.mlir
        and (_exotic(dtype) is None or _exotic(dtype) in families)
    ]
    batch = one_shape(case.dims)
    fitting = [dtype for dtype in others if _passes(case, batch, case.dtype, dtype)[0]]
    fitting.sort(key=lambda d: (abs(d.bits - wanted.bits), d.kind != wanted.kind, d.name))
    return [
        _Candidate(
            "view",
            None,
            case.dims,
            case.dtype,
            dtype,
            f"view the buffer as {dtype.name} instead of {wanted.name}",
            f"reads the same bytes as {dtype.name}: right only if the buffer holds "
            f"{dtype.name} data, not {wanted.name}",
        )
        for dtype in fitting[:limit]
    ]


def _reshapes(case: Case, dtype: DType) -> list[_Candidate]:
    """The same elements in another shape: the 1-D block, and the first passing 2-D block
    of at most 256 × 256 holding exactly as many."""
    elements = math.prod(case.dims)
    if elements == 0:
        return []
    found: list[Dims] = []
    flat = (elements,)
    if flat != case.dims and _passes(case, one_shape(flat), dtype, case.target)[0]:
        found.append(flat)
    sizes = _block_sizes()
    exact = _blocks()[
        int(np.searchsorted(sizes, elements)) : int(np.searchsorted(sizes, elements, "right"))
    ]
    best = _first_passing(case, exact, dtype, case.target)
    if best is not None:
        block = (int(exact[best][0]), int(exact[best][1]))
        if block != case.dims:
            found.append(block)
    return [
        _Candidate(
            "reshape",
            None,
            dims,
            dtype,
            case.target,
            f"reshape {render_tuple(case.dims)} to {render_tuple(dims)}",
        )
        for dims in found
    ]


def _padded_reshapes(case: Case, dtype: DType) -> list[_Candidate]:
    """More elements in a new shape: the fewest that pass as a 1-D block or as a 2-D block
    of at most 256 × 256 (the 1-D one on a tie). For a 1-D block this is the plain pad."""
    if len(case.dims) == 1:
        return []
    elements = math.prod(case.dims)
    shapes: list[Dims] = []
    flat = smallest_passing_size(case, (elements,), 0, dtype, elements + 1)
    if flat is not None:
        shapes.append((flat,))
    roomy = _blocks()[int(np.searchsorted(_block_sizes(), elements, "right")) :]
    best = _first_passing(case, roomy, dtype, case.target)
    if best is not None:
        shapes.append((int(roomy[best][0]), int(roomy[best][1])))
    if not shapes:
        return []
    dims = min(shapes, key=math.prod)
    padded = f"the {elements} elements to {math.prod(dims)}"
    if not case.dims:
        padded = f"the scalar to {math.prod(dims)} elements"
    return [
        _Candidate(
            "pad",
            None,
            dims,
            dtype,
            case.target,
            f"pad {padded} and reshape {render_tuple(case.dims)} to {render_tuple(dims)}",
        )
    ]


def _candidates(case: Case) -> list[_Candidate]:
    pads = _pads(case, case.dtype)
    cheapest_pad = min((pad.added_bytes(case) for pad in pads), default=math.inf)
    reshaped = [*_reshapes(case, case.dtype), *_padded_reshapes(case, case.dtype)]
    reshapes = [r for r in reshaped if r.added_bytes(case) < cheapest_pad]
    views = _views(case) if case.operation.needs_target else []
    ranked = sorted(
        [*pads, *reshapes, *_promotions(case), *views],
        key=lambda c: (
            not c.keeps_types(case),
            not c.keeps_axes(case),
            c.added_bytes(case),
            KIND_ORDER[c.kind],
            c.dtype.bits,
            c.axis is None or c.axis != -1,
            c.dims,
            c.dtype.name,
        ),
    )
    unique: dict[tuple[Dims, str, str | None], _Candidate] = {}
    for candidate in ranked:
        unique.setdefault(candidate.key(), candidate)
    return list(unique.values())


def _as_fix(case: Case, candidate: _Candidate) -> Fix | None:
    """The candidate as a Fix, if ``check`` confirms it passes in every release of the
    case; otherwise None."""
    fixed = replace(case, dims=candidate.dims, dtype=candidate.dtype, target=candidate.target)
    if not all(check_case(each).ok for each in fixed.in_distinct_releases):
        return None
    operation = case.operation
    return Fix(
        kind=candidate.kind,
        axis=candidate.axis,
        shape=candidate.dims,
        dtype=candidate.dtype.name,
        target_dtype=candidate.target.name if candidate.target else None,
        added_bytes=candidate.added_bytes(case),
        verified=True,
        code=CodeChange(
            before=code_line(operation, case.dims, case.dtype, case.target),
            after=code_line(operation, candidate.dims, candidate.dtype, candidate.target),
        ),
        validation=validation(
            operation, candidate.dims, candidate.dtype, candidate.target, case.releases
        ),
        description=candidate.description,
        note=candidate.note,
    )


def suggest_fixes(
    operation: str,
    shape: ShapeLike,
    dtype: DTypeLike | None = None,
    target_dtype: DTypeLike | None = None,
    jax_version: str | None = None,
    limit: int = 5,
    lowering_semantics: str | None = None,
    also_in: Sequence[str] = (),
) -> list[Fix]:
    """Up to ``limit`` verified fixes, those keeping the user's dtypes first, then those
    keeping every axis (a pad before a flatten or reshape), then fewest added bytes first;
    [] when nothing fails. A fix passes every check in ``jax_version``
    and in each release of ``also_in`` (code that runs on several, a paste whose release is
    not known)."""
    case = resolve(operation, shape, dtype, target_dtype, jax_version, lowering_semantics, also_in)
    return fixes_for(case, limit)


def fixes_for(case: Case, limit: int = 5) -> list[Fix]:
    """``suggest_fixes`` for a resolved case."""
    if _passes(case, one_shape(case.dims), case.dtype, case.target)[0]:
        return []
    fixes: list[Fix] = []
    for candidate in _candidates(case):
        if len(fixes) == limit:
            break
        fix = _as_fix(case, candidate)
        if fix is not None:
            fixes.append(fix)
    return fixes
