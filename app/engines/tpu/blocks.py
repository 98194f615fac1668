"""check_blocks(): what ``pallas_call`` on TPU says about one BlockSpec, word for word.

Reproduces ``BlockSpec.to_block_mapping``'s rank check (``pallas/core.py``) and
``_check_block_mappings`` (``pallas/mosaic/lowering.py``): the (8, 128) rule for blocks of
rank 2 and more, the rank-1 rule and the rank-0 refusal. The message templates are data
(``data/tpu-block-rules.json``), one entry per group of releases that word them alike:
0.5.3 to 0.12.0.1, each confirmed by ``tests/oracle/test_tpu_releases.py``.

A message also names the user's own code: the block's origin (``args[0]``), the kernel's
source location and the index map's jaxpr. Those are arguments; the index map defaults to
the one a grid of one axis per unsqueezed block dimension gives (``lambda i, j: (i, j)``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from app.engines.verdicts import Verdict, Violation
from app.jaxref.dtypes import DType, parse_dtype
from app.jaxref.files import DATA_DIR
from app.jaxref.inputs import InputValueError, ShapeError
from app.jaxref.shapes import MAX_RANK, Dims, validate_dims

from .chips import Chip, check_tpu_dtype, get_chip, tpu_bits

RULES_FILE = DATA_DIR / "tpu-block-rules.json"
DEFAULT_JAX_VERSION = "0.10.2"
DEFAULT_ORIGIN = "args[0]"
DEFAULT_KERNEL = "kernel"
LANE_MULTIPLE, SUBLANE_MULTIPLE = 128, 8  # as _check_block_mappings spells them
# JAX's jaxpr printer names variables a, b, c, ...: enough for MAX_RANK grid axes.
_VARIABLES = "abcdefghijklmnopqrstuvwxyz"

BlockShape = tuple[int | None, ...]  # None: a squeezed dimension (pl.Squeezed())


@dataclass(frozen=True)
class Wording:
    details: str
    default_memory_space: str
    rules: dict[str, dict[str, str]]
    rank1: str  # "chunk" (from 0.9.2) or "tiling" (before): which rank-1 rule runs
    block_repr: str  # "blocked": (Blocked(block_size=8),) from 0.6.1; "sizes": (8,) before
    squeezed: str  # a squeezed dimension in the block: Squeezed() from 0.6.1, Mapped before
    zero: str  # the index map's constant 0 in its jaxpr: 0:i32[] from 0.6.1, 0 before


@cache
def _wordings() -> dict[str, Wording]:
    """Each modelled release → how it words the checks."""
    table: dict[str, Wording] = {}
    entries = json.loads(RULES_FILE.read_text())["releases"]
    for entry in sorted(entries, key=lambda entry: "like" in entry):  # the models first
        base = table[entry["like"]] if "like" in entry else None
        wording = Wording(
            entry.get("details", base.details if base else ""),
            entry.get("defaultMemorySpace", base.default_memory_space if base else ""),
            {**(base.rules if base else {}), **entry.get("rules", {})},
            entry.get("rank1", base.rank1 if base else "chunk"),
            entry.get("blockRepr", base.block_repr if base else "blocked"),
            entry.get("squeezed", base.squeezed if base else "Squeezed()"),
            entry.get("zero", base.zero if base else "0:i32[]"),
        )
        for version in entry["jaxVersions"]:
            table[version] = wording
    return dict(sorted(table.items(), key=lambda item: _version_key(item[0])))


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def modelled_releases() -> tuple[str, ...]:
    return tuple(_wordings())


def wording_for(jax_version: str | None, field: str = "jax_version") -> tuple[str, Wording]:
    """The release asked (0.10.2 when None) and its wording; an unmodelled one raises."""
    version = (jax_version or DEFAULT_JAX_VERSION).strip().removeprefix("v")
    wording = _wordings().get(version)
    if wording is None:
        raise InputValueError(
            field,
            f"JAX {jax_version} is not modelled for Pallas TPU; modelled: "
            f"{', '.join(modelled_releases())}",
        )
    return version, wording


@dataclass(frozen=True)
class BlockCase:
    """One BlockSpec of a TPU pallas_call, parsed and checked for range."""

    array_shape: Dims
    block_shape: BlockShape
    dtype: DType
    chip: Chip
    jax_version: str
    wording: Wording
    origin: str = DEFAULT_ORIGIN
    kernel: str = DEFAULT_KERNEL
    index_map: str | None = None
    memory_space: str | None = None

    @property
    def sizes(self) -> Dims:
        """The block's sizes, a squeezed dimension counting 1 (``_get_block_shape``)."""
        return tuple(1 if size is None else size for size in self.block_shape)


@dataclass(frozen=True)
class BlockCheck(Verdict):
    """The verdict on one BlockSpec: every failing check, in the order JAX runs them."""

    operation: str
    array_shape: Dims
    block_shape: BlockShape
    dtype: DType
    chip: str
    jax_version: str
    violations: tuple[Violation, ...]


def validate_block_shape(value: Sequence[object], field: str = "block_shape") -> BlockShape:
    """Positive sizes or None (squeezed), within the engine's limits."""
    if isinstance(value, (str, bytes)) or len(value) > MAX_RANK:
        raise ShapeError(f"expected at most {MAX_RANK} sizes or nulls, got {value!r}", field)
    sizes = validate_dims([1 if size is None else size for size in value], field)
    _positive(sizes, field)
    return tuple(None if given is None else size for given, size in zip(value, sizes, strict=True))


def _positive(dims: Dims, field: str) -> None:
    for axis, size in enumerate(dims):
        if size < 1:
            raise ShapeError(f"dimension {size} at axis {axis} is not positive", field)


def resolve_block(
    array_shape: Sequence[int],
    block_shape: Sequence[int | None],
    dtype: str | DType,
    chip: str | None = None,
    jax_version: str | None = None,
    **context: str | None,
) -> BlockCase:
    """Parse and range-check every argument; raises InputValueError naming the field.
    ``context``: origin, kernel, index_map, memory_space as the paste shows them."""
    array = validate_dims(array_shape, "array_shape")
    _positive(array, "array_shape")
    block = validate_block_shape(block_shape, "block_shape")
    parsed = dtype if isinstance(dtype, DType) else parse_dtype(dtype)
    version, wording = wording_for(jax_version)
    given = {key: value for key, value in context.items() if value is not None}
    return BlockCase(
        array, block, check_tpu_dtype(parsed), get_chip(chip), version, wording, **given
    )


def render_block(block: BlockShape, wording: Wording | None = None) -> str:
    """The block as JAX prints a canonical block shape: ``(Blocked(block_size=100),)``, or
    before 0.6.1 as plain sizes (``(100, Mapped)``)."""
    sizes = wording is not None and wording.block_repr == "sizes"
    squeezed = wording.squeezed if wording else "Squeezed()"
    parts = [
        squeezed if size is None else str(size) if sizes else f"Blocked(block_size={size})"
        for size in block
    ]
    return python_tuple(parts)


def python_tuple(parts: Sequence[object]) -> str:
    """``parts`` as Python prints a tuple of them: ``(8,)``, ``(8, None)``, ``()``."""
    return f"({parts[0]},)" if len(parts) == 1 else f"({', '.join(map(str, parts))})"


def default_index_map(block: BlockShape, zero: str = "0:i32[]") -> str:
    """The jaxpr of ``lambda *grid: ...`` taking one grid index per unsqueezed dimension, in
    order, and 0 for each squeezed one, as JAX prints it."""
    names = iter(_VARIABLES)
    outputs = [zero if size is None else next(names) for size in block]
    grid = [name for name in outputs if name != zero]
    inputs = " ".join(f"{name}:i32[]" for name in grid)
    return f"{{ lambda ; {inputs}. let  in {python_tuple(outputs)} }}"


def _details(case: BlockCase) -> str:
    return case.wording.details.format(
        origin=case.origin,
        kernel=case.kernel,
        block=render_block(case.block_shape, case.wording),
        array=python_tuple(case.array_shape),
        index_map=case.index_map or default_index_map(case.block_shape, case.wording.zero),
        memory_space=case.memory_space or case.wording.default_memory_space,
    )


def rank1_limits(case: BlockCase) -> tuple[int, int, int]:
    """(chunk size, minimum power-of-two tiling, packing) of the rank-1 rule."""
    packing = 32 // tpu_bits(case.dtype)
    return case.chip.sublanes * case.chip.lanes, case.chip.lanes * packing, packing


def rank1_passes(size: int, case: BlockCase) -> bool:
    """The rank-1 rule as the case's release runs it: up to 0.9.1 a multiple of the tiling
    (128 × 32 / bit width); from 0.9.2 also a multiple of sublanes × lanes, or a power of
    two of at least the tiling."""
    chunk, min_tiling, _ = rank1_limits(case)
    array = case.array_shape[0]
    if case.wording.rank1 == "tiling":
        return size == array or size % min_tiling == 0
    return size == array or size % chunk == 0 or (size >= min_tiling and size & (size - 1) == 0)


def lane_passes(size: int, array: int) -> bool:
    return size == array or size % LANE_MULTIPLE == 0


def sublane_passes(size: int, array: int) -> bool:
    return size == array or size % SUBLANE_MULTIPLE == 0


def _failing_rule(case: BlockCase) -> tuple[str, dict[str, Any]] | None:
    """The rule the block breaks, if any, with the values its wording needs."""
    block, array = case.sizes, case.array_shape
    if len(block) != len(array):
        return "TPU-BLOCK-RANK-MATCH", {"block_rank": len(block), "array_rank": len(array)}
    if not block:
        return "TPU-BLOCK-RANK-0", {}
    if len(block) >= 2:
        lane_ok = lane_passes(block[-1], array[-1])
        sublane_ok = sublane_passes(block[-2], array[-2])
        if lane_ok and sublane_ok:
            return None
        values = {"bs0": block[-1], "as0": array[-1], "bs1": block[-2], "as1": array[-2]}
        verdicts = {"lane_verdict": _verdict(lane_ok), "sublane_verdict": _verdict(sublane_ok)}
        return "TPU-BLOCK-LAST-TWO", {**values, **verdicts}
    if rank1_passes(block[0], case):
        return None
    chunk, min_tiling, packing = rank1_limits(case)
    return "TPU-BLOCK-RANK-1", {
        "bs0": block[0],
        "as0": array[0],
        "chunk_size": chunk,
        "min_tiling": min_tiling,
        "packing": packing,
        "bits": tpu_bits(case.dtype),
        "sublanes": case.chip.sublanes,
        "lanes": case.chip.lanes,
    }


def _verdict(passes: bool) -> str:
    return "passes" if passes else "fails"


def violations_of(case: BlockCase) -> tuple[Violation, ...]:
    failing = _failing_rule(case)
    if failing is None:
        return ()
    rule_id, values = failing
    rule = case.wording.rules[rule_id]
    values = {
        **values,
        "origin": case.origin,
        "block": render_block(case.block_shape, case.wording),
        "array": python_tuple(case.array_shape),
        "dtype": case.dtype.name,
    }
    message = rule["message"].format(details=_details(case), **values)
    return (Violation(rule_id, rule["errorClass"], message, rule["explanation"].format(**values)),)


def check_case(case: BlockCase) -> BlockCheck:
    return BlockCheck(
        "pallas_call",
        case.array_shape,
        case.block_shape,
        case.dtype,
        case.chip.name,
        case.jax_version,
        violations_of(case),
    )


def check_blocks(
    array_shape: Sequence[int],
    block_shape: Sequence[int | None],
    dtype: str | DType,
    chip: str | None = None,
    jax_version: str | None = None,
    **context: str | None,
) -> BlockCheck:
    """What ``pallas_call`` (JAX 0.10.2 unless asked) raises on TPU for a BlockSpec of
    ``block_shape`` (None: squeezed) over an array of ``array_shape`` and ``dtype``.
    ``context`` (origin, kernel, index_map, memory_space) fills the message's mention of
    the user's code; omitted, it reads as for ``pallas_call(kernel, ...)``'s first input."""
    return check_case(resolve_block(array_shape, block_shape, dtype, chip, jax_version, **context))


def block_grid(case: BlockCase, block: BlockShape) -> Dims:
    """The grid that covers the array with ``block``: one axis per unsqueezed dimension."""
    return tuple(
        math.ceil(array / size)
        for array, size in zip(case.array_shape, block, strict=True)
        if size is not None
    )
