"""Database engine and session factory, built per app rather than at import time."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from sqlalchemy import Engine, MetaData, create_engine, event, text
from sqlalchemy.engine import make_url
from sqlalchemy.orm import DeclarativeBase, Session, sessionmaker

# Named constraints keep Alembic's autogenerate identical on SQLite and PostgreSQL.
NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


# Seconds to wait for a new PostgreSQL connection.
CONNECT_TIMEOUT_S = 5
# Page cache per SQLite connection: SQLite's default. Reads share the operating system's
# file cache; every pooled connection keeps a cache of its own, and at 64 MiB each twenty of
# them grew a server under fifty clients to 1.3 GB (8 MiB: 1.78x its memory after start,
# 2 MiB: 1.28x). A bulk write widens its own while it runs.
SQLITE_CACHE_KIB = 2 * 1024
SQLITE_BULK_CACHE_KIB = 64 * 1024
# Seconds a request waits for a pooled connection when every one is in use, then answers
# 503 "server busy": a request queued 30 s (SQLAlchemy's default) holds its client, a
# thread and its memory all that time, and most clients have given up by then. At 3 s, 50
# clients on one worker at 100,000 records got 7 503s in 1,690 requests; at 10 s none, the
# slowest answer taking 5.8 s (benchmarks/load.py, docs/benchmarks.md).
POOL_TIMEOUT_S = 10.0
# Connections a process keeps, and how many more it opens while those are all in use.
POOL_SIZE = 10
POOL_OVERFLOW = 10


@dataclass(frozen=True)
class PoolLimits:
    """How many connections a process's pool holds, and how long a request waits for one."""

    size: int = POOL_SIZE
    overflow: int = POOL_OVERFLOW
    timeout_s: float = POOL_TIMEOUT_S

    def engine_arguments(self) -> dict[str, Any]:
        return {
            "pool_size": self.size,
            "max_overflow": self.overflow,
            "pool_timeout": self.timeout_s,
        }


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


def make_engine(
    url: str, *, statement_timeout_ms: int = 0, pool: PoolLimits | None = None
) -> Engine:
    """Create an engine; for SQLite, make sure the folder exists and foreign keys are on.

    PostgreSQL connections are checked before each use (a restarted server costs no failed
    request once it is back), give up connecting after a few seconds, and, with
    ``statement_timeout_ms``, have the server cancel any statement that runs longer.
    ``pool``: the pool's size and wait, on both databases (an in-memory SQLite database
    keeps one connection a thread instead).
    """
    limits = (pool or PoolLimits()).engine_arguments()
    if make_url(url).get_backend_name() == "sqlite":
        file = sqlite_file(url)  # None: in memory
        if file is not None:
            file.parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(
            url,
            connect_args={"check_same_thread": False, "timeout": 30},
            json_serializer=json_text,
            **({} if file is None else limits),
        )
        event.listen(engine, "connect", _sqlite_pragmas)
        event.listen(engine, "checkin", _narrow_cache)
        return engine
    # No server-side prepared statements: PostgreSQL keeps a prepared statement's generic
    # plan, and one made while a table was empty (a seq scan) stayed after it filled: an
    # import's id lookups took seconds each on 100,000 records.
    connect_args: dict[str, object] = {
        "connect_timeout": CONNECT_TIMEOUT_S,
        "prepare_threshold": None,
    }
    if statement_timeout_ms:
        connect_args["options"] = f"-c statement_timeout={int(statement_timeout_ms)}"
    return create_engine(
        url,
        pool_pre_ping=True,
        **limits,
        connect_args=connect_args,
        json_serializer=json_text,
    )


def sqlite_file(url: str) -> Path | None:
    """The file of an SQLite database's URL; ``None`` for another database, or one in memory."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or not parsed.database:
        return None
    return None if parsed.database == ":memory:" else Path(parsed.database)


def json_text(value: Any) -> str:
    """A JSON column's text, by orjson: an import of 100,000 documents spent seconds in the
    standard library's encoder. An integer past 64 bits, which orjson refuses, falls back."""
    try:
        return orjson.dumps(value).decode()
    except orjson.JSONEncodeError:
        return json.dumps(value)


def _sqlite_pragmas(dbapi_connection, _record) -> None:  # type: ignore[no-untyped-def]
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute(f"PRAGMA cache_size=-{SQLITE_CACHE_KIB}")
    cursor.close()


def _narrow_cache(dbapi_connection, _record) -> None:  # type: ignore[no-untyped-def]
    """A connection back in the pool gives up what a bulk write widened its cache to."""
    dbapi_connection.execute(f"PRAGMA cache_size=-{SQLITE_CACHE_KIB}")


def widen_cache_for_bulk_write(session: Session) -> None:
    """64 MiB of page cache for this session's SQLite connection until it returns to the
    pool: an import's inserts land all over a dozen indexes, and with a small cache every
    other one read a page back from disk (100,000 records: 2 min). Nothing on PostgreSQL."""
    if session.get_bind().dialect.name == "sqlite":
        session.execute(text(f"PRAGMA cache_size=-{SQLITE_BULK_CACHE_KIB}"))


def make_session_factory(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(engine, expire_on_commit=False)


@contextmanager
def transaction(factory: sessionmaker[Session]) -> Iterator[Session]:
    """One unit of work: commit when the block ends cleanly, roll back on any error."""
    with factory() as session:
        try:
            yield session
            session.commit()
        except BaseException:
            session.rollback()
            raise


def refresh_planner_statistics(factory: sessionmaker[Session]) -> None:
    """``ANALYZE`` after a bulk import. SQLite keeps no table statistics until asked, and
    without them it planned a join over the records as a scan per record: a related-records
    query took 6–9 s at 11,000 records and 0.03 s after ``ANALYZE`` (50 ms to run)."""
    with transaction(factory) as session:
        session.execute(text("ANALYZE"))
