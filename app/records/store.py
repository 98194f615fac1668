"""Reads and writes of records. Services never commit: the caller's unit of work does."""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from operator import itemgetter
from typing import Any, cast

import orjson
from psycopg import sql as pgsql
from sqlalchemy import (
    JSON,
    ColumnElement,
    Select,
    Table,
    and_,
    delete,
    func,
    insert,
    or_,
    select,
    update,
)
from sqlalchemy import text as sql
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session, selectinload

from app.db import json_text
from app.errors import InvalidInput, NotFound, SharedSlug, WritesBusy, invalid_field
from app.records.models import AnnotationRow, RecordRow, RecordTag, StoreState
from app.records.schema import Snippet
from app.records.search import (
    Term,
    index_records,
    parse_query,
    ranked,
    search_columns,
    snippet,
    unindex_records,
)
from app.records.validation import ValidAnnotation, ValidRecord, unstorable_text
from app.records.version_watch import VersionWatch, mark_written

MAX_PAGE_SIZE = 200
MINED = "mined"  # the part of an annotation the miner writes
_AFTER = "after:"
# What the cursors issued look like: base64url (unpadded) of "after:<id>", or of
# "after:<relevance>.<id>" for a search's and related records' pages.
CURSOR_PATTERN = r"^YWZ0ZXI6(?:[A-Za-z0-9_-]{4})*(?:[A-Za-z0-9_-]{2,3})?$"
# Ids looked up (or whose tags are replaced) per statement: well under SQLite's 32,766
# parameters, and a plan PostgreSQL caches.
LOOKUP_CHUNK = 500
# Rows one COPY appends: a record's row computes its search vector as it is copied (100,000
# of them took 30 s and more), and each statement must end well inside the statement timeout.
COPY_ROWS = 10_000
# How long a write waits for another to commit before answering 409 (PostgreSQL; SQLite
# waits its busy timeout), and the Retry-After it then suggests.
WRITE_LOCK_WAIT_S = 10
WRITE_LOCK_RETRY_AFTER_S = 2
_RECORDS = cast(Table, RecordRow.__table__)
_TAGS = cast(Table, RecordTag.__table__)
_VERSION = select(StoreState.version).where(StoreState.id == 1)  # built once: read often
# PostgreSQL compresses a document past 2 KB; lz4 (a server built with it) does so faster
# than its default pglz: 100,000 records copied in 1–4 s less. For this transaction only.
_COMPRESS_WITH_LZ4 = (
    "SELECT set_config('default_toast_compression', 'lz4', true) FROM pg_settings"
    " WHERE name = 'default_toast_compression' AND 'lz4' = ANY(enumvals)"
)


class Outcome(StrEnum):
    ADDED = "added"
    UPDATED = "updated"
    UNCHANGED = "unchanged"


@dataclass(frozen=True)
class RecordFilters:
    q: str | None = None
    repo: str | None = None
    error_class: str | None = None
    tag: str | None = None
    severity: str | None = None
    file_path: str | None = None
    function: str | None = None
    backend: str | None = None
    release: str | None = None  # the error can be raised in this JAX release
    slug: str | None = None
    include_retired: bool = False


@dataclass(frozen=True)
class Page:
    rows: list[RecordRow]
    total: int
    next_cursor: str | None
    snippets: dict[str, Snippet] = field(default_factory=dict)  # a search's, by record id


class RecordStore:
    def __init__(self, session: Session, versions: VersionWatch | None = None) -> None:
        """``versions``: the process's watch on the version counter, if it keeps one."""
        self.session = session
        self.versions = versions
        self._write_lock: object | None = None
        self._writing_version = 0  # what this transaction's writes move the version to

    def _lock_writes(self) -> None:
        """Writers take turns, from before they read what they will change.

        The store-state row is locked by a no-op UPDATE (on SQLite, the UPDATE takes the
        database's write lock) once per transaction, so two requests writing the same new
        record cannot both find it missing and both insert it: the second waits, then finds
        the first one's row.
        """
        transaction = self.session.get_transaction()
        if transaction is not None and transaction is self._write_lock:
            return
        postgresql = self.session.get_bind().dialect.name == "postgresql"
        try:
            if postgresql:
                # Wait for another writer less long than any statement may run, and say so.
                self.session.execute(sql(f"SET LOCAL lock_timeout = {WRITE_LOCK_WAIT_S * 1000}"))
            self.session.execute(
                update(StoreState).where(StoreState.id == 1).values(version=StoreState.version)
            )
        except OperationalError as exc:
            if _waited_for_a_writer(exc):
                raise WritesBusy(
                    "Another write is in progress and held the store longer than "
                    f"{WRITE_LOCK_WAIT_S} s; try again shortly.",
                    retry_after=WRITE_LOCK_RETRY_AFTER_S,
                ) from None
            raise
        self._write_lock = self.session.get_transaction()
        self._writing_version = self._read_version() + 1

    def get(self, record_id: str) -> RecordRow:
        row = None if unstorable_text(record_id) else self.session.get(RecordRow, record_id)
        if row is None:
            raise NotFound(f"No error record with id {record_id!r}.")
        return row

    def get_by_slug(self, slug: str) -> RecordRow:
        """The live record with this slug, else a retired one; ``SharedSlug`` where several
        live records have it."""
        if unstorable_text(slug):  # no record holds it: writes refuse such text
            raise NotFound(f"No error record with slug {slug!r}.")
        rows = self.session.scalars(
            select(RecordRow)
            .where(RecordRow.slug == slug)
            .order_by(RecordRow.retired, RecordRow.id)
            .limit(2)
        ).all()
        if not rows:
            raise NotFound(f"No error record with slug {slug!r}.")
        if len(rows) == 2 and not rows[1].retired:
            sharing = self.search(RecordFilters(slug=slug), limit=1, cursor=None)
            raise SharedSlug(slug, sharing.total)
        return rows[0]

    def version(self) -> int:
        """Goes up with every write; readers compare it to know their caches are stale.

        Through a watch, another process's write may show only after the watch's max age.
        """
        if self.versions is None:
            return self._read_version()
        return self.versions.current(self._read_version)

    def _read_version(self) -> int:
        return self.session.scalar(_VERSION) or 0

    def _bump_version(self) -> None:
        """The version becomes the one this transaction's rows carry (once, however many
        writes it holds): every row changed since a version ``v`` has ``store_version > v``."""
        self.session.execute(
            update(StoreState).where(StoreState.id == 1).values(version=self._writing_version)
        )
        mark_written(self.session)

    def annotation(self, record_id: str) -> dict[str, Any] | None:
        row = self.session.get(AnnotationRow, record_id)
        return row.document if row is not None else None

    def record_for_rule(self, rule_id: str) -> RecordRow | None:
        """The record documenting a catalog rule: an annotated seed first, then by its field."""
        annotated = self.session.scalars(
            select(AnnotationRow.record_id)
            .where(AnnotationRow.rule == rule_id)
            .order_by(AnnotationRow.record_id)
        ).first()
        if annotated is not None and (row := self.session.get(RecordRow, annotated)) is not None:
            return row
        return self.session.scalars(
            select(RecordRow)
            .where(RecordRow.rule == rule_id)
            .order_by(RecordRow.retired, RecordRow.id)
        ).first()

    def full_sha(self, prefix: str) -> str | None:
        """The full commit sha another record was analysed at, if exactly one starts so."""
        shas = self.session.scalars(
            select(RecordRow.analyzed_sha)
            .where(RecordRow.analyzed_sha.startswith(prefix, autoescape=True))
            .where(func.length(RecordRow.analyzed_sha) == 40)
            .distinct()
            .limit(2)
        ).all()
        return shas[0] if len(shas) == 1 else None

    def search(self, filters: RecordFilters, *, limit: int, cursor: str | None) -> Page:
        """A page of the records ``filters`` select: with words ``q``, the most relevant
        first; without, by id."""
        if not 1 <= limit <= MAX_PAGE_SIZE:
            raise InvalidInput(f"limit must be between 1 and {MAX_PAGE_SIZE}, got {limit}.")
        query = self._filtered(filters)
        if filters.q and filters.q.strip():
            return self._ranked(query, parse_query(filters.q), limit, cursor)
        total = self.session.scalar(select(func.count()).select_from(query.subquery())) or 0
        if cursor:
            query = query.where(RecordRow.id > _decode_cursor(cursor))
        rows = list(
            self.session.scalars(
                query.options(selectinload(RecordRow.tags)).order_by(RecordRow.id).limit(limit + 1)
            )
        )
        next_cursor = _encode_cursor(rows[limit - 1].id) if len(rows) > limit else None
        return Page(rows=rows[:limit], total=total, next_cursor=next_cursor)

    def _ranked(
        self, query: Select[RecordRow], terms: list[Term], limit: int, cursor: str | None
    ) -> Page:
        """The page of a search by words: by relevance, then by id. Its cursor holds the
        relevance and id of the page's last record, so the next page starts right after it
        however many records come before."""
        if not terms:  # no letter or digit: no word to find
            return Page(rows=[], total=0, next_cursor=None)
        query, relevance = ranked(query, terms, self.session.get_bind().dialect.name)
        total = self.session.scalar(select(func.count()).select_from(query.subquery())) or 0
        if cursor:
            query = query.where(_after(relevance, *decode_scored_cursor(cursor)))
        found = self.session.execute(
            query.add_columns(relevance)
            .options(selectinload(RecordRow.tags))
            .order_by(relevance.desc(), RecordRow.id)
            .limit(limit + 1)
        ).all()
        rows = [cast(RecordRow, row) for row, _ in found[:limit]]
        next_cursor = None
        if len(found) > limit:
            next_cursor = _encode_cursor(f"{found[limit - 1][1]}.{rows[-1].id}")
        snippets = {
            row.id: found_snippet
            for row in rows
            if (found_snippet := snippet(terms, row.document)) is not None
        }
        return Page(rows=rows, total=total, next_cursor=next_cursor, snippets=snippets)

    def _filtered(self, filters: RecordFilters) -> Select[RecordRow]:
        for name, text in (
            ("q", filters.q),
            ("repo", filters.repo),
            ("errorClass", filters.error_class),
            ("tag", filters.tag),
            ("severity", filters.severity),
            ("filePath", filters.file_path),
            ("function", filters.function),
            ("slug", filters.slug),
        ):
            if text is not None and (reason := unstorable_text(text)) is not None:
                raise invalid_field(name, f"{reason}, which no record holds")
        query = select(RecordRow)
        if not filters.include_retired:
            query = query.where(RecordRow.retired.is_(False))
        for column, value in (
            (RecordRow.repo, filters.repo),
            (RecordRow.error_class, filters.error_class),
            (RecordRow.severity, filters.severity),
            (RecordRow.file_path, filters.file_path),
            (RecordRow.function, filters.function),
            (RecordRow.backend, filters.backend),
            (RecordRow.slug, filters.slug),
        ):
            if value is not None:
                query = query.where(column == value)
        if filters.release is not None:
            query = query.where(RecordRow.releases.contains(f" {filters.release} "))
        if filters.tag is not None:
            query = query.where(
                RecordRow.id.in_(select(RecordTag.record_id).where(RecordTag.tag == filters.tag))
            )
        return query

    def upsert(
        self, record: ValidRecord, dataset_version: str | None, *, keep_newer: bool = True
    ) -> Outcome:
        """Insert or replace by id.

        Imports keep the newer datasetVersion (``keep_newer``); a curator's explicit write wins.
        """
        return self.upsert_many([(record, dataset_version)], keep_newer=keep_newer)[0]

    def upsert_many(
        self, records: Sequence[tuple[ValidRecord, str | None]], *, keep_newer: bool = True
    ) -> list[Outcome]:
        """``upsert`` of each record, in order, in a few statements: one lookup of what is
        stored per ``LOOKUP_CHUNK`` ids, a delete of the changed rows per ``LOOKUP_CHUNK``,
        then one append of every new row and one of their tags.

        A file of 100,000 records written one ORM row at a time spent most of its minutes in
        per-row statements. A record repeated in ``records`` is compared with its earlier copy.
        """
        self._lock_writes()
        stored = self._stored_hashes([valid.model.id for valid, _ in records])
        outcomes: list[Outcome] = []
        rows: dict[str, tuple[dict[str, Any], list[str]]] = {}
        added: set[str] = set()
        for valid, dataset_version in records:
            record_id = valid.model.id
            content_hash = _content_hash(valid.document, dataset_version)
            known = stored.get(record_id)
            if known is None:
                added.add(record_id)
                outcome = Outcome.ADDED
            elif known[0] == content_hash or (keep_newer and _is_older(dataset_version, known[1])):
                outcomes.append(Outcome.UNCHANGED)
                continue
            else:
                outcome = Outcome.UPDATED
            stored[record_id] = (content_hash, dataset_version)
            columns, tags = _columns(valid, dataset_version, content_hash)
            rows[record_id] = ({**columns, "store_version": self._writing_version}, tags)
            outcomes.append(outcome)
        if rows:
            self._site_facts_from_annotations(rows)
            self._write_rows(rows, added)
            self._bump_version()
        return outcomes

    def _site_facts_from_annotations(
        self, rows: dict[str, tuple[dict[str, Any], list[str]]]
    ) -> None:
        """A record that is not itself mined takes its site's facts from its annotation's
        ``mined`` part (a curated record's site), whichever of the two was written first."""
        bare = [key for key, (columns, _) in rows.items() if "site" not in columns["document"]]
        for chunk in _chunks(bare):
            query = select(AnnotationRow.record_id, AnnotationRow.document).where(
                AnnotationRow.record_id.in_(chunk)
            )
            for row in self.session.execute(query):
                if MINED in row.document:
                    rows[row.record_id][0].update(_site_columns(row.document[MINED]))

    def _stored_hashes(self, record_ids: list[str]) -> dict[str, tuple[str, str | None]]:
        """Each stored record's content hash and dataset version, by id."""
        unique = list(dict.fromkeys(record_ids))
        found: dict[str, tuple[str, str | None]] = {}
        for chunk in _chunks(unique):
            query = select(RecordRow.id, RecordRow.content_hash, RecordRow.dataset_version)
            for record_id, content_hash, version in self.session.execute(
                query.where(RecordRow.id.in_(chunk))
            ):
                found[record_id] = (content_hash, version)
        return found

    def _write_rows(
        self, rows: dict[str, tuple[dict[str, Any], list[str]]], added: set[str]
    ) -> None:
        """Stored rows that changed are deleted (their tags with them, by the foreign key)
        and appended again with the new ones: one COPY on PostgreSQL, where an UPDATE per
        row took 29 s for 100,000 changed records. Deleted in key order, as SQLite deletes
        them three times faster. SQLite's search index forgets the old rows and reads the
        new ones here: every write of a record's words goes through this."""
        replaced = sorted(record_id for record_id in rows if record_id not in added)
        for chunk in _chunks(replaced):
            unindex_records(self.session, chunk)
            self.session.execute(delete(_RECORDS).where(_RECORDS.c.id.in_(chunk)))
        if self.session.get_bind().dialect.name == "postgresql":
            self.session.execute(sql(_COMPRESS_WITH_LZ4))  # the documents; tags are short
        self._append(_RECORDS, [columns for columns, _ in rows.values()])
        for chunk in _chunks(sorted(rows)):
            index_records(self.session, chunk)
        tags = [
            {"record_id": record_id, "tag": tag}
            for record_id, (_, record_tags) in rows.items()
            for tag in record_tags
        ]
        if tags:
            self._append(_TAGS, tags)
        # Rows this session may hold were written behind its back.
        self.session.expire_all()

    def _append(self, table: Table, rows: list[dict[str, Any]]) -> None:
        """Insert ``rows`` (each with the same columns; their JSON columns are encoded in
        place) in primary-key order: a COPY per ``COPY_ROWS`` on PostgreSQL, one
        executemany of the driver on SQLite.

        Through SQLAlchemy, PostgreSQL ran one INSERT per row (100,000 records and their
        400,000 tags: 40 s), and both spent seconds preparing each row's parameters; in key
        order, SQLite appends to its primary-key indexes instead of splitting their pages.
        """
        names = [column.name for column in table.columns if column.name in rows[0]]
        for name in names:
            if isinstance(table.c[name].type, JSON):
                for row in rows:
                    row[name] = json_text(row[name])
        ordered = sorted(rows, key=itemgetter(*(column.name for column in table.primary_key)))
        values = list(map(itemgetter(*names), ordered))
        connection = self.session.connection()
        cursor = connection.connection.cursor()
        try:
            if connection.dialect.name == "postgresql":
                copy_rows = pgsql.SQL("COPY {} ({}) FROM STDIN").format(
                    pgsql.Identifier(table.name), pgsql.SQL(", ").join(map(pgsql.Identifier, names))
                )
                for start in range(0, len(values), COPY_ROWS):
                    with cursor.copy(copy_rows) as copy:
                        for value in values[start : start + COPY_ROWS]:
                            copy.write_row(value)
            else:
                insert_rows = insert(table).compile(dialect=connection.dialect, column_keys=names)
                cursor.executemany(str(insert_rows), values)
        finally:
            cursor.close()

    def upsert_annotation(self, annotation: ValidAnnotation) -> Outcome:
        """Insert or replace by record id, part by part: the ``mined`` part (written by the
        miner) and the rest (written by curators) each replace only their own part."""
        self._lock_writes()
        row = self.session.get(AnnotationRow, annotation.model.recordId)
        document = _merged_annotation(row.document if row is not None else {}, annotation)
        content_hash = _content_hash(document, None)
        if row is None:
            row = AnnotationRow(record_id=annotation.model.recordId)
            self.session.add(row)
            outcome = Outcome.ADDED
        elif row.content_hash == content_hash:
            return Outcome.UNCHANGED
        else:
            outcome = Outcome.UPDATED
        row.rule = document.get("rule")
        row.document = document
        row.content_hash = content_hash
        row.store_version = self._writing_version
        record = self.session.get(RecordRow, row.record_id)
        if record is not None and "site" not in record.document:
            for name, value in _site_columns(document.get(MINED)).items():
                setattr(record, name, value)
            record.store_version = self._writing_version
        self._bump_version()
        self.session.flush()
        return outcome


def _merged_annotation(stored: dict[str, Any], incoming: ValidAnnotation) -> dict[str, Any]:
    """Each part the incoming annotation carries replaces the stored one; the other stays."""
    document = incoming.document
    carries_curated = any(key not in ("recordId", MINED) for key in document)
    merged = {k: v for k, v in (document if carries_curated else stored).items() if k != MINED}
    merged["recordId"] = incoming.model.recordId
    mined = document[MINED] if MINED in document else stored.get(MINED)
    if mined is not None:
        merged[MINED] = mined
    return merged


def _chunks(ids: list[str]) -> Iterator[list[str]]:
    """``ids`` in runs of ``LOOKUP_CHUNK``: one statement's worth each."""
    return (ids[start : start + LOOKUP_CHUNK] for start in range(0, len(ids), LOOKUP_CHUNK))


def _site_columns(facts: dict[str, Any] | None) -> dict[str, Any]:
    """A site's mined facts (a mined record, or an annotation's ``mined`` part) copied out
    of the document, for filtering. The releases are those the error can be raised in: the
    site's, or for an error of Pallas's public API those without the name (``missingIn``)
    or refusing the call (``raisedIn``)."""
    facts = facts or {}
    site = facts.get("site") or {}
    releases = [entry.get("release") for entry in facts.get("releases") or []]
    releases = releases or facts.get("raisedIn") or facts.get("missingIn") or []
    return {
        "function": site.get("function"),
        "backend": site.get("backend"),
        "releases": f" {' '.join(map(str, releases))} " if releases else None,
    }


def _columns(
    record: ValidRecord, dataset_version: str | None, content_hash: str
) -> tuple[dict[str, Any], list[str]]:
    """A record's row (by attribute name) and its tags, as ``upsert_many`` writes them."""
    model = record.model
    columns = {
        "id": model.id,
        "slug": model.slug or "",
        "repo": model.repo,
        "error_class": model.errorClass,
        "severity": model.severity,
        "file_path": model.filePath,
        "background_tag": model.backgroundTag,
        "analyzed_sha": model.analyzedSha,
        "error_message": model.errorMessage,
        **search_columns(record.document),
        "curated": record.document.get("documentationSource") != "derived",
        "document": record.document,
        "dataset_version": dataset_version,
        "content_hash": content_hash,
        "retired": model.retired,
        "rule": model.rule,
        **_site_columns(record.document),
    }
    return columns, list(dict.fromkeys(model.tags))


def _waited_for_a_writer(exc: OperationalError) -> bool:
    """Whether the lock statement failed waiting for another writer, not for the database:
    PostgreSQL's lock_timeout (SQLSTATE 55P03), SQLite's busy timeout."""
    if getattr(exc.orig, "sqlstate", None) == "55P03":
        return True
    return "database is locked" in str(exc.orig)


def _content_hash(document: dict[str, Any], dataset_version: str | None) -> str:
    """SHA-256 of the document and its version as JSON with sorted keys, by orjson (for
    100,000 records, 0.35 s; the standard library's encoder took 1.5 s); an integer past
    64 bits, which orjson refuses, falls back to the standard library."""
    try:
        canonical = orjson.dumps([document, dataset_version], option=orjson.OPT_SORT_KEYS)
    except orjson.JSONEncodeError:
        canonical = json.dumps([document, dataset_version], sort_keys=True).encode()
    return hashlib.sha256(canonical).hexdigest()


def _is_older(incoming: str | None, stored: str | None) -> bool:
    """ISO-8601 versions compare as strings; unversioned never displaces versioned."""
    if stored is None:
        return False
    return incoming is None or incoming < stored


def _encode_cursor(record_id: str) -> str:
    return base64.urlsafe_b64encode(f"{_AFTER}{record_id}".encode()).decode().rstrip("=")


def encode_related_cursor(score: int, record_id: str) -> str:
    """A cursor of related records: the page after the one with ``score`` and ``record_id``."""
    return _encode_cursor(f"{score}.{record_id}")


def _after(relevance: ColumnElement[int], score: int, record_id: str) -> ColumnElement[bool]:
    """The records a search lists after the one of ``relevance`` ``score`` and id ``record_id``."""
    return or_(relevance < score, and_(relevance == score, RecordRow.id > record_id))


def decode_scored_cursor(cursor: str) -> tuple[int, str]:
    """The score and id a cursor of a search by words or of related records starts after. As
    for ``_decode_cursor``, any cursor of ``CURSOR_PATTERN`` is a position: one that names no
    score stands after every record scored above 0, at its text."""
    position = _decode_cursor(cursor)
    score, dot, record_id = position.partition(".")
    # A score is a 64-bit integer on both databases: 18 digits at most.
    if dot and score.isascii() and score.isdigit() and len(score) <= 18:
        return int(score), record_id
    return 0, position


def _decode_cursor(cursor: str) -> str:
    """The id a cursor starts after. Any cursor of ``CURSOR_PATTERN`` is a position, issued
    or not: the page of ids after it."""
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        decoded = base64.b64decode(padded, altchars=b"-_", validate=True)
    except (binascii.Error, ValueError):
        decoded = b""
    if not decoded.startswith(_AFTER.encode()):
        raise InvalidInput(f"cursor {cursor!r} is not one this service issued.")
    return decoded.removeprefix(_AFTER.encode()).decode(errors="replace").replace("\x00", "\ufffd")
