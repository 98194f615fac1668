"""Turn one raw record (a dict from JSON or a parsed page) into a storable, checked record."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import ValidationError

from app.matching.templates import PatternError, compile_pattern, derive_pattern
from app.records.schema import Annotation, ErrorRecord, OlderWording
from app.records.slugs import derive_slug

ModelT = TypeVar("ModelT", ErrorRecord, Annotation)


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


@dataclass(frozen=True)
class ValidAnnotation:
    document: dict[str, Any]
    model: Annotation


def validate_record(raw: object) -> ValidRecord:
    """Check types and the message pattern; fill in a derived slug and pattern when absent.

    The document keeps every field and value it came with, so it is served back as given.
    """
    document = _object(raw, "record")
    model = _parse(ErrorRecord, document)
    if not model.slug:
        document["slug"] = derive_slug(model.errorMessage)
    if not model.messagePattern:
        document["messagePattern"] = derive_pattern(model.errorMessage)
    _check_pattern("messagePattern", document["messagePattern"])
    _check_older_wordings(model.olderWordings)
    return ValidRecord(document=document, model=ErrorRecord.model_validate(document))


def validate_annotation(raw: object) -> ValidAnnotation:
    document = _object(raw, "annotation")
    model = _parse(Annotation, document)
    _check_older_wordings(model.olderWordings)
    return ValidAnnotation(document=document, model=model)


def _object(raw: object, what: str) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise RecordInvalid(None, f"{what} must be a JSON object, got {type(raw).__name__}")
    return dict(raw)


def _parse(schema: type[ModelT], raw: dict[str, Any]) -> ModelT:
    try:
        return schema.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or None
        raise RecordInvalid(field, first["msg"]) from None


def _check_pattern(field: str, pattern: str) -> None:
    try:
        compile_pattern(pattern)
    except PatternError as exc:
        raise RecordInvalid(field, str(exc)) from None


def _check_older_wordings(wordings: list[OlderWording]) -> None:
    for index, wording in enumerate(wordings):
        if wording.pattern:
            _check_pattern(f"olderWordings.{index}.pattern", wording.pattern)
