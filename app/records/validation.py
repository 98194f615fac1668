"""Turn one raw record (a dict from JSON or a parsed page) into a storable, checked record."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from app.jaxref.templates import PatternError, compile_pattern, derive_checked_pattern
from app.records.schema import (
    MAX_DATASET_VERSION_CHARS,
    MAX_SLUG_CHARS,
    Annotation,
    ErrorRecord,
    OlderWording,
)
from app.records.slugs import derive_slug

# A record is a few levels deep; anything far deeper is not one, and would only cost the
# serializers' recursion.
MAX_DEPTH = 32


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
    check_storable(document)
    model = _parse(ErrorRecord, document)
    # Derived values go into the document and into its model alike (the model is this
    # call's own: set, not copied).
    if not model.slug:
        # The column's bound, which only a message transliterated very long could pass.
        model.slug = document["slug"] = derive_slug(model.errorMessage)[:MAX_SLUG_CHARS]
    if model.messagePattern:
        _check_pattern("messagePattern", model.messagePattern)
    else:
        try:
            pattern = derive_checked_pattern(model.errorMessage)
        except PatternError as exc:
            raise RecordInvalid("messagePattern", str(exc)) from None
        model.messagePattern = document["messagePattern"] = pattern
    _check_older_wordings(model.olderWordings)
    return ValidRecord(document=document, model=model)


def validate_annotation(raw: object) -> ValidAnnotation:
    document = _object(raw, "annotation")
    check_storable(document)
    model = _parse(Annotation, document)
    _check_older_wordings(model.olderWordings)
    return ValidAnnotation(document=document, model=model)


def check_dataset_version(version: object) -> str | None:
    """An envelope's ``datasetVersion``: an ISO-8601 string (they compare as strings) or null."""
    if version is None:
        return None
    if not isinstance(version, str):
        raise RecordInvalid("datasetVersion", "must be a string or null")
    if len(version) > MAX_DATASET_VERSION_CHARS:
        raise RecordInvalid("datasetVersion", f"longer than {MAX_DATASET_VERSION_CHARS} characters")
    if (reason := unstorable_text(version)) is not None:
        raise RecordInvalid("datasetVersion", reason)
    return version


def unstorable_text(text: str) -> str | None:
    """Why a database would refuse ``text``, or ``None``: PostgreSQL holds no NUL character
    in text (nor lets JSON functions read one), and UTF-8 has no lone surrogate."""
    if "\x00" in text:
        return "contains a NUL character"
    if not text.isascii():
        try:
            text.encode()
        except UnicodeEncodeError:
            return "contains an unpaired surrogate"
    return None


def check_storable(document: dict[str, Any]) -> None:
    """Refuse what a document's JSON cannot faithfully hold in both databases: text they
    refuse, non-finite numbers (``NaN`` is not JSON), nesting past ``MAX_DEPTH``."""
    found = _unstorable(document, 0)
    if found is not None:
        path, reason = found
        raise RecordInvalid(".".join(reversed(path)) or None, reason)


def _unstorable(value: object, depth: int) -> tuple[list[str], str] | None:
    """The first unstorable value's path (innermost first) and why; the path is only built
    for a value found, since every record of an import is walked."""
    kind = type(value)
    if kind is str:
        reason = unstorable_text(value)  # type: ignore[arg-type]
        return None if reason is None else ([], reason)
    if kind is float:
        finite = math.isfinite(value)  # type: ignore[arg-type]
        return None if finite else ([], f"{value} is not a finite number")
    if kind is dict or kind is list:
        if depth >= MAX_DEPTH:
            return [], f"nested deeper than {MAX_DEPTH} levels"
        items = value.items() if kind is dict else enumerate(value)  # type: ignore[attr-defined,arg-type]
        for key, item in items:
            if isinstance(key, str) and (reason := unstorable_text(key)) is not None:
                return [repr(key)], f"field name {reason}"
            found = _unstorable(item, depth + 1)
            if found is not None:
                found[0].append(str(key))
                return found
    return None


def _object(raw: object, what: str) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise RecordInvalid(None, f"{what} must be a JSON object, got {type(raw).__name__}")
    return dict(raw)


def _parse[ModelT: (ErrorRecord, Annotation)](schema: type[ModelT], raw: dict[str, Any]) -> ModelT:
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
