"""Match: find the known errors in a paste, type their values, and attach the engine's fix.

Everything it reads is in the process's catalog (see ``catalog.py``): no database work.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from app.alignment import AlignmentInputError
from app.errors import PayloadTooLarge, invalid_field
from app.matching import FoundException, Match, PasteTooLarge, UnreadablePaste, match_paste
from app.matching.values import UserFrame
from app.services.catalog import Catalog, RecordInfo
from app.services.compute import (
    ComputeRequest,
    ComputeResponse,
    ComputeService,
    checked_jax_version,
)

# Words in a paste that say which construct the user ran, most specific first.
_OPERATION_HINTS = {
    "ref_union": ("RefUnion",),
    "smem_alias": ("ExtractAliasedRef",),
    "smem_bitcast": ("_handle_dtype_bitcast", "bitcast"),
    "pallas_call": ("pallas_call", "emit_pipeline", "offset: ?>"),
    "copy_gmem_to_smem": ("copy_gmem_to_smem",),
}


JAX_VERSION_MAX_LENGTH = 40


class MatchRequest(BaseModel):
    text: str = Field(min_length=1, description="A traceback, log or chat paste (≤ 1 MiB).")
    jaxVersion: str | None = Field(default=None, max_length=JAX_VERSION_MAX_LENGTH)


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


class UserFrameOut(BaseModel):
    file: str
    line: int
    source: str | None = Field(description="The line of code under the frame, as pasted.")


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
    userFrame: UserFrameOut | None = Field(
        description="The user's own code nearest the error (not a library's), if pasted."
    )
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
    def __init__(self, catalog: Catalog, *, run_engine: bool = True) -> None:
        """``run_engine=False``: see ``ComputeService``; a fix the engine has not computed
        yet raises ``EngineNeeded``."""
        self.catalog = catalog
        self.engine = ComputeService(catalog, run_engine=run_engine)

    def match(self, request: MatchRequest) -> MatchResponse:
        checked_jax_version(request.jaxVersion)
        try:
            report = match_paste(request.text, self.catalog.patterns, request.jaxVersion)
        except PasteTooLarge as exc:
            raise PayloadTooLarge(f"text: {exc}") from None
        except UnreadablePaste as exc:
            raise invalid_field("text", str(exc)) from None
        matches = [self._match(match, request) for match in report.matches]
        suggestions = [] if matches else self._suggestions(report.exceptions, request.text)
        return MatchResponse(
            matches=matches,
            exceptions=[_exception(found) for found in report.exceptions],
            unmatched=[_exception(found) for found in report.unmatched],
            suggestions=suggestions,
        )

    def _match(self, match: Match, request: MatchRequest) -> MatchOut:
        info = self.catalog.records[match.record_id]
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
            userFrame=_frame(match.user_frame),
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
            return None, None, _missing_values(values.shape, values.dtype)
        operations = _by_hints(info.operations, request.text)
        for operation in operations:
            try:
                verdict = self.engine.verdict(
                    operation, tuple(values.shape), values.dtype, request.jaxVersion
                )
            except AlignmentInputError:
                continue
            first = verdict.first_violation
            if first is not None and first.rule_id == info.rule:
                fix = self.engine.compute(
                    ComputeRequest(
                        operation=operation,
                        shape=values.shape,
                        dtype=values.dtype,
                        jaxVersion=request.jaxVersion,
                    )
                )
                return operation, _from_the_users_line(fix, match.user_frame), None
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
                slug=self.catalog.records[record_id].slug,
                errorMessage=self.catalog.records[record_id].message,
                score=score,
            )
            for record_id, score in self.catalog.similar(query)
        ]


def _missing_values(shape: list[int] | None, dtype: str | None) -> str:
    """What the engine lacks, saying what the paste does show."""
    if dtype is not None:
        return f"the paste shows the dtype ({dtype}) but not the block's shape"
    if shape is not None:
        return f"the paste shows the block's shape ({shape}) but not its dtype"
    return "the paste does not show the block's shape and dtype"


def _from_the_users_line(fix: ComputeResponse, frame: UserFrame | None) -> ComputeResponse:
    """The fixes, each starting from the user's line that writes the dtype (where the paste
    shows one) rather than from the construct in general. A copy: answers are shared."""
    if frame is None or frame.source is None or frame.dtype is None:
        return fix
    before = f"# {frame.file}, line {frame.line}\n{frame.source}"
    fixes = [
        option.model_copy(update={"code": option.code.model_copy(update={"before": before})})
        for option in fix.fixes
    ]
    return fix.model_copy(update={"fixes": fixes})


def _frame(frame: UserFrame | None) -> UserFrameOut | None:
    if frame is None:
        return None
    return UserFrameOut(file=frame.file, line=frame.line, source=frame.source)


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
