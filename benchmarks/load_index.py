"""How long a worker takes to rebuild its catalog from the database (``load_catalog``): the
match index, each record's constructs, and the record documenting each rule.

Every worker rebuilds its catalog when the store's version moves, so this is paid once per
worker after each write. Run from the repository root:

    .venv/bin/python -m benchmarks.load_index                    # 100,000 records, SQLite
    .venv/bin/python -m benchmarks.load_index --records 10000
    .venv/bin/python -m benchmarks.load_index --keep var/bench-100k.sqlite3   # fill once, reuse
    .venv/bin/python -m benchmarks.load_index --database-url postgresql+psycopg://...

The database is migrated, gets the shipped seeds, then synthetic records (``corpus.py``,
seed-sized documents) through the importer — the same validation and writes as
``errata import`` — in transactions of 5,000. Filling 100,000 records takes a few
minutes; ``--keep`` keeps the SQLite file for the next run. A ``--database-url`` must
name an empty database you created, and is left filled.

Then, in one process: the first ``load_catalog`` (a worker starting), two rebuilds (a worker
seeing a write: pattern analysis is cached by then), the shares of a rebuild spent building
the pattern index and the kinship (which records carry each feature, for related records),
the rest (reading rows), and resident memory.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a file: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sqlalchemy import func, select

from app.answers.catalog_cache import load_catalog
from app.answers.kinship import Kinship
from app.config import load_settings
from app.db import make_engine, make_session_factory, transaction
from app.matching import PatternIndex
from app.records.importer import import_text
from app.records.models import RecordRow, RecordTag
from app.records.seeding import prepare_database
from app.records.store import RecordStore
from benchmarks import corpus, memory

CHUNK = 5_000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=100_000, help="synthetic records")
    parser.add_argument("--database-url", help="an empty database (default: SQLite file)")
    parser.add_argument("--keep", type=Path, help="SQLite file to create once and reuse")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        return run(database_url(args.database_url, args.keep, Path(scratch)), args.records)


def database_url(given: str | None, keep: Path | None, scratch: Path) -> str:
    """The database a benchmark fills: the one given, else an SQLite file (kept, or scratch)."""
    if given:
        return given
    return f"sqlite:///{(keep or scratch / 'errata.sqlite3').resolve()}"


def run(url: str, count: int) -> int:
    settings = load_settings(database_url=url)
    engine = make_engine(settings.resolved_database_url)
    factory = make_session_factory(engine)
    prepare_database(settings, engine, factory)
    fill(factory, count)
    with factory() as db:
        total = db.scalar(select(func.count()).select_from(RecordRow)) or 0
    print(f"# {engine.dialect.name}, {total:,} records", flush=True)

    rss_before = memory.rss_mb()
    with factory() as db:
        started = time.perf_counter()
        store = RecordStore(db)
        catalog = load_catalog(store, store.version())
        first = time.perf_counter() - started
    gc.collect()
    rss_after = memory.rss_mb()
    rebuilds = []
    for _ in range(2):
        with factory() as db:
            started = time.perf_counter()
            store = RecordStore(db)
            catalog = load_catalog(store, store.version())
            rebuilds.append(time.perf_counter() - started)
    entries = catalog.patterns.entries
    PatternIndex.build(entries[:1])  # warm up, then time only the build
    started = time.perf_counter()
    PatternIndex.build(entries)
    build = time.perf_counter() - started
    started = time.perf_counter()
    Kinship.build(list(catalog.records.values()))
    kinship = time.perf_counter() - started

    print(f"patterns indexed:       {len(entries):,}")
    print(f"first load_catalog:     {first:.2f} s")
    print(f"rebuilds:               {', '.join(f'{t:.2f} s' for t in rebuilds)}")
    print(f"  of which index build: {build:.2f} s (patterns already analysed)")
    print(f"  kinship build:        {kinship:.2f} s (what relates records)")
    print(f"  reading rows, rest:   {min(rebuilds) - build - kinship:.2f} s")
    print(f"RSS: {rss_before:.0f} MB before, {rss_after:.0f} MB with the index", end="")
    print(f" (peak {memory.peak_mb():.0f} MB)")
    engine.dispose()
    return 0


def fill(factory, count: int) -> None:  # type: ignore[no-untyped-def]
    """Import synthetic records until the store holds ``count`` of them."""
    with factory() as db:
        query = select(func.count()).where(RecordTag.tag == corpus.SYNTHETIC_TAG)
        have = db.scalar(query) or 0
    documents = corpus.record_documents(count)
    for _ in range(have):  # the same records in the same order: skip those stored
        next(documents, None)
    started = time.perf_counter()
    added = have
    while added < count:
        chunk = [json.dumps({"record": next(documents)}) for _ in range(min(CHUNK, count - added))]
        with transaction(factory) as db:
            import_text(RecordStore(db), "\n".join(chunk), "benchmark")
        added += len(chunk)
        print(f"  filled {added:,} / {count:,} ({time.perf_counter() - started:.0f} s)", end="\r")
    if added > have:
        print()


if __name__ == "__main__":
    sys.exit(main())
