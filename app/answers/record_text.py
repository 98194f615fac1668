"""Records as pages and bots present them: addressed by slug or id, fields by their headings,
errata's corrections by the field they correct."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from app.errors import NotFound
from app.jaxref.templates import split_template

if TYPE_CHECKING:  # the cards read no database: a command's answer loads none
    from app.records.models import RecordRow
    from app.records.store import RecordStore

FIELD_LABELS = {
    "errorMessage": "Error message",
    "messagePattern": "Message pattern",
    "documentation": "What it means",
    "sourceCode": "Source",
    "githubUrl": "Source",
    "lineNumber": "Source",
    "solutions": "Solutions",
    "exampleFix": "Example fix",
    "handlingStrategy": "Defensive patterns",
    "validationCode": "Validate before calling",
    "typeGuard": "Type guard",
    "tryCatchPattern": "Try / except",
    "preventionTips": "Prevention",
    "triggerScenarios": "When it happens",
    "commonSituations": "When it happens",
    "relatedErrors": "Related errors",
}
CODE_FIELDS = frozenset(
    {"messagePattern", "sourceCode", "exampleFix", "validationCode", "typeGuard", "tryCatchPattern"}
)


def readable_message(template: str) -> str:
    """A message template as a heading: its placeholders elided (``Got bytes=… but``), side
    by side ones as one, for people who never saw the f-string; the template itself is
    shown where it is explained."""
    text = ""
    for piece in split_template(template):
        if isinstance(piece, str):
            text += piece
        elif piece.self_documenting:
            text += f"{piece.expression.rstrip('=')}=…"
        elif not text.endswith("…"):
            text += "…"
    return text


def field_label(field: str) -> str:
    return FIELD_LABELS.get(field, field)


def corrections_by_field(annotation: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    """errata's corrections of a record, keyed by the field they correct."""
    return {item["field"]: item for item in (annotation or {}).get("corrections") or []}


def find_record(store: RecordStore, key: str) -> RecordRow:
    """By slug, what links use, else by id, what people copy from JSON (NotFound if neither)."""
    try:
        return store.get_by_slug(key)
    except NotFound:
        pass
    try:
        return store.get(key)
    except NotFound:
        raise NotFound(f"No error record with slug or id {key!r}.") from None
