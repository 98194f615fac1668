"""What answering a paste needs, kept in one file for a command that answers once and exits.

A server builds its catalog, frame index and compiler records once and answers for hours;
``errata match`` built them on every call, which took nearly all of its seconds: the catalog
from the database, the frame index's tables from their JSON, the compiler records through
the record schema. A snapshot holds them as built, packed (``app.packed``): a process reads
the snapshot's header, then only the records and frames its paste leads to.

A snapshot names what it was built from: every file of errata's code and data, and the
SQLite file of the database with its write-ahead log, each by size, time and inode. It is
read only while all of them stand as they did; otherwise the caller builds it again. Its
file is named by what picks the database (the ``ERRATA_*`` variables and the working
folder), so that finding it takes no settings: their import costs more than the answer.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from app import collector
from app.answers.catalog import Catalog
from app.jaxref.files import DATA_DIR
from app.matching.compiler_advice import CompilerTable
from app.matching.frames import FrameIndex

APP_DIR = Path(__file__).resolve().parents[1]
# Snapshots kept in the cache folder, the most recently written: one per database that a
# user's commands read (a folder's var/, another ERRATA_DATABASE_URL), 30 MB each.
SNAPSHOTS_KEPT = 4
SNAPSHOT_FILES = "catalog-*.pickle"
# A file's path, then its size, modification time and inode; or the path alone, missing.
FileState = tuple[str, int, int, int] | tuple[str]


@dataclass(frozen=True)
class Prepared:
    """The catalog of the store's version, the frame index, and the compiler records."""

    catalog: Catalog
    frames: FrameIndex
    compilers: CompilerTable

    def packed(self) -> Prepared:
        return Prepared(self.catalog.packed(), self.frames.packed(), self.compilers)


@dataclass(frozen=True)
class _Header:
    """What a snapshot was built from: the database's files, and the state of every source."""

    database: tuple[str, ...]
    sources: tuple[FileState, ...]


def snapshot_file(environ: Mapping[str, str] = os.environ) -> Path:
    """Where the snapshot of what this process would build is kept: in the user's cache
    folder, named by the settings' variables (read in any case, as the settings read them),
    the working folder (a relative ``data_dir``) and the Python that pickled it."""
    chosen = sorted((name.upper(), value) for name, value in environ.items() if _setting(name))
    named = repr((os.getcwd(), chosen, sys.version)).encode("utf-8", "surrogateescape")
    key = hashlib.blake2b(named, digest_size=16).hexdigest()
    cache = environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "errata" / SNAPSHOT_FILES.replace("*", key)


def _setting(name: str) -> bool:
    return name.upper().startswith("ERRATA_")


def read_snapshot(path: Path) -> Prepared | None:
    """The snapshot at ``path`` while what it was built from stands as it did; ``None`` when
    there is none, it is stale, or it cannot be read (another version's pickle, a file cut
    short, one the user does not own): a snapshot is only ever rebuilt, never mended."""
    try:
        with path.open("rb") as stream:
            if os.fstat(stream.fileno()).st_uid != os.getuid():
                return None
            header = pickle.load(stream)
            if not isinstance(header, _Header):
                return None
            database = tuple(Path(file) for file in header.database)
            if header.sources != source_state(database):
                return None
            with collector.paused():  # 100,000 objects made, none in a cycle
                prepared = pickle.load(stream)
    except Exception:  # whatever unpickling raises: the snapshot is built again
        return None
    return prepared if isinstance(prepared, Prepared) else None


def source_state(database: tuple[Path, ...]) -> tuple[FileState, ...]:
    """Every file of errata's code and data and ``database``'s files, as they stand now."""
    files = [*_files(APP_DIR, ".py"), *_files(DATA_DIR, ""), *database]
    return tuple(_state(file) for file in files)


def database_files(database: Path) -> tuple[Path, ...]:
    """An SQLite database's file and its write-ahead log, which holds its newest writes."""
    return (database.absolute(), database.absolute().with_name(f"{database.name}-wal"))


def write_snapshot(
    path: Path, prepared: Prepared, database: tuple[Path, ...], sources: tuple[FileState, ...]
) -> None:
    """Keep ``prepared``, built from ``sources``, at ``path``: written whole or not at all
    (a file that cannot be written is left unwritten: the next command builds again)."""
    header = _Header(tuple(str(file) for file in database), sources)
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        with partial.open("wb") as stream, collector.paused():
            pickle.dump(header, stream, protocol=pickle.HIGHEST_PROTOCOL)
            pickle.dump(prepared.packed(), stream, protocol=pickle.HIGHEST_PROTOCOL)
        partial.replace(path)
        _forget_old(path.parent)
    except OSError:
        partial.unlink(missing_ok=True)


def _forget_old(folder: Path) -> None:
    """Remove all but the ``SNAPSHOTS_KEPT`` most recently written snapshots."""
    written = sorted(folder.glob(SNAPSHOT_FILES), key=_written, reverse=True)
    for old in written[SNAPSHOTS_KEPT:]:
        old.unlink(missing_ok=True)


def _written(path: Path) -> int:
    try:
        return path.stat().st_mtime_ns
    except OSError:  # removed by another command meanwhile
        return 0


def _files(folder: Path, suffix: str) -> Iterator[Path]:
    """The files under ``folder`` ending in ``suffix``, hidden ones aside (a miner's partial
    file, a snapshot's), in a fixed order."""
    for root, folders, files in os.walk(folder):
        folders[:] = sorted(name for name in folders if not name.startswith((".", "__")))
        base = Path(root)
        yield from (
            base / name for name in sorted(files) if name.endswith(suffix) and name[0] != "."
        )


def _state(file: Path) -> FileState:
    try:
        found = file.stat()
    except OSError:
        return (str(file),)
    return (str(file), found.st_size, found.st_mtime_ns, found.st_ino)
