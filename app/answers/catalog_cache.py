"""The catalog read from the store, and kept at the store's version in each process.

``CatalogCache`` keeps the current catalog and builds a new one, in a read-only unit of
work of its own, when the store's version moves (whichever worker wrote). A request that
finds the catalog current therefore needs no database at all.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.exc import InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.orm import Session, sessionmaker

from app import collector
from app.answers.catalog import Catalog, Changes, RecordInfo, record_operations
from app.answers.kinship import Kinship
from app.db import transaction
from app.engines.mosaic_gpu import RULES
from app.engines.mosaic_gpu.rules import rule_worded
from app.jaxref.releases import is_release
from app.jaxref.scope import backend_of
from app.jaxref.templates import derive_pattern
from app.matching import PatternEntry, PatternIndex
from app.matching.index import CalledBy, call_names, older_wording
from app.observability.metrics import observe_index_build
from app.records.models import AnnotationRow, RecordRow, RecordTag
from app.records.store import RecordStore
from app.records.version_watch import VersionWatch

# Records written since a catalog's version that are applied to it in place; more (an
# import) and it is rebuilt in a thread, the catalog held answering meanwhile.
MAX_CHANGES_IN_PLACE = 1_000
# Entries held beside the base index before the next change rebuilds it instead.
MAX_OVERLAY_ENTRIES = 5_000
# The store cannot be read now: a server gone, a connection dropped (the database is
# unreachable), or no connection to spare in the pool (the server is busy).
DATABASE_UNAVAILABLE = (OperationalError, InterfaceError, PoolTimeout)
log = logging.getLogger(__name__)
# Rebuilds derive the same patterns again; keep them (a pattern is a few hundred bytes).
_derived = lru_cache(maxsize=1 << 16)(derive_pattern)


# What the catalog needs of a record: its columns, and some fields of its document read by
# the database (as JSON text), so the large documents are never loaded whole.
_INDEXED = select(
    RecordRow.id,
    RecordRow.slug,
    RecordRow.error_message,
    RecordRow.error_class,
    RecordRow.rule,
    RecordRow.retired,
    RecordRow.file_path,
    RecordRow.document["messagePattern"].as_string(),
    RecordRow.document["matchPattern"].as_string(),
    RecordRow.document["operations"].as_string(),
    RecordRow.document["olderWordings"].as_string(),
    RecordRow.document["documentationSource"].as_string(),
    RecordRow.document["solutions"].as_string(),
    RecordRow.document["githubUrl"].as_string(),
    RecordRow.document["calledBy"].as_string(),
    RecordRow.document["calledThrough"].as_string(),
    RecordRow.document["calledUnder"].as_string(),
    RecordRow.document["calledAs"].as_string(),
    RecordRow.document["saidBy"].as_string(),
    RecordRow.function,
    RecordRow.background_tag,
)


# Each record's tags, joined, from the table tag filters read: in the documents,
# PostgreSQL would parse each document (JSON text) once more to find them, and a row a tag
# took SQLite 1.6 s at 100,000 records, this 0.6 s.
_TAG_SEPARATOR = "\x1f"
_TAGGED = select(
    RecordTag.record_id, func.aggregate_strings(RecordTag.tag, _TAG_SEPARATOR)
).group_by(RecordTag.record_id)


def load_catalog(store: RecordStore, version: int) -> Catalog:
    """Read every record (and annotation) into a fresh catalog of store ``version``.

    The collector is paused meanwhile: at 100,000 records the build set off five full
    collections of 86 to 230 ms, every one holding up the worker's requests in a rebuild;
    paused, it walks the new catalog once, after the build (138 ms).
    """
    session = store.session
    with collector.paused():
        annotations = {r.record_id: r.document for r in session.scalars(select(AnnotationRow))}
        # Plain rows through the store's connection: no ORM bookkeeping for 100,000 of them.
        tags = _tags(session.connection().execute(_TAGGED))
        records, entries = _read(session.connection().execute(_INDEXED), annotations, tags)
        kinship = Kinship.build(list(records.values()))
        return Catalog(
            records, PatternIndex.build(entries), rule_records(store), version, kinship=kinship
        )


def load_changes(store: RecordStore, since: int, version: int) -> Changes | None:
    """The records (and annotations) written after version ``since``; ``None`` when more
    than ``MAX_CHANGES_IN_PLACE`` were: then the catalog is rebuilt instead."""
    session = store.session
    record_ids = select(RecordRow.id).where(RecordRow.store_version > since)
    annotated = select(AnnotationRow.record_id).where(AnnotationRow.store_version > since)
    changed = set(session.scalars(record_ids.limit(MAX_CHANGES_IN_PLACE + 1)))
    notes = set(session.scalars(annotated.limit(MAX_CHANGES_IN_PLACE + 1)))
    if len(changed | notes) > MAX_CHANGES_IN_PLACE:
        return None
    ids = sorted(changed | notes)
    annotations = {
        row.record_id: row.document
        for row in session.scalars(select(AnnotationRow).where(AnnotationRow.record_id.in_(ids)))
    }
    rows = session.connection().execute(_INDEXED.where(RecordRow.id.in_(ids)))
    tags = _tags(session.connection().execute(_TAGGED.where(RecordTag.record_id.in_(ids))))
    records, entries = _read(rows, annotations, tags)
    return Changes(version, records, entries, bool(notes) or any(r.rule for r in records.values()))


def rule_records(store: RecordStore) -> dict[str, str | None]:
    return {
        rule: (found.id if (found := store.record_for_rule(rule)) is not None else None)
        for rule in RULES
    }


def _mined_rule(message: str, path: str | None, curated: bool) -> str | None:
    """A Mosaic GPU site mined from JAX's source whose words are a rule's: the engine computes
    its fixes (0.12.0's new wording of the GMEM strides check has no record of the rule's)."""
    rule = None if curated else rule_worded(message)  # a lookup: most messages are no rule's
    return rule if rule and path and backend_of(path) == "mosaic_gpu" else None


def _tags(rows: Iterable[Sequence[Any]]) -> dict[str, tuple[str, ...]]:
    """Each record's tags, from rows of a record's id and its tags joined; one tuple for
    the records whose tags read alike."""
    shared: dict[str, tuple[str, ...]] = {}
    found = {}
    for record_id, joined in rows:
        tags = shared.get(joined)
        if tags is None:
            tags = shared[joined] = tuple(sorted(joined.split(_TAG_SEPARATOR)))
        found[record_id] = tags
    return found


def _read(
    rows: Iterable[Sequence[Any]],
    annotations: dict[str, dict[str, Any]],
    tags: dict[str, tuple[str, ...]],
) -> tuple[dict[str, RecordInfo], list[PatternEntry]]:
    """Each row's facts and, for a live record, its patterns."""
    records: dict[str, RecordInfo] = {}
    entries: list[PatternEntry] = []
    # One metadata dict per class, rule, whether the record is curated and its site's file.
    shared: dict[tuple[str, str, bool, str], dict[str, str]] = {}
    for row in rows:
        (record_id, slug, message, error_class, row_rule, retired, path) = row[:7]
        pattern, typed, ops, older, documentation_source, solutions, github_url = row[7:14]
        callers, through, under, called_as, said_by = row[14:19]
        function, background = row[19:]
        note = annotations.get(record_id, {})
        curated = documentation_source != "derived"
        rule = note.get("rule") or row_rule or _mined_rule(message, path, curated)
        operations = record_operations(
            note.get("operations"), json.loads(ops) if ops else None, rule
        )
        called_by = _called_by(callers, through, under)
        spellings = tuple(json.loads(called_as)) if called_as else ()
        records[record_id] = RecordInfo(
            record_id,
            slug,
            message,
            error_class,
            rule,
            tuple(operations),
            bool(retired),
            backend_of(path) if path else None,
            path,
            curated,
            _solutions(solutions, note),
            github_url or None,
            called_by is not None,
            spellings,
            function,
            background,
            tags.get(record_id, ()),
        )
        if retired or typed == "":  # a mined message too short to tell from any line
            continue
        if said_by:  # a compiler's message: the reading of compilers' messages names it
            continue
        key = (error_class or "", rule or "", curated, path or "")
        metadata = shared.setdefault(
            key,
            {
                "exception_class": key[0],
                "rule": key[1],
                "curated": str(curated).lower(),
                "file": key[3],
            },
        )
        current = typed or _index_pattern({"messagePattern": pattern, "errorMessage": message})
        call_of = call_names(spellings)
        entries.append(PatternEntry(record_id, current, "current", metadata, called_by, call_of))
        older_wordings = json.loads(older) if older else None
        for wording in [*(older_wordings or []), *(note.get("olderWordings") or [])]:
            pattern = wording.get("pattern") or _derived(wording["text"])
            until = _last_release_printing(wording, note)
            variant = older_wording(until) if until else "older"
            entries.append(PatternEntry(record_id, pattern, variant, metadata, called_by, call_of))
    return records, entries


def _called_by(callers: str | None, through: str | None, under: str | None) -> CalledBy | None:
    """A record's ``calledBy``, ``calledThrough`` and ``calledUnder``, as JSON text, for its
    patterns."""
    if not callers:
        return None
    return CalledBy(
        frozenset((c["file"], c["function"]) for c in json.loads(callers)),
        frozenset((c["file"], c["function"]) for c in json.loads(through or "[]")),
        frozenset(json.loads(under or "[]")),
    )


def _last_release_printing(wording: dict[str, Any], note: dict[str, Any]) -> str | None:
    """The last release that printed an older wording: its ``until`` where that is one, else
    the mined history's for that very text. People date a wording by the commit that changed
    it (``ab57051f06 (2025-08-18)``), which says no release; the miner dates each by release."""
    until = wording.get("until")
    if until and is_release(until):
        return str(until)
    history = (note.get("mined") or {}).get("messageHistory") or []
    return next((w["until"] for w in history if w["errorMessage"] == wording["text"]), None)


def _solutions(written: str | None, note: dict[str, Any]) -> tuple[str, ...]:
    """A record's solutions, or errata's correction of them (one text in their place)."""
    for correction in note.get("corrections") or []:
        if correction.get("field") == "solutions":
            return (str(correction["correction"]),)
    return tuple(str(item) for item in json.loads(written)) if written else ()


def _index_pattern(document: dict[str, Any]) -> str:
    """The record's own pattern when it names its groups; else one derived from the template,
    so the captured values can be typed (a seed's ``(.+?)`` groups say nothing)."""
    pattern = str(document["messagePattern"])
    return pattern if "(?P<" in pattern else _derived(document["errorMessage"])


class CatalogCache:
    """One per process; answers with the newest catalog it has, and brings it up to the
    store's version without making a request wait for a rebuild.

    A write of a few records is applied in place (``Catalog.changed``); a larger one (an
    import) starts a rebuild in a thread of its own while the catalog held goes on
    answering. While the database is unreachable, or every pooled connection is in use,
    the catalog held answers, and says why (``stale_reason``).
    """

    def __init__(self, sessions: sessionmaker[Session], versions: VersionWatch) -> None:
        self._sessions = sessions
        self._versions = versions
        self._lock = threading.Lock()
        self._catalog: Catalog | None = None
        self._rebuilding: threading.Thread | None = None
        self.stale_reason: str | None = None  # why the last attempt to read the store failed

    def ready(self) -> Catalog | None:
        """The current catalog when that takes no database work (the watch knows the version
        and the catalog is of it), else ``None``: then call ``current`` off the event loop."""
        catalog = self._catalog
        version = self._versions.known()
        return catalog if catalog is not None and catalog.version == version else None

    def newest(self) -> Catalog | None:
        """The catalog held, however old (``None`` before the first is built)."""
        return self._catalog

    @property
    def generation(self) -> int:
        """The version watch's: moved by every write through this process."""
        return self._versions.generation

    def current(self) -> Catalog:
        """The catalog of the store's version where a few records changed, else the one held
        while a rebuild runs; the one held, too, while the database is unreachable.

        One thread at a time reads the version (and applies changes): the requests that
        found the reading stale together then find it fresh, rather than each asking.
        """
        with self._lock:
            catalog = self.ready()
            if catalog is not None:
                return catalog
            try:
                catalog = self._refreshed()
            except DATABASE_UNAVAILABLE as exc:
                if self._catalog is None:
                    raise
                busy = isinstance(exc, PoolTimeout)
                self.stale_reason = "database busy" if busy else "database unreachable"
                log.warning(
                    "%s: answering from catalog %d", self.stale_reason, self._catalog.version
                )
                return self._catalog
            self.stale_reason = None
            return catalog

    def _refreshed(self) -> Catalog:
        with transaction(self._sessions) as session:
            store = RecordStore(session, self._versions)
            version = store.version()
            held = self._catalog
            if held is not None and held.version == version:
                return held
            if held is None:
                self._catalog = observe_index_build(load_catalog, store, version)
                return self._catalog
            changes = (
                load_changes(store, held.version, version)
                if held.overlaid_entries < MAX_OVERLAY_ENTRIES
                else None
            )
            if changes is None:
                self._rebuild_in_background()
                return held
            rules = rule_records(store) if changes.rules_touched else held.rule_records
            self._catalog = observe_index_build(held.changed, changes, rules)
            return self._catalog

    def _rebuild_in_background(self) -> None:
        if self._rebuilding is not None and self._rebuilding.is_alive():
            return
        self._rebuilding = threading.Thread(target=self._rebuild, name="catalog-rebuild")
        self._rebuilding.daemon = True
        self._rebuilding.start()

    def _rebuild(self) -> None:
        try:
            with transaction(self._sessions) as session:
                store = RecordStore(session)
                catalog = observe_index_build(load_catalog, store, store.version())
        except DATABASE_UNAVAILABLE:
            log.warning("catalog rebuild failed: database unreachable")
            return
        with self._lock:
            if self._catalog is None or self._catalog.version < catalog.version:
                self._catalog = catalog

    def wait_for_rebuild(self) -> None:
        """Until a rebuild under way has finished (for the command line and tests)."""
        rebuilding = self._rebuilding
        if rebuilding is not None:
            rebuilding.join()
