"""Captured strings to typed values: shapes, dtypes, bit and byte counts, memory spaces.

Captures go through the alignment engine's own parsers, so ``[7]``, ``(3, 5)``,
``int4(3,)``, ``i4`` and ``memref<32xf32, ...>`` mean what they mean everywhere else in
errata. A message that lacks a value (the oldest warpgroup wording has no byte count and
no shape) is completed from the rest of the paste: the memref types of a verbose error,
jaxpr avals, or the user's own ``ShapeDtypeStruct``/``jnp.arange``/``SMEM`` calls. Values
found that way are listed in ``inferred``, so the service can say it guessed.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from functools import lru_cache

from app.jaxref.dtypes import parse_dtype
from app.jaxref.inputs import InputValueError
from app.jaxref.shapes import parse_memref, parse_shape
from app.matching.scan import line_starts, lines_holding

SMEM = "smem"
GMEM = "gmem"

# Captured numbers that are one of the typed quantities, by group name.
_QUANTITIES = {
    "bytes": "bytes",
    "total_bits": "bits",
    "shape_bitwidth": "bits",
    "prod_shape": "element_count",
}
# Counts that follow from shape and dtype.
_DERIVED = ("element_count", "bits", "bytes")
_SELF_DOCUMENTED = re.compile(r"(?P<name>[A-Za-z_]\w*)\s*=\s*(?P<value>.+)")
_INTEGER = re.compile(r"\d+")
_SHAPE_TEXT = re.compile(r"(?:[A-Za-z_][\w.]*)?[\[(][-\d,\s]*[\])]")


@dataclass
class TypedValues:
    """What a match says about the failing buffer; ``None`` where nothing says it."""

    shape: list[int] | None = None
    dtype: str | None = None  # canonical numpy / ml_dtypes name: "int4", "float32"
    bit_width: int | None = None  # bits per element
    element_count: int | None = None
    bits: int | None = None  # total
    bytes: int | None = None  # total, when the bits make whole bytes
    memory_space: str | None = None  # "smem" or "gmem"
    numbers: dict[str, int] = field(default_factory=dict)  # other numeric captures
    inferred: list[str] = field(default_factory=list)  # keys taken from elsewhere
    unparsed: list[str] = field(default_factory=list)  # captures the parsers rejected


@dataclass(frozen=True)
class ValueSource:
    """A shape/dtype found somewhere in the paste, outside the matched message."""

    line: int
    shape: tuple[int, ...]
    dtype: str
    bit_width: int
    memory_space: str | None


@dataclass(frozen=True)
class UserFrame:
    """A frame of the user's own code (not a library's), and the source line under it."""

    file: str
    line: int
    source: str | None
    dtype: str | None  # the one dtype the source line writes, if it writes exactly one


def type_values(captures: Mapping[str, str]) -> TypedValues:
    """Type what a message's captures say, and the counts that follow from it."""
    values = TypedValues()
    for name, raw in captures.items():
        _read_capture(values, name, raw.strip())
    _derive(values)
    return values


def needs_context(values: TypedValues) -> bool:
    """Whether the message left the buffer's shape or dtype unsaid."""
    return values.shape is None or values.dtype is None


def infer_missing(values: TypedValues, sources: Sequence[ValueSource], line: int) -> None:
    """Complete ``values`` from the source agreeing with them, nearest to ``line`` first."""
    source = _best_source(values, sources, line)
    if source is None:
        return
    unknown = [key for key in _DERIVED if getattr(values, key) is None]
    _adopt(values, source)
    _derive(values)
    values.inferred += [key for key in unknown if getattr(values, key) is not None]


def adopt_written_dtype(values: TypedValues, frame: UserFrame | None) -> None:
    """A dtype the message leaves unsaid, from the user's line when it writes one."""
    if values.dtype is not None or frame is None or frame.dtype is None:
        return
    dtype = parse_dtype(frame.dtype)
    if values.bits is not None and values.bits % dtype.bits:
        return  # the message's count is not a whole number of such elements
    unknown = [key for key in _DERIVED if getattr(values, key) is None]
    _set_dtype(values, dtype.name, dtype.bits)
    values.inferred.extend(["dtype", "bit_width"])
    _derive(values)
    values.inferred += [key for key in unknown if getattr(values, key) is not None]


def _read_capture(values: TypedValues, name: str, raw: str) -> None:
    documented = _SELF_DOCUMENTED.fullmatch(raw) if name.isdigit() else None
    if documented is not None:  # an unnamed group that took "bytes=32" whole
        name, raw = documented["name"], documented["value"].strip()
    try:
        # A type printed as a JAX aval (``float32[3,128]``) is read as a shape below.
        if raw.startswith("memref<") or (
            name.startswith("memref") and not _SHAPE_TEXT.fullmatch(raw)
        ):
            memref = parse_memref(raw)
            values.shape = list(memref.dims)
            _set_dtype(values, memref.dtype.name, memref.dtype.bits)
            values.memory_space = memref.memory_space
        elif _INTEGER.fullmatch(raw):
            key = _QUANTITIES.get(name)
            if key is not None:
                setattr(values, key, int(raw))
            else:
                values.numbers[name] = int(raw)
        elif name.startswith("shape") or _SHAPE_TEXT.fullmatch(raw):
            # The first shape a message names is its subject (``Ref shape: (8, 128). …
            # Value shape: (8,). Transforms: ()``): the others are what it is compared with.
            if values.shape is None:
                spec = parse_shape(raw)
                values.shape = list(spec.dims)
                if spec.dtype is not None:
                    _set_dtype(values, spec.dtype.name, spec.dtype.bits)
        elif name.startswith("dtype") or name.isdigit():
            dtype = parse_dtype(raw)
            _set_dtype(values, dtype.name, dtype.bits)
    except InputValueError:
        if not name.isdigit():  # an unnamed group is often just text
            values.unparsed.append(name)


def _set_dtype(values: TypedValues, name: str, bits: int) -> None:
    values.dtype = name
    values.bit_width = bits


def _derive(values: TypedValues) -> None:
    """Fill the counts that follow from the others."""
    if values.shape is not None and values.element_count is None:
        values.element_count = math.prod(values.shape)
    if values.bits is None and values.element_count is not None and values.bit_width:
        values.bits = values.element_count * values.bit_width
    if values.bits is None and values.bytes is not None:
        values.bits = values.bytes * 8
    if values.bytes is None and values.bits is not None and values.bits % 8 == 0:
        values.bytes = values.bits // 8


def _best_source(
    values: TypedValues, sources: Sequence[ValueSource], line: int
) -> ValueSource | None:
    """The source agreeing with what the message says, preferring SMEM, then nearness."""

    def agrees(source: ValueSource) -> bool:
        count = math.prod(source.shape)
        return (
            (values.dtype is None or values.dtype == source.dtype)
            and (values.shape is None or list(source.shape) == values.shape)
            and (values.element_count is None or values.element_count == count)
            and (values.bits is None or values.bits == count * source.bit_width)
        )

    fitting = [source for source in sources if agrees(source)]
    if not fitting:
        return None
    return min(fitting, key=lambda s: (s.memory_space != SMEM, abs(s.line - line)))


def _adopt(values: TypedValues, source: ValueSource) -> None:
    if values.shape is None:
        values.shape = list(source.shape)
        values.inferred.append("shape")
    if values.dtype is None:
        _set_dtype(values, source.dtype, source.bit_width)
        values.inferred.extend(["dtype", "bit_width"])
    if values.memory_space is None and source.memory_space is not None:
        values.memory_space = source.memory_space
        values.inferred.append("memory_space")


# --- where else a paste states shapes and dtypes -----------------------------------------

_MEMREF_START = re.compile(r"memref<")
_SHAPE_DTYPE_STRUCT = re.compile(
    r"ShapeDtypeStruct\(\s*(?:shape\s*=\s*)?(?P<shape>\([^()]*\)|\[[^\[\]]*\])\s*,"
    r"\s*(?:dtype\s*=\s*)?(?P<dtype>[\w.]+)"
)
_SMEM_CALL = re.compile(
    r"\bSMEM\(\s*(?P<shape>\([^()]*\)|\[[^\[\]]*\])\s*,\s*(?:dtype\s*=\s*)?(?P<dtype>[\w.]+)"
)
_NUMPY = r"(?:jnp|np|numpy|jax\.numpy)"
_ARRAY_CALL = re.compile(
    rf"\b{_NUMPY}\.(?:zeros|ones|empty|arange|full)\(\s*"
    r"(?P<shape>\([^()]*\)|\[[^\[\]]*\]|\d+)"
    r"(?:\s*,\s*[^,()=]+)?"  # jnp.full's fill value
    rf"\s*,\s*(?:dtype\s*=\s*)?(?P<dtype>{_NUMPY}\.\w+|'\w+'|\"\w+\")"
)
# jaxpr avals: "f32[8]", "Ref<smem>{f32[1,8]}". Possessive: a word of letters with no
# digits after them is passed at once, not given back a letter at a time.
_AVAL = re.compile(
    r"(?:Ref<(?P<space>\w+)>\{)?\b(?P<dtype>[a-z]++\d++(?:_\w++)?)\[(?P<dims>[\d,\s]*+)\]"
)


def find_value_sources(lines: Sequence[str]) -> list[ValueSource]:
    """Every shape/dtype pair stated in ``lines``, in paste order.

    Each kind of statement is read only on the lines holding the text it needs, found by
    searching the whole paste at once: tried on every line, the patterns that start with
    ``\\b`` (tried at every position) took 2 ms over a 20 KB paste.
    """
    text = "\n".join(lines)
    starts = line_starts(lines)
    stated: dict[int, list[ValueSource]] = {}
    for read, needed in _STATEMENTS:
        for number in lines_holding(needed, text, starts):
            for dims, dtype, bits, space in read(lines[number]):
                if dims:  # a scalar (``a:i32[]``, an index map's argument) is no buffer
                    stated.setdefault(number, []).append(
                        ValueSource(number, dims, dtype, bits, space)
                    )
    return [source for number in sorted(stated) for source in stated[number]]


_Stated = Iterator[tuple[tuple[int, ...], str, int, str | None]]


def _memrefs(line: str) -> _Stated:
    """(dims, dtype name, bit width, memory space) of each ``memref<...>`` in ``line``."""
    for text in _memref_texts(line):
        with suppress(InputValueError):
            memref = parse_memref(text)
            yield memref.dims, memref.dtype.name, memref.dtype.bits, memref.memory_space


def _calls(pattern: re.Pattern[str], space: str | None) -> Callable[[str], _Stated]:
    """A reader of the calls ``pattern`` finds, which state a shape and a dtype."""

    def read(line: str) -> _Stated:
        for found in pattern.finditer(line):
            with suppress(InputValueError):
                shape = found["shape"]
                dims = (int(shape),) if shape.isdigit() else parse_shape(shape).dims
                dtype = parse_dtype(found["dtype"])
                yield tuple(dims), dtype.name, dtype.bits, space

    return read


def _avals(line: str) -> _Stated:
    """Each jaxpr aval in ``line`` (``f32[8]``, ``Ref<smem>{f32[1,8]}``)."""
    for found in _AVAL.finditer(line):
        with suppress(InputValueError):
            dtype = parse_dtype(found["dtype"])
            dims = tuple(int(d) for d in found["dims"].split(",") if d.strip())
            yield dims, dtype.name, dtype.bits, {"smem": SMEM, "gmem": GMEM}.get(found["space"])


# How each kind of statement is read, in the order a line's are listed, and the text a line
# must hold to state one (``jnp.`` and ``jax.numpy.`` hold ``np.`` and ``numpy.``).
_STATEMENTS: tuple[tuple[Callable[[str], _Stated], tuple[str, ...]], ...] = (
    (_memrefs, ("memref<",)),
    (_calls(_SHAPE_DTYPE_STRUCT, None), ("ShapeDtypeStruct(",)),
    (_calls(_SMEM_CALL, SMEM), ("SMEM(",)),
    (_calls(_ARRAY_CALL, None), ("np.", "numpy.")),
    (_avals, ("[",)),
)


def _memref_texts(line: str) -> list[str]:
    """``memref<...>`` substrings, with their nested angle brackets balanced."""
    texts = []
    for start in _MEMREF_START.finditer(line):
        depth = 0
        for index in range(start.end() - 1, len(line)):
            depth += {"<": 1, ">": -1}.get(line[index], 0)
            if depth == 0:
                texts.append(line[start.start() : index + 1])
                break
    return texts


# --- the user's own frame ------------------------------------------------------------------

_INDENTED_PYTHON_FRAME = re.compile(r'\s*File "(?P<file>[^"\n]+)", line (?P<line>\d+)')
_LIBRARY = r"[/\\](?:site-packages|dist-packages|python3\.\d+)[/\\]"
# A frame of the user's own file: none in ``_LIBRARY``, none of Python's ``<string>``. Most
# of a traceback's frames are libraries': its lazy lookahead finds a library's marker early
# in the path.
_INDENTED_USER_FRAME = re.compile(
    rf'\s*File "(?!<)(?![^"\n]*?{_LIBRARY})(?P<file>[^"\n]+)", line (?P<line>\d+)'
)
_WRITTEN_DTYPE = re.compile(
    r"\b(?:jnp|np|numpy|jax\.numpy|ml_dtypes)\.(?P<attribute>\w+)"
    r"|\bdtype\s*=\s*['\"](?P<quoted>\w+)['\"]"
)
MAX_FRAME_LINES_KEPT = 4096  # frame and source lines remembered with what each shows


def user_frame(lines: Sequence[str]) -> UserFrame | None:
    """The user's frame nearest the error that writes a dtype, else the nearest one."""
    frames = []
    for number, text in enumerate(lines):
        if "File " not in text or (found := _users_file_and_line(text)) is None:
            continue
        following = lines[number + 1] if number + 1 < len(lines) else ""
        source = (
            following.strip()
            if following.strip() and not _INDENTED_PYTHON_FRAME.match(following)
            else None
        )
        frames.append(UserFrame(*found, source, _written_dtype(source)))
    writing = [frame for frame in frames if frame.dtype is not None]
    nearest = writing or frames
    return nearest[-1] if nearest else None


@lru_cache(maxsize=MAX_FRAME_LINES_KEPT)
def _users_file_and_line(text: str) -> tuple[str, int] | None:
    """The file and line of the user's frame ``text`` shows, if it shows one; remembered,
    since a traceback repeats its frames and most of them are libraries'."""
    found = _INDENTED_USER_FRAME.match(text)
    return None if found is None else (found["file"], int(found["line"]))


@lru_cache(maxsize=MAX_FRAME_LINES_KEPT)
def _written_dtype(source: str | None) -> str | None:
    """The dtype a source line names, when it names exactly one; remembered, as the source
    lines of a traceback's frames repeat."""
    if source is None:
        return None
    names = set()
    for found in _WRITTEN_DTYPE.finditer(source):
        with suppress(InputValueError):
            names.add(parse_dtype(found["attribute"] or found["quoted"]).name)
    return names.pop() if len(names) == 1 else None
