"""Tables of the records store.

The record document is kept whole (``document``) so that a record comes back exactly as it
was imported, unknown fields included; the other columns are copies made for filtering.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    ForeignKey,
    Index,
    String,
    Text,
    func,
    true,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.db import Base


class RecordRow(Base):
    __tablename__ = "records"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    slug: Mapped[str] = mapped_column(String(200), index=True)
    repo: Mapped[str | None] = mapped_column(String(200), index=True)
    error_class: Mapped[str | None] = mapped_column(String(200), index=True)
    severity: Mapped[str | None] = mapped_column(String(50), index=True)
    file_path: Mapped[str | None] = mapped_column(String(500), index=True)
    background_tag: Mapped[str | None] = mapped_column(String(200), index=True)
    analyzed_sha: Mapped[str | None] = mapped_column(String(64), index=True)
    error_message: Mapped[str] = mapped_column(Text)
    document: Mapped[dict[str, Any]] = mapped_column(JSON)
    dataset_version: Mapped[str | None] = mapped_column(String(64))
    content_hash: Mapped[str] = mapped_column(String(64))
    retired: Mapped[bool] = mapped_column(Boolean, default=False, index=True)
    rule: Mapped[str | None] = mapped_column(String(100), index=True)
    # The mined site's (from the record, or from its annotation's ``mined`` part).
    function: Mapped[str | None] = mapped_column(String(300), index=True)
    backend: Mapped[str | None] = mapped_column(String(20), index=True)
    releases: Mapped[str | None] = mapped_column(Text)  # " 0.4.31 0.4.32 … ", for LIKE
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.now(), onupdate=func.now()
    )
    # The store version whose write last changed it: catalogs catch up by reading only these.
    store_version: Mapped[int] = mapped_column(BigInteger, server_default="0", index=True)
    # False for a record known only from JAX's source (its documentation ``derived``): at
    # equal relevance, a search lists curated records first.
    curated: Mapped[bool] = mapped_column(Boolean, server_default=true())
    # The words the full-text index reads (``app/records/search.py``), never loaded with a
    # row: SQLite's FTS5 table ``record_search`` (which the store's writes keep) and
    # PostgreSQL's generated ``search_vector`` column (GIN-indexed) are built from them.
    search_message: Mapped[str] = mapped_column(Text, server_default="", deferred=True)
    search_names: Mapped[str] = mapped_column(Text, server_default="", deferred=True)
    search_body: Mapped[str] = mapped_column(Text, server_default="", deferred=True)

    tags: Mapped[list[RecordTag]] = relationship(
        back_populates="record", cascade="all, delete-orphan"
    )


class RecordTag(Base):
    """One row per (record, tag): tag filters stay plain indexed equality on both databases."""

    __tablename__ = "record_tags"

    record_id: Mapped[str] = mapped_column(
        ForeignKey("records.id", ondelete="CASCADE"), primary_key=True
    )
    tag: Mapped[str] = mapped_column(String(200), primary_key=True)

    record: Mapped[RecordRow] = relationship(back_populates="tags")

    __table_args__ = (Index("ix_record_tags_tag", "tag"),)


class AnnotationRow(Base):
    """errata's own knowledge about a record it does not own (a seed): rule, fixes, corrections.

    Kept apart from the record so the record is still served exactly as shipped. It may
    arrive before its record, so there is no foreign key.
    """

    __tablename__ = "annotations"

    record_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    rule: Mapped[str | None] = mapped_column(String(100), index=True)
    document: Mapped[dict[str, Any]] = mapped_column(JSON)
    content_hash: Mapped[str] = mapped_column(String(64))
    store_version: Mapped[int] = mapped_column(BigInteger, server_default="0", index=True)


class StoreState(Base):
    """A single row whose version goes up with every write, so each worker can tell
    cheaply whether its in-memory catalog is stale."""

    __tablename__ = "store_state"

    id: Mapped[int] = mapped_column(primary_key=True)
    version: Mapped[int] = mapped_column(BigInteger, default=0)
