"""The Pallas TPU engine run on the values a paste states: a block JAX refused, a kernel over
its VMEM, an operand's tiling (E2002), a dynamic offset (E2003), a matmul's dtypes.

Values the paste does not state are assumed as the engine's defaults and said so (the chip,
a block's dtype where the check does not depend on it); a value the engine refuses leaves
the answer's reason instead of a fix. Only the match's jaxVersion (given, or read from the
paste) picks the release; the engine refuses one it does not model.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from pydantic import ValidationError

from app.answers.catalog import Catalog
from app.answers.code_edits import reblocked, set_limit, with_edit
from app.answers.tpu_compute import answer_tpu
from app.engines.tpu import (
    InputValueError,
    dynamic_offset_advice,
    get_chip,
    matmul_support,
    operand_tiling,
)
from app.engines.tpu.vmem import SHRINK_TOGETHER
from app.errors import ProblemError
from app.matching.tpu_values import (
    MAX_CODE_LINES,
    TpuBlockValues,
    TpuDynamicOffset,
    TpuMatmulValues,
    TpuReading,
    TpuTilingValues,
    TpuValues,
    TpuVmemValues,
    read_tpu_values,
)
from app.matching.values import find_value_sources
from app.schemas.compute import FixOut
from app.schemas.tpu_compute import TpuBlockIn, TpuComputeRequest
from app.schemas.tpu_found import (
    TpuCodeOut,
    TpuFoundKind,
    TpuFoundOut,
    TpuMatmulOut,
    TpuOffsetOut,
    TpuTilingOut,
)

MIB = 1 << 20
# Lines from a message's start to the figures the TPU reader types (E2002's wrapped message).
MESSAGE_LINES = 3
# A dtype of each bit width, for a check that depends only on the width (the rank-1 rule):
# JAX's message says the width, and the paste's code may not say the dtype.
_OF_WIDTH = {32: "float32", 16: "bfloat16", 8: "int8", 4: "int4", 2: "int2"}
_OUTPUT_SPEC = re.compile(r"\bout_specs?\b")


def tpu_found(text: str, jax_version: str | None, catalog: Catalog) -> list[TpuFoundOut]:
    """What the engine computes for each Pallas TPU error of ``text`` that states values."""
    reading = read_tpu_values(text)
    if not reading.values:
        return []
    chip = reading.chip or get_chip(None).name
    return [
        _found(value, reading, chip, jax_version, catalog, text).model_copy(
            update={"copies": list(copies)}
        )
        for value, copies in zip(reading.values, reading.copies, strict=True)
    ]


def tpu_lines(found: TpuFoundOut) -> set[int]:
    """The paste's lines a TPU computation stands on: each copy's line of its values, and
    the message's first lines before it (libtpu wraps E2002 after "Mosaic failed to
    compile")."""
    return {
        line
        for copy in found.copies or [found.lineNumber]
        for line in range(max(1, copy - MESSAGE_LINES), copy + 1)
    }


def tpu_on(line: int, tpu: list[TpuFoundOut]) -> TpuFoundOut | None:
    """The TPU computation for a message read on ``line``, if one stands there."""
    return next((found for found in tpu if line in tpu_lines(found)), None)


def _found(
    value: TpuValues,
    reading: TpuReading,
    chip: str,
    jax_version: str | None,
    catalog: Catalog,
    text: str,
) -> TpuFoundOut:
    assumed = [] if reading.chip else [f"chip {chip} (the paste names none)"]
    found = TpuFoundOut(
        kind=_KINDS[type(value)],
        lineNumber=value.line_number,
        chip=chip,
        assumed=assumed,
        jaxVersion=jax_version,
    )
    try:
        return _computed(found, value, catalog, text)
    except ProblemError as exc:
        return found.model_copy(update={"unavailable": exc.detail})
    except InputValueError as exc:
        return found.model_copy(update={"unavailable": str(exc)})
    except ValidationError as exc:  # values past the request's bounds (a rank of 9)
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        return found.model_copy(update={"unavailable": f"{where}: {first['msg']}"})


def _computed(found: TpuFoundOut, value: TpuValues, catalog: Catalog, text: str) -> TpuFoundOut:
    if isinstance(value, TpuBlockValues):
        block = [size or 1 for size in value.block_shape]
        return _in_the_users_code(_block(found, value, catalog), value.array_shape, block, text)
    if isinstance(value, TpuVmemValues):
        return _vmem(found, value, catalog, text)
    if isinstance(value, TpuTilingValues):
        return _tiling(found, value, text)
    if isinstance(value, TpuDynamicOffset):
        return _offset(found, value)
    return _matmul(found, value)


def _block(found: TpuFoundOut, value: TpuBlockValues, catalog: Catalog) -> TpuFoundOut:
    if value.rule not in ("tiles-8-128", "rank-1"):
        return found.model_copy(update={"unavailable": f"no fix is computed for {value.rule}"})
    dtype, assumed = value.dtype, list(found.assumed)
    if dtype is None and value.bit_width is not None:
        dtype = _OF_WIDTH.get(value.bit_width, "float32")
        assumed.append(f"dtype {dtype}: JAX's check needs only its width, {value.bit_width} bits")
    elif dtype is None:
        dtype = "float32"
        rows = get_chip(found.chip).sublane_tiling
        narrower = ", ".join(f"{bits}-bit {rows[bits]}" for bits in sorted(rows, reverse=True)[1:])
        assumed.append(
            "dtype float32: the paste does not show it. JAX's check is the same for every "
            f"dtype, but the compiler then tiles narrower ones by more rows ({narrower})"
        )
    request = TpuComputeRequest(
        backend="tpu",
        operation="pallas_call",
        arrayShape=list(value.array_shape),
        blockShape=list(value.block_shape),
        dtype=dtype,
        chip=found.chip,
        jaxVersion=found.jaxVersion,
        origin=value.origin,
        kernel=_kernel(value),
    )
    return found.model_copy(update={"compute": answer_tpu(request, catalog), "assumed": assumed})


def _kernel(value: TpuBlockValues) -> str | None:
    """The kernel as JAX's message names it: ``copy_kernel at repro.py:6``."""
    source = value.kernel
    return f"{source.kernel} at {source.file}:{source.line}" if source else None


def _vmem(found: TpuFoundOut, value: TpuVmemValues, catalog: Catalog, text: str) -> TpuFoundOut:
    """The budget of the blocks the paste's code writes, against the limit the report gives;
    without blocks, the limit that would hold what the compiler asked for."""
    found = found.model_copy(update={"requestedBytes": value.requested, "limitBytes": value.limit})
    limit: int | None = value.vmem_limit_bytes or value.limit
    if value.vmem_limit_bytes is None and limit == get_chip(found.chip).default_scoped_vmem_bytes:
        limit = None  # the chip's default, which the code does not set
    blocks, assumed = _blocks(value, text)
    if not blocks:
        physical = get_chip(found.chip).vmem_bytes
        needed = -(-value.requested // MIB) * MIB
        if needed > physical:
            why = (
                f"{value.requested:,} bytes are more than the {found.chip}'s {physical:,} "
                "bytes of VMEM: smaller blocks must do (the paste shows no BlockSpec)"
            )
            return found.model_copy(update={"unavailable": why})
        return found.model_copy(update={"vmemLimitBytes": needed, "physicalBytes": physical})
    request = TpuComputeRequest(
        backend="tpu",
        operation="vmem_budget",
        blocks=blocks,
        vmemLimitBytes=limit,
        chip=found.chip,
        jaxVersion=found.jaxVersion,
    )
    computed = answer_tpu(request, catalog)
    found = found.model_copy(update={"compute": computed, "assumed": [*found.assumed, *assumed]})
    shared = {(tuple(b.blockShape), tuple(b.arrayShape or ())) for b in blocks}
    block, array = next(iter(shared)) if len(shared) == 1 else ((), ())
    return _in_the_users_code(found, array, [size or 1 for size in block], text)


def _in_the_users_code(
    found: TpuFoundOut, array: Sequence[int | None], block: Sequence[int], text: str
) -> TpuFoundOut:
    """The fixes as changes of the paste's own code where it writes what they change: the
    BlockSpecs of ``block`` (a pallas_call's, or every block of a budget that shares it)
    with the grid over ``array``, and ``vmem_limit_bytes``; else the construct's line."""
    compute = found.compute
    if compute is None:
        return found
    fixes = []
    for fix in compute.fixes:
        edit = None
        if fix.kind == "vmem_limit" and compute.vmem and compute.vmem.neededLimitBytes:
            edit = set_limit(text, compute.vmem.neededLimitBytes)
        elif (
            fix.kind == "block"
            and (compute.operation == "pallas_call" or _together(fix))
            and len(block) == len(fix.shape) == len(array) > 0
        ):
            edit = reblocked(text, [size or 1 for size in array], block, fix.shape)
        fixes.append(with_edit(fix, edit))
    return found.model_copy(update={"compute": compute.model_copy(update={"fixes": fixes})})


def _together(fix: FixOut) -> bool:
    """A budget's fix that shrinks every input and output block alike (not one of them)."""
    return fix.description.startswith(SHRINK_TOGETHER)


def _blocks(value: TpuVmemValues, text: str) -> tuple[list[TpuBlockIn], list[str]]:
    """Each BlockSpec the code writes, an output where its line says ``out_specs``, with
    the array it tiles: one the code states of its rank and at least its size, else the
    block itself (said in the second list: what is assumed)."""
    if value.dtype is None:
        return [], []
    lines = text.splitlines()
    roles: list[Literal["input", "output"]] = [
        "output" if _OUTPUT_SPEC.search(line) else "input" for line in lines if "BlockSpec(" in line
    ]
    if len(roles) != len(value.block_shapes):
        roles = ["input"] * len(value.block_shapes)
    stated = [source.shape for source in find_value_sources(lines[:MAX_CODE_LINES])]
    blocks, assumed = [], []
    for shape, role in zip(value.block_shapes, roles, strict=True):
        array = next((each for each in stated if _holds(each, shape)), None)
        if array is None:
            array = shape
            assumed.append(f"the array of the {_render(shape)} block as large as the block")
        blocks.append(
            TpuBlockIn(blockShape=list(shape), dtype=value.dtype, role=role, arrayShape=list(array))
        )
    return blocks, assumed


def _holds(array: tuple[int, ...], block: tuple[int, ...]) -> bool:
    return len(array) == len(block) and all(a >= b for a, b in zip(array, block, strict=True))


def _render(shape: tuple[int, ...]) -> str:
    return f"({shape[0]},)" if len(shape) == 1 else f"({', '.join(map(str, shape))})"


def _tiling(found: TpuFoundOut, value: TpuTilingValues, text: str) -> TpuFoundOut:
    """The operand's tile for its dtype; where the paste does not show the dtype, one whose
    tile on the chip is the tiling the message states."""
    dtype, assumed = value.dtype, list(found.assumed)
    if dtype is None:
        widths = get_chip(found.chip).sublane_tiling
        bits = [width for width, rows in widths.items() if rows == value.tiling[0]]
        if not bits or value.tiling[1] != get_chip(found.chip).lanes:
            why = f"no dtype has the tiling {value.tiling} on the {found.chip}"
            return found.model_copy(update={"unavailable": why, "assumed": assumed})
        dtype = _OF_WIDTH.get(bits[0], "float32")
        assumed.append(f"dtype {dtype}: its tile is the message's {tuple(value.tiling)}")
    tiling = operand_tiling(value.block_shape, dtype, found.chip, value.operand_shape)
    shape, block = value.operand_shape, value.block_shape
    edits = [
        reblocked(text, shape, block, new) if len(shape) == len(block) else None
        for new in tiling.blocks
    ]
    out = TpuTilingOut(
        operand=value.operand,
        blockShape=list(value.block_shape),
        tile=list(tiling.tile),
        blocks=[list(block) for block in tiling.blocks],
        code=[TpuCodeOut(before=e.before, after=e.after) if e else None for e in edits],
    )
    return found.model_copy(update={"tiling": out, "assumed": assumed})


def _offset(found: TpuFoundOut, value: TpuDynamicOffset) -> TpuFoundOut:
    axis = value.axis or ("lane" if value.multiple % 128 == 0 else "sublane")
    dtype = value.ref_dtype or "float32"
    advice = dynamic_offset_advice(axis, dtype, found.chip)
    out = TpuOffsetOut(axis=axis, dimension=value.dimension, multiple=value.multiple, advice=advice)
    return found.model_copy(update={"offset": out})


def _matmul(found: TpuFoundOut, value: TpuMatmulValues) -> TpuFoundOut:
    if value.lhs_dtype is None or value.rhs_dtype is None:
        return found.model_copy(
            update={"unavailable": "the paste does not show both operands' dtypes"}
        )
    # Mosaic says "Bad lhs type" of a 16-bit float asked for an fp32 contraction (a v5e's
    # verdicts: bfloat16 at precision=HIGHEST, and only then)
    precision = "highest" if value.rule == "bad-lhs-type" else None
    support = matmul_support(
        value.lhs_dtype, value.rhs_dtype, found.chip, value.acc_dtype, precision
    )
    out = TpuMatmulOut(
        lhsDtype=value.lhs_dtype,
        rhsDtype=value.rhs_dtype,
        accDtype=value.acc_dtype,
        precision=precision,
        supported=support.supported,
        reason=support.reason,
        alternatives=[list(each) for each in support.alternatives],
    )
    if support.supported:  # the compiler refused what the engine does not model
        why = (
            f"the engine finds that the {found.chip} multiplies {value.lhs_dtype} × "
            f"{value.rhs_dtype}; what the compiler refused is something it does not model"
        )
        return found.model_copy(update={"matmul": out, "unavailable": why})
    return found.model_copy(update={"matmul": out})


_KINDS: dict[type, TpuFoundKind] = {
    TpuBlockValues: "block",
    TpuTilingValues: "tiling",
    TpuVmemValues: "vmem",
    TpuDynamicOffset: "offset",
    TpuMatmulValues: "matmul",
}
