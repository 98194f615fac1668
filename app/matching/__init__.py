"""Traceback matching: find known errors in pasted text and extract their values.

Plain Python (no web framework): the service layer maps these dataclasses to its schemas,
``PasteTooLarge`` to 413 and ``UnreadablePaste`` to 422, and attaches the fixes.
"""

from app.matching.index import (
    AnyIndex,
    Hit,
    OverlaidIndex,
    PatternEntry,
    PatternIndex,
    SkippedEntry,
)
from app.matching.matcher import match_paste
from app.matching.normalize import (
    MAX_PASTE_BYTES,
    NormalizedPaste,
    PasteError,
    PasteTooLarge,
    UnreadablePaste,
    normalize,
    paste_end,
    paste_text,
)
from app.matching.report import FoundException, Match, MatchReport
from app.matching.tracebacks import ExceptionRecord, Reading, read_exceptions
from app.matching.values import TypedValues, ValueSource, find_value_sources, type_values

__all__ = [
    "MAX_PASTE_BYTES",
    "AnyIndex",
    "ExceptionRecord",
    "FoundException",
    "Hit",
    "Match",
    "MatchReport",
    "NormalizedPaste",
    "OverlaidIndex",
    "PasteError",
    "PasteTooLarge",
    "PatternEntry",
    "PatternIndex",
    "Reading",
    "SkippedEntry",
    "TypedValues",
    "UnreadablePaste",
    "ValueSource",
    "find_value_sources",
    "match_paste",
    "normalize",
    "paste_end",
    "paste_text",
    "read_exceptions",
    "type_values",
]
