"""The dataset's record schema (v2), used to validate what comes in and to document the API.

Validation is strict (a line number given as "975" is a wrong type, not a number) and open:
unknown fields are kept, so a newer dataset's records pass through unchanged.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

RECORD_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"
# An error message is a line or a few, not a document: a longer one would only make every
# fuzzy suggestion slower (its message is compared with each paste that matches nothing).
MAX_MESSAGE_CHARS = 4096


class ErrorRecord(BaseModel):
    """One error record, camelCase as in the dataset."""

    model_config = ConfigDict(extra="allow", strict=True)

    id: str = Field(pattern=RECORD_ID_PATTERN, examples=["225d0e9c2ee22311"])
    errorMessage: str = Field(min_length=1, max_length=MAX_MESSAGE_CHARS)
    repo: str | None = None
    slug: str | None = None
    errorCode: str | None = None
    messagePattern: str | None = None
    errorType: str | None = None
    errorClass: str | None = None
    httpStatus: int | None = None
    severity: str | None = None
    filePath: str | None = None
    lineNumber: int | None = None
    sourceCode: str | None = None
    sourceCodeStart: int | None = None
    sourceCodeEnd: int | None = None
    githubUrl: str | None = None
    documentation: str | None = None
    triggerScenarios: str | None = None
    commonSituations: str | None = None
    solutions: list[str] = Field(default_factory=list)
    exampleFix: str | None = None
    handlingStrategy: str | None = None
    validationCode: str | None = None
    typeGuard: str | None = None
    tryCatchPattern: str | None = None
    preventionTips: list[str] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    backgroundTag: str | None = None
    analyzedSha: str | None = None
    analyzedAt: str | None = None
    schemaVersion: int | None = None
    relatedErrors: list[str] = Field(default_factory=list)
    retired: bool = False
    rule: str | None = Field(default=None, description="The catalog rule (MGPU-…) it documents.")
    operations: list[str] = Field(default_factory=list)
    olderWordings: list[OlderWording] = Field(default_factory=list)


class OlderWording(BaseModel):
    """A wording JAX used before; pastes from older versions still say it."""

    model_config = ConfigDict(extra="allow", strict=True)

    text: str
    pattern: str | None = None
    until: str | None = None


class Correction(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)

    field: str
    problem: str
    correction: str


class Annotation(BaseModel):
    """errata's knowledge about a record it does not own; served beside it, never inside it."""

    model_config = ConfigDict(extra="allow", strict=True)

    recordId: str = Field(pattern=RECORD_ID_PATTERN)
    rule: str | None = None
    operations: list[str] = Field(default_factory=list)
    olderWordings: list[OlderWording] = Field(default_factory=list)
    relatedErrors: list[str] = Field(default_factory=list)
    corrections: list[Correction] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


class RecordEnvelope(BaseModel):
    """What ``GET /api/errors/{id}`` returns: the dataset's own envelope."""

    model_config = ConfigDict(extra="allow")

    record: dict[str, Any] = Field(description="The record, every field as imported.")
    datasetVersion: str | None = None
    annotation: dict[str, Any] | None = Field(
        default=None, description="errata's notes and corrections (only with ?annotated=true)."
    )


class RecordSummary(BaseModel):
    id: str
    slug: str
    errorMessage: str
    errorClass: str | None
    repo: str | None
    severity: str | None
    tags: list[str]
    retired: bool


class RecordPage(BaseModel):
    items: list[RecordSummary]
    total: int
    nextCursor: str | None = Field(
        description="Pass as `cursor` for the next page; null at the end."
    )


class RelatedRecord(BaseModel):
    id: str
    slug: str
    errorMessage: str
    reasons: list[str] = Field(
        description="Why it is related: filePath, backgroundTag, tag:<t>, listed."
    )


class RelatedRecords(BaseModel):
    items: list[RelatedRecord]
    unresolved: list[str] = Field(description="Listed related errors that match no known record.")


class ImportIssue(BaseModel):
    source: str
    location: str | None
    field: str | None
    message: str


class ImportSummaryOut(BaseModel):
    added: int
    updated: int
    unchanged: int
    failed: int
    errors: list[ImportIssue]
