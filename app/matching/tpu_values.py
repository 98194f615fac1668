"""The values a Pallas TPU error states, typed for the engine that computes its fixes.

Five kinds of message carry figures:

* JAX's block checks (``_check_block_mappings`` in ``jax/_src/pallas/mosaic/lowering.py``):
  the (8, 128) rule, the rank-1 rule and the ANY-memory-space rule all end with "Block spec for
  args[0] in pallas_call copy_kernel at repro.py:6 has block shape (Blocked(block_size=100),
  Blocked(block_size=100)), array shape (256, 256), …" (0.7 on; earlier releases print plain
  integers, with ``Mapped`` for a squeezed dimension);
* libtpu's E2002 "Operand of shape (..., 64, 256) has tiling (64, 128), but its block shape
  (..., 32, 256) is not divisible by tiling evenly nor matches the full shape";
* VMEM over its budget: libtpu's E1001 "Scoped allocation with size 8.00M and limit 2.00M
  exceeded scoped vmem limit by 6.00M", XLA's "Allocation (size=268435456) would exceed memory
  (size=134217728)" and "Ran out of memory in memory space vmem … Used 18.50M of 16.00M vmem"
  (read by ``memory.find_overflows``), with the ``vmem_limit_bytes`` the paste sets;
* a dynamic start Mosaic cannot prove aligned (E2003, and the same words before libtpu took
  them): "cannot statically prove that index in dimension 1 is a multiple of 128";
* matmul dtypes the chip or Mosaic refuses: "Expected matmul acc to be 32-bit", E2001's
  "Unsupported matmul RHS type on target: vector<128x128xi8>", "Bad lhs type", with the
  operand types of the operation printed after it.

Beside them: the chip the paste names ("TPU v5 lite", "v6e-8") and the user's own frame.
Every search starts from a fixed word found with ``str.find`` and reads a bounded window
after it, so a hostile 1 MiB paste costs a few scans of its text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import suppress
from dataclasses import dataclass, replace
from itertools import islice

from app.jaxref.dtypes import parse_dtype
from app.jaxref.inputs import InputValueError
from app.matching.compilers import MISALIGNED_BLOCK
from app.matching.memory import MemoryOverflow, block_specs, budget_hints, find_overflows
from app.matching.values import UserFrame, ValueSource, find_value_sources, user_frame

MAX_READ = 32  # messages of each kind read: a paste repeats one error a few times, not more
MESSAGE_CHARS = 2048  # how far after its first word a message's figures may stand
BEFORE_CHARS = 1536  # how far before "has block shape" the rule's sentence may start
OPERATION_LINES = 6  # lines from a matmul's words to the end of the operation printed after them
MAX_CODE_LINES = 20_000  # lines read for the code that states an array's dtype
MAX_SHAPE_CHARS = 400  # a printed block shape: 8 dimensions of Blocked(block_size=…)


@dataclass(frozen=True)
class KernelSource:
    """Where the kernel is written, as the message says it (not a traceback frame)."""

    kernel: str
    file: str
    line: int


@dataclass(frozen=True)
class TpuBlockValues:
    """A BlockSpec JAX's TPU lowering refused."""

    line_number: int  # 1-based, in the paste
    rule: str  # "tiles-8-128", "rank-1", "any-memory-space" or "rank-0"
    block_shape: tuple[int | None, ...]  # None: a squeezed dimension
    array_shape: tuple[int, ...]
    origin: str | None  # "args[0]", "outputs[0]", "inputs[1]"
    memory_space: str | None  # as printed: "<MemorySpace.DEFAULT: 'default'>", "None"
    bit_width: int | None  # what the rank-1 wording says of the dtype
    dtype: str | None  # from the paste's own code, when it states an array of that shape
    kernel: KernelSource | None

    @property
    def rank1(self) -> bool:
        return self.rule == "rank-1"


@dataclass(frozen=True)
class TpuTilingValues:
    """E2002: the block of an operand that does not fit the operand's tiling."""

    line_number: int
    operand: str | None  # "output 0", "input 2", from "Failed to set window params for …"
    operand_shape: tuple[int, ...]  # the trailing dimensions printed
    tiling: tuple[int, int]
    block_shape: tuple[int, ...]  # the trailing dimensions printed
    leading_elided: bool  # the shapes were printed "(..., 64, 256)"
    dtype: str | None  # from the paste's own code, when it states an array of that shape


@dataclass(frozen=True)
class TpuVmemValues:
    """A kernel over its VMEM, with what the paste says of the budget."""

    line_number: int
    report: str  # "scoped" (E1001), "allocation" (XLA's allocator) or "ran-out"
    requested: int  # bytes
    limit: int  # bytes
    exact: bool  # False where the report rounds to hundredths of a MiB
    vmem_limit_bytes: int | None  # what the paste's code or flags set, if it shows it
    allocation_shape: tuple[int, ...] | None  # XLA's "shape = 'f32[8192,8192]{1,0}'"
    allocation_dtype: str | None
    block_shapes: tuple[tuple[int, ...], ...]  # each BlockSpec the paste's code writes
    dtype: str | None  # the first dtype the paste's code writes

    @property
    def over(self) -> int:
        return self.requested - self.limit


@dataclass(frozen=True)
class TpuDynamicOffset:
    """A load, store or DMA at a start Mosaic cannot prove a multiple of its tiling."""

    line_number: int
    error_code: str | None  # "E2003" from libtpu; None in the older wording
    op: str | None  # "vector.load", "tpu.vector_store"
    dimension: int
    multiple: int
    ref_shape: tuple[int, ...] | None  # the memref of the operation printed after it
    ref_dtype: str | None

    @property
    def axis(self) -> str | None:
        """ "lane" or "sublane" where the ref's rank is known and the dimension is minor."""
        if self.ref_shape is None:
            return None
        minor = len(self.ref_shape) - 1 - self.dimension
        return {0: "lane", 1: "sublane"}.get(minor)


@dataclass(frozen=True)
class TpuMatmulValues:
    """A matmul in a kernel whose dtypes the chip or Mosaic refuses."""

    line_number: int
    rule: str  # "acc-32-bit", "unsupported-rhs-type", "bad-lhs-type", "bad-rhs-type", …
    error_code: str | None  # "E2001"
    lhs_dtype: str | None
    rhs_dtype: str | None
    acc_dtype: str | None
    lhs_shape: tuple[int, ...] | None
    rhs_shape: tuple[int, ...] | None
    kernel: KernelSource | None


TpuValues = TpuBlockValues | TpuTilingValues | TpuVmemValues | TpuDynamicOffset | TpuMatmulValues


@dataclass(frozen=True)
class TpuReading:
    """Everything a paste states for the TPU engine, each kind in paste order."""

    values: tuple[TpuValues, ...]
    chip: str | None  # "v4", "v5e", "v5p", "v6e" or "v7x": the first the paste names
    frame: UserFrame | None  # the user's frame nearest the error
    copies: tuple[tuple[int, ...], ...] = ()  # per value: every line a copy of it stands on


def read_tpu_values(text: str) -> TpuReading:
    """Type the values of every Pallas TPU message in ``text``, the chip it names, and the
    user's frame. The same message printed again (a traceback's chained copies) is read
    once, completed with the kernel's place where only one copy shows it."""
    sources = _Sources(text)
    read: dict[TpuValues, TpuValues] = {}
    lines: dict[TpuValues, list[int]] = {}
    for reader in (_blocks, _tilings, _vmem, _offsets, _matmuls):
        for value in reader(text, sources):
            key = replace(value, line_number=0)
            if isinstance(key, TpuBlockValues | TpuMatmulValues):
                key = replace(key, kernel=None)
            read[key] = _completed(read.get(key), value)
            lines.setdefault(key, []).append(value.line_number)
    found = sorted(read.items(), key=lambda item: item[1].line_number)
    frame = user_frame(text.splitlines()) if found else None
    copies = tuple(tuple(sorted(lines[key])) for key, _ in found)
    return TpuReading(tuple(value for _, value in found), find_chip(text), frame, copies)


def _completed(kept: TpuValues | None, value: TpuValues) -> TpuValues:
    """The copy read first, with the kernel's place a later copy shows."""
    if kept is None:
        return value
    if (
        isinstance(kept, TpuBlockValues | TpuMatmulValues)
        and isinstance(value, TpuBlockValues | TpuMatmulValues)
        and kept.kernel is None
    ):
        return replace(kept, kernel=value.kernel)
    return kept


class _Sources:
    """The shapes and dtypes the paste's own code states, read once and only if asked."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._read: list[ValueSource] | None = None

    def dtype_of(self, shape: tuple[int, ...], trailing: bool = False) -> str | None:
        """The dtype the code gives an array of ``shape`` (or ending in it, where the
        message printed only the trailing dimensions), when it gives exactly one."""
        if self._read is None:
            self._read = find_value_sources(self._text.splitlines()[:MAX_CODE_LINES])
        dtypes = {
            source.dtype
            for source in self._read
            if source.shape == shape or (trailing and source.shape[-len(shape) :] == shape)
        }
        return dtypes.pop() if len(dtypes) == 1 else None


# --- the chip ---------------------------------------------------------------------------

# JAX's device kinds ("TPU v5 lite", "TPU v5", "TPU7x"), names with the chip count
# ("v5litepod-8", "v6e-8") and the short names people write. A bare "v4" says too little.
_CHIP = re.compile(
    r"\bTPU[ _-]?v?(?P<kind>[4-7](?:\s?lite|e|p|x)?)\b"
    r"|\b(?P<pod>v(?:[4-7](?:e|p|x)?|5litepod|6litepod))-\d{1,5}\b"
    r"|\b(?P<short>v(?:5e|5p|6e|7x))\b",
    re.IGNORECASE,
)
_CHIPS = {
    "4": "v4",
    "5lite": "v5e",
    "5e": "v5e",
    "5p": "v5p",
    "5": "v5p",  # a v5p calls itself "TPU v5"
    "6lite": "v6e",
    "6e": "v6e",
    "7": "v7x",
    "7x": "v7x",
    "5litepod": "v5e",
    "6litepod": "v6e",
}
_CHIP_WORDS = ("tpu", "TPU", "v4", "v5", "v6", "v7")
MAX_CHIP_NAMES = 64  # names like a chip's read before giving up ("TPU v4x" names none)


def find_chip(text: str) -> str | None:
    """The TPU generation the paste first names, as errata names chips."""
    starts = [at for word in _CHIP_WORDS if (at := text.find(word)) >= 0]
    if not starts:
        return None
    for hit in islice(_CHIP.finditer(text, max(0, min(starts) - 4)), MAX_CHIP_NAMES):
        name = (hit["kind"] or hit["pod"] or hit["short"]).lower()
        name = re.sub(r"\s", "", name).removeprefix("v")
        chip = _CHIPS.get(name)
        if chip is not None:
            return chip
    return None


# --- JAX's block checks -----------------------------------------------------------------

_BLOCK_WORDS = "has block shape "
_ARRAY_SHAPE = re.compile(r",\s*array shape \((?P<dims>[\d,\s]{0,200})\)")
_MEMORY_SPACE = re.compile(
    r"in memory space (?P<space><[^<>\n]{1,80}>|\w{1,40}(?:\.\w{1,40}){0,3})"
)
_ORIGIN = re.compile(r"Block spec for (?P<origin>\S{1,80}) ")
_KERNEL_AT = re.compile(
    r"in pallas_call (?P<kernel>\S{1,200}) at (?P<file>[^\s:]{1,500}):(?P<line>\d+)"
)
_RANK1_BITS = re.compile(r"= 128 \* \(32 // (?P<bits>\d{1,2})\)\)")
_BLOCK_DIM = re.compile(r"(?:\w{1,20}\()?(?:block_size=)?(?P<size>\d{1,10})(?:,.*)?\)?")
_SQUEEZED = frozenset({"Mapped", "None", "Squeezed()", "squeezed", "mapped"})
_RULES = (
    ("divisible by 8 and 128", "tiles-8-128"),
    ("rank 1 block", "rank-1"),
    ("in memory space ANY", "any-memory-space"),
    ("blocks of rank >= 1", "rank-0"),
)


def _blocks(text: str, sources: _Sources) -> Iterator[TpuBlockValues]:
    for at in _occurrences(text, _BLOCK_WORDS):
        sentence = text[max(_line_start(text, at), at - BEFORE_CHARS) : at]
        rule = next((name for words, name in _RULES if words in sentence), None)
        shape_at = at + len(_BLOCK_WORDS)
        block = _printed_block(text[shape_at : shape_at + MAX_SHAPE_CHARS])
        if rule is None or block is None:
            continue
        block_shape, length = block
        after = text[shape_at + length : shape_at + MESSAGE_CHARS]
        array = _ARRAY_SHAPE.match(after)
        if array is None:
            continue
        array_shape = _integers(array["dims"])
        origin = _ORIGIN.search(sentence)
        kernel = _KERNEL_AT.search(sentence)
        space = _MEMORY_SPACE.search(after)
        bits = _RANK1_BITS.search(sentence) if rule == "rank-1" else None
        yield TpuBlockValues(
            line_number=text.count("\n", 0, at) + 1,
            rule=rule,
            block_shape=block_shape,
            array_shape=array_shape,
            origin=origin["origin"] if origin else None,
            memory_space=space["space"] if space else None,
            bit_width=int(bits["bits"]) if bits else None,
            dtype=sources.dtype_of(array_shape),
            kernel=(
                KernelSource(kernel["kernel"], kernel["file"], int(kernel["line"]))
                if kernel
                else None
            ),
        )


def _printed_block(text: str) -> tuple[tuple[int | None, ...], int] | None:
    """A block shape as JAX prints it, and the characters it takes: ``(100, 100)``,
    ``(Mapped, 128)``, ``(Squeezed(), Blocked(block_size=8), Blocked(block_size=128))``."""
    if not text.startswith("("):
        return None
    depth, index = 0, -1
    while depth or index < 0:
        index += 1
        if index == len(text):
            return None
        depth += {"(": 1, ")": -1}.get(text[index], 0)
    dims: list[int | None] = []
    for item in _top_level_items(text[1:index]):
        if item in _SQUEEZED:
            dims.append(None)
        elif (size := _BLOCK_DIM.fullmatch(item)) is not None:
            dims.append(int(size["size"]))
        else:
            return None
    return (tuple(dims), index + 1) if dims else None


def _top_level_items(body: str) -> list[str]:
    """The items of a printed tuple, split at the commas outside parentheses."""
    items, depth, start = [], 0, 0
    for index, char in enumerate(body):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            items.append(body[start:index].strip())
            start = index + 1
    items.append(body[start:].strip())
    return [item for item in items if item]


# --- libtpu's E2002 ---------------------------------------------------------------------

_TILING_WORDS = "Operand of shape ("
_WINDOW_OF = re.compile(r"window params for (?P<operand>(?:input|output|operand) \d+)")


def _tilings(text: str, sources: _Sources) -> Iterator[TpuTilingValues]:
    for at in _occurrences(text, _TILING_WORDS):
        found = MISALIGNED_BLOCK.match(text, at, at + MESSAGE_CHARS)
        if found is None:
            continue
        before = text[max(0, at - BEFORE_CHARS) : at]
        operand = [hit["operand"] for hit in _WINDOW_OF.finditer(before)]
        shape = _integers(found["shape"])
        tiling = _integers(found["tiling"])
        yield TpuTilingValues(
            line_number=text.count("\n", 0, at) + 1,
            operand=operand[-1] if operand else None,
            operand_shape=shape,
            tiling=(tiling[0], tiling[1]),
            block_shape=_integers(found["block"]),
            leading_elided=found["elided"] is not None,
            dtype=sources.dtype_of(shape, trailing=found["elided"] is not None),
        )


# --- VMEM -------------------------------------------------------------------------------

_LIMIT_SET = re.compile(
    r"vmem_limit_bytes['\"]?\s*[=:]\s*"
    r"(?P<expression>\d[\d_]{0,12}(?:\s*(?:\*\*|\*|<<)\s*\d[\d_]{0,12}){0,4})"
    r"|vmem_limit_kib\s*=\s*(?P<kib>\d{1,9})"  # libtpu's --xla_tpu_scoped_vmem_limit_kib
)
_TIMES = re.compile(r"(?<!\*)\*(?!\*)")  # a product's sign, not a power's
_ALLOCATED = re.compile(r"shape = '(?P<dtype>[a-z]{1,4}\d{1,2})\[(?P<dims>[\d,]{0,100})\]")
MAX_LIMIT = 1 << 40  # a vmem_limit_bytes past this is no VMEM size: a misread expression
MAX_SHIFT = 64  # the largest exponent or shift evaluated


def _vmem(text: str, sources: _Sources) -> Iterator[TpuVmemValues]:
    overflows = [o for o in find_overflows(text) if (o.backend, o.memory) == ("tpu", "VMEM")]
    if not overflows:
        return
    limit = _limit_set(text)
    blocks, hints = tuple(block_specs(text)), budget_hints(text)
    starts = [0, *(i + 1 for i in _newlines(text, overflows[-1].line_number))]
    for overflow in overflows[:MAX_READ]:
        at = starts[overflow.line_number - 1]
        report_text = text[at : at + MESSAGE_CHARS]
        shape, dtype = _allocation(report_text, overflow)
        yield TpuVmemValues(
            line_number=overflow.line_number,
            report=_report(report_text, overflow),
            requested=overflow.requested,
            limit=overflow.limit,
            exact=overflow.exact,
            vmem_limit_bytes=limit,
            allocation_shape=shape,
            allocation_dtype=dtype,
            block_shapes=blocks,
            dtype=hints.dtype.name if hints.dtype else None,
        )


def _report(text: str, overflow: MemoryOverflow) -> str:
    if overflow.exact:
        return "allocation"
    # A v5e's E1001 says both: "Ran out of memory in memory space vmem while allocating on
    # stack for %tpu_custom_call… Scoped allocation with size 32.00M and limit 16.00M …"
    return "scoped" if "Scoped allocation" in text else "ran-out"


def _allocation(text: str, overflow: MemoryOverflow) -> tuple[tuple[int, ...] | None, str | None]:
    """The shape and dtype of XLA's allocation, printed after its figures."""
    found = _ALLOCATED.search(text) if overflow.exact else None
    if found is None:
        return None, None
    with suppress(InputValueError):
        dtype = parse_dtype(found["dtype"]).name
        return _integers(found["dims"]), dtype
    return None, None


def _limit_set(text: str) -> int | None:
    """The last scoped VMEM limit the paste sets: ``vmem_limit_bytes=64 * 1024 * 1024`` in
    the kernel's compiler params, or libtpu's ``--xla_tpu_scoped_vmem_limit_kib`` flag."""
    value = None
    for at in _occurrences(text, "vmem_limit_", limit=MAX_READ):
        found = _LIMIT_SET.match(text, at, at + 200)
        if found is None:
            continue
        if found["kib"] is not None:
            value = int(found["kib"]) * 1024
        elif (evaluated := _evaluate(found["expression"])) is not None:
            value = evaluated
    return value


def _evaluate(expression: str) -> int | None:
    """An integer expression of ``<<``, ``*`` and ``**`` as Python binds them, or None where
    it passes any VMEM (each step is checked, so ``2**2**40`` is never computed)."""
    value = None
    for term in expression.split("<<"):
        product = 1
        for factor in _TIMES.split(term):
            power = 1
            for base in reversed(factor.split("**")):
                if power > MAX_SHIFT:
                    return None
                power = int(base.strip()) ** power
            product *= power
            if product > MAX_LIMIT:
                return None
        if value is not None and product > MAX_SHIFT:
            return None
        value = product if value is None else value << product
        if value > MAX_LIMIT:
            return None
    return value


# --- dynamic offsets --------------------------------------------------------------------

_OFFSET_WORDS = "cannot statically prove that index in dimension "
_OFFSET = re.compile(
    r"(?:'(?P<op>[a-z_]{1,20}\.[a-z_]{1,40})' op )?cannot statically prove that index in "
    r"dimension (?P<dim>\d{1,2}) is a multiple of (?P<multiple>\d{1,9})"
)
_MEMREF = re.compile(r"memref<(?P<dims>(?:\d{1,10}x){1,8})(?P<element>[a-zA-Z]\w{0,15})")
_CODE = re.compile(r"\b(?P<code>E\d{4})\b")


def _offsets(text: str, sources: _Sources) -> Iterator[TpuDynamicOffset]:
    for at in _occurrences(text, _OFFSET_WORDS):
        start = max(_line_start(text, at), at - 200)  # the op's name, the error code
        found = _OFFSET.search(text, start, at + MESSAGE_CHARS)
        if found is None:
            continue
        code = _CODE.search(text, start, at)
        after = text[found.end() : _lines_end(text, found.end(), OPERATION_LINES)]
        memref = _MEMREF.search(after)
        ref_shape, ref_dtype = _memref(memref) if memref else (None, None)
        yield TpuDynamicOffset(
            line_number=text.count("\n", 0, at) + 1,
            error_code=code["code"] if code else None,
            op=found["op"],
            dimension=int(found["dim"]),
            multiple=int(found["multiple"]),
            ref_shape=ref_shape,
            ref_dtype=ref_dtype,
        )


def _memref(found: re.Match[str]) -> tuple[tuple[int, ...] | None, str | None]:
    with suppress(InputValueError):
        return _integers(found["dims"]), parse_dtype(found["element"]).name
    return None, None


# --- matmul dtypes ----------------------------------------------------------------------

# (the words, the rule, which operand a single printed type is)
_MATMUL_RULES = (
    ("Expected matmul acc to be 32-bit", "acc-32-bit", None),
    ("Unsupported matmul RHS type on target", "unsupported-rhs-type", "rhs"),
    ("Unsupported matmul LHS type on target", "unsupported-lhs-type", "lhs"),
    ("Unsupported input data type in matrix multiplication", "unsupported-input-type", None),
    ("Bad lhs type", "bad-lhs-type", "lhs"),
    ("Bad rhs type", "bad-rhs-type", "rhs"),
    ("float acc with int lhs", "float-acc-int-operand", None),
    ("Mix int/int - NYI", "mixed-int-operands", None),
)
_VECTOR = re.compile(r"vector<(?P<dims>(?:\d{1,10}x){0,8})(?P<element>[a-zA-Z]\w{0,15})>")
# The operation Mosaic prints after its words: "… }> : (vector<512x512xbf16>,
# vector<512x256xbf16>, vector<512x256xbf16>) -> vector<512x256xbf16>", which a log's line
# prefix may break across lines (jax#21408: "… vector<128x128xbf16>, \n[rank0]: vector<…").
_OPERATION = re.compile(r" : \((?P<operands>vector<[^()]{1,600})\) -> vector<")
_LOCATION = re.compile(r"\"(?P<kernel>\w{1,200})\"\(\"(?P<file>[^\"\n]{1,500})\":(?P<line>\d+)")


def _matmuls(text: str, sources: _Sources) -> Iterator[TpuMatmulValues]:
    for words, rule, single in _MATMUL_RULES:
        for at in _occurrences(text, words):
            line_start = _line_start(text, at)
            end = _lines_end(text, at, OPERATION_LINES)
            said = text[at : _lines_end(text, at, 1)]
            operation = _OPERATION.search(text, at, end)
            types: dict[str, tuple[tuple[int, ...], str] | None] = {}
            if operation is not None:
                operands = [_vector(v) for v in _VECTOR.finditer(operation["operands"])]
                types = dict(zip(("lhs", "rhs", "acc"), operands, strict=False))
            elif single is not None and (vector := _VECTOR.search(said)) is not None:
                types = {single: _vector(vector)}
            code = _CODE.search(text, max(line_start, at - 200), at)
            # Before the words on their line (Mosaic's verifier), or after them ("at
            # location: loc(…)", jax#23989).
            location = _LOCATION.search(text, max(line_start, at - MESSAGE_CHARS), at)
            location = location or _LOCATION.search(text, at, end)
            yield TpuMatmulValues(
                line_number=text.count("\n", 0, at) + 1,
                rule=rule,
                error_code=code["code"] if code else None,
                lhs_dtype=_dtype_of(types.get("lhs")),
                rhs_dtype=_dtype_of(types.get("rhs")),
                acc_dtype=_dtype_of(types.get("acc")),
                lhs_shape=_shape_of(types.get("lhs")),
                rhs_shape=_shape_of(types.get("rhs")),
                kernel=(
                    KernelSource(location["kernel"], location["file"], int(location["line"]))
                    if location
                    else None
                ),
            )


def _vector(found: re.Match[str]) -> tuple[tuple[int, ...], str] | None:
    with suppress(InputValueError):
        return _integers(found["dims"]), parse_dtype(found["element"]).name
    return None


def _dtype_of(vector: tuple[tuple[int, ...], str] | None) -> str | None:
    return None if vector is None else vector[1]


def _shape_of(vector: tuple[tuple[int, ...], str] | None) -> tuple[int, ...] | None:
    return None if vector is None else vector[0]


# --- shared -----------------------------------------------------------------------------


def _occurrences(text: str, words: str, limit: int = MAX_READ) -> Iterator[int]:
    """Where ``words`` stand in ``text``, the first ``limit`` of them."""
    at = text.find(words)
    for _ in range(limit):
        if at < 0:
            return
        yield at
        at = text.find(words, at + len(words))


def _line_start(text: str, at: int) -> int:
    return text.rfind("\n", 0, at) + 1


def _lines_end(text: str, at: int, count: int) -> int:
    """Where the ``count`` lines from the one holding ``at`` end, within ``MESSAGE_CHARS``."""
    end = at
    for _ in range(count):
        found = text.find("\n", end + 1, at + MESSAGE_CHARS)
        if found < 0:
            return min(len(text), at + MESSAGE_CHARS)
        end = found
    return end


def _newlines(text: str, count: int) -> Iterator[int]:
    """The positions of the first ``count`` line breaks."""
    at = -1
    for _ in range(count):
        at = text.find("\n", at + 1)
        if at < 0:
            return
        yield at


def _integers(text: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", text))
