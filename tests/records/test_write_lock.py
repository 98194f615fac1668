"""A write that waits too long for another is told to retry (409), on each database; the
database is not blamed, and nothing is half-written."""

from __future__ import annotations

import pytest
from sqlalchemy import create_engine, func, select
from sqlalchemy.orm import Session, sessionmaker

from app.config import Settings
from app.db import make_session_factory
from app.errors import WritesBusy
from app.records import store as stores
from app.records.models import RecordRow
from app.records.store import RecordStore
from app.records.validation import validate_record


def test_a_writer_kept_waiting_gets_a_conflict_with_a_time_to_retry(
    settings: Settings, session_factory: sessionmaker[Session], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(stores, "WRITE_LOCK_WAIT_S", 1)
    url = settings.resolved_database_url
    # SQLite waits its busy timeout: a short one for the second writer.
    impatient = create_engine(url, connect_args={"timeout": 1} if url.startswith("sqlite") else {})
    first = validate_record({"id": "lock-first", "errorMessage": "First {n}"})
    second = validate_record({"id": "lock-second", "errorMessage": "Second {n}"})
    with session_factory() as holder:
        RecordStore(holder).upsert(first, None)  # holds the write lock until it ends
        with make_session_factory(impatient)() as waiter:
            with pytest.raises(WritesBusy) as refused:
                RecordStore(waiter).upsert(second, None)
            waiter.rollback()
        holder.commit()
    impatient.dispose()
    assert refused.value.status == 409 and refused.value.retry_after
    with session_factory() as session:
        stored = select(func.count()).where(RecordRow.id.in_(["lock-first", "lock-second"]))
        assert session.scalar(stored) == 1
