"""Find every exception in a paste: the grammar of Python, IPython and JAX tracebacks.

Python prints a chain cause-first: the root cause's traceback comes first, then "The above
exception was the direct cause of the following exception:" (or "During handling of the
above exception, another exception occurred:"), then the next. JAX adds two things:

* by default a ``jax._src.source_info_util.JaxStackTraceBeforeTransformation: <Class>:
  <msg>`` block announces the error before the lowering traceback that ends in the same
  ``<Class>: <msg>``. Both are one error, so they are merged into one record;
* with ``JAX_PALLAS_VERBOSE_ERRORS=1`` a ``LoweringError: Exception while lowering eqn:``
  wraps the real error, which is printed earlier in the chain, so it stays the root.

The reader also accepts a lone ``ValueError: ...`` line with no traceback, IPython's
layout (``---> 14`` arrows, ``Cell In[3], line 14``, frames separated by blank lines),
``ExceptionGroup`` trees (``| `` prefixes) and tracebacks missing their first lines.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cache

from app.matching.scan import line_starts, lines_holding

# Wrappers whose message is another exception's "<Class>: <msg>".
ANNOUNCING_WRAPPERS = frozenset({"JaxStackTraceBeforeTransformation", "UnfilteredStackTrace"})
# The one whose traceback is where the user's code staged the failing operation, not where
# JAX raised the error (that traceback, if pasted, ends in the same message further on).
STAGING_WRAPPER = "JaxStackTraceBeforeTransformation"
# Wrappers whose real cause is printed earlier in the chain.
CHAINED_WRAPPERS = frozenset({"LoweringError"})
MAX_MESSAGE_LINES = 200
# Characters a bulk pass takes at one go: one regular-expression match holds the interpreter's
# lock for as long as it runs (76 ms over a MiB of indented lines); ``_step`` takes the line
# a pass stops at as the pass would have.
MAX_BULK_CHARS = 1 << 16
# Frames under a header indented deeper than this are read line by line: each indent needs
# a pattern of its own, and a paste may indent its headers any way it likes.
MAX_BULK_INDENT = 16

_CLASS = r"[A-Za-z_]\w*(?:\.[A-Za-z_<>][\w<>]*)*"
# Outside a traceback only names that read like exceptions count, so that "Note: ..." or
# "Solution: ..." in a chat message is not taken for an error.
_EXCEPTION_NAMES = (
    "Error",
    "Exception",
    "Warning",
    "Interrupt",
    "Exit",
    "Group",
    "Iteration",
    "Failure",
    "Fault",
    "Transformation",
    "StackTrace",
    "Traceback",
)
_EXCEPTION_NAME = f"(?:{'|'.join(_EXCEPTION_NAMES)})"
_EXCEPTION_LINE = re.compile(rf"(?P<cls>{_CLASS})(?::(?: ?(?P<msg>.*))?)?")
# Python's own ``Exception`` too, which JAX raises bare (``raise Exception("Invalid fixpoint")``
# in the state primitives' discharge); a bare "Error:" is a log's or a chat's word.
_STRICT_EXCEPTION = re.compile(rf"(?P<cls>{_CLASS}{_EXCEPTION_NAME}|Exception)(?:: ?(?P<msg>.*))?")

_TRACEBACK_HEADER = re.compile(r"\s*Traceback \(most recent call last\):?\s*")
_IPYTHON_HEADER = re.compile(rf"(?P<cls>{_CLASS})\s{{2,}}Traceback \(most recent call last\)\s*")
_GROUP_HEADER = re.compile(r"\s*\+ Exception Group Traceback \(most recent call last\):\s*")
_GROUP_SEPARATOR = re.compile(r"\s*(?:\+-)*\+-{3,}.*")
_GROUP_BAR = re.compile(r"\s*\|(?: |$)")
_CHAIN_LINKS = {
    "The above exception was the direct cause of the following exception:": "cause",
    "During handling of the above exception, another exception occurred:": "context",
}
_SEPARATOR = re.compile(r"-{4,}")
# pytest's report: a failed test's header, whose frames follow ("____ test_copy ____"), and
# the rules between its sections ("==== short test summary info ====").
_PYTEST_HEADER = re.compile(r"_{3,} \S.*? _{3,}")
_PYTEST_RULE = re.compile(r"={3,}(?: .*? ={3,})?")
# pytest's location of the frame that raised, after its source and its E lines
# ("path.py:820: ValueError"): it closes the exception above it rather than opening frames.
_PYTEST_RAISED_AT = re.compile(r"\S+?\.py:\d+: [\w.]+")
# pytest's location of any other frame ("path.py:820: in func", "path.py:5: ").
_PYTEST_LOCATION = re.compile(r"\s*\S+?\.py:\d+:(?: in |\s*$)")
# Python's and IPython's prompts, before the next command of an interactive session.
_PROMPT = re.compile(r"\s*(?:>>>|In \[\d+\]:)(?: |$)")
# No part of it crosses a line break (``[^\S\n]`` for ``\s``, ``(?![^\n])`` for ``$``):
# the bulk passes run it over all the lines joined.
_FRAME_PATTERN = "|".join(
    (
        r"[^\S\n]*File \".*\", line \d+",  # Python
        # IPython 8: "File ~/x.py:182"
        r"[^\S\n]*File (?:<[^<>\n]+>|[^\s,]+):\d+(?:, in .*)?(?![^\n])",
        r"Cell In[^\S\n]?\[\d*\], line \d+",  # IPython 8 / Jupyter
        r"[^\S\n]*<ipython-input-[\w-]+> in ",  # IPython 7
        r"\S+\.py in \S+\(.*\)(?![^\n])",  # IPython 7 library frames
        # and their path a link in a copy of Colab's rendered output:
        # "[/x/jax/_src/pallas/mosaic/lowering.py](https://…) in lower_jaxpr_to_func(ctx, …)"
        r"\[[^\s\]]+\.py\]\([^)\s]*\) in \S+\(.*\)(?![^\n])",
        # pytest's location of a frame, "path.py:820: in func", or after a frame's source and
        # its E lines, "path.py:820: ValueError" (or nothing after the colon)
        r"[^\s:]*+(?<=\.py):\d+:(?: in [\w<>.]+| [\w.]+)?[^\S\n]*(?![^\n])",
    )
)
_FRAME = re.compile(_FRAME_PATTERN)
# IPython's numbered source lines, "---> 14 ..." (``frames`` reads a frame's line from them)
IPYTHON_SOURCE_LINE = r"\s*(?:-*>\s*)?\d+\s"
_SOURCE = re.compile(
    r"\s*[~^]+\s*$"  # carets under the failing expression
    rf"|{IPYTHON_SOURCE_LINE}"
    r"|\s*\[(?:Previous line repeated|\.\.\. skipping)"
    r"|\s*\.\.\.\s*$"
)
_JAX_TEXT = (
    "The preceding stack trace is the source of the JAX operation",
    "For simplicity, JAX has removed its internal frames",
    "The stack trace below excludes JAX-internal frames.",
    "The preceding is the original exception that occurred, unmodified.",
)
# A bulk pass stops before a line holding one of these: it may be a header, a chain sentence
# or an ExceptionGroup separator, which only ``_Reader._step`` reads.
_STOP_WORDS = ("Traceback", "exception", "+---")
# A word that may be an exception's class: a run of the characters a class name has, taken
# whole (a class followed by ":" or the line's end is such a whole run), ending in a name.
_MAY_BE_CLASS = (
    r"[A-Za-z_][\w.<>]*+(?:" + "|".join(f"(?<={name})" for name in _EXCEPTION_NAMES) + ")"
)
# A run of lines outside a traceback on which ``_Reader._step`` does nothing: no frame, no
# JAX separator or note, no pytest header, nothing that may be an exception line (nor any
# stop word, left out by the caller).
_PLAIN_RUN = re.compile(
    rf"(?:(?!{_FRAME_PATTERN})"
    rf"(?![^\S\n]*(?:----|___|{'|'.join(map(re.escape, _JAX_TEXT))}"
    rf"|{_MAY_BE_CLASS}(?::|[^\S\n]*\n)))"
    r"[^\n]*\n)*"
)
# Markers that dashboards and chat tools leave where they cut a long line.
TRUNCATION = re.compile(
    r"\s*(?:…|\.\.\.|\[\.\.\.\]|\[truncated\]|\(truncated\)|<truncated>)\s*(?:\|\s*)?$"
)


@dataclass(frozen=True)
class ExceptionRecord:
    """One exception found in the paste. Line numbers index the normalized lines."""

    qualified_class: str  # as printed: "jax._src.pallas.mosaic_gpu.lowering.LoweringError"
    message_lines: tuple[str, ...]
    line: int  # where the "<Class>: <msg>" line is (its last printing, if repeated)
    message_line_numbers: tuple[int, ...]
    chain: int
    chain_position: int  # 0 is the root cause, printed first
    link: str | None  # how this one follows the previous: "cause" or "context"
    wrapped_by: tuple[str, ...] = ()
    repeats: tuple[int, ...] = ()  # other lines where the same exception was printed
    repeated_lines: tuple[int, ...] = ()  # every message line of those other printings
    in_traceback: bool = False
    notes: tuple[str, ...] = ()
    truncated: bool = False
    # Where pytest printed the frame that raised, right after the message ("path.py:820:
    # ValueError"), if it did; Python prints that frame above the exception line instead.
    raised_at: int | None = None
    # Another exception of its chain was raised while it was handled ("During handling of
    # the above exception, another exception occurred:"): caught, it is not what failed.
    handled: bool = False

    @property
    def short_class(self) -> str:
        return self.qualified_class.rsplit(".", 1)[-1]

    @property
    def first_line(self) -> int:
        """The line its message starts on (the exception line, for a message on none)."""
        return (self.message_line_numbers or (self.line,))[0]

    @property
    def message(self) -> str:
        return "\n".join(self.message_lines)

    @property
    def is_wrapper(self) -> bool:
        """JAX's verbose ``LoweringError``: the real error is its cause, earlier in the chain."""
        return self.short_class in CHAINED_WRAPPERS


@dataclass(frozen=True)
class Reading:
    """The exceptions in a paste, and which lines are traceback furniture."""

    exceptions: list[ExceptionRecord]
    # Headers, frames, source lines, chain sentences: a message quoted in a source line
    # (``raise ValueError("Only byte-aligned ...")``) is not an error of its own.
    structure: frozenset[int]
    # Where each traceback that ends without its exception line (a paste cut after its last
    # frame, a page that hid the rest) would have had it: the line after its frames.
    unfinished: tuple[int, ...] = ()


def read_exceptions(lines: Sequence[str]) -> Reading:
    """Every exception in ``lines``, chains merged and numbered root-first."""
    reader = _Reader(list(lines))
    # A group's header holds "Traceback", a stop word: only those lines need looking at.
    if any(_GROUP_HEADER.match(reader.lines[number]) for number in reader.stops):
        reader = _Reader(_strip_group_bars(lines))
    reader.run()
    return Reading(_finish(reader.found), frozenset(reader.structure), tuple(reader.unfinished))


def _strip_group_bars(lines: Sequence[str]) -> list[str]:
    """Remove the ``| `` prefixes ExceptionGroup tracebacks put before nested lines."""
    stripped = []
    for line in lines:
        while (bar := _GROUP_BAR.match(line)) is not None:
            line = line[bar.end() :]
        stripped.append(line)
    return stripped


class _Reader:
    """A single forward pass over the lines: outside a traceback, or among its frames.

    Most lines of a long paste are frames, source lines and log lines: bulk passes take
    their runs with one regular-expression match over the joined lines, and only the lines
    that end a run go through ``_step`` one by one.
    """

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.text = "\n".join(lines) + "\n"
        # Where each line starts in ``text``, and where the text ends.
        self.starts = line_starts(lines)
        # The lines holding a stop word, where every bulk pass ends.
        self.stops = lines_holding(_STOP_WORDS, self.text, self.starts)
        self.found: list[ExceptionRecord] = []
        self.structure: set[int] = set()
        self.unfinished: list[int] = []
        self.chain = -1
        self.link: str | None = None  # set by a chain sentence, used by the next exception
        self.in_frames = False
        self.header_indent = 0
        self.pos = 0
        self.pytest = False  # a pytest report: after a chain sentence come the next frames

    def run(self) -> None:
        while self.pos < len(self.lines):
            self._pass_in_bulk()
            if self.pos == len(self.lines):
                break
            self.pos += 1
            self._step(self.lines[self.pos - 1])
        if self.in_frames and not self.pytest:
            self.unfinished.append(len(self.lines))

    def _pass_in_bulk(self) -> None:
        """Take a run of lines as ``_step`` would, up to the next line holding a stop word.

        Among frames: frame lines, the source lines indented under them and blank lines,
        each structure. Outside a traceback: lines that are neither furniture nor an
        exception, on which ``_step`` does nothing.
        """
        start = self.pos
        following = bisect_left(self.stops, start)
        stop = self.stops[following] if following < len(self.stops) else len(self.lines)
        stop = min(stop, bisect_left(self.starts, self.starts[start] + MAX_BULK_CHARS))
        if stop == start:
            return
        if self.in_frames and self.header_indent > MAX_BULK_INDENT:
            return
        run = _frames_run(self.header_indent) if self.in_frames else _PLAIN_RUN
        found = run.match(self.text, self.starts[start], self.starts[stop])
        assert found is not None  # a run of no lines matches too
        end = bisect_left(self.starts, found.end(), start, stop)
        # A line holding a line break was taken for two: leave it to ``_step``.
        self.pos = end if self.starts[end] == found.end() else end - 1
        if self.in_frames:
            self.structure.update(range(start, self.pos))

    def _step(self, text: str) -> None:
        """One line. Furniture (see ``_is_furniture``) and lines among frames are structure;
        each test runs once, and only on lines holding the text it needs."""
        stripped = text.strip()
        line = self.pos - 1
        if stripped in _CHAIN_LINKS:
            self.structure.add(line)
            self.link = _CHAIN_LINKS[stripped]
            self.in_frames = self.pytest
            self.header_indent = 0
        elif "Traceback" in text and (
            _TRACEBACK_HEADER.fullmatch(text) or _GROUP_HEADER.fullmatch(text)
        ):
            self.structure.add(line)
            self._enter_frames(_indent(text))
        elif "Traceback" in text and _IPYTHON_HEADER.fullmatch(text):
            self.structure.add(line)
            self._enter_frames(0)
        elif "___" in text and _PYTEST_HEADER.fullmatch(stripped):
            self.structure.add(line)
            self.pytest = True
            self._enter_frames(0)
        elif not self.in_frames and ".py:" in text and _PYTEST_RAISED_AT.fullmatch(stripped):
            self.structure.add(line)
            self.pytest = True
            last = self.found[-1] if self.found else None
            # After the message and a blank line: the frame that raised that exception.
            if last is not None and line - last.message_line_numbers[-1] <= 2:
                self.found[-1] = replace(last, raised_at=line)
        elif "+---" in text and _GROUP_SEPARATOR.fullmatch(text):
            self.structure.add(line)
            self.in_frames = False
            self.link = None
        elif _is_frame(text):
            self.structure.add(line)
            if not self.in_frames:  # a traceback without its header (a pytest report's too)
                self.pytest = self.pytest or _PYTEST_LOCATION.match(text) is not None
                self._enter_frames(max(0, _indent(text) - 2))
        elif self.in_frames:
            self.structure.add(line)
            self._in_frames(text)
        elif (stripped.startswith("----") and _SEPARATOR.fullmatch(stripped)) or (
            stripped.startswith(_JAX_TEXT)
        ):
            self.structure.add(line)
        elif stripped:
            found = _STRICT_EXCEPTION.fullmatch(stripped)
            if found is not None:
                self._exception(found, in_traceback=False)

    def _enter_frames(self, indent: int) -> None:
        if self.in_frames and not self.pytest:  # a new traceback where an exception was due
            self.unfinished.append(self.pos - 1)
        if not self.in_frames and self.link is None:
            self.chain += 1
        self.in_frames = True
        self.header_indent = indent

    def _in_frames(self, text: str) -> None:
        if _indent(text) > self.header_indent or not text.strip() or _SOURCE.match(text):
            return  # source lines, carets, and IPython's blank lines between frames
        exception = _STRICT_EXCEPTION if self.pytest else _EXCEPTION_LINE
        found = exception.fullmatch(text.strip())
        if found is None and self.pytest:
            # pytest prints lines between frames, and each frame's arguments, whose values
            # span lines at any indent: only the exception, its E line, ends the frames.
            return
        self.in_frames = False
        self.structure.discard(self.pos - 1)
        if found is not None:
            self._exception(found, in_traceback=True)
        else:  # the frames end in a line of other text: the exception line is missing
            self.unfinished.append(self.pos - 1)

    def _exception(self, found: re.Match[str], in_traceback: bool) -> None:
        line = self.pos - 1
        if not in_traceback and self.link is None:
            self.chain += 1
        cls, first = found["cls"], found["msg"] or ""
        wrapped_by: tuple[str, ...] = ()
        short = cls.rsplit(".", 1)[-1]
        inner = _EXCEPTION_LINE.fullmatch(first) if short in ANNOUNCING_WRAPPERS else None
        if inner is not None:
            wrapped_by = (short,)
            cls, first = inner["cls"], inner["msg"] or ""
        message, numbers = self._message(first, line)
        notes = self._notes()
        cut = find_truncation(message[-1])
        if cut is not None:
            message[-1] = message[-1][: cut.start()]
        self.found.append(
            ExceptionRecord(
                qualified_class=cls,
                message_lines=tuple(message),
                line=line,
                message_line_numbers=tuple(numbers),
                chain=self.chain,
                chain_position=0,
                link=self.link,
                wrapped_by=wrapped_by,
                in_traceback=in_traceback,
                notes=tuple(notes),
                truncated=cut is not None,
            )
        )
        self.link = None

    def _message(self, first: str, line: int) -> tuple[list[str], list[int]]:
        """The message's first line and the lines continuing it, up to a blank or structure."""
        message, numbers = [first], [line]
        while self.pos < len(self.lines) and len(message) < MAX_MESSAGE_LINES:
            text = self.lines[self.pos]
            if not text.strip() or _ends_message(text):
                break
            message.append(text)
            numbers.append(self.pos)
            self.pos += 1
        return message, numbers

    def _notes(self) -> list[str]:
        """JAX's footer: a dashed line, then its note, right after the message."""
        if self.pos + 1 >= len(self.lines):
            return []
        if not _SEPARATOR.fullmatch(self.lines[self.pos].strip()):
            return []
        notes = []
        position = self.pos + 1
        while position < len(self.lines) and self.lines[position].strip():
            text = self.lines[position]
            if _ends_message(text) and not text.strip().startswith(_JAX_TEXT):
                break
            notes.append(text.strip())
            position += 1
        if notes:
            self.structure.update(range(self.pos, position))
            self.pos = position
        return notes


@cache
def _frames_run(header_indent: int) -> re.Pattern[str]:
    """A run of lines inside a traceback whose header is indented by ``header_indent``."""
    deeper = f"[ ]{{{header_indent + 1}}}"
    return re.compile(rf"(?:(?:{deeper}[^\n]*|[^\S\n]*|(?:{_FRAME_PATTERN})[^\n]*)\n)*")


def find_truncation(text: str) -> re.Match[str] | None:
    """``TRUNCATION.search(text)``, skipped for text with none of the markers' characters."""
    return TRUNCATION.search(text) if may_be_truncated(text) else None


def may_be_truncated(text: str) -> bool:
    """Whether ``text`` holds a truncation marker's characters: if not, no line of it is cut."""
    return "…" in text or "..." in text or "truncated" in text


def _is_furniture(text: str) -> bool:
    """The grammar's own lines: headers, frames, chain sentences, separators, JAX's notes,
    pytest's headers and rules.

    Each pattern is tried only on lines holding the text it needs: a long paste is
    mostly frames and log lines, and this runs on every one of them.
    """
    stripped = text.strip()
    return bool(
        stripped in _CHAIN_LINKS
        or (
            "Traceback" in text
            and (
                _TRACEBACK_HEADER.fullmatch(text)
                or _IPYTHON_HEADER.fullmatch(text)
                or _GROUP_HEADER.fullmatch(text)
            )
        )
        or ("+---" in text and _GROUP_SEPARATOR.fullmatch(text))
        or (stripped.startswith("----") and _SEPARATOR.fullmatch(stripped))
        or (stripped.startswith("===") and _PYTEST_RULE.fullmatch(stripped))
        or ("___" in text and _PYTEST_HEADER.fullmatch(stripped))
        or _is_frame(text)
        or stripped.startswith(_JAX_TEXT)
    )


def _is_frame(text: str) -> bool:
    """``_FRAME.match``, skipped for lines lacking the words every kind of frame has."""
    return (
        "File " in text
        or "Cell In" in text
        or "<ipython-input-" in text
        or ".py in " in text
        or ".py:" in text
    ) and _FRAME.match(text) is not None


def _ends_message(text: str) -> bool:
    """A message runs on until a blank line, furniture, the next exception line, or the
    prompt of an interactive session (the user's next command)."""
    return (
        _is_furniture(text)
        or _STRICT_EXCEPTION.fullmatch(text.strip()) is not None
        or _PROMPT.match(text) is not None
    )


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip(" "))


def _finish(found: list[ExceptionRecord]) -> list[ExceptionRecord]:
    """Merge an error printed twice in one chain, then number each chain root-first and
    mark those caught before another exception was raised."""
    merged: list[ExceptionRecord] = []
    seen: dict[tuple[int, str, str], int] = {}
    for record in found:
        key = (record.chain, record.short_class, record.message_lines[0])
        if key not in seen:
            seen[key] = len(merged)
            merged.append(record)
            continue
        first = merged[seen[key]]
        merged[seen[key]] = replace(
            record,
            repeats=(*first.repeats, first.line),
            repeated_lines=(*first.repeated_lines, *first.message_line_numbers),
            wrapped_by=first.wrapped_by + record.wrapped_by,
            link=first.link,
            in_traceback=first.in_traceback or record.in_traceback,
        )
    positions: dict[int, int] = {}
    # Each chain's last exception raised while handling another: those before it were caught.
    last_context = {r.chain: n for n, r in enumerate(merged) if r.link == "context"}
    numbered = []
    for number, record in enumerate(merged):
        position = positions.get(record.chain, 0)
        positions[record.chain] = position + 1
        handled = number < last_context.get(record.chain, -1)
        # Records are made with position 0, not handled: only the others need a copy.
        if position or handled:
            record = replace(record, chain_position=position, handled=handled)
        numbered.append(record)
    return numbered
