"""Message templates to RE2 patterns, and safe compilation of untrusted patterns.

JAX builds its error messages with f-strings, so a record's message template is the
f-string text (``"Got {bytes=} but warpgroup size is {WARPGROUP_SIZE}"``). Each
placeholder becomes a named group whose name and sub-pattern say what kind of value it
holds (a shape, a dtype, a number, a memref type, free text), so the values layer can
type the captures without knowing the template.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import re2

# Sub-patterns per value kind. Shapes render as a list (MLIR, ``[3, 5]``) or a tuple
# (JAX, ``(3,)``); dtypes as MLIR text (``i4``, ``f8E4M3FN``, ``complex<f32>``) or numpy
# names (``int4``); a type is MLIR's, whose angle brackets nest, so it ends lazily at the
# next literal (``memref<4xi32, …>``), or a JAX aval's, as lax prints its operands' types
# (``input type=float32[3,128]``).
SHAPE = r"[\[(][-\d,\s]*[\])]"
TUPLE_SHAPE = r"\([-\d,\s]*\)"  # ``tuple(...)`` says so itself
DTYPE = r"[A-Za-z]\w*(?:<[\w,\s]*>)?"
NUMBER = r"\d+"
MEMREF = r"[a-z]\w*(?:<.+?>|\[[-\d,\s]*\])"
TEXT = r".*?"

# Words that make a placeholder name numeric (``minor_dim_bits``, ``swizzle_elems``, ``zeroth_bw``).
_NUMERIC_WORDS = frozenset(
    {"bits", "bytes", "bw", "bitwidth", "size", "swizzle", "elems", "elements", "count"}
    | {"num", "stride", "length", "offset", "packing", "steps", "n", "m", "k", "v"}
)
# Calls that only change how a value prints, not what it is (``tuple(slice_shape)``).
_TRANSPARENT_CALLS = ("tuple", "list", "str", "repr")
_REFERENCE = re.compile(r"(?P<path>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)(?:\[\s*(?P<index>-?\d+)\s*\])?")
# A slice of a sequence is a sequence of the same kind (``slice_shape[len(dims):]``).
_SLICE = re.compile(r"(?P<path>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\[[^\[\]]*:[^\[\]]*\]")
_ARITHMETIC = re.compile(r"[-+*/%]|\b(?:len|sum|prod|int)\s*\(")
_NOISE_WORDS = frozenset({"self", "math", "np", "jnp", "utils", "fa", "mgpu"})
# A regular expression's special characters escaped, and the line breaks and tabs a
# template may hold spelled out, in one ``str.translate`` (imports escape 100,000 messages).
_ESCAPES = str.maketrans(
    {**{char: "\\" + char for char in "\\.^$|?*+()[]{}"}, "\t": r"\t", "\n": r"\n", "\r": r"\r"}
)
_SPACE_RUN = re.compile(r" {2,}")
_BRACE = re.compile(r"[{}]")
# A field holding no quote, bracket or brace ends at the next "}" (``{x.shape}``, ``{bytes=}``).
_PLAIN_FIELD = re.compile(r"\{[^{}()\[\]'\"]*\}")
MAX_GROUP_NAME = 40
# A message with less literal text than this could be any line of a paste.
MIN_MATCHABLE_LITERAL = 12
# MLIR prints an op's diagnostic (``emitOpError``) as ``'tpu.iota' op <message>``, and so
# does JAX where it raises MLIR's error; Mosaic TPU's compiler prints the message alone, with
# the op under "The MLIR operation involved". The op's words are optional in the pattern
# where the message without them is still matchable.
_OP_PREFIX = re.compile(r"'(?:[\w.]+|\{[^{}]*\})' op ")


class PatternError(ValueError):
    """A message pattern that cannot be used safely; the text says why."""


@dataclass(frozen=True)
class Placeholder:
    """One ``{...}`` field of a template, with the group it turns into."""

    expression: str
    name: str
    kind: str  # "shape", "tuple_shape", "dtype", "number", "memref" or "text"
    self_documenting: bool  # ``{bytes=}`` renders as ``bytes=96``


_SUBPATTERNS = {
    "shape": SHAPE,
    "tuple_shape": TUPLE_SHAPE,
    "dtype": DTYPE,
    "number": NUMBER,
    "memref": MEMREF,
    "text": TEXT,
}


def derive_pattern(template: str) -> str:
    """Return an RE2 pattern matching messages rendered from ``template``.

    Literal text is escaped, except that a run of two or more spaces matches any run of
    spaces (dashboards collapse JAX's double spaces). A lazy group at the very end is made
    greedy so it captures the rest of the line instead of a single character. An MLIR op's
    diagnostic matches with or without its op (see ``_OP_PREFIX``). Trailing whitespace is
    left out: no pasted line keeps it (``normalize`` strips it, as terminals and chat do),
    and JAX ends some messages with a space (``… Value dtype: {val.dtype}. ``).
    """
    return _rendered(template)[0]


def derive_checked_pattern(template: str) -> str:
    """``derive_pattern``, refused (``PatternError``) where ``compile_pattern`` would refuse it.

    A derived pattern is escaped literal text and fixed sub-patterns under distinct names:
    it compiles by construction, so RE2 (a compile costs more than deriving) is asked only
    when nothing literal keeps it from matching empty text.
    """
    pattern, literal = _rendered(template)
    if len(pattern) > MAX_PATTERN_CHARS or not literal:
        compile_pattern(pattern)
    return pattern


def _rendered(template: str) -> tuple[str, bool]:
    """The pattern, and whether any of it is literal text."""
    template = template.rstrip()
    used: dict[str, int] = {}
    op = _OP_PREFIX.match(template)
    if op is not None:
        rest = split_template(template[op.end() :])
        literal = "".join(piece for piece in rest if isinstance(piece, str))
        if len(literal.strip()) >= MIN_MATCHABLE_LITERAL:
            return f"(?:{_render(split_template(op[0]), used)})?{_render(rest, used)}", True
    pieces = split_template(template)
    return _render(pieces, used), any(isinstance(piece, str) for piece in pieces)


def _render(pieces: list[str | Placeholder], used: dict[str, int]) -> str:
    """The pieces as a pattern; ``used`` holds the group names taken so far."""
    parts: list[str] = []
    for position, piece in enumerate(pieces):
        if isinstance(piece, str):
            parts.append(_escape_literal(piece))
            continue
        if piece.self_documenting:
            parts.append(_escape_literal(piece.expression))
        name = _unique(piece.name, used)
        body = _SUBPATTERNS[piece.kind]
        if position == len(pieces) - 1 and body.endswith("?"):
            body = body.replace("+?", "+").replace("*?", "*")
        parts.append(f"(?P<{name}>{body})")
    return "".join(parts)


def split_template(template: str) -> list[str | Placeholder]:
    """Split an f-string template into literal text and placeholders.

    ``{{``/``}}`` are literal braces; an unclosed ``{`` is kept as text, since templates
    come from user submissions as well as from JAX's source.
    """
    pieces: list[str | Placeholder] = []
    literal: list[str] = []
    i = 0
    # From brace to brace: the text between them is literal (imports derive 100,000 of these).
    while (brace := _BRACE.search(template, i)) is not None:
        at = brace.start()
        literal.append(template[i:at])
        char = template[at]
        if template[at + 1 : at + 2] == char:
            literal.append(char)
            i = at + 2
            continue
        end = _field_end(template, at) if char == "{" else -1
        if end < 0:
            literal.append(char)
            i = at + 1
            continue
        if text := "".join(literal):
            pieces.append(text)
        literal = []
        pieces.append(_placeholder(template[at + 1 : end]))
        i = end + 1
    if text := "".join([*literal, template[i:]]):
        pieces.append(text)
    return pieces


def literal_text(template: str) -> str:
    """A message template's own words, its placeholders left out: what the names of its
    values (``{eqn.primitive}``) would add to a comparison of wordings is noise."""
    return " ".join(piece for piece in split_template(template) if isinstance(piece, str))


def _outside_strings(text: str, start: int = 0) -> Iterator[tuple[int, str, int]]:
    """``(index, char, bracket depth before it)`` for each character outside string literals."""
    depth = 0
    quote = ""
    for i in range(start, len(text)):
        char = text[i]
        if quote:
            if char == quote:
                quote = ""
            continue
        if char in "'\"":
            quote = char
            continue
        yield i, char, depth
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1


def _field_end(template: str, start: int) -> int:
    """Index of the ``}`` closing the field opened at ``start``, or -1."""
    if (plain := _PLAIN_FIELD.match(template, start)) is not None:
        return plain.end() - 1
    for i, char, depth in _outside_strings(template, start + 1):
        if char == "}" and depth == 0:
            return i
    return -1


@lru_cache(maxsize=4096)
def _placeholder(field: str) -> Placeholder:
    """The placeholder a field becomes; the same few fields recur across a whole dataset."""
    expression = _strip_format(field)
    self_documenting = bool(re.search(r"(?<![=!<>])=\s*$", expression))
    if self_documenting:
        # ``{bytes=}`` prints its own source text, spaces included, then the value.
        source = expression
        expression = re.sub(r"=\s*$", "", expression)
        name, kind = _classify(expression.strip())
        return Placeholder(source, name, kind, True)
    name, kind = _classify(expression.strip())
    return Placeholder(expression, name, kind, False)


def _strip_format(field: str) -> str:
    """Drop a top-level ``!r`` conversion and ``:spec`` format from a field."""
    for i, char, depth in _outside_strings(field):
        if depth == 0 and (char == ":" or (char == "!" and field[i + 1 : i + 2] != "=")):
            return field[:i]
    return field


def _classify(expression: str) -> tuple[str, str]:
    """Name and value kind for a placeholder expression."""
    wrapper = ""
    for call in _TRANSPARENT_CALLS:
        if expression.startswith(call + "(") and expression.endswith(")"):
            expression, wrapper = expression[len(call) + 1 : -1].strip(), call
            break
    if (sliced := _SLICE.fullmatch(expression)) is not None:
        expression = sliced["path"]
    reference = _REFERENCE.fullmatch(expression)
    if reference is None:
        # ``tuple(…)`` and ``list(…)`` print a sequence, whatever arithmetic is inside.
        counted = wrapper not in ("tuple", "list") and _ARITHMETIC.search(expression)
        return _sanitize(expression), "number" if counted else "text"
    last = reference["path"].rsplit(".", 1)[-1]
    index = reference["index"]
    if index is not None:
        suffix = "last" if index == "-1" else index.lstrip("-")
        return _sanitize(f"{last}_{suffix}"), "number"
    lowered = last.lower()
    if lowered in ("element_type", "dtype") or lowered.endswith("_dtype"):
        return "dtype", "dtype"
    if lowered == "shape" or lowered.endswith("_shape"):
        # Not read from the owner's name: an ``x_ty`` is an MLIR type, whose shape is a
        # list, in Mosaic's lowering, but an aval, whose shape is a tuple, in JAX's state
        # primitives (``Expected shape: {expected_out_ty.shape}``).
        if wrapper == "tuple":
            return "shape", "tuple_shape"
        return "shape", "shape"
    if lowered.endswith(("_ty", "_type")) or lowered == "memref":
        return "memref", "memref"
    if last.isupper() or _NUMERIC_WORDS.intersection(lowered.split("_")):
        return _sanitize(last), "number"
    return _sanitize(last), "text"


def _sanitize(expression: str) -> str:
    """A group name from an arbitrary expression: ``(swizzle * 8) // bw`` → ``swizzle_8_bw``."""
    words = [w for w in re.findall(r"[A-Za-z_]\w*|\d+", expression) if w not in _NOISE_WORDS]
    name = "_".join(w.strip("_") for w in words if w.strip("_")).lower() or "value"
    if name[0].isdigit():
        name = "expr_" + name
    return name[:MAX_GROUP_NAME].rstrip("_")


def _unique(name: str, used: dict[str, int]) -> str:
    """RE2 and ``re`` need distinct group names: the second ``swizzle`` becomes ``swizzle_2``."""
    used[name] = used.get(name, 0) + 1
    return name if used[name] == 1 else f"{name}_{used[name]}"


def _escape_literal(text: str) -> str:
    escaped = text.translate(_ESCAPES)
    return _SPACE_RUN.sub(" +", escaped) if "  " in escaped else escaped


# --- compiling untrusted patterns ------------------------------------------------------

MAX_PATTERN_CHARS = 4096
# Per-pattern RE2 memory budget: ample for a message pattern (a catalog pattern needs a
# few KiB), and the point at which a hostile pattern is refused as too big.
MAX_MEM_BYTES = 1 << 20

_NAMED_GROUP = re.compile(r"(?<!\\)(?:\\\\)*\(\?P?<(\w+)>")
_REASONS = (
    ("(?=", "lookahead assertions are not supported"),
    ("(?!", "negative lookahead assertions are not supported"),
    ("(?<=", "lookbehind assertions are not supported"),
    ("(?<!", "negative lookbehind assertions are not supported"),
    ("invalid escape sequence: \\Z", r"'\Z' is not supported; use '\z' for end of text"),
    ("pattern too large", "pattern is too big (exceeds the memory budget)"),
    ("invalid repetition size", "repetition count is too large (limit 1000)"),
    ("bad repetition operator", "repetition operator applied to nothing or nested"),
)


def compile_pattern(pattern: str) -> Any:
    """Compile an untrusted pattern with RE2, or raise ``PatternError`` saying why not.

    RE2 runs in linear time, so no pattern can hang a request; what remains to reject is
    syntax RE2 lacks (lookarounds, backreferences), patterns over the memory budget,
    duplicate group names (captures would be ambiguous) and patterns that match empty
    text (they would match every paste).
    """
    if not pattern:
        raise PatternError("pattern is empty")
    if len(pattern) > MAX_PATTERN_CHARS:
        raise PatternError(f"pattern is too long ({len(pattern)} > {MAX_PATTERN_CHARS} chars)")
    names = _NAMED_GROUP.findall(pattern)
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise PatternError(f"duplicate group names: {', '.join(duplicates)}")
    compiled = compile_bounded(pattern)
    if compiled.search("") is not None:
        raise PatternError("pattern matches empty text, so it would match every paste")
    return compiled


def compile_bounded(pattern: str) -> Any:
    """Compile with RE2 under the memory budget; ``PatternError`` if RE2 refuses."""
    options = re2.Options()
    options.max_mem = MAX_MEM_BYTES
    options.log_errors = False
    try:
        return re2.compile(pattern, options)
    except re2.error as exc:
        raise PatternError(_reason(exc)) from None


def _reason(exc: Exception) -> str:
    detail = exc.args[0] if exc.args else ""
    if isinstance(detail, bytes):
        detail = detail.decode("utf-8", "replace")
    detail = str(detail)
    if re.search(r"invalid escape sequence: \\[1-9]", detail):
        return "backreferences are not supported"
    for needle, reason in _REASONS:
        if needle in detail:
            return reason
    return f"RE2 cannot compile it: {detail}"
