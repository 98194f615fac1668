"""Paste in, known errors out: normalize, read the exceptions, match, type the values.

Exception messages are matched first; the rest of the paste is then scanned for lone
messages (a chat line, a pytest summary, a message pasted without its class), skipping
traceback furniture such as the source line ``raise ValueError("...")``. An exception
whose message matches nothing in full is tried as a message cut off part-way, which
scores lower.

One match is reported per distinct error: each exception (or lone line) yields its best
record, the other records that also fit are listed as alternatives, and an error seen in
several places (JAX prints it twice; a pytest summary repeats it) is reported once.
Root causes come first.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache

from app.matching.index import AnyIndex, Hit
from app.matching.normalize import NormalizedPaste, normalize
from app.matching.tracebacks import (
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
    user_frame: UserFrame | None = None  # where the user's own code appears in the paste


@dataclass(frozen=True)
class MatchReport:
    matches: tuple[Match, ...]  # root causes first, then by score
    exceptions: tuple[FoundException, ...]
    unmatched: tuple[FoundException, ...]  # exceptions no record matched

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


def match_paste(text: str | bytes, index: AnyIndex, jax_version: str | None = None) -> MatchReport:
    """Find the known errors in ``text``. Raises ``PasteTooLarge`` or ``UnreadablePaste``."""
    paste = normalize(text)
    reading = read_exceptions(paste.lines)
    records = reading.exceptions
    # Every line of every printing of a message belongs to its exception, not to the loose
    # lines; the loose lines therefore do not depend on what the messages match.
    claimed = {n for r in records for n in (*r.message_line_numbers, *r.repeated_lines)}
    unread = set(range(len(paste.lines))).difference(claimed, reading.structure)
    loose = [n for n in sorted(unread) if paste.lines[n].strip()]
    joined = [" ".join(part.strip() for part in record.message_lines) for record in records]
    texts, owners = _message_texts(records, joined)
    # One search over the messages and the loose lines; hits come ordered by text.
    hits = index.search([*texts, *(paste.lines[n] for n in loose)])
    split = bisect.bisect_left(hits, len(texts), key=lambda hit: hit.text)
    candidates = _in_messages(records, texts, owners, hits[:split])
    explained = {c.error for c in candidates if c.explains_all}
    candidates += _in_cut_messages(records, joined, index, explained)
    candidates += _in_loose_lines(paste.lines, loose, hits[split:], len(texts), index)

    matches = _best_per_error(candidates, index, paste, _version(jax_version))
    found = tuple(_found(record, paste) for record in records)
    matched = {c.error for c in candidates}
    unmatched = tuple(f for n, f in enumerate(found) if ("exception", n) not in matched)
    return MatchReport(matches, found, unmatched)


def _message_texts(
    records: Sequence[ExceptionRecord], joined: Sequence[str]
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
    return texts, owners


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
        share = min(1.0, (hit.end - hit.start) / len(texts[hit.text].strip()))
        score = _location(record) * share**2
        if found_on is None:
            score -= WRAPPED_PENALTY
        line = record.line if found_on is None else found_on
        error = ("exception", number)
        candidates.append(_Candidate(error, hit, line, record, texts[hit.text], score, share == 1))
    return candidates


def _in_cut_messages(
    records: Sequence[ExceptionRecord],
    joined: Sequence[str],
    index: AnyIndex,
    explained: set[tuple[str, int]],
) -> list[_Candidate]:
    """Exceptions that no pattern explains in full, tried as messages cut off part-way."""
    candidates = []
    for number, record in enumerate(records):
        if ("exception", number) in explained:
            continue
        message = joined[number]
        for hit in index.search_truncated(message):
            score = _location(record) * (TRUNCATED_BASE + TRUNCATED_SPAN * hit.coverage)
            candidates.append(
                _Candidate(("exception", number), hit, record.line, record, message, score)
            )
    return candidates


def _location(record: ExceptionRecord | None) -> float:
    """How sure a match can be from where its message was found."""
    if record is None:
        return LOOSE_LINE
    return IN_TRACEBACK if record.in_traceback else LONE_EXCEPTION


def _in_loose_lines(
    lines: Sequence[str], loose: Sequence[int], hits: Sequence[Hit], first: int, index: AnyIndex
) -> list[_Candidate]:
    """The hits in the loose lines (text ``first`` is ``loose[0]``), then those lines cut
    off part-way."""
    candidates = []
    for hit in hits:
        line = loose[hit.text - first]
        candidates.append(_Candidate(("line", line), hit, line, None, lines[line], LOOSE_LINE))
    found = {c.line for c in candidates}
    for line in _possibly_cut(lines, loose):
        cut = find_truncation(lines[line])
        if cut is None or line in found:
            continue
        text = lines[line][: cut.start()].strip()
        for hit in index.search_truncated(text):
            score = (TRUNCATED_BASE + TRUNCATED_SPAN * hit.coverage) * LOOSE_LINE
            candidates.append(_Candidate(("line", line), hit, line, None, text, score))
    return candidates


def _possibly_cut(lines: Sequence[str], numbers: Sequence[int]) -> Sequence[int]:
    """``numbers``, or none of them when their lines hold no truncation marker at all."""
    return numbers if may_be_truncated("\n".join(lines[n] for n in numbers)) else ()


def _best_per_error(
    candidates: Sequence[_Candidate],
    index: AnyIndex,
    paste: NormalizedPaste,
    version: tuple[int, ...] | None,
) -> tuple[Match, ...]:
    """One match per error, root causes first, each error reported once."""
    by_error: dict[tuple[str, int], list[tuple[float, _Candidate]]] = {}
    for candidate in candidates:
        metadata = index.entries[candidate.hit.entry].metadata
        score = candidate.score * _agreement(metadata, candidate.record, version)
        by_error.setdefault(candidate.error, []).append((round(score, 3), candidate))
    best = []
    for group in by_error.values():
        group.sort(key=lambda pair: (-pair[0], _negated(index.specificity(pair[1].hit.entry))))
        score, chosen = group[0]
        others = dict.fromkeys(index.entries[c.hit.entry].record_id for _, c in group[1:])
        others.pop(index.entries[chosen.hit.entry].record_id, None)
        best.append((score, chosen, tuple(others)))
    best.sort(key=lambda item: _rank(item[1], item[0]))

    sources = cache(lambda: find_value_sources(paste.lines))
    frame = user_frame(paste.lines) if best else None
    reported: set[tuple[str, tuple[tuple[str, str], ...]]] = set()
    matches = []
    for score, chosen, alternatives in best:
        key = (
            index.entries[chosen.hit.entry].record_id,
            tuple(sorted(chosen.hit.captures.items())),
        )
        if key not in reported:
            reported.add(key)
            matches.append(_match(chosen, score, alternatives, index, paste, sources, frame))
    return tuple(matches)


def _negated(pair: tuple[int, int]) -> tuple[int, int]:
    return -pair[0], -pair[1]


def _match(
    candidate: _Candidate,
    score: float,
    alternatives: tuple[str, ...],
    index: AnyIndex,
    paste: NormalizedPaste,
    sources: Callable[[], Sequence[ValueSource]],
    frame: UserFrame | None,
) -> Match:
    entry = index.entries[candidate.hit.entry]
    record = candidate.record
    values = type_values(candidate.hit.captures)
    if needs_context(values):
        infer_missing(values, sources(), candidate.line)
        adopt_written_dtype(values, frame)
    return Match(
        record_id=entry.record_id,
        variant=entry.variant,
        score=score,
        matched_line=paste.original_line(candidate.line),
        line_number=paste.original_line_number(candidate.line),
        chain_position=record.chain_position if record else None,
        exception_class=record.qualified_class if record else None,
        captures=candidate.hit.captures,
        values=values,
        pattern_id=candidate.hit.entry,
        pattern=index.pattern(candidate.hit.entry),
        normalized_line=candidate.text,
        truncated=candidate.hit.truncated,
        metadata=entry.metadata,
        alternatives=alternatives,
        user_frame=frame,
    )


def _rank(candidate: _Candidate, score: float) -> tuple[bool, float, int]:
    """Root causes first, then the surest, then in paste order."""
    position = candidate.record.chain_position if candidate.record else None
    return position not in (0, None), -score, candidate.line


def _agreement(
    metadata: Mapping[str, str], record: ExceptionRecord | None, version: tuple[int, ...] | None
) -> float:
    """Lower the score where the record disagrees with the paste or with the user."""
    factor = 1.0
    expected = metadata.get("exception_class")
    if expected and record is not None and record.short_class != expected:
        factor *= CLASS_MISMATCH
    versions = metadata.get("jax_versions")
    if versions and version is not None and not _version_in(version, versions):
        factor *= VERSION_MISMATCH
    return factor


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
