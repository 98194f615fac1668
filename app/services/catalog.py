"""What matching and computing need from the database, held in memory by each process.

A ``Catalog`` is one store version's worth of it: the pattern index over every live
record's wordings, a few facts about every record, and the record documenting each rule.
``CatalogCache`` keeps the current one and builds a new one, in a read-only unit of work of
its own, when the store's version moves (whichever worker wrote). A request that finds
the catalog current therefore needs no database at all.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Hashable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from rapidfuzz import fuzz, process, utils
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from app.alignment import OPERATIONS, RULES
from app.db import transaction
from app.knowledge.scope import backend_of
from app.matching import PatternEntry, PatternIndex
from app.matching.templates import derive_pattern
from app.memo import LockedLRU
from app.observability.metrics import observe_index_build
from app.records.models import AnnotationRow, RecordRow
from app.records.store import RecordStore
from app.records.version_watch import VersionWatch

SUGGESTIONS = 3
ANSWERS_KEPT = 1024  # per catalog, a few KB each
# Rebuilds derive the same patterns again; keep them (a pattern is a few hundred bytes).
_derived = lru_cache(maxsize=1 << 16)(derive_pattern)


def _operations_by_rule() -> dict[str, tuple[str, ...]]:
    """Each rule's operations (those with a step checking it), in ``OPERATIONS`` order."""
    found: dict[str, list[str]] = {}
    for name, operation in OPERATIONS.items():
        for rule_id in dict.fromkeys(step.rule.id for step in operation.steps):
            found.setdefault(rule_id, []).append(name)
    return {rule_id: tuple(names) for rule_id, names in found.items()}


_OPERATIONS_BY_RULE = _operations_by_rule()


def operations_for_rule(rule_id: str) -> list[str]:
    return list(_OPERATIONS_BY_RULE.get(rule_id, ()))


def record_operations(
    annotated: list[str] | None, own: list[str] | None, rule: str | None
) -> list[str]:
    """The constructs a record applies to: its annotation's, its own, else its rule's."""
    return annotated or own or (operations_for_rule(rule) if rule else [])


@dataclass(frozen=True)
class RecordInfo:
    """What a match or a compute needs to know about a record."""

    id: str
    slug: str
    message: str
    error_class: str | None
    rule: str | None
    operations: tuple[str, ...]
    retired: bool = False
    backend: str | None = None  # where JAX raises it, from its source file (see backend_of)


class Catalog:
    """The records' facts, the pattern index over the live ones and the record documenting
    each rule, as of one store version."""

    def __init__(
        self,
        records: dict[str, RecordInfo],
        entries: list[PatternEntry],
        rule_records: dict[str, str | None],
        version: int,
    ) -> None:
        self.records = records  # retired ones too: they can still be computed by id
        self.patterns = PatternIndex.build(entries)
        self.rule_records = rule_records
        self.version = version
        live = [info for info in records.values() if not info.retired]
        self._messages = [info.message for info in live]
        self._ids = [info.id for info in live]
        self._backends = [info.backend for info in live]
        self.live_records = len(live)
        # Answers worked out from this catalog (a compute's, by its case), kept with it
        # because they change with it: the records they name come from it.
        self.answers: LockedLRU[Hashable, Any] = LockedLRU(ANSWERS_KEPT)

    def similar(self, text: str) -> list[tuple[str, float]]:
        """Live records whose message reads like ``text``, best first, scored 0..1.

        Words alike are no kinship across backends: when ``text`` names backends (a TPU
        lowering error, Triton's), only records raised by one of them are offered."""
        named = {backend for backend, words in _BACKEND_WORDS.items() if words.search(text)}
        found = process.extract(
            text,
            self._messages,
            scorer=fuzz.token_set_ratio,
            processor=utils.default_process,
            limit=None if named else SUGGESTIONS,
            score_cutoff=30,
        )
        return [
            (self._ids[position], round(score / 100, 3))
            for _, score, position in found
            if not named or self._backends[position] in named
        ][:SUGGESTIONS]


# The words that name a backend in a paste.
_BACKEND_WORDS = {
    "mosaic_gpu": re.compile(r"mosaic[_ ]gpu|\bplgpu\b|\bmgpu\b", re.IGNORECASE),
    "tpu": re.compile(r"\bTPU\b|pallas\.mosaic\.|tpu_custom_call", re.IGNORECASE),
    "triton": re.compile(r"\btriton\b", re.IGNORECASE),
}


# What the catalog needs of a record: its columns, and three fields of its document read by
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
)


def load_catalog(store: RecordStore, version: int) -> Catalog:
    """Read every record (and annotation) into a fresh catalog of store ``version``."""
    session = store.session
    annotations = {row.record_id: row.document for row in session.scalars(select(AnnotationRow))}
    records: dict[str, RecordInfo] = {}
    entries: list[PatternEntry] = []
    shared: dict[tuple[str, str], dict[str, str]] = {}  # one metadata dict per class and rule
    # Plain rows through the store's connection: no ORM bookkeeping for 100,000 of them.
    for row in session.connection().execute(_INDEXED):
        (record_id, slug, message, error_class, row_rule, retired, path) = row[:7]
        pattern, typed, ops, older = row[7:]
        note = annotations.get(record_id, {})
        rule = note.get("rule") or row_rule
        operations = record_operations(
            note.get("operations"), json.loads(ops) if ops else None, rule
        )
        records[record_id] = RecordInfo(
            record_id,
            slug,
            message,
            error_class,
            rule,
            tuple(operations),
            bool(retired),
            backend_of(path) if path else None,
        )
        if retired or typed == "":  # a mined message too short to tell from any line
            continue
        key = (error_class or "", rule or "")
        metadata = shared.setdefault(key, {"exception_class": key[0], "rule": key[1]})
        current = typed or _index_pattern({"messagePattern": pattern, "errorMessage": message})
        entries.append(PatternEntry(record_id, current, "current", metadata))
        older_wordings = json.loads(older) if older else None
        for wording in [*(older_wordings or []), *(note.get("olderWordings") or [])]:
            pattern = wording.get("pattern") or _derived(wording["text"])
            variant = f"older wording ({wording['until']})" if wording.get("until") else "older"
            entries.append(PatternEntry(record_id, pattern, variant, metadata))
    rule_records = {
        rule: (found.id if (found := store.record_for_rule(rule)) is not None else None)
        for rule in RULES
    }
    return Catalog(records, entries, rule_records, version)


def _index_pattern(document: dict[str, Any]) -> str:
    """The record's own pattern when it names its groups; else one derived from the template,
    so the captured values can be typed (a seed's ``(.+?)`` groups say nothing)."""
    pattern = str(document["messagePattern"])
    return pattern if "(?P<" in pattern else _derived(document["errorMessage"])


class CatalogCache:
    """One per process; answers with the catalog of the store's current version."""

    def __init__(self, sessions: sessionmaker[Session], versions: VersionWatch) -> None:
        self._sessions = sessions
        self._versions = versions
        self._lock = threading.Lock()
        self._catalog: Catalog | None = None

    def ready(self) -> Catalog | None:
        """The current catalog when that takes no database work (the watch knows the version
        and the catalog is of it), else ``None``: then call ``current`` off the event loop."""
        catalog = self._catalog
        version = self._versions.known()
        return catalog if catalog is not None and catalog.version == version else None

    @property
    def generation(self) -> int:
        """The version watch's: moved by every write through this process."""
        return self._versions.generation

    def current(self) -> Catalog:
        """The catalog of the store's version, rebuilt first when the version has moved.

        One thread at a time reads the version (and rebuilds): the requests that found the
        reading stale together then find it fresh, rather than each asking the database.
        """
        with self._lock:
            catalog = self.ready()
            if catalog is not None:
                return catalog
            with transaction(self._sessions) as session:
                store = RecordStore(session, self._versions)
                version = store.version()
                catalog = self._catalog
                if catalog is None or catalog.version != version:
                    catalog = observe_index_build(load_catalog, store, version)
                    self._catalog = catalog
                return catalog
