"""What the reader finds in a paste: the values its stages hand on, and how sure each is.

``candidates`` reads each place a record's pattern fits the paste as a ``Candidate``,
``ranking`` keeps one ``Match`` per error of them, and ``matcher.match_paste`` gathers
those into a ``MatchReport``. The values live apart from the stages so that each stage
imports them without importing another, and the scores beside them, since a candidate's
score is set where it is found and weighed again where it is ranked.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from app.matching.frames import Frame
from app.matching.index import Hit
from app.matching.raise_points import RaisePoint
from app.matching.release import ReleaseReading
from app.matching.tracebacks import ExceptionRecord
from app.matching.values import TypedValues, UserFrame

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
    # Where another record fits the same error: the ranking criterion that put this one
    # before the runner-up (``ranking.RANKING``'s name).
    ranked_by: str | None = None


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
class Candidate:
    """One reading of the paste: a record's pattern fitting one error's message or line,
    before the records that fit the same error are ranked."""

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
