"""Messages that JAX's source does not hold: what a compiler that JAX hands a kernel to says
through JAX's wrappers (``Mosaic failed to compile TPU kernel: …``, XLA's TPU errors and
failed internal checks), and what MLIR's verifier says of the IR Pallas built
(``MLIRError: Verification failed:``).

errata mines JAX's Python and the open C++ of Mosaic (``jaxlib/mosaic``). The TPU
compiler that runs after them ships only in libtpu, as a binary: its messages can be named
as its own, but not pinned to a line of source. MLIR's own ops (``vector.shape_cast``,
``arith.cmpi``) are checked by upstream MLIR's verifiers, which are not JAX's source either.

What is known of such messages, who prints them and what to do, is data: the curated records
``data/records/compiler-*.json`` (loaded by ``compiler_advice``), each read as its ``saidBy``
says. This module reads the wrappers, and works out what a message's figures say
(``misaligned_block``, ``misaligned_slice``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from app.jaxref.dtypes import parse_dtype
from app.jaxref.inputs import InputValueError
from app.matching.compiler_advice import code_records, compiler_records


@dataclass(frozen=True)
class CompilerMessage:
    line: int  # the 1-based line of the paste where the compiler's words stand
    message_line: int  # where the message itself stands: that line or a few after it
    compiler: str
    message: str  # what the compiler said, after the wrapper
    why: str  # why JAX's source does not hold it, which holds where no record matches it
    record_id: str | None = None  # the record whose advice ``why`` gives, where one does


_TPU_WRAPPER = "Mosaic failed to compile TPU kernel"
# What libtpu said instead until early 2024 (jax#18595, JAX 0.4.20).
_OLD_TPU_WRAPPER = "Failed to compile a Mosaic module"
_XLA_TPU_WRAPPER = "XLA:TPU compile permanent error"
_MOSAIC_TPU = (
    "libtpu (Mosaic's TPU compiler)",
    "no release of JAX that errata mined holds it. Mosaic's TPU compiler is JAX's open "
    "jaxlib/mosaic, whose messages errata knows, then a closed part in libtpu, whose "
    "version decides this one (pip show libtpu)",
)
_WRAPPERS = {
    _TPU_WRAPPER: _MOSAIC_TPU,
    _OLD_TPU_WRAPPER: _MOSAIC_TPU,
    _XLA_TPU_WRAPPER: (
        "libtpu (XLA's TPU compiler)",
        "XLA's TPU compiler wrote it; it ships in libtpu, not in JAX's source",
    ),
}
# The backend whose compiler each wrapper names: a TPU kernel's, whatever frames it shows.
_WRAPPED_BACKEND = {wrapper: "tpu" for wrapper in _WRAPPERS}
# Each wrapper by its words after the first letter: people retyping a wrapper may write that
# letter in lower case (pytorch/helion#3204: "mosaic failed to compile TPU kernel: …").
_WRAPPER_TAILS = {wrapper[1:]: wrapper for wrapper in _WRAPPERS}
_SAID = re.compile(
    "(?P<wrapper>"
    + "|".join(f"[{w[0]}{w[0].lower()}]{re.escape(w[1:])}" for w in _WRAPPERS)
    + r")[:.]?[ \t]*(?P<message>[^\n]*)"
)
# XLA's internal checks, as its status macros print them: ``INTERNAL: RET_CHECK failure
# (external/xla/xla/service/gpu/ir_emitter_unnested.cc:1388) triton_module Failed to …``.
_RET_CHECK = re.compile(
    r"RET_CHECK failure \((?:external/xla/)?(?P<where>[\w./-]+:\d+)\)[ \t]*(?P<message>[^\n]*)"
)
# E2002's details, on its line or the next ones: "Operand of shape (..., 16, 256) has tiling
# (16, 128), but its block shape (..., 8, 256) is not divisible by tiling evenly nor matches
# the full shape" (sgl-project/sglang-jax#1546).
MISALIGNED_BLOCK = re.compile(
    r"Operand of shape \((?P<elided>\.\.\.,\s*)?(?P<shape>\d+(?:,\s*\d+){0,7})\)\s+"
    r"has tiling \((?P<tiling>\d+,\s*\d+)\),\s+but its block shape "
    r"\((?:\.\.\.,\s*)?(?P<block>\d+(?:,\s*\d+){0,7})\)"
)


def misaligned_block(details: str) -> str | None:
    """What E2002's block could be instead, from the figures it prints: each of its last two
    dimensions that is neither a multiple of the tiling nor the array's whole dimension, and
    the multiples nearest it that fit, or the whole dimension."""
    found = MISALIGNED_BLOCK.search(details)
    if found is None:
        return None
    shape, tiling, block = (
        [int(n) for n in re.findall(r"\d+", found[group])] for group in ("shape", "tiling", "block")
    )
    if len(shape) < 2 or len(block) < 2:
        return None
    changes = []
    for name, size, tile, whole in zip(
        ("second-to-last", "last"), block[-2:], tiling, shape[-2:], strict=False
    ):
        if size % tile == 0 or size == whole:
            continue
        nearest = {size // tile * tile, -(-size // tile) * tile}
        fits = [*sorted(n for n in nearest if tile <= n < whole), whole]
        listed = " or ".join(filter(None, [", ".join(map(str, fits[:-1])), str(fits[-1])]))
        changes.append(f"its {name} dimension {listed} instead of {size}")
    if not changes:
        return None
    return (
        "Here the block fits with "
        + "; ".join(changes)
        + f" (tiling ({tiling[0]}, {tiling[1]}), the array's last two dimensions "
        f"({shape[-2]}, {shape[-1]}))"
    )


# libtpu's check of a slice of a ref along one of its tiled dimensions, with its figures:
# "Slice shape along dimension 2 must be aligned to tiling (8), but is 2." (pytorch/xla#8797).
_MISALIGNED_SLICE = re.compile(
    r"Slice shape along dimension (?P<dim>\d+) must be aligned to tiling \((?P<tile>\d+)\),"
    r"\s*but is (?P<size>\d+)"
)


def misaligned_slice(details: str) -> str | None:
    """What size the sliced dimension could have instead, from the figures the message
    prints: the multiples of its tiling nearest the slice's size."""
    found = _MISALIGNED_SLICE.search(details)
    if found is None:
        return None
    dim, tile, size = (int(found[group]) for group in ("dim", "tile", "size"))
    if tile < 2 or size % tile == 0:
        return None
    fits = sorted({max(tile, size // tile * tile), -(-size // tile) * tile})
    return (
        f"Here the slice fits with a size of {' or '.join(map(str, fits))} instead of {size} "
        f"along dimension {dim} (a multiple of its tiling, {tile}), starting at a multiple of "
        f"{tile}, or with the ref's whole size along it"
    )


# The op a legalization failure names, then its operands' type where the paste shows the op
# (``%5 = "math.log1p"(%4) … : (vector<8x128xbf16>) -> …``), on the lines after it.
_LEGALIZE = re.compile(r"failed to legalize operation '(?P<op>[a-z_]+\.\w+)'")
_OPERAND_TYPE = r'"{op}"\([^\n]*?:\s*\((?:vector<(?:\d+x)*)?(?P<type>[a-zA-Z]+\d+\w*)'


def legalization(details: str) -> str | None:
    """The op that could not be lowered and the dtype of its operands, from the op the paste
    shows, and the dtype to compute it in instead: 32 bits of the same kind."""
    said = _LEGALIZE.search(details)
    if said is None:
        return None
    op = said["op"]
    shown = re.search(_OPERAND_TYPE.format(op=re.escape(op)), details)
    if shown is None:
        return None
    try:
        dtype = parse_dtype(shown["type"])
    except InputValueError:
        return None
    if dtype.bits >= 32 or dtype.kind not in ("float", "int", "uint"):
        return None
    wide = {"float": "float32", "int": "int32", "uint": "uint32"}[dtype.kind]
    return (
        f"Here {op} has {dtype.name} operands: compute it on x.astype(jnp.{wide}) and cast the "
        f"result back with .astype(jnp.{dtype.name})"
    )


# What to do about libtpu's own messages behind Mosaic's TPU wrapper, each seen in a real
# report, is data: the curated records of their reading "wrapped" (compiler_advice.py). The
# chip decides most of them, so the same kernel may compile on a newer TPU. Their advice
# follows the wrapper's attribution, and what the figures after the message work out.
_MOSAIC_TPU_SAYS = "libtpu's Mosaic compiler said it; it ships in libtpu, not in JAX's source. "
_WORK_OUT = {
    "misalignedBlock": misaligned_block,
    "misalignedSlice": misaligned_slice,
    "legalization": legalization,
}
_RET_CHECK_WHY = (
    "an internal check of XLA's C++ (RET_CHECK) failed: XLA ships inside jaxlib, and its "
    "source is not the Python and Mosaic code errata mined"
)
_QUOTES = "`'\""
_FIELD = re.compile(r"\{[\w.]+\}")  # an f-string's field: ``{lhs.dtype}``
# MLIR's verifier, as the bindings raise it (``MLIRError: Verification failed:``) and as
# Pallas re-raises it (``VerificationError``), then its diagnostic on a line that follows:
# ``error: loc(…): 'vector.shape_cast' op operand #0 must be vector …``.
_VERIFIER = re.compile(
    r"MLIRError: Verification failed:|Pallas encountered an internal verification error"
)
_OP_DIAGNOSTIC = re.compile(r"'(?P<op>[a-z_]\w*\.[\w.]+)' op (?P<said>[^\n]+)")
# An XLA error code standing alone, not a log line's level and date (``E1001 12:00:01``).
_BARE_CODE = re.compile(r"(?<![\w/.-])E(?P<number>\d{4})\b(?![ \t]+\d\d:\d\d)")
MAX_DIAGNOSTIC_LINES = 4  # lines after the verifier's words where its diagnostic may stand
# Dialects whose ops Mosaic defines in jaxlib/mosaic, whose verifiers errata mined.
MOSAIC_DIALECTS = frozenset({"tpu", "mosaic_gpu"})


def compiler_messages(text: str) -> list[CompilerMessage]:
    """Each message the paste shows from a compiler JAX wraps, from MLIR's verifier, from
    XLA's internal checks, or that a compiler or runtime prints whole, in paste order."""
    wrapped = _wrapped(text)
    behind = {said.message_line for said in wrapped}
    said = [*wrapped, *_verified(text), *_checked(text), *_reported(text, behind)]
    said += _coded(text, {line for s in said for line in (s.line, s.message_line)})
    return sorted(said, key=lambda message: message.line)


def backends_wrapping(lines: Iterable[str]) -> frozenset[str]:
    """The backends whose compilers' wrappers ``lines`` show: ``Mosaic failed to compile TPU
    kernel: Only 32-bit types supported`` is Mosaic TPU's message, not Mosaic GPU's raise of
    the same words, even in a paste with no frame."""
    return frozenset(
        _WRAPPED_BACKEND[wrapper]
        for line in lines
        if "ompile" in line  # every wrapper's; most lines have none
        for tail, wrapper in _WRAPPER_TAILS.items()
        if tail in line
    )


def _wrapped(text: str) -> list[CompilerMessage]:
    """What follows a compiler's wrapper. A message on the line after its wrapper (``…TPU
    kernel:`` then the message) is read from there."""
    if not any(tail in text for tail in _WRAPPER_TAILS):
        return []
    found = []
    for said in _SAID.finditer(text):
        line = _line_of(text, said.start())
        message, message_line = _unquoted(said["message"]), line
        if not message:
            rest = text[said.end() :]
            following = rest.lstrip("\n")
            message_line += len(rest) - len(following)
            message = _unquoted(following.partition("\n")[0].strip())
        compiler, why = _WRAPPERS[_WRAPPER_TAILS[said["wrapper"][1:]]]
        record_id = None
        if (compiler, why) == _MOSAIC_TPU:
            record_id, why = _advised(text, said, message) or (None, why)
        # a message that names itself says more than its wrapper (what to do)
        compiler, why, record_id = next(
            (
                (record.compiler, record.advice, record.answered_by)
                for record in compiler_records("whole")
                if record.pattern.match(message)
            ),
            (compiler, why, record_id),
        )
        found.append(CompilerMessage(line, message_line, compiler, message, why, record_id))
    return found


def _advised(text: str, said: re.Match[str], message: str) -> tuple[str, str] | None:
    """The record of a libtpu message ``said`` behind its wrapper, where a report told what
    to do, and that advice, with what its figures on the lines after it work out."""
    for record in compiler_records("wrapped"):
        if record.pattern.match(message):
            worked = None
            if record.work_out is not None:
                end = _end_of_lines(text, said.end(), MAX_DIAGNOSTIC_LINES)
                worked = _WORK_OUT[record.work_out](text[said.start() : end])
            advice = _MOSAIC_TPU_SAYS + record.advice + (f". {worked}" if worked else "")
            return record.answered_by, advice
    return None


def _verified(text: str) -> list[CompilerMessage]:
    """The diagnostic MLIR's verifier gave after its words, within a few lines."""
    if "erification" not in text:  # "Verification failed", "internal verification error"
        return []
    found = []
    for said in _VERIFIER.finditer(text):
        limit = _end_of_lines(text, said.end(), MAX_DIAGNOSTIC_LINES + 1)
        diagnostic = _OP_DIAGNOSTIC.search(text, said.end(), limit)
        if diagnostic is None:
            continue
        op = diagnostic["op"]
        dialect = op.split(".", 1)[0]
        said_of_op = diagnostic["said"].strip()
        advising = next(
            (
                record
                for record in compiler_records("verifier")
                if record.op == op and record.pattern.match(f"'{op}' op {said_of_op}")
            ),
            None,
        )
        advised = advising.advice if advising else None
        if dialect in MOSAIC_DIALECTS:
            why = (
                f"'{op}' is an op of Mosaic's own {dialect} dialect, whose verifier errata "
                "mined from jaxlib/mosaic, but no mined release says this"
            )
        elif advised:
            why = (
                f"'{op}' is upstream MLIR's ({dialect} dialect), checked by MLIR's own "
                f"verifier, which is not JAX's source. {advised}"
            )
        else:
            why = (
                f"'{op}' is upstream MLIR's ({dialect} dialect), checked by MLIR's own "
                "verifier, which is not JAX's source: Pallas lowered the kernel to IR that MLIR "
                "rejects, an operand or shape Pallas took without a check of its own (worth a "
                "JAX issue, with the kernel)"
            )
        message = _unquoted(f"'{op}' op {said_of_op}")
        line = _line_of(text, said.start())
        message_line = _line_of(text, diagnostic.start())
        record_id = advising.answered_by if advising and dialect not in MOSAIC_DIALECTS else None
        found.append(
            CompilerMessage(line, message_line, "MLIR's verifier", message, why, record_id)
        )
    return found


def _checked(text: str) -> list[CompilerMessage]:
    """XLA's failed internal checks, named by the file and line of XLA's C++ that checks."""
    if "RET_CHECK failure" not in text:
        return []
    found = []
    for said in _RET_CHECK.finditer(text):
        line = _line_of(text, said.start())
        message = _unquoted(said["message"]) or "RET_CHECK failure"
        where = f"XLA ({said['where']})"
        found.append(CompilerMessage(line, line, where, message, _RET_CHECK_WHY))
    return found


def _reported(text: str, behind_wrappers: set[int]) -> list[CompilerMessage]:
    """The messages a compiler or runtime prints whole (the records read ``whole``), the
    first of each kind (a log repeats them); one on a line of ``behind_wrappers`` is a
    wrapper's message already, and one with an f-string's fields is the source that prints it
    (the frame's ``assert lhs.dtype == rhs.dtype, f"First input ({lhs.dtype}) …"``). A line
    that two records read is the first's in their order (Helion's look-alike of XLA's VMEM
    report before XLA's)."""
    found: list[CompilerMessage] = []
    claimed = set(behind_wrappers)
    for record in compiler_records("whole"):
        # Each record's words first: a search of a 20 KB paste by ``in`` takes a fifth of the
        # time of the pattern's. (Reports that give their figures are memory reports instead.)
        if record.words is None or record.words not in text:
            continue
        for said in record.pattern.finditer(text):
            line = _line_of(text, said.start())
            if line not in claimed and not _FIELD.search(said[0]):
                claimed.add(line)
                message = _unquoted(said[0])
                found.append(
                    CompilerMessage(
                        line, line, record.compiler, message, record.advice, record.answered_by
                    )
                )
                break
    return found


def _coded(text: str, said_lines: set[int]) -> list[CompilerMessage]:
    """XLA's error codes that a paste names alone ("hit E2003 again", or by the code's name),
    each answered by its record, the first time it is named on a line no other message
    stands on. absl's log lines start with a letter and the date (``E1001 12:00:01.5 …``:
    an error of 1 October), which is no code."""
    table = code_records()
    named = [
        (said.start(), "E" + said["number"], "E" + said["number"])
        for said in _BARE_CODE.finditer(text)
    ]
    named += [
        (text.find(record.code_name), code, record.code_name)
        for code, record in table.items()
        if record.code_name and record.code_name in text
    ]
    found, seen = [], set()
    for position, code, words in sorted(named):
        record = table.get(code)
        line = _line_of(text, position)
        if record is None or code in seen or line in said_lines:
            continue
        seen.add(code)
        why = record.advice
        if record.docs_url and record.docs_url not in why:
            why += f" (XLA's page of {code}: {record.docs_url})"
        found.append(CompilerMessage(line, line, record.compiler, words, why, record.record_id))
    return found


def _end_of_lines(text: str, position: int, count: int) -> int:
    """Where the ``count``-th line break from ``position`` stands (the end of the text if
    there are fewer)."""
    end = position
    for _ in range(count):
        end = text.find("\n", end + 1)
        if end == -1:
            return len(text)
    return end


def _line_of(text: str, position: int) -> int:
    """The 1-based line of ``text`` that ``position`` stands on."""
    return text.count("\n", 0, position) + 1


def _unquoted(message: str) -> str:
    """The message without the quote that closed the span it was quoted in (`` `…` ``),
    keeping a closing quote of its own (``failed to legalize operation 'tpu.gather'``)."""
    message = message.rstrip()
    while message and message[-1] in _QUOTES and message.count(message[-1]) % 2:
        message = message[:-1].rstrip()
    return message
