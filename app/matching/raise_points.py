"""Where in JAX's source an exception was raised: the sites a traceback's frames point at.

A message names its error, but not always which of the sites printing it raised, and not
at all where none matches (a bare ``AssertionError``, a message built at run time, an
unmined release's wording). The JAX frame that raised does: a site on its line, an assert
whose condition its source line shows, else its function's sites of the exception's class,
else the line itself (Python's own error inside JAX). ``raise_points`` reads that frame,
``cut_points`` a traceback cut before its message, ``quoted_points`` a ``raise`` or
``assert`` a paste quotes outside any traceback, and ``calling_frames`` the frames of JAX's
that called user code. Statements are read as the miner reads JAX's source
(``knowledge.python_source``), so that a quote and a mined site compare equal.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Literal, NamedTuple

from app.jaxref.releases import runs, union
from app.jaxref.scope import FRAME_SCOPE
from app.knowledge.python_source import mine_file, spelled_as_class
from app.matching.frames import (
    INDENTED_FRAME,
    MAX_REMEMBERED,
    Frame,
    FrameIndex,
    Site,
    function_above,
    ipython_frame,
    nearest,
    site_key,
)
from app.matching.tracebacks import IPYTHON_SOURCE_LINE

# Lines between a frame and its exception: the source line, carets, JAX's separators.
MAX_FRAME_TAIL = 6
# A printed source line must show this much of an assert's condition to be taken for it.
MIN_CONDITION = 8
# A ``raise`` or ``assert`` shown as source: in a traceback, a diff (``-``, ``+``), pytest's
# failing line (``>``) or a quote (``> ``).
STATEMENT = re.compile(r"[\s>+-]*(?=raise\s+[\w.]+\s*\(|assert\s)")
# Lines a statement shown as source may span (a message built over several lines), and the
# most characters it is read in: JAX's longest ``raise`` is far shorter, and a paste is
# anybody's text.
MAX_STATEMENT_LINES = 8
MAX_STATEMENT_CHARS = 4000
# A quoted statement outside a traceback names JAX's site only when its message (or an
# assert's condition) is this long: ``raise ValueError("bad shape")`` may be anybody's.
MIN_QUOTED = 20
# The class a frame's source line raises, guarded on the same line or not
# (``if num_extensive: raise NotImplementedError``, ``raise ValueError(f"…")``).
_RAISED = re.compile(r"(?:if\s+(?P<guard>.+?):\s*)?raise\s+(?P<cls>[\w.]+)")
# Why Python raised on a line of JAX's that raises nothing, where the message's first lines
# tell more than its class: what they say, and what it means ({caller}: the frame's function).
_WHY_RAISED = (
    # pybind11's words for a function of a compiled module called with arguments it does not
    # take, and the signatures it takes: one of jaxlib's, called by a jax of another build.
    (
        re.compile(
            r"(?P<function>\w+)\(\): incompatible function arguments\. The following argument "
            r"types are supported:\s+1\. \(self: jaxlib\."
        ),
        "jaxlib's compiled {function} takes other arguments than JAX's {caller} passes it (the "
        "signatures listed are jaxlib's): the jax and jaxlib installed are of different builds "
        "(jax-ml/jax#17311: jax 0.4.15 with a jaxlib nightly). Install both at one release, "
        "pip install -U jax jaxlib (with the extra of your accelerator, such as 'jax[cuda12]')",
    ),
    # MLIR's verifier on the kernel's body, the error located at a jaxpr equation
    # (``error: "/swap[tree=…]"(callsite(…``), its diagnostic after the location.
    (
        re.compile(r"Verification failed:\s*error: \"/(?P<primitive>\w+)"),
        "MLIR's verifier rejected the IR that JAX's {caller} built for the kernel's {primitive} "
        "equation; the diagnostic after the location names the op and what it refused. In TPU "
        "kernels it is most often a scalar where a vector belongs: pl.program_id(0) or a value "
        "read from SMEM stored into a VMEM ref (jax-ml/jax#22817), or math on such a scalar "
        "(jax-ml/jax#20046). Keep scalars in SMEM refs (pltpu.SMEM), or compute and store "
        "vectors: jnp.full(o_ref.shape, x, o_ref.dtype)",
    ),
)
MAX_SAID_LINES = 3  # lines of a message read for what it tells (pybind11's signatures)
# What Python's parser and ``ast.unparse`` raise for an expression nested deeper than they
# go (``assert ------…1``): in a paste, that is no statement of JAX's.
_TOO_DEEP = (RecursionError, MemoryError)
# A path into JAX's internals, which no user's code is in.
_JAX_INTERNAL = re.compile(r"(?<![^/\\])(?:jax[/\\]_src|jaxlib)[/\\]")
_IPYTHON_SOURCE = re.compile(IPYTHON_SOURCE_LINE)
_IPYTHON_SOURCE_START = frozenset("-0123456789")


@dataclass(frozen=True)
class RaisePoint:
    """A mined site the exception's last frame points at, or the paste quotes, with why; or
    the frame's own line, where no release has a site (Python's own error inside JAX)."""

    record_id: str | None  # None: the frame's line, on no site
    file: str
    function: str
    line: int  # the frame's line in JAX's source (a quote's: the newest quoting release's)
    releases: tuple[str, ...]  # those with this site on that line (none: an unmined release)
    paste_line: int  # the frame's (or the quoted statement's) line among the lines read
    reason: str
    # "quote": the paste shows the statement; "cut": the traceback ends at the frame, before
    # its exception line
    via: Literal["frame", "quote", "cut"] = "frame"


class Calling(NamedTuple):
    """What a traceback shows of a call of user code: JAX's frames after the user's last,
    innermost first, and the source line printed under that frame of the user's."""

    frames: tuple[Frame, ...]
    user_source: str | None


class SourceLine(NamedTuple):
    """A frame's source line, as far as it tells which site's statement raised."""

    raised_class: str | None  # ``raise ValueError(…)``'s; None for a helper's or no raise
    guard: str | None  # ``if num_extensive: raise …``'s, as the miner unparses conditions
    asserted: str | None  # an ``assert``'s condition, as the miner unparses conditions
    asserted_start: str | None  # what a multi-line assert's first line shows, spaces out

    @classmethod
    def read(cls, text: str) -> SourceLine:
        raised = _RAISED.match(text)
        raised_class = raised["cls"].rsplit(".", 1)[-1] if raised else None
        if raised_class is not None and not spelled_as_class(raised_class):
            raised_class = None  # a helper building the exception (``raise _unsupported(x)``)
        guard = _unparsed(raised["guard"]) if raised and raised["guard"] else None
        return cls(raised_class, guard, *_assertion(text))

    def shows(self, site: Site) -> str | None:
        """Why the line is ``site``'s statement, if it is."""
        if site.kind == "assert" and self._asserts(site.condition):
            return "the frame's source line is this assert's condition"
        if site.kind == "raise" and self.guard is not None and site.condition == self.guard:
            return f"the frame's source line is this raise, under `if {self.guard}:`"
        return None

    def _asserts(self, condition: str) -> bool:
        if self.asserted is not None:
            return condition == self.asserted
        start = self.asserted_start
        return start is not None and re.sub(r"\s+", "", condition).startswith(start)

    def raises_other_than(self, site: Site) -> bool:
        """Whether the line raises another class than ``site`` does: then it is not the
        site's line in the release that printed it, whatever line the site has in others."""
        return self.raised_class is not None and self.raised_class != site.error_class


def raise_points(
    index: FrameIndex,
    lines: Sequence[str],
    structure: frozenset[int],
    exception_line: int,
    short_class: str,
    raised_at: int | None = None,
    possible: Iterable[str] = (),
) -> list[RaisePoint]:
    """The sites the frame that raised an exception points at, surest first: a site on
    the frame's line, an assert whose condition is the frame's source line (or a raise
    whose guard it shows: ``if num_extensive: raise NotImplementedError``), else the
    function's sites raising that class (a message built at run time, an unmined
    release). The frame is the one right above the exception line, or the one pytest
    printed after the message, on line ``raised_at``. A site of another function, or
    raising another class than the source line shows, is not on the frame's line in
    the paste's release, whatever line it has in others; nor is a site on that line
    only in releases other than ``possible``, those the paste reads, where the frame's
    function spans the line in one of them (0.10.1 raised the integer-bytes error on
    the line where 0.10.2 reads ``dst.type``).
    """
    found = raising_frame(index, lines, structure, exception_line, raised_at)
    if found is None:
        return []
    frame, source = found
    chosen, spanning = _pointed_sites(index, frame, source, short_class, possible)
    if not chosen:
        said = "\n".join(lines[exception_line : exception_line + MAX_SAID_LINES])
        return _frame_point(index, frame, short_class, said, spanning)
    return [
        _raise_point(index, number, frame, mask, shown, short_class)
        for _, number, mask, shown in chosen
    ]


def cut_points(
    index: FrameIndex,
    lines: Sequence[str],
    structure: frozenset[int],
    end_line: int,
    possible: Iterable[str] = (),
) -> list[RaisePoint]:
    """The sites a traceback cut before its exception line ends at (a paste stopped at
    the last frame, a page that hid the rest): those on its last frame's line in the
    paste's releases, or whose statement its source line shows. ``end_line`` is where
    the exception line would have been. Not knowing the class, the function's other
    sites are no answer, nor is a line with no site: JAX may have raised deeper."""
    found = raising_frame(index, lines, structure, end_line, None)
    if found is None:
        return []
    frame, source = found
    # With no class to go by, only the sites the frame's line or source shows are chosen.
    chosen, _ = _pointed_sites(index, frame, source, "", possible)
    cut = "the traceback ends at this frame, before its message"
    points = [_raise_point(index, n, frame, mask, shown, "") for _, n, mask, shown in chosen]
    return [replace(point, via="cut", reason=f"{cut}; {point.reason}") for point in points]


def raising_frame(
    index: FrameIndex,
    lines: Sequence[str],
    structure: frozenset[int],
    exception_line: int,
    raised_at: int | None,
) -> tuple[Frame, str] | None:
    """The JAX frame that raised the exception at ``exception_line`` and its source line,
    if any: the one pytest printed on line ``raised_at``, else the frame right above."""
    if raised_at is not None:
        match = INDENTED_FRAME.match(lines[raised_at])
        frame = None if match is None else index.frame_of(match, raised_at)
        if frame is None:
            return None  # the frame that raised is not JAX's
        if not frame.function:
            frame = frame._replace(function=function_above(lines, exception_line))
        # pytest prints the frame's source up to the failing line, then the E lines.
        return frame, lines[exception_line - 1].strip() if exception_line else ""
    number, tail = exception_line - 1, 1
    while number >= 0 and number in structure and tail <= MAX_FRAME_TAIL:
        text = lines[number]
        match = INDENTED_FRAME.match(text)
        if match is not None:
            frame = index.frame_of(match, number)
            if frame is None:
                return None  # the last frame is not JAX's
            return frame, lines[number + 1].strip() if number + 1 < exception_line else ""
        if ".py" in text and (listed := ipython_frame(lines, number)) is not None:
            located = INDENTED_FRAME.match(listed[0])
            frame = None if located is None else index.frame_of(located, number)
            return None if frame is None else (frame, listed[1])
        # IPython lists a frame's source around its line: those lines are the frame's
        if not (text.lstrip()[:1] in _IPYTHON_SOURCE_START and _IPYTHON_SOURCE.match(text)):
            tail += 1
        number -= 1
    return None


def calling_frames(
    index: FrameIndex,
    lines: Sequence[str],
    structure: frozenset[int],
    exception_line: int,
    raised_at: int | None = None,
) -> Calling:
    """JAX's frames between the user's last frame and the exception at
    ``exception_line``, innermost first: where Python raised its own error at JAX's call
    of user code (``kernel() takes 2 positional arguments but 3 were given``), the
    functions that made the call. Frames of JAX's machinery (``linear_util.py``, which
    filtering hides, ``scope.FRAME_SCOPE``) are passed over; any other file's frame is the
    user's and ends them, so an error raised inside the user's function has none. With
    them, the source line printed under the user's frame, which shows the call of JAX's
    that led there."""
    number = exception_line - 1 if raised_at is None else raised_at
    found: list[Frame] = []
    while number >= 0 and (number in structure or number == raised_at):
        text = lines[number]
        match = INDENTED_FRAME.match(text) if ".py" in text else None
        if match is not None:
            frame = index.frame_of(match, number)
            if frame is not None and not frame.file.startswith(FRAME_SCOPE):
                found.append(frame)
            elif frame is None and not _JAX_INTERNAL.search(
                match["path"] or match["ipath"] or match["ppath"]
            ):
                below = lines[number + 1] if number + 1 < exception_line else ""
                shown = not INDENTED_FRAME.match(below) and below.strip("^~ \t")
                return Calling(tuple(found), below.strip() if shown else None)
        elif text.startswith("Traceback (most recent call last)"):
            break
        number -= 1
    return Calling(tuple(found), None)


def quoted_points(
    index: FrameIndex, lines: Sequence[str], numbers: Iterable[int]
) -> list[RaisePoint]:
    """The sites whose ``raise`` or ``assert`` lines ``numbers`` show as source, outside
    any traceback (a code block of an issue, a diff): a paste may ask about a statement
    of JAX's rather than show its error. Each is placed where the newest release with
    that statement has it (an assert rewritten since, as the releases asserting what the
    paste quotes had it). A statement of fewer than ``MIN_QUOTED`` characters (its
    message, or an assert's condition) could as well be the user's own code."""
    points = []
    for number, key in _statements(lines, numbers):
        if len(key[1]) < MIN_QUOTED:
            continue
        places: dict[str, list[tuple[Site, str, int, int]]] = {}
        for row in index.sites_stating(key):
            site = index.sites[row]
            at = places.setdefault(site.record_id, [])
            at.extend((site, file, line, mask) for file, line, mask in index.row_lines(row))
        for record_id, at in places.items():
            releases = union(mask for *_, mask in at)
            releases &= index.wording_releases(record_id, None)
            if not releases:
                continue
            newest = nearest(releases, 0)
            site, file, line, _ = next(place for place in at if place[3] & newest)
            names = index.names(releases)
            kind = "assert" if site.kind == "assert" else "raise"
            reason = f"JAX {runs(names)} has this {kind}"
            points.append(
                RaisePoint(record_id, file, site.function, line, names, number, reason, "quote")
            )
    return points


def quoted_sites(index: FrameIndex, lines: Sequence[str]) -> frozenset[str]:
    """The records whose ``raise`` or ``assert`` the paste shows as source (a frame's
    source line, a diff, a code block), read as the miner reads JAX's: one message
    raised at several sites is told apart by the statement the paste quotes."""
    return frozenset(
        index.sites[row].record_id
        for _, key in _statements(lines, range(len(lines)))
        for row in index.sites_stating(key)
    )


def _pointed_sites(
    index: FrameIndex, frame: Frame, source: str, short_class: str, possible: Iterable[str]
) -> tuple[list[tuple[int, int, int, str | None]], int]:
    """The sites ``frame`` (showing ``source``) points at, surest first, as (rank, site,
    the releases with it on the frame's line, what the source line shows); and the
    releases whose function spans the frame's line (the paste's, where some are)."""
    on_line: dict[int, int] = {}  # site → the releases with it on the frame's line
    # The releases the paste reads, where the frame's function spans its line in one:
    # a frame of another release than the rest (a paste put together) keeps its own.
    spanning = index.spanning(frame)
    read = index.mask_of(possible)
    if not spanning & read:
        read = 0
    for number, mask in index.rows_at(frame.file, frame.line):
        on_line[number] = on_line.get(number, 0) | (mask & read if read else mask)
    ranked: list[tuple[int, int, int, str | None]] = []
    fallback: list[tuple[int, int, int, str | None]] = []
    statement = SourceLine.read(source)
    # A frame whose function is not printed is known by the sites on its line.
    if frame.function:
        candidates = index.function_sites(frame.file, frame.function)
    else:
        candidates = list(on_line)
    for number in candidates:
        site = index.sites[number]
        same_class = site.error_class == short_class
        shown = statement.shows(site)
        mask = on_line.get(number, 0)
        if statement.raises_other_than(site):
            mask = 0  # the frame is of another release than those of the site's line
        rank = 2 * bool(mask) + 2 * bool(shown) + same_class
        if mask or shown:
            ranked.append((rank, number, mask, shown))
        elif same_class:
            fallback.append((rank, number, mask, shown))
    chosen = ranked or fallback
    chosen.sort(key=lambda item: -item[0])
    return chosen, spanning & read or spanning


def _frame_point(
    index: FrameIndex, frame: Frame, short_class: str, said: str, releases: int
) -> list[RaisePoint]:
    """The raising frame itself, where no site is: a line of a JAX function that
    raised no ``raise`` of its own (``barrier.wait(…)`` on what is no barrier raises
    Python's ``AttributeError``), named with ``releases``, those whose function spans
    it (the paste's, where some are). ``said``, the message's first lines, may tell why."""
    if not releases:
        return []
    reason = (
        f"Python raised {short_class} inside JAX's {frame.function}, on a line that "
        "raises nothing itself: most often a value of another kind than it takes was "
        "passed in"
    )
    for words, why in _WHY_RAISED:
        if told := words.search(said):
            reason = why.format(caller=frame.function, **told.groupdict())
            break
    names = index.names(releases)
    return [
        RaisePoint(None, frame.file, frame.function, frame.line, names, frame.paste_line, reason)
    ]


def _raise_point(
    index: FrameIndex, number: int, frame: Frame, mask: int, shown: str | None, short_class: str
) -> RaisePoint:
    """Site ``number`` as the frame points at it, saying why."""
    reasons = []
    if mask:
        reasons.append(f"the frame is on this site's line in {runs(index.names(mask))}")
    if shown:
        reasons.append(shown)
    return RaisePoint(
        index.sites[number].record_id,
        frame.file,
        frame.function,
        frame.line,
        index.names(mask),
        frame.paste_line,
        "; ".join(reasons) or f"this function raises {short_class} here",
    )


def _statements(
    lines: Sequence[str], numbers: Iterable[int]
) -> Iterator[tuple[int, tuple[str, str]]]:
    """Each ``raise`` or ``assert`` starting on lines ``numbers``, read over the lines
    it spans, as what tells its sites apart (``_statement_keys``)."""
    for number in numbers:
        text = lines[number]
        start = STATEMENT.match(text)
        if start is None:
            continue
        statement = text[start.end() :]
        for following in lines[number + 1 : number + MAX_STATEMENT_LINES]:
            if _statement_keys(statement) or len(statement) > MAX_STATEMENT_CHARS:
                break
            marked = following[:1] in ("+", "-", ">")  # a diff's or pytest's mark
            statement += "\n" + following[marked:]
        for key in _statement_keys(statement):
            yield number, key


@lru_cache(maxsize=MAX_REMEMBERED)
def _statement_keys(statement: str) -> tuple[tuple[str, str], ...]:
    """What tells the sites of a ``raise`` or ``assert`` statement apart, as the miner
    reads it; none while the statement does not parse (its first lines only), or is too
    long or too deep to read."""
    if len(statement) > MAX_STATEMENT_CHARS:
        return ()
    try:
        sites = mine_file("", statement.strip())
    except _TOO_DEEP:
        return ()
    return tuple(
        site_key(site.kind, site.error_class, site.condition or "", site.template) for site in sites
    )


def _assertion(source: str) -> tuple[str | None, str | None]:
    """What ``source`` (``assert <condition>[, message]``) asserts: its condition as the
    miner unparses it (``all((x for x in y))``), or, of a multi-line assert cut after its
    first line, what that line shows of it, without spaces; neither where it asserts
    nothing."""
    if not source.startswith("assert") or len(source) > MAX_STATEMENT_CHARS:
        return None, None
    try:
        statement = ast.parse(source).body[0]
        if isinstance(statement, ast.Assert):
            return ast.unparse(statement.test), None
    except SyntaxError:  # a multi-line assert, cut after its first line
        pass
    except _TOO_DEEP:
        return None, None
    printed = re.sub(r"\s+", "", source.removeprefix("assert")).rstrip("(,\\")
    return None, printed if len(printed) >= MIN_CONDITION else None


def _unparsed(expression: str) -> str | None:
    """A guard as a frame's source line prints it (``if num_extensive: raise …``), as the
    miner unparses conditions; ``None`` where it does not parse."""
    if len(expression) > MAX_STATEMENT_CHARS:
        return None
    try:
        return ast.unparse(ast.parse(expression, mode="eval").body)
    except (SyntaxError, *_TOO_DEEP):
        return None
