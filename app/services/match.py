"""Match: find the known errors in a paste, type their values, and attach the engine's fix.

The pattern index lives in memory, one per process, and is rebuilt whenever the store's
version counter moves, whichever worker wrote.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, Field
from rapidfuzz import fuzz, process, utils
from sqlalchemy import select

from app.alignment import AlignmentInputError
from app.errors import InvalidInput, PayloadTooLarge
from app.matching import (
    FoundException,
    Match,
    PasteTooLarge,
    PatternEntry,
    PatternIndex,
    UnreadablePaste,
    match_paste,
)
from app.matching.templates import derive_pattern
from app.observability.metrics import observe_index_build
from app.records.models import AnnotationRow, RecordRow
from app.records.store import RecordStore
from app.services.compute import (
    ComputeRequest,
    ComputeResponse,
    ComputeService,
    cached_check,
    record_operations,
)

SUGGESTIONS = 3
# Rebuilds derive the same patterns again; keep them (a pattern is a few hundred bytes).
_derived = lru_cache(maxsize=1 << 16)(derive_pattern)
# Words in a paste that say which construct the user ran, most specific first.
_OPERATION_HINTS = {
    "ref_union": ("RefUnion",),
    "smem_alias": ("ExtractAliasedRef",),
    "smem_bitcast": ("_handle_dtype_bitcast", "bitcast"),
    "pallas_call": ("pallas_call", "emit_pipeline", "offset: ?>"),
    "copy_gmem_to_smem": ("copy_gmem_to_smem",),
}


@dataclass(frozen=True)
class RecordInfo:
    """What a match needs to know about a record, kept beside the index."""

    id: str
    slug: str
    message: str
    error_class: str | None
    rule: str | None
    operations: tuple[str, ...]


class MatchIndex:
    """The pattern index plus the record facts its answers need."""

    def __init__(self, records: dict[str, RecordInfo], entries: list[PatternEntry]) -> None:
        self.records = records
        self.patterns = PatternIndex.build(entries)
        self._messages = [info.message for info in records.values()]
        self._ids = list(records)

    def similar(self, text: str) -> list[tuple[str, float]]:
        """Records whose message reads like ``text``, best first, scored 0..1."""
        found = process.extract(
            text,
            self._messages,
            scorer=fuzz.token_set_ratio,
            processor=utils.default_process,
            limit=SUGGESTIONS,
            score_cutoff=30,
        )
        return [(self._ids[position], round(score / 100, 3)) for _, score, position in found]


# What the index needs of a live record: its columns, and three fields of its document
# read by the database (as JSON text), so the large documents are never loaded whole.
_INDEXED = select(
    RecordRow.id,
    RecordRow.slug,
    RecordRow.error_message,
    RecordRow.error_class,
    RecordRow.rule,
    RecordRow.document["messagePattern"].as_string(),
    RecordRow.document["operations"].as_string(),
    RecordRow.document["olderWordings"].as_string(),
).where(RecordRow.retired.is_(False))


def load_index(store: RecordStore) -> MatchIndex:
    """Read every live record (and annotation) into a fresh index."""
    session = store.session
    annotations = {row.record_id: row.document for row in session.scalars(select(AnnotationRow))}
    records: dict[str, RecordInfo] = {}
    entries: list[PatternEntry] = []
    shared: dict[tuple[str, str], dict[str, str]] = {}  # one metadata dict per class and rule
    # Plain rows through the store's connection: no ORM bookkeeping for 100,000 of them.
    for row in session.connection().execute(_INDEXED):
        record_id, slug, message, error_class, row_rule, pattern, ops, older = row
        note = annotations.get(record_id, {})
        rule = note.get("rule") or row_rule
        operations = record_operations(
            note.get("operations"), json.loads(ops) if ops else None, rule
        )
        records[record_id] = RecordInfo(
            record_id, slug, message, error_class, rule, tuple(operations)
        )
        key = (error_class or "", rule or "")
        metadata = shared.setdefault(key, {"exception_class": key[0], "rule": key[1]})
        current = _index_pattern({"messagePattern": pattern, "errorMessage": message})
        entries.append(PatternEntry(record_id, current, "current", metadata))
        older_wordings = json.loads(older) if older else None
        for wording in [*(older_wordings or []), *(note.get("olderWordings") or [])]:
            pattern = wording.get("pattern") or _derived(wording["text"])
            variant = f"older wording ({wording['until']})" if wording.get("until") else "older"
            entries.append(PatternEntry(record_id, pattern, variant, metadata))
    return MatchIndex(records, entries)


def _index_pattern(document: dict[str, Any]) -> str:
    """The record's own pattern when it names its groups; else one derived from the template,
    so the captured values can be typed (a seed's ``(.+?)`` groups say nothing)."""
    pattern = str(document["messagePattern"])
    return pattern if "(?P<" in pattern else _derived(document["errorMessage"])


class MatchIndexCache:
    """One per process; answers with the index of the store's current version."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._built: tuple[MatchIndex, int] | None = None  # replaced whole, read whole

    def get(self, store: RecordStore) -> MatchIndex:
        return self.current(store)[0]

    def current(self, store: RecordStore) -> tuple[MatchIndex, int]:
        """The index, and the store version just read (the version the index is of)."""
        version = store.version()
        built = self._built
        if built is not None and built[1] == version:
            return built
        with self._lock:
            built = self._built
            if built is None or built[1] != version:
                built = (observe_index_build(load_index, store), version)
                self._built = built
            return built


class MatchRequest(BaseModel):
    text: str = Field(min_length=1, description="A traceback, log or chat paste (≤ 1 MiB).")
    jaxVersion: str | None = Field(default=None, max_length=40)


class ValuesOut(BaseModel):
    shape: list[int] | None
    dtype: str | None
    bitwidth: int | None
    elementCount: int | None
    bits: int | None
    bytes: int | None
    memorySpace: str | None
    numbers: dict[str, int]
    inferred: list[str] = Field(description="Values read from elsewhere in the paste.")


class WhyOut(BaseModel):
    patternId: int
    pattern: str
    normalizedLine: str
    truncated: bool


class MatchOut(BaseModel):
    errorId: str
    slug: str
    rule: str | None
    errorClass: str | None
    score: float
    variant: str
    matchedLine: str
    lineNumber: int
    chainPosition: int | None
    captures: dict[str, str]
    values: ValuesOut
    operation: str | None
    fix: ComputeResponse | None
    fixUnavailable: str | None = Field(description="Why there is no fix, when there is none.")
    alternatives: list[str]
    why: WhyOut


class ExceptionOut(BaseModel):
    exceptionClass: str
    message: str
    lineNumber: int
    chainPosition: int
    truncated: bool


class SuggestionOut(BaseModel):
    errorId: str
    slug: str
    errorMessage: str
    score: float


class MatchResponse(BaseModel):
    matches: list[MatchOut]
    exceptions: list[ExceptionOut]
    unmatched: list[ExceptionOut]
    suggestions: list[SuggestionOut]


class MatchService:
    def __init__(self, store: RecordStore, cache: MatchIndexCache) -> None:
        self.store = store
        self.index, self._version = cache.current(store)

    def match(self, request: MatchRequest) -> MatchResponse:
        try:
            report = match_paste(request.text, self.index.patterns, request.jaxVersion)
        except PasteTooLarge as exc:
            raise PayloadTooLarge(f"text: {exc}") from None
        except UnreadablePaste as exc:
            raise InvalidInput(
                f"text: {exc}", errors=[{"field": "text", "message": str(exc)}]
            ) from None
        matches = [self._match(match, request) for match in report.matches]
        suggestions = [] if matches else self._suggestions(report.exceptions, request.text)
        return MatchResponse(
            matches=matches,
            exceptions=[_exception(found) for found in report.exceptions],
            unmatched=[_exception(found) for found in report.unmatched],
            suggestions=suggestions,
        )

    def _match(self, match: Match, request: MatchRequest) -> MatchOut:
        info = self.index.records[match.record_id]
        operation, fix, reason = self._fix(match, info, request)
        values = match.values
        return MatchOut(
            errorId=info.id,
            slug=info.slug,
            rule=info.rule,
            errorClass=info.error_class,
            score=round(match.score, 3),
            variant=match.variant,
            matchedLine=match.matched_line,
            lineNumber=match.line_number,
            chainPosition=match.chain_position,
            captures=match.captures,
            values=ValuesOut(
                shape=values.shape,
                dtype=values.dtype,
                bitwidth=values.bit_width,
                elementCount=values.element_count,
                bits=values.bits,
                bytes=values.bytes,
                memorySpace=values.memory_space,
                numbers=values.numbers,
                inferred=values.inferred,
            ),
            operation=operation,
            fix=fix,
            fixUnavailable=reason,
            alternatives=list(match.alternatives),
            why=WhyOut(
                patternId=match.pattern_id,
                pattern=match.pattern,
                normalizedLine=match.normalized_line,
                truncated=match.truncated,
            ),
        )

    def _fix(
        self, match: Match, info: RecordInfo, request: MatchRequest
    ) -> tuple[str | None, ComputeResponse | None, str | None]:
        """The engine's answer for the matched values, in the construct that reproduces
        the matched error; no fix rather than a fix for the wrong construct."""
        if not info.operations:
            return None, None, "this error belongs to no construct the engine models"
        values = match.values
        if values.shape is None or values.dtype is None:
            return None, None, "the paste does not show the block's shape and dtype"
        operations = _by_hints(info.operations, request.text)
        for operation in operations:
            try:
                verdict = cached_check(
                    operation, tuple(values.shape), values.dtype, None, request.jaxVersion
                )
            except AlignmentInputError:
                continue
            first = verdict.first_violation
            if first is not None and first.rule_id == info.rule:
                fix = ComputeService(self.store, self._version).compute(
                    ComputeRequest(
                        operation=operation,
                        shape=values.shape,
                        dtype=values.dtype,
                        jaxVersion=request.jaxVersion,
                    )
                )
                return operation, fix, None
        return (
            operations[0],
            None,
            f"for shape {values.shape} and {values.dtype} the engine does not reproduce "
            f"this error in {', '.join(operations)}",
        )

    def _suggestions(
        self, exceptions: tuple[FoundException, ...], text: str
    ) -> list[SuggestionOut]:
        query = exceptions[0].message if exceptions else text[-2000:]
        return [
            SuggestionOut(
                errorId=record_id,
                slug=self.index.records[record_id].slug,
                errorMessage=self.index.records[record_id].message,
                score=score,
            )
            for record_id, score in self.index.similar(query)
        ]


def _by_hints(operations: tuple[str, ...], text: str) -> list[str]:
    """The record's constructs, those the paste mentions first."""
    mentioned = [
        op for op in operations if any(hint in text for hint in _OPERATION_HINTS.get(op, ()))
    ]
    return mentioned + [op for op in operations if op not in mentioned]


def _exception(found: FoundException) -> ExceptionOut:
    return ExceptionOut(
        exceptionClass=found.qualified_class,
        message=found.message,
        lineNumber=found.line_number,
        chainPosition=found.chain_position,
        truncated=found.truncated,
    )
