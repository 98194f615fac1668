"""What a record page shows, gathered from the record, errata's annotation and its relatives.

The sections follow the dataset's rendered text pages, except that what the error means
comes first, then errata's corrections, because some of the shipped advice is wrong.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from app.answers.catalog import Catalog, RecordInfo
from app.answers.computed import closest_curated
from app.answers.links import RELATIVE
from app.answers.record_text import CODE_FIELDS, corrections_by_field, field_label
from app.engines.mosaic_gpu import OPERATIONS, render_tuple
from app.jaxref.releases import span
from app.matching.frames import FrameIndex
from app.records.models import RecordRow
from app.records.related import Ranking, Related
from app.records.schema import ErrorRecord
from app.records.store import RecordStore

SHORT_SHA = 10
RELATED_SHOWN = 6
# A tag more than this share of the records carry (jax, pallas, …) relates none of them.
SPECIFIC_TAG_SHARE = 0.25
# Each kind of relation, what it weighs and how it reads; a record needs MIN_RELATED_SCORE.
_RELATIONS = {
    "listed": (4, "listed by this record"),
    "next": (3, "checked next in {}"),
    "before": (3, "checked just before in {}"),
    "file": (2, "same source file"),
    "construct": (1, "also checked in {}"),
    "kind": (1, "also a {}"),
    "tags": (1, "tags {}"),  # per tag, at most two
}
MIN_RELATED_SCORE = 2
# The store's relatives the page weighs against the checks a construct runs beside the
# record's, ranked by the database by the same weights: far more than the page shows, few
# enough to read at once however many records share the record's file or tags.
RELATED_CANDIDATES = 50
_BY_WEIGHT = Ranking(
    listed=_RELATIONS["listed"][0],
    file=_RELATIONS["file"][0],
    background=_RELATIONS["kind"][0],
    tag=_RELATIONS["tags"][0],
    most_tags=2,
)
# Related records a page of the full list (/errors/{key}/related) shows.
RELATED_PAGE_SIZE = 50


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
    relatives = store.related(
        row.id,
        limit=RELATED_CANDIDATES,
        ranking=_BY_WEIGHT,
        tags=_specific_tags(store, catalog, row),
        live_only=True,
    )
    example = annotation.get("examples") or row.document.get("examples") or {}
    example_url, example_label = _example(example)
    site = _site_facts(annotation.get("mined") or row.document)
    derived = row.document.get("documentationSource") == "derived"
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
        related=_related(catalog, row, relatives.items),
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
    """The live records related to ``row`` as the API ranks them, by the tags few records
    carry (as on the record page), a page at a time."""
    found = store.related(
        row.id,
        limit=RELATED_PAGE_SIZE,
        cursor=cursor,
        tags=_specific_tags(store, catalog, row),
        live_only=True,
    )
    return RelatedList(
        record_url=RELATIVE.record(row.slug or row.id),
        message=row.error_message,
        items=[
            RelatedRecord(
                url=RELATIVE.record(item.id),
                message=item.error_message,
                reasons=_said(item.reasons, row.background_tag),
            )
            for item in found.items
        ],
        total=found.total,
        next_cursor=found.next_cursor,
    )


def _specific_tags(store: RecordStore, catalog: Catalog, row: RecordRow) -> list[str]:
    """The record's tags that relate: those carried by at most ``SPECIFIC_TAG_SHARE`` of
    the live records."""
    tags = [tag.tag for tag in row.tags]
    counts = store.tag_counts(tags)
    specific = max(1.0, SPECIFIC_TAG_SHARE * catalog.live_records)
    return [tag for tag in tags if counts.get(tag, 0) <= specific]


def _said(reasons: list[str], background_tag: str | None) -> str:
    """The store's reasons (``listed``, ``filePath``, ``backgroundTag``, ``tag:<t>``) as
    the record page words them."""
    tags = [reason.removeprefix("tag:") for reason in reasons if reason.startswith("tag:")]
    said = [
        wording.format(background_tag or "")
        for reason, relation in (
            ("listed", "listed"),
            ("filePath", "file"),
            ("backgroundTag", "kind"),
        )
        if reason in reasons
        for wording in [_RELATIONS[relation][1]]
    ]
    if tags:
        said.append(_RELATIONS["tags"][1].format(", ".join(tags)))
    return "; ".join(said)


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


def _related(catalog: Catalog, row: RecordRow, shared: list[Related]) -> list[RelatedRecord]:
    """The records worth reading next, best first: those the record lists, the checks run
    right before or after its own in a construct, the same source file, the same construct,
    tags few records carry. ``shared`` is the store's best file, kind, tag (of those tags
    few records carry) and listed relatives."""
    found: dict[str, dict[str, list[str]]] = {}

    def note(record_id: str, relation: str, detail: str = "") -> None:
        if record_id != row.id:
            details = found.setdefault(record_id, {}).setdefault(relation, [])
            if detail not in details:
                details.append(detail)

    for item in shared:
        for reason in item.reasons:
            if reason == "listed":
                note(item.id, "listed")
            elif reason == "filePath":
                note(item.id, "file")
            elif reason == "backgroundTag":
                note(item.id, "kind", row.background_tag or "")
            else:
                note(item.id, "tags", reason.removeprefix("tag:"))
    own = catalog.records.get(row.id)
    if own is not None:
        for other_id, relation, operation in _check_neighbours(own, catalog):
            note(other_id, relation, operation)
    scored = sorted(
        (
            (_score(relations), record_id, relations)
            for record_id, relations in found.items()
            if record_id in catalog.records and not catalog.records[record_id].retired
        ),
        key=lambda item: (-item[0], item[1]),
    )
    return [
        _related_record(catalog.records[record_id], relations)
        for score, record_id, relations in scored[:RELATED_SHOWN]
        if score >= MIN_RELATED_SCORE
    ]


def _check_neighbours(own: RecordInfo, catalog: Catalog) -> Iterator[tuple[str, str, str]]:
    """The records of the checks a construct runs with the record's own: the one right
    before or after it, or another, and the construct."""
    if not own.rule:  # most records document no rule: no construct orders their check
        return
    for other in catalog.records.values():
        if other.retired or not other.rule or other.rule == own.rule:
            continue
        for operation in sorted(set(own.operations) & set(other.operations)):
            order = _check_order(operation)
            if own.rule in order and other.rule in order:
                step = order.index(other.rule) - order.index(own.rule)
                yield other.id, {1: "next", -1: "before"}.get(step, "construct"), operation


def _score(relations: dict[str, list[str]]) -> int:
    return sum(
        _RELATIONS[relation][0] * (min(2, len(details)) if relation == "tags" else 1)
        for relation, details in relations.items()
    )


def _check_order(operation: str) -> list[str]:
    """The rules an operation checks, in the order JAX checks them."""
    return list(dict.fromkeys(step.rule.id for step in OPERATIONS[operation].steps))


def _related_record(info: RecordInfo, relations: dict[str, list[str]]) -> RelatedRecord:
    said = []
    for relation, (_, wording) in _RELATIONS.items():
        details = relations.get(relation)
        if relation == "construct":  # a construct named already, as next or before, is not again
            named = {*relations.get("next", []), *relations.get("before", [])}
            details = [detail for detail in details or [] if detail not in named]
        if details:
            said.append(wording.format(", ".join(details)))
    return RelatedRecord(
        url=RELATIVE.record(info.id), message=info.message, reasons="; ".join(said)
    )


def _https(url: str | None) -> str | None:
    """Only web links become hrefs: a record's URL is data, and could say javascript:."""
    return url if url and url.startswith(("https://", "http://")) else None
