"""How fast records are imported: one JSON Lines file of synthetic records (``corpus.py``,
seed-sized documents without slug or pattern, so both are derived), imported as
``errata import`` imports it (one transaction), then the same file again (nothing changes),
then a file of the same records each changed, then concurrent imports of small files. Run
from the repository root:

    .venv/bin/python -m benchmarks.imports                     # 100,000 records, SQLite
    .venv/bin/python -m benchmarks.imports --records 10000
    .venv/bin/python -m benchmarks.imports --database-url postgresql+psycopg://...  # empty DB

Figures: wall time and records a second for the first import, the repeat and the changed
file, the share of the first spent validating (parsing, checking, deriving slugs and
patterns, no database), and for ``--concurrent`` imports of ``--small`` records each, started
at once from threads (as concurrent requests would), how long the slowest took and how many
were refused 409.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

if __package__ in (None, ""):  # run as a file: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.config import load_settings
from app.db import make_engine, make_session_factory, transaction
from app.errors import WritesBusy
from app.migrate import upgrade
from app.records.importer import import_paths, import_text, read_documents
from app.records.store import RecordStore
from app.records.validation import validate_record
from benchmarks import corpus
from benchmarks.load_index import database_url


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--database-url", help="an empty database (default: SQLite file)")
    parser.add_argument("--concurrent", type=int, default=8)
    parser.add_argument("--small", type=int, default=500)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        url = database_url(args.database_url, None, Path(scratch))
        documents = list(corpus.record_documents(args.records + args.concurrent * args.small))
        big = Path(scratch) / "records.jsonl"
        big.write_text("".join(json.dumps(doc) + "\n" for doc in documents[: args.records]))
        changed = Path(scratch) / "changed.jsonl"
        changed.write_text(
            "".join(
                json.dumps({**doc, "documentation": f"{doc['documentation']} Revised."}) + "\n"
                for doc in documents[: args.records]
            )
        )
        smalls = [
            "".join(json.dumps(doc) + "\n" for doc in documents[start : start + args.small])
            for start in range(args.records, len(documents), args.small)
        ]
        del documents  # held, they would slow every garbage collection timed from here on
        return run(url, big, changed, smalls, args.records)


def run(url: str, big: Path, changed: Path, smalls: list[str], count: int) -> int:
    settings = load_settings(database_url=url)
    engine = make_engine(settings.resolved_database_url, statement_timeout_ms=30_000)
    upgrade(settings, engine)
    factory = make_session_factory(engine)
    print(f"# {engine.dialect.name}, {count:,} records in one file of {big.stat().st_size:,} B")

    started = time.perf_counter()
    for incoming in read_documents(big.read_text(), str(big)):
        validate_record(incoming.record)
    validating = time.perf_counter() - started

    for label, path in (
        ("first import", big),
        ("same file again", big),
        ("every one changed", changed),
    ):
        started = time.perf_counter()
        summary = import_paths(factory, [path])
        took = time.perf_counter() - started
        assert not summary.failed, summary.issues
        print(
            f"{label:<17} {took:7.2f} s  {count / took:8,.0f} records/s  (added "
            f"{summary.added:,}, updated {summary.updated:,}, unchanged {summary.unchanged:,})"
        )
        if label == "first import":
            print(f"  of which validating: {validating:.2f} s ({validating / took:.0%})")

    def small_import(text: str) -> tuple[float, bool]:
        started = time.perf_counter()
        try:
            with transaction(factory) as session:
                import_text(RecordStore(session), text, "small")
        except WritesBusy:
            return time.perf_counter() - started, False
        return time.perf_counter() - started, True

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=len(smalls)) as pool:
        results = list(pool.map(small_import, smalls))
    wall = time.perf_counter() - started
    refused = sum(not done for _, done in results)
    print(
        f"{len(smalls)} concurrent imports of {len(smalls[0].splitlines())} records: "
        f"all done in {wall:.2f} s, slowest {max(t for t, _ in results):.2f} s, "
        f"{refused} refused (409)"
    )
    engine.dispose()
    return 0


if __name__ == "__main__":
    sys.exit(main())
