"""Where records' patterns fit a paste: every fit, as a ``Candidate`` scored by where it is.

The first stage of ``matcher.match_paste`` after the paste is read: the exceptions'
messages (each line, joined, or cut off part-way), then the lines outside any exception (a
chat line, a log line, a table cell, inline code, a message broken over two lines), then
the checks of records of Python's own errors at calls between JAX and user code against the
frames that made the call. Finding is kept apart from choosing (``ranking``) so that what is
read of a paste can be followed without what is preferred.
"""

from __future__ import annotations

import re
import string
from collections.abc import Collection, Iterator, Sequence
from dataclasses import replace

from app.matching.frames import Frame, FrameIndex
from app.matching.index import AnyIndex, Hit
from app.matching.normalize import NormalizedPaste
from app.matching.raise_points import (
    MAX_STATEMENT_LINES,
    STATEMENT,
    Calling,
    calling_frames,
    raising_frame,
)
from app.matching.report import (
    IN_TRACEBACK,
    LONE_EXCEPTION,
    LOOSE_LINE,
    TRUNCATED_BASE,
    TRUNCATED_SPAN,
    WRAPPED_PENALTY,
    Candidate,
)
from app.matching.tracebacks import (
    STAGING_WRAPPER,
    ExceptionRecord,
    find_truncation,
    may_be_truncated,
)

# A message found inside some other line with no exception class right before it must show
# this much of its literal text: prose reads like a short message too easily ("Unsupported
# layout: I'll try another").
LOOSE_MIN_LITERAL = 24
# Where a message ends without a truncation marker (the end of a line, a closing backtick),
# a cut is believed only when this much of the message's literal text shows.
UNMARKED_CUT_MIN_LITERAL = 24
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
_RUNTIME_WORDS = "|".join(
    (
        r"Mosaic failed to compile (?:TPU |GPU )?kernel",
        "Failed to compile a Mosaic module",
        "Exception while lowering eqn",
        "Error while lowering",
        "Failed to lower",
    )
)
_LEAD_IN = re.compile(
    rf"(?:(?:{_CLASS_NAME}|[A-Z][A-Z_]{{2,}}|{_RUNTIME_WORDS}|{_MLIR_DIAGNOSTIC})\s*:\s*)+\Z"
)
LEAD_IN_REACH = 240  # characters before a message looked at for its lead-in
_CLASS_BEFORE = re.compile(rf"({_CLASS_NAME})\s*:")  # each class a lead-in names
# Widths at which terminals and consoles commonly cut long lines.
TERMINAL_WIDTHS = frozenset({80, 100, 120, 132, 160, 200})
_CODE_SPAN = re.compile(r"`([^`]+)`")
# How a line that goes on with the one before starts (a word in lower case, a value),
# where a new sentence, exception or log line would start with a capital or a prefix.
_CONTINUING = frozenset(string.ascii_lowercase + string.digits + "([{<'\"")
# A code comment's leader: a message quoted in a comment goes on in the next line's comment.
_COMMENT_LEADER = re.compile(r"\s*(?:#|//)\s?")
# Where a message inside a line ends: a closing backtick or a table cell's pipe.
_CLOSING = re.compile(r"`|\s+\|")


def message_texts(
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


def in_messages(
    records: Sequence[ExceptionRecord],
    texts: Sequence[str],
    owners: Sequence[tuple[int, int | None]],
    hits: Sequence[Hit],
) -> list[Candidate]:
    """The hits in the message texts of ``message_texts``."""
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
            Candidate(error, hit, line, record, text, score, share == 1, raised_as, found_in)
        )
    return candidates


def _lead_in(text: str, start: int) -> tuple[bool, str | None]:
    """Whether a wrapper's lead-in (classes, status codes, a runtime's words) stands right
    before ``start``, and the last exception class it names."""
    classes = lead_in_classes(text, start)
    if classes is None:
        return False, None
    inner = classes[-1].rsplit(".", 1)[-1] if classes else None
    return True, None if inner in WRAPPER_CLASSES else inner


def lead_in_classes(text: str, start: int) -> list[str] | None:
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


def in_cut_messages(
    records: Sequence[ExceptionRecord],
    joined: Sequence[str],
    index: AnyIndex,
    explained: set[tuple[str, int]],
) -> list[Candidate]:
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
            Candidate(
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


def in_loose_lines(
    paste: NormalizedPaste,
    loose: Sequence[int],
    loose_text: str,
    hits: Sequence[Hit],
    first: int,
    index: AnyIndex,
    messages: Sequence[str],
) -> list[Candidate]:
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
        candidates.append(Candidate(error, hit, line, None, text, LOOSE_LINE, False, inner, "line"))
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
        candidates.append(Candidate(error, hit, line, None, text, score, False, inner, "cut line"))
    return candidates


def _in_wrapped_lines(
    paste: NormalizedPaste, loose: Sequence[int], found: set[int], index: AnyIndex
) -> list[Candidate]:
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
        first, second = lines[line].rstrip(), _uncommented(lines[line], lines[line + 1])
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
            Candidate(error, hit, line, None, text, score, False, inner, "wrapped line")
        )
    return candidates


def _uncommented(first: str, second: str) -> str:
    """``second`` without its comment leader where ``first`` is a comment too (``# Fails
    with: ValueError: …`` going on in the next ``# …`` line), so the two join as one message."""
    leader, led = _COMMENT_LEADER.match(first), _COMMENT_LEADER.match(second)
    if leader is None or led is None or leader.group().strip() != led.group().strip():
        return second
    return " " + second[led.end() :]


def _cut_spans(text: str, markers: bool) -> Iterator[tuple[str, bool]]:
    """The spans in backticks of a line, each as ``in_loose_lines`` tries a cut, with
    whether a marker cut it: the text up to a truncation marker inside it (a span
    ``ValueError: Async copies req…``), else the whole span, which may end part-way through
    a message without a marker."""
    for span in _CODE_SPAN.findall(text):
        cut = find_truncation(span) if markers else None
        if cut is None:
            yield span, False
        else:
            yield span[: cut.start()].strip(), True


def _reads_like_prose(index: AnyIndex, entry: int) -> bool:
    """Whether the entry's literal text is too short to tell its message from a sentence.
    A pattern with no literal text at all is a curator's regular expression, taken as
    written."""
    literal = sum(map(len, index.literals(entry)))
    return 0 < literal < LOOSE_MIN_LITERAL


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


def quotes_known_source(
    lines: Sequence[str], candidate: Candidate, starts: Collection[int] | None
) -> bool:
    """Whether a loose line's match is in a ``raise`` shown as source (a code block, a diff)
    that names its sites itself: one starting on a line of ``starts``, those of the
    statements ``FrameIndex.quoted_points`` placed (``None``, without a frame index: any
    statement). It quotes its message's template then, and is no error of its own. A
    statement no mined release has (a newer JAX's, reworded) still names its record by the
    words the match found. Asked of the few lines that matched, not of every line."""
    start = _statement_start(lines, candidate)
    return start is not None and (starts is None or start in starts)


def _statement_start(lines: Sequence[str], candidate: Candidate) -> int | None:
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


def at_their_callers(
    candidates: Sequence[Candidate],
    index: AnyIndex,
    frames: FrameIndex | None,
    lines: Sequence[str],
    structure: frozenset[int],
    records: Sequence[ExceptionRecord],
) -> list[Candidate]:
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


def _named_keyword_first(candidates: list[Candidate], index: AnyIndex) -> list[Candidate]:
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


def _named_otherwise(candidate: Candidate) -> bool:
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


def _called_under(under: frozenset[str], source: str | None, candidate: Candidate) -> bool:
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


def called_from_the_raising_frame(
    candidates: list[Candidate],
    index: AnyIndex,
    frames: FrameIndex,
    lines: Sequence[str],
    structure: frozenset[int],
    records: Sequence[ExceptionRecord],
) -> list[Candidate]:
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
            if not staged(record, lines):
                found = raising_frame(frames, lines, structure, record.first_line, record.raised_at)
            caller = found[0] if found is not None else None
            raising[number] = caller if caller and not frames.sites_at(caller) else None
        frame = raising[number]
        kept.append(candidate if frame is None else replace(candidate, caller=frame))
    return kept


def staged(record: ExceptionRecord, lines: Sequence[str]) -> bool:
    """Whether JAX printed the exception after its staging wrapper: the frames above it
    staged the operation; none of them raised it."""
    return STAGING_WRAPPER in lines[record.first_line]
