"""Kernels that ask for more on-chip memory than the device has, as each backend reports it.

Mosaic GPU's check is JAX's own (``mosaic/gpu/core.py``); the Triton and TPU reports come from
the compilers under Pallas (XLA's Triton emitter, Triton itself, the TPU compiler), so no JAX
source has their words: these are the wordings users paste (e.g. jax-ml/jax#20008, #38988).
Beside the figures, a paste may show what the budget is made of: the pipeline depth
(``max_concurrent_steps=4``), the block shapes (``BlockSpec((128, 128), …)``) and a dtype.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.jaxref.dtypes import DType, parse_dtype
from app.jaxref.inputs import InputValueError

MIB = 1 << 20


@dataclass(frozen=True)
class MemoryOverflow:
    line_number: int  # 1-based, in the paste
    backend: str  # mosaic_gpu, triton or tpu
    memory: str  # SMEM or VMEM
    requested: int  # bytes
    limit: int  # bytes
    exact: bool  # False where the report rounds to hundredths of a MiB (TPU)


@dataclass(frozen=True)
class BudgetHints:
    """What the paste shows of the kernel's buffers, each None when it does not."""

    max_concurrent_steps: int | None
    block: tuple[int, ...] | None
    dtype: DType | None


def _bytes(group: str) -> tuple[int, bool]:
    return int(group), True


def _mebibytes(group: str) -> tuple[int, bool]:
    return round(float(group) * MIB), False


# (backend, memory, pattern with <requested> and <limit>, how the figures are written)
_REPORTS = (
    (
        "mosaic_gpu",
        "SMEM",
        r"exceeds available shared memory:? smem_bytes=?(?P<requested>\d+) > "
        r"(?:max_smem_bytes=)?(?P<limit>\d+)",
        _bytes,
    ),
    (
        "triton",
        "SMEM",
        r"Shared memory size limit exceeded: requested (?P<requested>\d+), "
        r"available: (?P<limit>\d+)",
        _bytes,
    ),
    # The same figures told in prose (a report's "that tiling asks for 102784 bytes of shared
    # memory, and the card has 101376").
    (
        "triton",
        "SMEM",
        r"(?:asks for|needs|requires) (?P<requested>\d+) bytes of shared memory,? "
        r"(?:and|but|while) the (?:card|GPU|device) (?:has|allows) (?P<limit>\d+)",
        _bytes,
    ),
    (
        "triton",
        "SMEM",
        r"out of resource: shared memory, Required: (?P<requested>\d+), "
        r"Hardware limit(?:ation)?: (?P<limit>\d+)",
        _bytes,
    ),
    (
        "tpu",
        "VMEM",
        r"Ran out of memory in memory space vmem\b.*?Used (?P<requested>\d+(?:\.\d+)?)M of "
        r"(?P<limit>\d+(?:\.\d+)?)M vmem",
        _mebibytes,
    ),
    # XLA's TPU allocator, the memory space named in the allocation that follows:
    # "Allocation (size=2097152) would exceed memory (size=1048576) :: #allocation3 [shape =
    # 'u8[2097152]{0}', space=smem, …, tag = 'prefetched SMEM operand 0']"
    *(
        (
            "tpu",
            space.upper(),
            r"Allocation \(size=(?P<requested>\d+)\) would exceed memory "
            rf"\(size=(?P<limit>\d+)\)(?:(?!Allocation).)*?space={space}\b",
            _bytes,
        )
        for space in ("smem", "vmem")
    ),
    (
        "tpu",
        "VMEM",
        r"Scoped allocation with size (?P<requested>\d+(?:\.\d+)?)M "
        r"and limit (?P<limit>\d+(?:\.\d+)?)M "
        r"exceeded scoped vmem limit",
        _mebibytes,
    ),
)
# A report a terminal or a log formatter wrapped is read across its lines: each space may
# be a line break, and a report is looked for in its first line and the lines after it.
_COMPILED = tuple(
    (b, m, re.compile(p.replace(" ", r"\s+"), re.DOTALL), read) for b, m, p, read in _REPORTS
)
REPORT_LINES = 3
_STEPS = re.compile(r"max_concurrent_steps\s*=\s*(\d+)")
_BLOCK = re.compile(r"BlockSpec\(\s*(?:block_shape\s*=\s*)?\(\s*(\d+(?:\s*,\s*\d+)*)\s*,?\s*\)")
_DTYPE = re.compile(r"\b(?:jnp|np|jax\.numpy|numpy)\.(\w+)\b|\bdtype=['\"]?(\w+)")


# Every report names its memory with one of these words, or starts its prose figures with
# "bytes" (wrapped before "memory"): only the lines holding one are read.
_REPORT_WORDS = ("memory", "vmem", "bytes")


def find_overflows(text: str) -> list[MemoryOverflow]:
    """Every report in ``text`` of a kernel over its on-chip memory, in order."""
    found: list[MemoryOverflow] = []
    read_up_to = 0  # a report read across lines is not read again from its second line
    for start, line_end, end in _reports_may_stand(text):
        if start < read_up_to:
            continue
        for backend, memory, pattern, read in _COMPILED:
            hit = pattern.search(text, start, end)
            if hit is None or hit.start() > line_end:  # a report of a later line
                continue
            requested, exact = read(hit["requested"])
            limit, _ = read(hit["limit"])
            number = text.count("\n", 0, start) + 1
            found.append(MemoryOverflow(number, backend, memory, requested, limit, exact))
            read_up_to = hit.end()
            break
    return found


def _reports_may_stand(text: str) -> list[tuple[int, int, int]]:
    """Where each line holding a report word starts and ends, and where ``REPORT_LINES``
    lines from it end, in order: ``str.find`` jumps from word to word (nearly every paste
    has none, or one)."""
    lines = set()
    for word in _REPORT_WORDS:
        at = text.find(word)
        while at >= 0:
            line_end = end = _line_end(text, at)
            for _ in range(REPORT_LINES - 1):
                end = _line_end(text, end + 1)
            lines.add((text.rfind("\n", 0, at) + 1, line_end, end))
            at = text.find(word, line_end)
    return sorted(lines)


def _line_end(text: str, at: int) -> int:
    """Where the line holding ``at`` ends (the text's end past its last line)."""
    end = text.find("\n", at)
    return len(text) if end < 0 else end


def budget_hints(text: str) -> BudgetHints:
    """The pipeline depth, the first block shape and the first dtype the paste writes."""
    steps = _STEPS.search(text)
    block = _BLOCK.search(text)
    return BudgetHints(
        int(steps[1]) if steps else None,
        tuple(int(d) for d in block[1].split(",")) if block else None,
        _first_dtype(text),
    )


MAX_BLOCK_SPECS = 64  # BlockSpecs read: a kernel has a few operands, not hundreds


def block_specs(text: str) -> list[tuple[int, ...]]:
    """The block shape of each ``BlockSpec((…), …)`` the paste writes, in order."""
    blocks = []
    for found in _BLOCK.finditer(text):
        blocks.append(tuple(int(d) for d in found[1].split(",")))
        if len(blocks) == MAX_BLOCK_SPECS:
            break
    return blocks


def _first_dtype(text: str) -> DType | None:
    for hit in _DTYPE.finditer(text):
        try:
            return parse_dtype(hit[1] or hit[2])
        except InputValueError:
            continue
    return None
