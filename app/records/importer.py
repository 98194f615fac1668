"""Read record documents in every format the dataset ships, and load them into the store.

Formats: the JSON envelope ``{"record": {...}, "datasetVersion": ...}``, a bare record, a JSON
array of either, JSON Lines, and the rendered text page; plus errata's own annotations of
records it does not own (``{"annotation": {"recordId": ..., ...}}``). A file is one unit: if
any record in it is bad, nothing from it is written and the error names the file, the place
and the field.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from app import collector
from app.db import refresh_planner_statistics, transaction, widen_cache_for_bulk_write
from app.errors import InvalidInput
from app.records.store import Outcome, RecordStore
from app.records.text_pages import PageParseError, parse_page
from app.records.validation import (
    RecordInvalid,
    ValidAnnotation,
    ValidRecord,
    check_dataset_version,
    validate_annotation,
    validate_record,
)

# Records an import adds or changes past which the planner's statistics are refreshed.
BULK_IMPORT_RECORDS = 1_000


@dataclass(frozen=True)
class ImportIssue:
    source: str
    location: str | None
    field: str | None
    message: str

    def __str__(self) -> str:
        where = ", ".join(part for part in (self.source, self.location) if part)
        what = f"{self.field}: {self.message}" if self.field else self.message
        return f"{where}: {what}"


class ImportFailed(InvalidInput):
    """A document that cannot be imported; the caller's transaction must roll back."""

    def __init__(self, issue: ImportIssue) -> None:
        super().__init__(
            str(issue),
            errors=[
                {
                    "source": issue.source,
                    "location": issue.location,
                    "field": issue.field,
                    "message": issue.message,
                }
            ],
        )
        self.issue = issue


@dataclass
class ImportSummary:
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    failed: int = 0
    issues: list[ImportIssue] = field(default_factory=list)
    annotations_added: int = 0  # of ``added``: errata's annotations, not records

    def count(self, outcome: Outcome) -> None:
        setattr(self, outcome.value, getattr(self, outcome.value) + 1)

    def merge(self, other: ImportSummary) -> None:
        for outcome in Outcome:
            setattr(
                self, outcome.value, getattr(self, outcome.value) + getattr(other, outcome.value)
            )
        self.failed += other.failed
        self.issues.extend(other.issues)
        self.annotations_added += other.annotations_added


@dataclass(frozen=True)
class Incoming:
    """One raw record (or annotation of a record) read from a document, with where it was."""

    record: object
    dataset_version: str | None
    location: str
    is_annotation: bool = False


def import_text(store: RecordStore, text: str, source: str) -> ImportSummary:
    """Validate and upsert every record of one document; ImportFailed on the first bad one."""
    # An import holds every record of its document until the last is written.
    with collector.paused():
        return _import_text(store, text, source)


def _import_text(store: RecordStore, text: str, source: str) -> ImportSummary:
    summary = ImportSummary()
    records: list[tuple[ValidRecord, str | None]] = []
    annotations: list[ValidAnnotation] = []
    # Everything is validated before anything is written, so the store is locked against
    # other writers only while this document's rows are written, in a few batched statements.
    for incoming in read_documents(text, source, resolve_sha=store.full_sha):
        try:
            if incoming.is_annotation:
                annotations.append(validate_annotation(incoming.record))
            else:
                records.append((validate_record(incoming.record), incoming.dataset_version))
        except RecordInvalid as exc:
            raise ImportFailed(
                ImportIssue(source, incoming.location, exc.field, exc.message)
            ) from None
    widen_cache_for_bulk_write(store.session)
    for outcome in store.upsert_many(records):
        summary.count(outcome)
    for annotation in annotations:
        outcome = store.upsert_annotation(annotation)
        summary.count(outcome)
        if outcome is Outcome.ADDED:
            summary.annotations_added += 1
    return summary


def import_paths(
    factory: sessionmaker[Session],
    paths: Iterable[Path],
    *,
    on_file: Callable[[Path, ImportSummary], None] | None = None,
) -> ImportSummary:
    """Import files and folders, each file in its own transaction."""
    total = ImportSummary()
    for path in expand_paths(paths):
        try:
            text = read_text(path)
            with transaction(factory) as session:
                result = import_text(RecordStore(session), text, str(path))
        except ImportFailed as exc:
            result = ImportSummary(failed=1, issues=[exc.issue])
        total.merge(result)
        if on_file is not None:
            on_file(path, result)
    if total.added + total.updated >= BULK_IMPORT_RECORDS:
        refresh_planner_statistics(factory)
    return total


def expand_paths(paths: Iterable[Path]) -> list[Path]:
    """Files as given, folders walked; JSON documents first so pages can resolve short shas."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files.extend(
                sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith("."))
            )
        else:
            files.append(path)
    return sorted(files, key=lambda p: (not _looks_like_json(p), str(p)))


def _looks_like_json(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            head = handle.read(64).lstrip(b"\xef\xbb\xbf \t\r\n")
    except OSError:
        return False
    return head[:1] in (b"{", b"[")


def read_text(path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ImportFailed(
            ImportIssue(str(path), None, None, f"cannot read: {exc.strerror}")
        ) from None
    return decode(data, str(path))


def decode(data: bytes, source: str) -> str:
    if b"\x00" in data:
        raise ImportFailed(ImportIssue(source, None, None, "binary data, not a record document"))
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ImportFailed(
            ImportIssue(source, f"byte {exc.start}", None, "not UTF-8 text")
        ) from None


def read_documents(
    text: str, source: str, *, resolve_sha: Callable[[str], str | None] | None = None
) -> Iterator[Incoming]:
    """Yield the raw records of one document, whatever its format."""
    stripped = text.lstrip()
    if not stripped:
        raise ImportFailed(ImportIssue(source, None, None, "empty document"))
    if stripped[0] not in "{[":
        try:
            yield Incoming(parse_page(text, resolve_sha=resolve_sha), None, "page")
        except PageParseError as exc:
            location = f"page line {exc.line}" if exc.line else "page"
            raise ImportFailed(ImportIssue(source, location, exc.field, exc.reason)) from None
        return
    try:
        document = _loads(text, source, None)
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data":
            yield from _json_lines(text, source)
            return
        raise ImportFailed(
            ImportIssue(
                source, f"line {exc.lineno} column {exc.colno}", None, f"invalid JSON: {exc.msg}"
            )
        ) from None
    if isinstance(document, list):
        for index, item in enumerate(document, start=1):
            yield _unwrap(item, source, f"record {index}")
    else:
        yield _unwrap(document, source, "record 1")


def _json_lines(text: str, source: str) -> Iterator[Incoming]:
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = _loads(line, source, f"line {number}")
        except json.JSONDecodeError as exc:
            raise ImportFailed(
                ImportIssue(
                    source, f"line {number} column {exc.colno}", None, f"invalid JSON: {exc.msg}"
                )
            ) from None
        yield _unwrap(item, source, f"line {number}")


def _loads(text: str, source: str, location: str | None) -> Any:
    """``json.loads``, with nesting too deep for the parser refused as the document's fault."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ImportFailed(
            ImportIssue(source, location, None, "invalid JSON: nested too deeply")
        ) from None


def _unwrap(item: Any, source: str, location: str) -> Incoming:
    """Accept the envelope, a bare record, or an annotation ``{"annotation": {...}}``."""
    if isinstance(item, dict) and set(item) == {"annotation"}:
        return Incoming(item["annotation"], None, location, is_annotation=True)
    if isinstance(item, dict) and "record" in item and "errorMessage" not in item:
        try:
            version = check_dataset_version(item.get("datasetVersion"))
        except RecordInvalid as exc:
            raise ImportFailed(ImportIssue(source, location, exc.field, exc.message)) from None
        return Incoming(item["record"], version, location)
    return Incoming(item, None, location)
