"""Paste in, known errors out: normalize, read the exceptions, match, type the values.

Exception messages are matched first; the rest of the paste is then scanned for lone
messages (a chat line, a pytest summary, a message pasted without its class, inside a log
line, a table cell or inline code), skipping traceback furniture such as the source line
``raise ValueError("...")``; then for messages broken over two lines. An exception whose
message matches nothing in full is tried as a message cut off part-way, which scores
lower. A wrapper's words before a message (``INTERNAL: Mosaic failed to compile TPU
kernel: ValueError: ...``) are not held against it, and the class it names is the one
compared with the record's. With a ``FrameIndex`` the JAX release is read from the frames,
an exception no message matches is named by the JAX frame that raised it, and a ``raise`` of
JAX's quoted outside a traceback (an issue's code block) by the site it is.

One match is reported per distinct error: each exception (or lone line) yields its best
record, the other records that also fit are listed as alternatives, and an error seen in
several places (JAX prints it twice; a pytest summary repeats it) is reported once.
Root causes come first.
"""

from __future__ import annotations

import bisect
import re
import string
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache

from app.jaxref.scope import backend_of
from app.matching.compilers import backends_wrapping
from app.matching.frames import Frame, FrameIndex
from app.matching.index import AnyIndex, Hit, PatternEntry, wording_until
from app.matching.normalize import NormalizedPaste, normalize
from app.matching.raise_points import (
    MAX_STATEMENT_LINES,
    STATEMENT,
    Calling,
    RaisePoint,
    calling_frames,
    cut_points,
    quoted_points,
    quoted_sites,
    raise_points,
    raising_frame,
)
from app.matching.release import ReleaseReading, Worded, date_by_wording, read_release
from app.matching.tracebacks import (
    STAGING_WRAPPER,
    ExceptionRecord,
    find_truncation,
    may_be_truncated,
    read_exceptions,
)
from app.matching.values import (
    TypedValues,
    UserFrame,
    ValueSource,
    adopt_written_dtype,
    find_value_sources,
    infer_missing,
    needs_context,
    type_values,
    user_frame,
)

# How sure a match is, by where in the paste its message was found.
IN_TRACEBACK = 1.0
LONE_EXCEPTION = 0.95  # "ValueError: ..." with no traceback around it
LOOSE_LINE = 0.85  # the message inside some other line, or with no class at all
WRAPPED_PENALTY = 0.05  # found only once a message broken over lines was joined
# A pattern explaining only part of a message (an older, shorter wording inside a newer
# one) is scaled by the square of the share it explains.
# A message cut off part-way: TRUNCATED_BASE, plus TRUNCATED_SPAN x the share of the
# pattern's text that is visible.
TRUNCATED_BASE, TRUNCATED_SPAN = 0.6, 0.3
CLASS_MISMATCH = 0.8  # the record expects another exception class
VERSION_MISMATCH = 0.7  # the wording is not that of the JAX version the user named
# A message found inside some other line with no exception class right before it must show
# this much of its literal text: prose reads like a short message too easily ("Unsupported
# layout: I'll try another").
LOOSE_MIN_LITERAL = 24
# Where a message ends without a truncation marker (the end of a line, a closing backtick),
# a cut is believed only when this much of the message's literal text shows.
UNMARKED_CUT_MIN_LITERAL = 24
# Exceptions read of one paste, the last ones: a log of the same failure printed thousands of
# times would otherwise cost time and an answer that grow with it (75,000 one-line errors in
# a 1 MiB paste took 6 s). The failure that ended a run is printed last.
MAX_EXCEPTIONS_READ = 256

# Exceptions that wrap another's message: what the wrapped message says is the error, and
# the class the record expects is the wrapped one (often not printed at all).
WRAPPER_CLASSES = frozenset(
    {
        "XlaRuntimeError",
        "JaxRuntimeError",
        "LoweringError",
        "LoweringException",
        "TritonLoweringException",
        "MosaicError",
        "JaxStackTraceBeforeTransformation",
        "UnfilteredStackTrace",
    }
)
_CLASS_NAME = r"(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception|Transformation|StackTrace)"
# MLIR's words before a diagnostic, as an MLIRError prints it: ``error`` and the op's
# location (``error: "name"("file.py":16:0): message``).
_MLIR_DIAGNOSTIC = r'error(?:\s*:\s*(?:"[^"\n]*"(?:\([^\n]*\))?|loc\([^\n]*\)))?'
# What stands right before a wrapped message: a class, an absl status code, a runtime's
# own words ("INTERNAL: Mosaic failed to compile TPU kernel: ValueError: ..."), or MLIR's.
_LEAD_IN = re.compile(
    rf"(?:(?:{_CLASS_NAME}|[A-Z][A-Z_]{{2,}}|Mosaic failed to compile (?:TPU |GPU )?kernel"
    r"|Failed to compile a Mosaic module|Exception while lowering eqn|Error while lowering"
    rf"|Failed to lower|{_MLIR_DIAGNOSTIC})"
    r"\s*:\s*)+\Z"
)
# libtpu's code and name of an error, right before its message: "E2003:
# CompileTimeMosaicUnprovenMemoryAccessAlignment: cannot statically prove that …"
_LIBTPU_ERROR_CODE = re.compile(r"\bE\d{4}:\s*[A-Z]\w+:\s*\Z")
LEAD_IN_REACH = 240  # characters before a message looked at for its lead-in
_CLASS_BEFORE = re.compile(rf"({_CLASS_NAME})\s*:")  # each class a lead-in names
# Widths at which terminals and consoles commonly cut long lines.
TERMINAL_WIDTHS = frozenset({80, 100, 120, 132, 160, 200})


@dataclass(frozen=True)
class FoundException:
    """An exception in the paste, with line numbers as the user sees them (1-based)."""

    qualified_class: str
    short_class: str
    message: str
    line_number: int
    chain: int
    chain_position: int  # 0 is the root cause
    wrapped_by: tuple[str, ...]  # JaxStackTraceBeforeTransformation, when JAX announced it
    repeated_at: tuple[int, ...]  # other lines where the same error was printed
    in_traceback: bool
    truncated: bool
    is_wrapper: bool  # JAX's verbose LoweringError, whose cause is the real error


@dataclass(frozen=True)
class Match:
    """A known error found in the paste, with the evidence for it."""

    record_id: str
    variant: str
    score: float  # 0..1
    matched_line: str  # the line as pasted
    line_number: int  # 1-based, in the paste
    chain_position: int | None  # 0 is the root cause; None for a line outside any exception
    exception_class: str | None
    captures: dict[str, str]  # raw strings, by group name (or number for unnamed groups)
    values: TypedValues
    pattern_id: int  # the entry in the index
    pattern: str  # as it ran
    normalized_line: str  # the text it ran on
    truncated: bool = False
    metadata: Mapping[str, str] = field(default_factory=dict)
    alternatives: tuple[str, ...] = ()  # other records that fit the same error
    # Those of them whose patterns read as much literal text of it: as likely its source,
    # so the paste may come from their releases too ("Not implemented" fits any NYI).
    alike: tuple[str, ...] = ()
    # Every wording of the record that reads the message, ``variant`` first: an older
    # wording and today's may read the same text.
    variants: tuple[str, ...] = ()
    user_frame: UserFrame | None = None  # where the user's own code appears in the paste
    # or "wrapped message", "cut message", "line", "wrapped line", "cut line"
    found_in: str = "exception message"
    literal: str = ""  # the longest literal text of the pattern, which the index found
    stripped: str = ""  # the text before the message on its line, left out of the match
    unread: tuple[str, ...] = ()  # values a cut-off message no longer shows
    # Of Python's own error at JAX's call of user code: JAX's frame that made the call.
    called_from: Frame | None = None


@dataclass(frozen=True)
class MatchReport:
    matches: tuple[Match, ...]  # root causes first, then by score
    exceptions: tuple[FoundException, ...]
    unmatched: tuple[FoundException, ...]  # exceptions no record matched
    release: ReleaseReading | None = None  # read when a frame index is given
    # Where a JAX frame raised an exception no message matched (a bare AssertionError, a
    # message built at run time), the sites it points at, surest first; then the sites a
    # traceback cut before its message ends at, and those whose statement the paste quotes
    # outside a traceback, which nothing else names.
    raise_points: tuple[RaisePoint, ...] = ()
    # Exceptions earlier in the paste than the last ``MAX_EXCEPTIONS_READ``, left unread.
    skipped_exceptions: int = 0

    @property
    def root(self) -> Match | None:
        """The match to lead with: the root cause of its chain, if any match is one."""
        return self.matches[0] if self.matches else None


@dataclass(frozen=True)
class _Candidate:
    error: tuple[str, int]  # ("exception", record number) or ("line", line number)
    hit: Hit
    line: int  # normalized line number
    record: ExceptionRecord | None
    text: str
    score: float
    explains_all: bool = False  # the pattern accounts for the whole message
    exception_class: str | None = None  # the class the message was raised with, if known
    found_in: str = "exception message"
    caller: Frame | None = None  # for a record bound to JAX's callers: the call's frame


def match_paste(
    text: str | bytes,
    index: AnyIndex,
    jax_version: str | None = None,
    frames: FrameIndex | None = None,
) -> MatchReport:
    """Find the known errors in ``text``. Raises ``PasteTooLarge`` or ``UnreadablePaste``.

    With ``frames``, the JAX release is read from the paste too, and the wordings of that
    release win where the user names none (``jax_version`` wins over the paste).
    """
    paste = normalize(text)
    reading = read_exceptions(paste.lines)
    release = None
    if frames is not None:
        release = read_release(frames, paste.lines, reading.structure, jax_version, paste.origins)
        jax_version = release.used
    # Every line of every printing of a message belongs to its exception, not to the loose
    # lines; the loose lines therefore do not depend on what the messages match.
    claimed = {n for r in reading.exceptions for n in (*r.message_line_numbers, *r.repeated_lines)}
    records = reading.exceptions[-MAX_EXCEPTIONS_READ:]
    unread = set(range(len(paste.lines))).difference(claimed, reading.structure)
    loose = [n for n in sorted(unread) if paste.lines[n].strip()]
    joined = [" ".join(part.strip() for part in record.message_lines) for record in records]
    texts, owners = _message_texts(records, joined, paste.lines)
    # One search over the messages and the loose lines; hits come ordered by text.
    hits = index.search([*texts, *(paste.lines[n] for n in loose)])
    split = bisect.bisect_left(hits, len(texts), key=lambda hit: hit.text)
    candidates = _in_messages(records, texts, owners, hits[:split])
    explained = {c.error for c in candidates if c.explains_all}
    candidates += _in_cut_messages(records, joined, index, explained)
    loose_text = "\n".join([paste.lines[n] for n in loose])
    in_lines = _in_loose_lines(paste, loose, loose_text, hits[split:], len(texts), index, joined)
    # The statements of JAX's that the loose lines quote (an issue's code block), read once.
    shown: list[RaisePoint] = []
    if frames is not None and ("raise" in loose_text or "assert" in loose_text):
        shown = quoted_points(frames, paste.lines, loose)
    starts = None if frames is None else {point.paste_line for point in shown}
    candidates += [c for c in in_lines if not _quotes_known_source(paste.lines, c, starts)]
    candidates = _at_their_callers(
        candidates, index, frames, paste.lines, reading.structure, records
    )
    if frames is not None:
        candidates = _called_from_the_raising_frame(
            candidates, index, frames, paste.lines, reading.structure, records
        )

    points: dict[tuple[str, int], list[RaisePoint]] = {}
    if frames is not None:
        for number, record in enumerate(records):
            if _staged(record, paste.lines):
                continue
            at = raise_points(
                frames,
                paste.lines,
                reading.structure,
                record.first_line,
                record.short_class,
                record.raised_at,
                release.releases if release is not None else (),
            )
            if at:
                points[("exception", number)] = at
    raised = {
        error: {p.record_id for p in at if p.record_id is not None} for error, at in points.items()
    }
    quoted = cache(lambda: quoted_sites(frames, paste.lines) if frames else frozenset())

    # Pallas's core, the backends the frames show and those whose compilers' wrappers the
    # paste shows; with neither a frame index nor a wrapper, nothing known.
    wrapping = cache(lambda: backends_wrapping(paste.lines))

    def backends_shown() -> frozenset[str]:
        if frames is None and not wrapping():
            return frozenset()
        framed = frames.backends_shown(paste.lines, reading.structure) if frames else set()
        return frozenset({"core", *framed, *wrapping()})

    backends = cache(backends_shown)
    newest = frames.newest_rank if frames is not None else _unknown_rank
    # A site that none of the paste's releases (the user's, if given) can raise.
    outside: Callable[[str], bool] = _nowhere_told
    if frames is not None and release is not None:
        releases = release.releases if release.given is None else (release.given,)
        outside = frames.raised_outside(releases)
    # The earliest release the paste can come from: a wording older than it is not its.
    earliest = jax_version
    if release is not None and release.given is None and release.releases:
        earliest = release.releases[0]
    matches = _best_per_error(
        candidates,
        index,
        paste,
        (_version(jax_version), _version(earliest)),
        raised,
        quoted,
        backends,
        wrapping,
        newest,
        outside,
    )
    if frames is not None and release is not None:
        worded = [w for m in matches if (w := _worded(m, index)) is not None]
        release = date_by_wording(frames, release, worded)
    found = tuple(_found(record, paste) for record in records)
    matched = {c.error for c in candidates}
    unmatched = tuple(f for n, f in enumerate(found) if ("exception", n) not in matched)
    unexplained = [point for error, at in points.items() if error not in matched for point in at]
    # Then the sites a traceback cut before its message ends at, and those the paste quotes,
    # where nothing before names them.
    cut: list[RaisePoint] = []
    if frames is not None:
        possible = release.releases if release is not None else ()
        for end in reading.unfinished:
            cut += cut_points(frames, paste.lines, reading.structure, end, possible)
    if cut or shown:
        named = {p.record_id for p in unexplained}
        named.update(r for m in matches for r in (m.record_id, *m.alternatives))
        for point in (*cut, *shown):
            if point.record_id not in named:
                unexplained.append(point)
                named.add(point.record_id)
    located = tuple(
        replace(point, paste_line=paste.original_line_number(point.paste_line))
        for point in unexplained
    )
    skipped = len(reading.exceptions) - len(records)
    return MatchReport(matches, found, unmatched, release, located, skipped)


def _at_their_callers(
    candidates: Sequence[_Candidate],
    index: AnyIndex,
    frames: FrameIndex | None,
    lines: Sequence[str],
    structure: frozenset[int],
    records: Sequence[ExceptionRecord],
) -> list[_Candidate]:
    """The candidates, less those of records of Python's own error at JAX's call of user
    code (``PatternEntry.called_by``) where that call did not raise it: ``f() takes 2
    positional arguments but 3 were given`` is a kernel's only where the innermost of JAX's
    frames after the user's last, past the wrappers the record names, is a function that
    calls the kernel. So the same words raised in the user's own code (its frame is last), in
    another of JAX's calls (``run_scoped`` calls its body through the same wrapper), or
    in no traceback at all are not the record's. Those kept carry the frame of the call.

    The other way round, a record of Python's own error at the user's call of one of JAX's
    functions (``PatternEntry.call_of``) is read only where Python names the function as
    JAX's is named (``kernel()``, not a method's ``Model.kernel()``), no frame of JAX's
    follows the user's last, and that frame's line, if shown, calls the function: ``kernel()
    takes 2 positional arguments but 3 were given`` is ``plgpu.kernel``'s at
    ``plgpu.kernel(body, a, b)``, not at JAX's call of a kernel the user named ``kernel``,
    nor at a bare ``kernel(a, b, c)`` of a paste that defines ``kernel`` or never shows JAX."""
    kept = []
    calling: dict[int, Calling] = {}
    for candidate in candidates:
        entry = index.entries[candidate.hit.entry]
        called_by = entry.called_by
        if called_by is None and not entry.call_of:
            kept.append(candidate)
            continue
        if entry.call_of and _named_otherwise(candidate):
            continue
        kind, number = candidate.error
        if frames is None or kind != "exception":
            if entry.call_of:  # no frames to tell who called
                kept.append(candidate)
            continue
        if number not in calling:
            record = records[number]
            calling[number] = calling_frames(
                frames, lines, structure, record.first_line, record.raised_at
            )
        shown = calling[number]
        if called_by is None:
            if not shown.frames and _calls_one_of(entry.call_of, shown.user_source, lines):
                kept.append(candidate)
            continue
        caller = next(
            (f for f in shown.frames if (f.file, f.function) not in called_by.through), None
        )
        if caller is not None and (caller.file, caller.function) in called_by.callers:
            kept.append(replace(candidate, caller=caller))
        elif not shown.frames and _called_under(called_by.under, shown.user_source, candidate):
            kept.append(candidate)
    return _named_keyword_first(kept, index)


def _called_from_the_raising_frame(
    candidates: list[_Candidate],
    index: AnyIndex,
    frames: FrameIndex,
    lines: Sequence[str],
    structure: frozenset[int],
    records: Sequence[ExceptionRecord],
) -> list[_Candidate]:
    """The candidates, those of a record with no mined site (an error of a helper outside
    the mined files: jaxlib's C++ ``safe_zip`` or ``safe_map``) given the frame of JAX's that
    raised it, where the paste shows one whose line raises nothing: the function that called
    the helper (``lower_jaxpr_to_triton_ir``, a GPU pipeline's ``loop_body``), which tells
    what was zipped or mapped and is linked in place of the record's pinned line."""
    raising: dict[int, Frame | None] = {}
    kept = []
    for candidate in candidates:
        kind, number = candidate.error
        record_id = index.entries[candidate.hit.entry].record_id
        if candidate.caller is not None or kind != "exception" or frames.site_of(record_id):
            kept.append(candidate)
            continue
        if number not in raising:
            record = records[number]
            found = None
            if not _staged(record, lines):
                found = raising_frame(frames, lines, structure, record.first_line, record.raised_at)
            caller = found[0] if found is not None else None
            raising[number] = caller if caller and not frames.sites_at(caller) else None
        frame = raising[number]
        kept.append(candidate if frame is None else replace(candidate, caller=frame))
    return kept


def _staged(record: ExceptionRecord, lines: Sequence[str]) -> bool:
    """Whether JAX printed the exception after its staging wrapper: the frames above it
    staged the operation; none of them raised it."""
    return STAGING_WRAPPER in lines[record.first_line]


def _named_keyword_first(candidates: list[_Candidate], index: AnyIndex) -> list[_Candidate]:
    """The candidates, less a call's record of any keyword (its pattern reads the keyword,
    ``(?P<keyword>…)``) where a record of that very keyword fits the same error: the one
    says in which releases that keyword is refused, the other only that some keyword is."""
    named = {
        c.error
        for c in candidates
        if index.entries[c.hit.entry].call_of and "keyword" not in c.hit.captures
    }
    return [
        c
        for c in candidates
        if not (
            c.error in named and index.entries[c.hit.entry].call_of and "keyword" in c.hit.captures
        )
    ]


def _named_otherwise(candidate: _Candidate) -> bool:
    """Whether Python's message qualifies the function it names further than the record
    does: ``Model.kernel()`` or ``main.<locals>.kernel()`` for the record's ``kernel()``."""
    before = candidate.text[: candidate.hit.start]
    return before[-1:] == "." or before[-1:].isidentifier()


def _calls_one_of(names: frozenset[str], source: str | None, lines: Sequence[str]) -> bool:
    """Whether the user's own line, where the error was raised, calls a function of one of
    ``names`` (``plgpu.copy_gmem_to_smem(x, smem)``), or is not shown. A call of the bare
    name (``kernel(a, b, c)``) is JAX's function only in a paste that shows JAX somewhere
    and does not define a function of that name itself."""
    if source is None:
        return True
    for name in names:
        for call in re.finditer(rf"(\.\s*)?\b{re.escape(name)}\s*\(", source):
            if call[1] or _bare_call_may_be_jaxs(name, lines):
                return True
    return False


def _bare_call_may_be_jaxs(name: str, lines: Sequence[str]) -> bool:
    """Whether the paste shows JAX somewhere and defines no function ``name`` of its own."""
    text = "\n".join(lines)
    defined = re.search(rf"^\s*(?:async\s+)?def\s+{re.escape(name)}\s*\(", text, re.M)
    return defined is None and "jax" in text.lower()


def _called_under(under: frozenset[str], source: str | None, candidate: _Candidate) -> bool:
    """Whether the user's own line, the last frame where JAX hid all of its own, calls one of
    JAX's functions ``under`` and passes it the function Python's message names:
    ``lax.fori_loop(0, 4, body, x)`` for ``body() takes 1 positional argument…``, a
    ``lambda`` written there for ``<lambda>()``. A message naming a function that line does
    not pass, or calls itself (``fori_loop(0, 4, make_body(a, b), x)``), is the user's own
    call's."""
    if not under or source is None:
        return False
    opening = candidate.text[candidate.hit.start :]
    called = opening[: opening.find("()")].rsplit(".", 1)[-1].strip("<>")
    names = "|".join(re.escape(name) for name in sorted(under))
    call = re.search(rf"\b(?:{names})\s*\(", source)
    if call is None or called not in re.findall(r"\w+", source[call.end() :]):
        return False
    return called == "lambda" or not re.search(rf"\b{re.escape(called)}\s*\(", source)


def _message_texts(
    records: Sequence[ExceptionRecord], joined: Sequence[str], lines: Sequence[str]
) -> tuple[list[str], list[tuple[int, int | None]]]:
    """Each message line, and each multi-line message joined (a wrapped long line), with
    the record and line each came from (``None``: the joined message)."""
    texts: list[str] = []
    owners: list[tuple[int, int | None]] = []
    for number, record in enumerate(records):
        for text, line in zip(record.message_lines, record.message_line_numbers, strict=True):
            if text.strip():
                texts.append(text)
                owners.append((number, line))
        if len(record.message_lines) > 1:
            texts.append(joined[number])
            owners.append((number, None))
            printed = _as_printed(record, lines)
            if printed is not None:
                texts.append(printed)
                owners.append((number, None))
    return texts, owners


def _as_printed(record: ExceptionRecord, lines: Sequence[str]) -> str | None:
    """A message that a terminal cut at its width (``...along the last dimens`` then
    ``ion to be divisible...``) joined as it was printed, with no space where it was cut;
    ``None`` when none of its lines is as wide as a terminal. Searched besides the message
    joined with spaces, since a line can be that wide by chance."""
    numbers = record.message_line_numbers
    if not any(len(lines[line]) in TERMINAL_WIDTHS for line in numbers[:-1]):
        return None
    parts = [record.message_lines[0].strip()]
    for previous, text in zip(numbers[:-1], record.message_lines[1:], strict=True):
        parts.append(text if len(lines[previous]) in TERMINAL_WIDTHS else f" {text.strip()}")
    return "".join(parts).rstrip()


def _in_messages(
    records: Sequence[ExceptionRecord],
    texts: Sequence[str],
    owners: Sequence[tuple[int, int | None]],
    hits: Sequence[Hit],
) -> list[_Candidate]:
    """The hits in the message texts of ``_message_texts``."""
    candidates = []
    for hit in hits:
        number, found_on = owners[hit.text]
        record = records[number]
        text = texts[hit.text]
        wrapped, inner = _lead_in(text, hit.start)
        # A wrapper's own words before the message are not part of what is left unexplained.
        share = min(
            1.0, (hit.end - hit.start) / len((text[hit.start :] if wrapped else text).strip())
        )
        score = _location(record) * share**2
        found_in = "exception message"
        if found_on is None:
            score -= WRAPPED_PENALTY
            found_in = "wrapped message"
        line = record.line if found_on is None else found_on
        error = ("exception", number)
        raised_as = _raised_as(record, inner)
        candidates.append(
            _Candidate(error, hit, line, record, text, score, share == 1, raised_as, found_in)
        )
    return candidates


def _lead_in(text: str, start: int) -> tuple[bool, str | None]:
    """Whether a wrapper's lead-in (classes, status codes, a runtime's words) stands right
    before ``start``, and the last exception class it names."""
    classes = _lead_in_classes(text, start)
    if classes is None:
        return False, None
    inner = classes[-1].rsplit(".", 1)[-1] if classes else None
    return True, None if inner in WRAPPER_CLASSES else inner


def _lead_in_classes(text: str, start: int) -> list[str] | None:
    """The exception classes of the lead-in right before ``start``, as printed (qualified
    or not); ``None`` where no lead-in stands there."""
    if start == 0:
        return None
    found = _LEAD_IN.search(text, max(0, start - LEAD_IN_REACH), start)
    return None if found is None else _CLASS_BEFORE.findall(found[0])


def _raised_as(record: ExceptionRecord | None, inner: str | None) -> str | None:
    """The class the message was raised with: the one named right before it, else the
    exception's own unless that only wraps another's message."""
    if inner is not None or record is None:
        return inner
    return None if record.short_class in WRAPPER_CLASSES else record.short_class


def _in_cut_messages(
    records: Sequence[ExceptionRecord],
    joined: Sequence[str],
    index: AnyIndex,
    explained: set[tuple[str, int]],
) -> list[_Candidate]:
    """Exceptions that no pattern explains in full, tried as messages cut off part-way
    (one search over them all). A message that ends without a truncation marker must show
    ``UNMARKED_CUT_MIN_LITERAL`` characters of the pattern's literal text, as a loose line
    must: a whole message of other words can begin as a pattern does ("Unsupported input
    data type in matrix multiplication." as ``Unsupported {what} layout: {layout}.``)."""
    tried = [n for n in range(len(records)) if ("exception", n) not in explained]
    candidates = []
    for hit in index.search_truncated_in([joined[n] for n in tried]):
        number = tried[hit.text]
        record, message = records[number], joined[number]
        if not record.truncated and _literal_seen(index, hit) < UNMARKED_CUT_MIN_LITERAL:
            continue
        score = _location(record) * (TRUNCATED_BASE + TRUNCATED_SPAN * hit.coverage)
        raised_as = _raised_as(record, _lead_in(message, hit.start)[1])
        error = ("exception", number)
        candidates.append(
            _Candidate(
                error, hit, record.line, record, message, score, False, raised_as, "cut message"
            )
        )
    return candidates


def _literal_seen(index: AnyIndex, hit: Hit) -> float:
    """How many characters of the pattern's literal text a cut-off match shows."""
    return hit.coverage * sum(map(len, index.literals(hit.entry)))


def _location(record: ExceptionRecord | None) -> float:
    """How sure a match can be from where its message was found."""
    if record is None:
        return LOOSE_LINE
    return IN_TRACEBACK if record.in_traceback else LONE_EXCEPTION


def _in_loose_lines(
    paste: NormalizedPaste,
    loose: Sequence[int],
    loose_text: str,
    hits: Sequence[Hit],
    first: int,
    index: AnyIndex,
    messages: Sequence[str],
) -> list[_Candidate]:
    """The hits in the loose lines (text ``first`` is ``loose[0]``; ``loose_text``, all of
    them joined), then messages broken over two of them, then those lines cut off part-way.
    A cut that shows part of one of the paste's exception ``messages`` (pytest's summary
    line, a chat line quoting it) is that exception again, which the message itself answers.

    A message inside a line counts when an exception class stands right before it or it
    shows ``LOOSE_MIN_LITERAL`` characters of literal text. A span in backticks, or a line
    ending a paragraph or as wide as a terminal, that ends part-way through a message
    without a truncation marker counts when ``UNMARKED_CUT_MIN_LITERAL`` characters of its
    literal text show.
    """
    lines = paste.lines
    candidates = []
    for hit in hits:
        line = loose[hit.text - first]
        text = lines[line]
        inner = _lead_in(text, hit.start)[1]
        if inner is None and _reads_like_prose(index, hit.entry):
            continue
        error = ("line", line)
        hit = _closed(hit, text)
        candidates.append(
            _Candidate(error, hit, line, None, text, LOOSE_LINE, False, inner, "line")
        )
    found = {c.line for c in candidates}
    wrapped = _in_wrapped_lines(paste, loose, found, index)
    candidates += wrapped
    found.update(n for c in wrapped for n in (c.line, c.line + 1))
    cuts: list[tuple[int, str, bool]] = []  # line, text up to the cut, whether marked
    markers = may_be_truncated(loose_text)
    last = len(lines) - 1
    for line in loose:
        if line in found:
            continue
        text = lines[line]
        cut = find_truncation(text) if markers else None
        if cut is not None:
            cuts.append((line, text[: cut.start()].strip(), True))
            continue
        # A line ending a paragraph (nothing follows it before a blank line) is where a
        # message copied in part ends; a line inside a run of log lines is whole unless it
        # says it was cut.
        if line == last or not lines[line + 1].strip() or len(text) in TERMINAL_WIDTHS:
            cuts.append((line, text.strip(), False))
        if "`" in text:
            cuts.extend((line, span, marked) for span, marked in _cut_spans(text, markers))
    for hit in index.search_truncated_in([text for _, text, _ in cuts]):
        line, text, marked = cuts[hit.text]
        if not marked and _literal_seen(index, hit) < UNMARKED_CUT_MIN_LITERAL:
            continue
        if any(text[hit.start :] in message for message in messages):
            continue
        score = (TRUNCATED_BASE + TRUNCATED_SPAN * hit.coverage) * LOOSE_LINE
        inner = _lead_in(text, hit.start)[1]
        error = ("line", line)
        candidates.append(_Candidate(error, hit, line, None, text, score, False, inner, "cut line"))
    return candidates


def _quotes_known_source(
    lines: Sequence[str], candidate: _Candidate, starts: Collection[int] | None
) -> bool:
    """Whether a loose line's match is in a ``raise`` shown as source (a code block, a diff)
    that names its sites itself: one starting on a line of ``starts``, those of the
    statements ``FrameIndex.quoted_points`` placed (``None``, without a frame index: any
    statement). It quotes its message's template then, and is no error of its own. A
    statement no mined release has (a newer JAX's, reworded) still names its record by the
    words the match found. Asked of the few lines that matched, not of every line."""
    start = _statement_start(lines, candidate)
    return start is not None and (starts is None or start in starts)


def _statement_start(lines: Sequence[str], candidate: _Candidate) -> int | None:
    """The line of the ``raise`` or ``assert`` the candidate's line is part of: the line
    itself, or one above with its parenthesis still open (``raise ValueError(`` then the
    message)."""
    last = candidate.line + (candidate.found_in == "wrapped line")
    for number in range(candidate.line, last + 1):
        if STATEMENT.match(lines[number]):
            return number
    for start in range(candidate.line - 1, max(-1, candidate.line - MAX_STATEMENT_LINES), -1):
        if STATEMENT.match(lines[start]):
            above = "".join(lines[start : candidate.line])
            return start if above.count("(") > above.count(")") else None
    return None


def _cut_spans(text: str, markers: bool) -> Iterator[tuple[str, bool]]:
    """The spans in backticks of a line, each as ``_in_loose_lines`` tries a cut, with
    whether a marker cut it: the text up to a truncation marker inside it (a span
    ``ValueError: Async copies req…``), else the whole span, which may end part-way through
    a message without a marker."""
    for span in _CODE_SPAN.findall(text):
        cut = find_truncation(span) if markers else None
        if cut is None:
            yield span, False
        else:
            yield span[: cut.start()].strip(), True


def _in_wrapped_lines(
    paste: NormalizedPaste, loose: Sequence[int], found: set[int], index: AnyIndex
) -> list[_Candidate]:
    """Messages broken over two loose lines, read as one: a continuation indented (a
    Markdown list item, a log formatter) or going on with the sentence as pasted (a
    Markdown paragraph's next line, but not a log record whose prefix was cleaned off), or
    a line a terminal cut at its width."""
    lines, original, origins = paste.lines, paste.original, paste.origins
    joinable: list[tuple[int, str, int]] = []  # first line, the two joined, where the join is
    following = set(loose).difference(found)
    for line in loose:
        if line in found or line + 1 not in following:
            continue
        first, second = lines[line].rstrip(), lines[line + 1]  # both hold some text
        if second[:1].isspace() or (
            # going on with the sentence as pasted, not a logger's record cleaned of its prefix
            second[:1] in _CONTINUING and original[origins[line + 1] - 1].startswith(second)
        ):
            joinable.append((line, f"{first} {second.strip()}", len(first)))
        elif len(first) in TERMINAL_WIDTHS:  # cut mid-word at the terminal's last column
            joinable.append((line, first + second, len(first)))
    # A message broken after its start still shows its first long literal on the first line.
    starts = index.holding_a_head([lines[line] for line, _, _ in joinable])
    pairs = [pair for number, pair in enumerate(joinable) if number in starts]
    candidates = []
    for hit in index.search([text for _, text, _ in pairs]) if pairs else ():
        line, text, join = pairs[hit.text]
        if not hit.start < join < hit.end:
            continue  # within one of the lines: each was searched alone already
        hit = _closed(hit, text)
        inner = _lead_in(text, hit.start)[1]
        if inner is None and _reads_like_prose(index, hit.entry):
            continue
        score = LOOSE_LINE - WRAPPED_PENALTY
        error = ("line", line)
        candidates.append(
            _Candidate(error, hit, line, None, text, score, False, inner, "wrapped line")
        )
    return candidates


def _reads_like_prose(index: AnyIndex, entry: int) -> bool:
    """Whether the entry's literal text is too short to tell its message from a sentence.
    A pattern with no literal text at all is a curator's regular expression, taken as
    written."""
    literal = sum(map(len, index.literals(entry)))
    return 0 < literal < LOOSE_MIN_LITERAL


_CODE_SPAN = re.compile(r"`([^`]+)`")
# How a line that goes on with the one before starts (a word in lower case, a value),
# where a new sentence, exception or log line would start with a capital or a prefix.
_CONTINUING = frozenset(string.ascii_lowercase + string.digits + "([{<'\"")
# Where a message inside a line ends: a closing backtick or a table cell's pipe.
_CLOSING = re.compile(r"`|\s+\|")


def _closed(hit: Hit, text: str) -> Hit:
    """A hit whose last value runs to the end of the line, ended where its message is
    closed instead: a pattern's trailing ``(.+)`` would take ``6 | open |``, or the
    ``" on H100.`` after a message quoted in a sentence."""
    if hit.end != len(text) or not hit.captures:
        return hit
    name, value = list(hit.captures.items())[-1]
    if not text.endswith(value):
        return hit
    closing = _CLOSING.search(value)
    ends = [closing.start()] if closing else []
    if '"' in value and text.count('"', 0, hit.start) % 2:  # quoted: its quote closes it
        ends.append(value.index('"'))
    kept = value[: min(ends)].rstrip() if ends else ""
    if not kept:
        return hit
    return replace(hit, captures={**hit.captures, name: kept}, end=hit.end - len(value) + len(kept))


def _best_per_error(
    candidates: Sequence[_Candidate],
    index: AnyIndex,
    paste: NormalizedPaste,
    versions: tuple[tuple[int, ...] | None, tuple[int, ...] | None],
    raised: Mapping[tuple[str, int], set[str]],
    quoted: Callable[[], frozenset[str]],
    backends: Callable[[], frozenset[str]],
    wrapping: Callable[[], frozenset[str]],
    newest: Callable[[str], int],
    outside: Callable[[str], bool],
) -> tuple[Match, ...]:
    """One match per error, in ``_rank``'s order, each error reported once. Of the records a
    message fits, the one whose site the exception's last frame is on comes first, then one
    whose ``raise`` the paste shows as source, then one raised in the module whose exception
    class the paste names, then the surest, then the one whose pattern holds the most
    literal text, then one whose site a release the paste can come from has (``outside``:
    the user's 0.4.34 raised the C++ pass's ``Can't change bitwidth during a relayout`` of
    0.4.16-0.7.1, not that of 0.7.2-0.8.1). Of records alike in all that (one message raised
    at several sites), one with curated advice comes before those known only from JAX's
    source, whose patterns, derived from the message's template, differ from a curated one
    only in how they capture its values; then one of Pallas's core, or of a backend the
    paste's frames show, before a backend's own site the paste gives no sign of (Mosaic
    GPU's ``atomic_store`` words its dtype check as the ``x_ref[...] = y`` of every backend
    does); then, of Python's errors at JAX's calls of user code, the call made furthest out,
    whose record names the calls within as its wrappers (``plgpu.kernel`` calls its body
    through ``pl.run_scoped``); then today's wording before an older one that prints the
    same text (``{np.shape(a)}`` until 0.4.31, ``{arr.shape}`` since); then the fewest
    wildcards; then the site of the newest release (``newest``: a site JAX renamed the class
    of is two records, and a paste without frames is dated by the newer).

    ``versions`` are the release the answer follows and the earliest the paste can come
    from: a record's wording last printed before that one is less sure. A record of another
    backend than the one whose compiler's wrapper the paste shows (``wrapping``) is no
    alternative: the message is that compiler's."""
    version, earliest = versions
    by_error: dict[tuple[str, int], list[tuple[float, _Candidate]]] = {}
    for candidate in candidates:
        entry = index.entries[candidate.hit.entry]
        score = candidate.score * _agreement(entry.metadata, candidate.exception_class, version)
        if (
            earliest is not None
            and entry.variant != "current"
            and _worded_before(entry.variant, earliest)
        ):
            score *= VERSION_MISMATCH
        by_error.setdefault(candidate.error, []).append((round(score, 3), candidate))
    best = []
    for error, group in by_error.items():
        here = raised.get(error, set())
        several = len({index.entries[c.hit.entry].record_id for _, c in group}) > 1
        if several:
            shown, defined = quoted(), _modules_named([c for _, c in group])
            backends_shown = backends()
        else:
            shown, defined, backends_shown = frozenset(), frozenset(), frozenset()
        group.sort(
            key=lambda pair: _preference(
                index,
                pair[1],
                pair[0],
                here,
                shown,
                defined,
                _printed_class(pair[1]) if several else None,
                backends_shown,
                newest if several else _unknown_rank,
                outside if several else _nowhere_told,
            )
        )
        score, chosen = group[0]
        record_id = index.entries[chosen.hit.entry].record_id
        others: dict[str, None] = {}
        alike: dict[str, None] = {}
        if several:
            wrapped = wrapping()
            kept = [
                c.hit.entry
                for _, c in group[1:]
                if not wrapped or _backend(index.entries[c.hit.entry]) in wrapped | {"core"}
            ]
            others = dict.fromkeys(index.entries[entry].record_id for entry in kept)
            others.pop(record_id, None)
            # Those that read as much of the message as the chosen one, and raise the class
            # it is printed with if it raises that: as likely its source.
            literal = index.specificity(chosen.hit.entry)[0]
            printed = _printed_class(chosen)
            if index.entries[chosen.hit.entry].metadata.get("exception_class") != printed:
                printed = None
            alike = dict.fromkeys(
                index.entries[entry].record_id
                for entry in kept
                if index.specificity(entry)[0] >= literal
                and printed in (None, index.entries[entry].metadata.get("exception_class"))
            )
            alike.pop(record_id, None)
        variants = tuple(
            dict.fromkeys(
                entry.variant
                for _, c in group
                if (entry := index.entries[c.hit.entry]).record_id == record_id
            )
        )
        best.append((score, chosen, tuple(others), tuple(alike), variants))
    best.sort(key=lambda item: _rank(item[1], item[0]))

    sources = cache(lambda: find_value_sources(paste.lines))
    frame = user_frame(paste.lines) if best else None
    reported: set[tuple[str, tuple[tuple[str, str], ...]]] = set()
    matches = []
    for score, chosen, alternatives, alike_records, variants in best:
        key = (
            index.entries[chosen.hit.entry].record_id,
            tuple(sorted(chosen.hit.captures.items())),
        )
        if key not in reported:
            reported.add(key)
            matches.append(
                _match(
                    chosen,
                    score,
                    alternatives,
                    alike_records,
                    variants,
                    index,
                    paste,
                    sources,
                    frame,
                )
            )
    return tuple(matches)


def _preference(
    index: AnyIndex,
    candidate: _Candidate,
    score: float,
    raised_here: set[str],
    quoted: frozenset[str],
    defined: frozenset[str],
    printed: str | None,
    backends_shown: frozenset[str],
    newest: Callable[[str], int],
    outside: Callable[[str], bool],
) -> tuple[bool, bool, bool, bool, float, int, bool, bool, bool, int, bool, int, int]:
    """How ``_best_per_error`` orders the records one message fits, best first:
    ``raised_here`` holds those whose site the paste's raising frame is on, ``quoted``
    those whose statement it shows (a frame's source line shows the same ``raise`` of two
    sites alike, ``Barrier`` and ``ClusterBarrier``: the frame's line tells them apart),
    ``defined`` the files of the modules its exception classes name,
    ``printed`` the class the message is printed with, ``backends_shown`` the backends of
    the paste's JAX frames and ``core`` (empty: no record is told apart by its backend)."""
    entry = candidate.hit.entry
    literal, shorter = index.specificity(entry)  # more literal text, then a shorter pattern
    record = index.entries[entry]
    known_only_from_source = record.metadata.get("curated") == "false"
    file = record.metadata.get("file")
    elsewhere = file not in defined
    unshown_backend = bool(backends_shown) and _backend(record) not in backends_shown
    return (
        record.record_id not in raised_here,
        record.record_id not in quoted,
        elsewhere,
        printed is not None and record.metadata.get("exception_class") != printed,
        -score,
        -literal,
        outside(record.record_id),
        known_only_from_source,
        unshown_backend,
        -1 if candidate.caller is None else candidate.caller.paste_line,
        record.variant != "current",
        -shorter,
        -newest(record.record_id),
    )


def _unknown_rank(record_id: str) -> int:
    """Every record's newest release alike: no frame index to tell, or one record only."""
    return 0


def _nowhere_told(record_id: str) -> bool:
    """No release to hold a record's site against: none known, or one record only."""
    return False


def _backend(entry: PatternEntry) -> str:
    """The backend of the record's file; a record without one is Pallas's core's."""
    file = entry.metadata.get("file")
    return backend_of(file) if file else "core"


def _printed_class(candidate: _Candidate) -> str | None:
    """The class the message is printed with, by its own name: the last one standing right
    before it, else its exception's. A wrapper's class counts here, unlike in ``_agreement``:
    Pallas's lowerings each raise "Exception while lowering eqn:" with a class of their own
    (``TritonLoweringException``, Mosaic's ``LoweringException``), which tells them apart
    where the module printed is no longer JAX's (``jax_triton.pallas.triton_lowering``)."""
    inner = _lead_in_classes(candidate.text, candidate.hit.start)
    if inner:
        return inner[-1].rsplit(".", 1)[-1]
    return candidate.record.short_class if candidate.record is not None else None


def _modules_named(candidates: Sequence[_Candidate]) -> frozenset[str]:
    """The files of the JAX modules whose exception classes stand right before an error's
    message (``jax._src.pallas.triton.lowering.TritonLoweringException: Exception while
    lowering eqn:`` → ``jax/_src/pallas/triton/lowering.py``): one message raised in
    several lowerings is told apart by the module its class is defined in, the one raising
    it. A wrapper's class further before (``LoweringException: ValueError: …``) names the
    module that caught the error, not the one that raised it, and is not counted."""
    files: set[str] = set()
    for candidate in candidates:
        inner = _lead_in_classes(candidate.text, candidate.hit.start)
        if inner:
            named = inner[-1]
        elif candidate.record is not None:
            named = candidate.record.qualified_class
        else:
            continue
        module, _, _ = named.rpartition(".")
        if module.startswith(("jax.", "jaxlib.")):
            path = module.replace(".", "/")
            files.update((f"{path}.py", f"{path}/__init__.py"))
    return frozenset(files)


def _match(
    candidate: _Candidate,
    score: float,
    alternatives: tuple[str, ...],
    alike: tuple[str, ...],
    variants: tuple[str, ...],
    index: AnyIndex,
    paste: NormalizedPaste,
    sources: Callable[[], Sequence[ValueSource]],
    frame: UserFrame | None,
) -> Match:
    entry = index.entries[candidate.hit.entry]
    record = candidate.record
    hit = candidate.hit
    values = type_values(hit.captures)
    if needs_context(values):
        infer_missing(values, sources(), candidate.line)
        adopt_written_dtype(values, frame)
    unread = tuple(name for name in index.group_names(hit.entry) if name not in hit.captures)
    return Match(
        record_id=entry.record_id,
        variant=entry.variant,
        score=score,
        matched_line=paste.original_line(candidate.line),
        line_number=paste.original_line_number(candidate.line),
        chain_position=record.chain_position if record else None,
        exception_class=record.qualified_class if record else candidate.exception_class,
        captures=candidate.hit.captures,
        values=values,
        pattern_id=candidate.hit.entry,
        pattern=index.pattern(candidate.hit.entry),
        normalized_line=candidate.text,
        truncated=hit.truncated,
        metadata=entry.metadata,
        alternatives=alternatives,
        alike=alike,
        variants=variants,
        user_frame=frame,
        found_in=candidate.found_in,
        literal=max(index.literals(hit.entry), key=len, default=""),
        stripped=candidate.text[: hit.start].strip(),
        unread=unread if hit.truncated else (),
        called_from=candidate.caller,
    )


def _worded(match: Match, index: AnyIndex) -> Worded | None:
    """What the match tells of the paste's release; ``None`` where a wording that reads it
    is not dated, where the message is cut short and today's wording may open so (its
    opening, all it shows, is often every wording's, and a wording whose pattern takes any
    text for a value reads the cut and its marker where today's, which types its values,
    does not), or where libtpu's error code stands before it: libtpu prints Mosaic's words
    that JAX's source held until its passes left it, under a code (``E2003:
    CompileTimeMosaic…:``) no release of JAX's printed."""
    if _LIBTPU_ERROR_CODE.search(match.stripped):
        return None
    shown = match.literal
    if match.truncated:
        opening = _opening_of_older_wordings_only(match, index)
        if opening is None:
            return None
        shown = opening
    untils = []
    for variant in match.variants:
        until = None if variant == "current" else wording_until(variant)
        if until is None and variant != "current":
            return None
        untils.append(until)
    records = (match.record_id, *match.alike)
    return Worded(match.line_number, shown, records, tuple(untils))


def _opening_of_older_wordings_only(match: Match, index: AnyIndex) -> str | None:
    """The opening a message cut short shows whole, where it is that of each older wording
    of the record that reads it and not today's: ``Unimplemented primitive in Pallas GPU
    lowering:`` cut before its "Please file an issue", where today's says ``Pallas Triton
    lowering``. None for a cut that today's wording may continue: it dates nothing."""
    if "current" in match.variants:
        return None
    openings = {
        index.entries[entry].variant: index.opening(entry)
        for entry in index.entries_of(match.record_id)
    }
    today = openings.get("current")
    if not today:
        return None
    shown = None
    for variant in match.variants:
        opening = openings.get(variant, "")
        start = match.normalized_line.find(opening) if opening else -1
        cut = match.normalized_line[start:]
        if start < 0 or cut.startswith(today) or today.startswith(cut):
            return None
        shown = opening
    return shown


def _rank(candidate: _Candidate, score: float) -> tuple[bool, bool, float, int]:
    """What failed before what was caught on the way ("During handling of the above
    exception…": JAX tried one thing, caught its error and raised its own), then root
    causes first ("The above exception was the direct cause…"), then the surest, then in
    paste order."""
    record = candidate.record
    if record is None:
        return False, False, -score, candidate.line
    # Raised from another of its chain, as its direct cause (``raise … from …``).
    caused = record.chain_position != 0 and record.link != "context"
    return record.handled, caused, -score, candidate.line


def _agreement(
    metadata: Mapping[str, str], raised_as: str | None, version: tuple[int, ...] | None
) -> float:
    """Lower the score where the record disagrees with the paste or with the user."""
    factor = 1.0
    expected = metadata.get("exception_class")
    if expected and raised_as is not None and raised_as != expected:
        factor *= CLASS_MISMATCH
    versions = metadata.get("jax_versions")
    if versions and version is not None and not _version_in(version, versions):
        factor *= VERSION_MISMATCH
    return factor


def _worded_before(variant: str, release: tuple[int, ...]) -> bool:
    """Whether a record's wording was last printed before ``release``."""
    until = _version(wording_until(variant))
    return until is not None and until < release


def _version(text: str | None) -> tuple[int, ...] | None:
    if text is None:
        return None
    if text.strip().lower() in ("main", "head"):
        return (1_000_000,)
    parts = re.findall(r"\d+", text)
    return tuple(int(part) for part in parts[:4]) or None


_SPECIFIER = re.compile(r"\s*(<=|>=|==|!=|<|>)\s*([\w.]+)\s*")


def _version_in(version: tuple[int, ...], specifiers: str) -> bool:
    """``(0, 7, 1)`` against ``">=0.4.36,<0.8"``; parts it cannot read accept everything."""
    for part in specifiers.split(","):
        found = _SPECIFIER.fullmatch(part)
        bound = _version(found[2]) if found else None
        if found is None or bound is None:
            continue
        head = version[: len(bound)]
        holds = {
            "<": version < bound,
            "<=": version <= bound,
            ">": version > bound,
            ">=": version >= bound,
            "==": head == bound,
            "!=": head != bound,
        }[found[1]]
        if not holds:
            return False
    return True


def _found(record: ExceptionRecord, paste: NormalizedPaste) -> FoundException:
    return FoundException(
        qualified_class=record.qualified_class,
        short_class=record.short_class,
        message=record.message,
        line_number=paste.original_line_number(record.line),
        chain=record.chain,
        chain_position=record.chain_position,
        wrapped_by=record.wrapped_by,
        repeated_at=tuple(paste.original_line_number(n) for n in record.repeats),
        in_traceback=record.in_traceback,
        truncated=record.truncated,
        is_wrapper=record.is_wrapper,
    )
