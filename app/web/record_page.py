"""What a record page shows, gathered from the record, errata's annotation and its relatives.

The sections follow the dataset's rendered text pages, except that what the error means
comes first, then errata's corrections, because some of the shipped advice is wrong, and
what to do (the solutions, the example fix) comes before the source around the raise.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.answers.catalog import Catalog
from app.answers.computed import closest_curated
from app.answers.links import RELATIVE
from app.answers.record_text import CODE_FIELDS, corrections_by_field, field_label
from app.answers.related import Relative, related_records
from app.engines.mosaic_gpu import render_tuple
from app.jaxref.releases import span
from app.matching.frames import FrameIndex
from app.records.models import RecordRow
from app.records.schema import ErrorRecord
from app.records.store import RecordStore

SHORT_SHA = 10
DEFENSIVE_FIELDS = ("validationCode", "typeGuard", "tryCatchPattern")
RELATED_SHOWN = 6
# Related records a page of the full list (/errors/{key}/related) shows.
RELATED_PAGE_SIZE = 50
# How the reasons of a relative (see related) read, in order; ``{}`` is the constructs,
# tags or words named, or the record's own background tag.
_SAID = {
    "listed": "listed by this record",
    "next": "checked next in {}",
    "before": "checked just before in {}",
    "construct": "also checked in {}",
    "function": "same function",
    "filePath": "same source file",
    "module": "same folder",
    "rule": "same rule",
    "backgroundTag": "also a {}",
    "errorClass": "same error class",
    "tag": "tags {}",
    "word": "words {}",
}


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
class Code:
    field: str
    title: str
    code: str


@dataclass(frozen=True)
class Written:
    """What the record's document says that the page shows: none of the rest (its pattern,
    source text, releases, tags, …), which the page shows worked out, or not at all."""

    id: str
    message: str
    repo: str | None
    severity: str | None
    error_class: str | None
    said_by: str | None  # the compiler printing a message no JAX source holds
    retired: bool
    documentation: str | None
    file_path: str | None
    line_number: int | None
    solutions: list[str]
    example_fix: str | None
    handling_strategy: str | None
    defensive: list[Code]  # validationCode, typeGuard, tryCatchPattern, where written
    prevention_tips: list[str]
    trigger_scenarios: str | None
    common_situations: str | None
    analyzed_at: str | None


@dataclass(frozen=True)
class RecordPage:
    written: Written
    rule: str | None
    corrections: list[Correction]
    notes: list[str]
    source_url: str | None
    source_sha: str | None
    source_lines: list[SourceLine]
    related: list[RelatedRecord]
    related_total: int  # every related record, of which ``related`` shows the best few
    unresolved: list[str]
    older_wordings: list[str]
    example_url: str | None
    example_label: str | None
    site: SiteFacts | None
    derived: bool  # the documentation was written from the source, not by a person
    closest: list[RelatedRecord]  # for a derived record: the curated records nearest to it

    @property
    def corrected(self) -> set[str]:
        return {correction.field for correction in self.corrections}


def record_page(store: RecordStore, catalog: Catalog, row: RecordRow) -> RecordPage:
    record = ErrorRecord.model_validate(row.document)
    annotation = store.annotation(row.id) or {}
    relatives = related_records(store, catalog, row.id, limit=RELATED_SHOWN, live_only=True)
    example = annotation.get("examples") or row.document.get("examples") or {}
    example_url, example_label = _example(example)
    site = _site_facts(annotation.get("mined") or row.document)
    derived = row.document.get("documentationSource") == "derived"
    return RecordPage(
        written=_written(record),
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
        related=[_related_record(item, row) for item in relatives.items],
        related_total=relatives.total,
        unresolved=relatives.unresolved,
        older_wordings=[
            wording["text"]
            for wording in [
                *(row.document.get("olderWordings") or []),
                *(annotation.get("olderWordings") or []),
            ]
        ],
        example_url=example_url,
        example_label=example_label,
        site=site,
        derived=derived,
        closest=_closest(catalog, row.id, site) if derived else [],
    )


@dataclass(frozen=True)
class RelatedList:
    """A page of every record related to one, strongest relation first."""

    record_url: str
    message: str
    items: list[RelatedRecord]
    total: int
    next_cursor: str | None


def related_list(
    store: RecordStore, catalog: Catalog, row: RecordRow, cursor: str | None
) -> RelatedList:
    """The live records related to ``row``, as the API ranks them, a page at a time."""
    found = related_records(
        store, catalog, row.id, limit=RELATED_PAGE_SIZE, cursor=cursor, live_only=True
    )
    return RelatedList(
        record_url=RELATIVE.record(row.slug or row.id),
        message=row.error_message,
        items=[_related_record(item, row) for item in found.items],
        total=found.total,
        next_cursor=found.next_cursor,
    )


def _related_record(item: Relative, row: RecordRow) -> RelatedRecord:
    return RelatedRecord(RELATIVE.record(item.id), item.message, _said(item.reasons, row))


def _said(reasons: list[str], row: RecordRow) -> str:
    """A relative's reasons (``listed``, ``next:<construct>``, ``tag:<t>``, … see related)
    as the page words them."""
    named: dict[str, list[str]] = {}
    for reason in reasons:
        kind, _, value = reason.partition(":")
        named.setdefault(kind, []).append(value)
    checked = {*named.get("next", []), *named.get("before", [])}  # not again as construct
    named["construct"] = [name for name in named.get("construct", []) if name not in checked]
    own = {"backgroundTag": [row.background_tag or ""]}
    return "; ".join(
        wording.format(", ".join(own.get(kind) or named[kind]))
        for kind, wording in _SAID.items()
        if named.get(kind)
    )


def _closest(catalog: Catalog, record_id: str, site: SiteFacts | None) -> list[RelatedRecord]:
    info = catalog.records.get(record_id)
    if info is None or site is None or site.function is None:
        return []
    return [
        RelatedRecord(
            url=RELATIVE.record(near.errorId),
            message=near.errorMessage,
            reasons=near.why,
        )
        for near in closest_curated(info, site.function, catalog, FrameIndex.load())
    ]


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


def _written(record: ErrorRecord) -> Written:
    return Written(
        id=record.id,
        message=record.errorMessage,
        repo=record.repo,
        severity=record.severity,
        error_class=record.errorClass,
        said_by=record.saidBy.compiler if record.saidBy else None,
        retired=record.retired,
        documentation=record.documentation,
        file_path=record.filePath,
        line_number=record.lineNumber,
        solutions=record.solutions,
        example_fix=record.exampleFix,
        handling_strategy=record.handlingStrategy,
        defensive=[
            Code(field, field_label(field), code)
            for field in DEFENSIVE_FIELDS
            if (code := getattr(record, field))
        ],
        prevention_tips=record.preventionTips,
        trigger_scenarios=record.triggerScenarios,
        common_situations=record.commonSituations,
        analyzed_at=record.analyzedAt,
    )


def _https(url: str | None) -> str | None:
    """Only web links become hrefs: a record's URL is data, and could say javascript:."""
    return url if url and url.startswith(("https://", "http://")) else None
