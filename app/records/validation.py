"""Turn one raw record (a dict from JSON or a parsed page) into a storable, checked record."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from app.matching.templates import PatternError, compile_pattern, derive_pattern
from app.records.schema import ErrorRecord
from app.records.slugs import derive_slug


class RecordInvalid(ValueError):
    """A record that cannot be stored; names the offending field."""

    def __init__(self, field: str | None, message: str) -> None:
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field
        self.message = message


@dataclass(frozen=True)
class ValidRecord:
    document: dict[str, Any]
    model: ErrorRecord


def validate_record(raw: object) -> ValidRecord:
    """Check types and the message pattern; fill in a derived slug and pattern when absent.

    The document keeps every field and value it came with, so it is served back as given.
    """
    if not isinstance(raw, dict):
        raise RecordInvalid(None, f"a record must be a JSON object, got {type(raw).__name__}")
    try:
        model = ErrorRecord.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or None
        raise RecordInvalid(field, first["msg"]) from None

    document = dict(raw)
    if not model.slug:
        document["slug"] = derive_slug(model.errorMessage)
    if not model.messagePattern:
        document["messagePattern"] = derive_pattern(model.errorMessage)
    try:
        compile_pattern(document["messagePattern"])
    except PatternError as exc:
        raise RecordInvalid("messagePattern", str(exc)) from None
    return ValidRecord(document=document, model=ErrorRecord.model_validate(document))
