"""The store's version as this process last read it, so that most requests need not ask.

Every write moves the store's version counter, and each process keeps what it derives from
the store by that version (the catalog that match and compute read, the answers to
``GET /api/errors/{id}``). Reading the counter is one query; a request that only matches,
computes or reads a record would otherwise spend more on that query than on its own work.

The watch re-reads the counter when its reading is older than ``max_age`` seconds, so a
write through another worker is seen within that time, and forgets its reading as soon as
a write through this process commits, so a process sees its own writes at once.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable

from sqlalchemy import event
from sqlalchemy.orm import Session, SessionTransaction, sessionmaker

from app.config import DEFAULT_MAX_AGE_S
from app.memo import LockedLRU


class VersionWatch:
    def __init__(
        self, max_age: float = DEFAULT_MAX_AGE_S, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.max_age = max_age
        self._clock = clock
        self._lock = threading.Lock()
        self._reading: tuple[int, float] | None = None  # (version, when it was read)
        self._generation = 0  # moved by forget(), so a read that raced a commit is dropped

    def known(self) -> int | None:
        """The version read less than ``max_age`` ago, or ``None`` when it must be read."""
        reading = self._reading
        if reading is None or self._clock() - reading[1] >= self.max_age:
            return None
        return reading[0]

    def current(self, read: Callable[[], int]) -> int:
        """The known version, else ``read()`` (the query) and remember its answer."""
        version = self.known()
        if version is not None:
            return version
        with self._lock:
            generation = self._generation
        started = self._clock()
        version = read()
        with self._lock:
            if generation == self._generation:
                self._reading = (version, started)
        return version

    @property
    def generation(self) -> int:
        """Moves with every ``forget``: work begun at an older generation may predate a write."""
        return self._generation

    def forget(self) -> None:
        """A write committed: the next ``current`` reads the counter again."""
        with self._lock:
            self._generation += 1
            self._reading = None


_WROTE = "errata.store_written"  # in Session.info while a transaction holds a write


def mark_written(session: Session) -> None:
    """The store wrote in this transaction: its commit must make watches forget."""
    session.info[_WROTE] = True


def has_written(session: Session) -> bool:
    """Whether the store wrote in the session's transaction (until it ends)."""
    return bool(session.info.get(_WROTE))


def forget_after_writes(sessions: sessionmaker[Session], watch: VersionWatch) -> None:
    """Make ``watch`` forget its reading when a transaction of ``sessions`` that wrote ends
    (once committed; a rolled-back write costs only a needless re-read)."""

    def after_transaction_end(session: Session, transaction: SessionTransaction) -> None:
        if transaction.parent is None and session.info.pop(_WROTE, False):
            watch.forget()

    event.listen(sessions, "after_transaction_end", after_transaction_end)


class VersionedLRU[T]:
    """Answers remembered for one store version: served while the watch knows that version,
    never after it moves (the key holds the version, so stale answers just age out)."""

    def __init__(self, versions: VersionWatch, maxsize: int) -> None:
        self._versions = versions
        self._answers: LockedLRU[tuple[int, Hashable], T] = LockedLRU(maxsize)

    def get(self, key: Hashable) -> T | None:
        """The answer at the version the watch knows, without a query; else ``None``."""
        version = self._versions.known()
        return None if version is None else self.get_at(version, key)

    def get_at(self, version: int, key: Hashable) -> T | None:
        """The answer at ``version``: for a caller that has just read the version."""
        return self._answers.get((version, key))

    def put(self, version: int, key: Hashable, answer: T) -> None:
        """``version``: read before the answer, so the answer is never older than it."""
        self._answers.put((version, key), answer)
