"""What a record page shows, gathered from the record, errata's annotation and its relatives.

The sections follow the dataset's rendered text pages; errata's corrections come first,
because some of the shipped advice is wrong.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.alignment import render_tuple
from app.knowledge.releases import span
from app.records.models import RecordRow
from app.records.schema import ErrorRecord
from app.records.store import RecordStore
from app.rendering.links import RELATIVE
from app.rendering.records import CODE_FIELDS, corrections_by_field, field_label

SHORT_SHA = 10
_REASONS = {"filePath": "same source file", "backgroundTag": "same background", "listed": "listed"}


@dataclass(frozen=True)
class SourceLine:
    number: int | None
    text: str
    thrown: bool


@dataclass(frozen=True)
class Correction:
    field: str
    label: str
    problem: str
    correction: str
    is_code: bool


@dataclass(frozen=True)
class RelatedRecord:
    url: str
    message: str
    reasons: str


@dataclass(frozen=True)
class ReleaseLine:
    release: str
    line: int | None
    url: str | None


@dataclass(frozen=True)
class Wording:
    message: str
    first: str
    last: str


@dataclass(frozen=True)
class SiteFacts:
    """What mining JAX's source says of the record's site, in every release it is in."""

    function: str | None
    condition: str | None
    definitions: list[str]
    lowering_rule: str | None
    backend: str | None
    kind: str | None
    releases: list[ReleaseLine]
    wordings: list[Wording]

    @property
    def span(self) -> str:
        return span([line.release for line in self.releases])


@dataclass(frozen=True)
class RecordPage:
    record: ErrorRecord
    rule: str | None
    corrections: list[Correction]
    notes: list[str]
    source_url: str | None
    source_sha: str | None
    source_lines: list[SourceLine]
    related: list[RelatedRecord]
    unresolved: list[str]
    older_wordings: list[str]
    example_url: str | None
    example_label: str | None
    site: SiteFacts | None
    derived: bool  # the documentation was written from the source, not by a person

    @property
    def corrected(self) -> set[str]:
        return {correction.field for correction in self.corrections}


def record_page(store: RecordStore, row: RecordRow) -> RecordPage:
    record = ErrorRecord.model_validate(row.document)
    annotation = store.annotation(row.id) or {}
    related, unresolved = store.related(row.id)
    example = annotation.get("examples") or row.document.get("examples") or {}
    example_url, example_label = _example(example)
    return RecordPage(
        record=record,
        rule=annotation.get("rule") or record.rule,
        corrections=[
            Correction(
                field=field,
                label=field_label(field),
                problem=item["problem"],
                correction=item["correction"],
                is_code=field in CODE_FIELDS,
            )
            for field, item in corrections_by_field(annotation).items()
        ],
        notes=list(annotation.get("notes") or []),
        source_url=_https(record.githubUrl),
        source_sha=(record.analyzedSha or "")[:SHORT_SHA] or None,
        source_lines=_source_lines(record),
        related=[
            RelatedRecord(
                url=RELATIVE.record(item.row.slug or item.row.id),
                message=item.row.error_message,
                reasons=", ".join(_reason(reason) for reason in item.reasons),
            )
            for item in related
        ],
        unresolved=unresolved,
        older_wordings=[
            wording["text"]
            for wording in [
                *(row.document.get("olderWordings") or []),
                *(annotation.get("olderWordings") or []),
            ]
        ],
        example_url=example_url,
        example_label=example_label,
        site=_site_facts(annotation.get("mined") or row.document),
        derived=row.document.get("documentationSource") == "derived",
    )


def _site_facts(facts: dict[str, Any]) -> SiteFacts | None:
    """From a mined record, or the ``mined`` part of a curated record's annotation."""
    site = facts.get("site")
    if not isinstance(site, dict):
        return None
    return SiteFacts(
        function=site.get("function"),
        condition=site.get("condition"),
        definitions=list(site.get("definitions") or []),
        lowering_rule=site.get("loweringRule"),
        backend=site.get("backend"),
        kind=site.get("kind"),
        releases=[
            ReleaseLine(entry["release"], entry.get("lineNumber"), _https(entry.get("githubUrl")))
            for entry in facts.get("releases") or []
        ],
        wordings=[
            Wording(entry["errorMessage"], entry["from"], entry["until"])
            for entry in facts.get("messageHistory") or []
        ],
    )


def _source_lines(record: ErrorRecord) -> list[SourceLine]:
    if not record.sourceCode:
        return []
    start = record.sourceCodeStart
    lines = record.sourceCode.rstrip("\n").split("\n")
    numbers = [start + offset if start else None for offset in range(len(lines))]
    return [
        SourceLine(number, text, number is not None and number == record.lineNumber)
        for number, text in zip(numbers, lines, strict=True)
    ]


def _example(example: dict[str, Any]) -> tuple[str | None, str | None]:
    """A link to the compute page for the record's verified example, when it has one."""
    before = example.get("before")
    if not (example.get("operation") and before):
        return None, None
    shape = render_tuple(tuple(before["shape"]))
    url = RELATIVE.compute(
        operation=example["operation"],
        shape=shape,
        dtype=before["dtype"],
        targetDtype=before.get("targetDtype"),
    )
    return url, f"{shape} {before['dtype']} in {example['operation']}"


def _reason(reason: str) -> str:
    if reason.startswith("tag:"):
        return f"tag {reason.removeprefix('tag:')}"
    return _REASONS.get(reason, reason)


def _https(url: str | None) -> str | None:
    """Only web links become hrefs: a record's URL is data, and could say javascript:."""
    return url if url and url.startswith(("https://", "http://")) else None
