"""The process's watch on the store's version: reused while young, dropped by a commit."""

from __future__ import annotations

import json

from sqlalchemy.orm import Session, sessionmaker

from app.records.importer import import_text
from app.records.store import RecordStore
from app.records.version_watch import VersionedLRU, VersionWatch, forget_after_writes
from tests.records.test_importer import record


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class CountingReads:
    """A stand-in for the query: returns ``version``, and counts how often it was asked."""

    def __init__(self, version: int = 7) -> None:
        self.version = version
        self.reads = 0

    def __call__(self) -> int:
        self.reads += 1
        return self.version


def test_a_reading_is_reused_until_it_is_older_than_the_max_age() -> None:
    clock, read = Clock(), CountingReads()
    watch = VersionWatch(max_age=0.5, clock=clock)
    assert watch.known() is None
    assert watch.current(read) == 7 and read.reads == 1
    read.version = 8  # another worker wrote
    clock.now += 0.49
    assert watch.known() == 7
    assert watch.current(read) == 7 and read.reads == 1
    clock.now += 0.01
    assert watch.known() is None
    assert watch.current(read) == 8 and read.reads == 2


def test_forgetting_makes_the_next_request_read_again() -> None:
    read = CountingReads()
    watch = VersionWatch(max_age=60, clock=Clock())
    watch.current(read)
    read.version = 8
    watch.forget()
    assert watch.known() is None
    assert watch.current(read) == 8 and read.reads == 2


def test_a_reading_that_raced_a_commit_is_not_kept() -> None:
    watch = VersionWatch(max_age=60, clock=Clock())

    def read_while_another_request_commits() -> int:
        watch.forget()  # the commit lands after the query read the old version
        return 7

    assert watch.current(read_while_another_request_commits) == 7
    assert watch.known() is None  # the old version is not trusted for the next request


def test_only_a_committed_write_through_this_process_drops_the_reading(
    session_factory: sessionmaker[Session],
) -> None:
    watch = VersionWatch(max_age=3600)
    forget_after_writes(session_factory, watch)

    def version() -> int:
        with session_factory() as session:
            return RecordStore(session, watch).version()

    before = version()
    with session_factory() as session:  # a unit of work that only reads
        assert RecordStore(session).version() == before
        session.commit()
    assert watch.known() == before

    with session_factory() as session:
        import_text(RecordStore(session, watch), json.dumps(record()), "doc")
        assert watch.known() == before  # not committed yet: other requests keep the reading
        session.commit()
    assert watch.known() is None
    assert version() > before


def test_remembered_answers_are_served_only_at_their_version() -> None:
    clock, read = Clock(), CountingReads(version=7)
    watch = VersionWatch(max_age=0.5, clock=clock)
    answers = VersionedLRU[str](watch, maxsize=8)
    answers.put(7, "a", "answer at 7")
    assert answers.get("a") is None  # the watch has not read the version yet
    assert answers.get_at(7, "a") == "answer at 7"  # for a caller that just read it
    assert answers.get_at(8, "a") is None
    watch.current(read)
    assert answers.get("a") == "answer at 7"
    assert answers.get("b") is None
    watch.forget()  # a write through this process
    assert answers.get("a") is None
    read.version = 8
    watch.current(read)
    assert answers.get("a") is None  # another version: the old answer is never served
    clock.now += 0.5
    assert answers.get("a") is None  # a reading too old to trust serves nothing


def test_remembered_answers_are_bounded() -> None:
    watch = VersionWatch(max_age=60, clock=Clock())
    watch.current(CountingReads(version=1))
    answers = VersionedLRU[int](watch, maxsize=2)
    for key in range(3):
        answers.put(1, key, key)
    assert [answers.get(key) for key in range(3)] == [None, 1, 2]


def test_a_max_age_of_zero_reads_the_version_every_time() -> None:
    read = CountingReads()
    watch = VersionWatch(max_age=0, clock=Clock())
    assert [watch.current(read) for _ in range(3)] == [7, 7, 7]
    assert read.reads == 3 and watch.known() is None
