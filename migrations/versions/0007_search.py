"""Search by relevance: the words of each part of a record as the index reads them
(``search_message``, ``search_names``, ``search_body``, cut by ``app/records/search.py``),
whether a record is curated (at equal relevance, listed first), and the full-text index over
the words: on SQLite an FTS5 table over the records' rows, which the store's writes keep
(``index_records``: a trigger per row made imports four times slower); on PostgreSQL a
generated tsvector column (the message labelled A, names B, the rest C) under a GIN index.
``search_text``, which only the substring search read, goes. Records written before are
filled in here, as the store now writes them.

The FTS5 table reads the records table's rowids, which SQLite keeps through ``VACUUM`` (it
copies a table whole); a copy made another way (``.dump``) must rebuild the index:
``INSERT INTO record_search(record_search) VALUES ('rebuild')``.

Revision ID: 0007_search
Revises: 0006_api_releases
Create Date: 2026-12-06
"""

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

from app.records.search import search_columns

revision: str = "0007_search"
down_revision: str | None = "0006_api_releases"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_WORDS = ("search_message", "search_names", "search_body")
_RECORDS = sa.table(
    "records",
    sa.column("id", sa.String),
    sa.column("document", sa.JSON),
    sa.column("search_text", sa.Text),
    sa.column("curated", sa.Boolean),
    *(sa.column(name, sa.Text) for name in _WORDS),
)
_CHUNK = 500  # records read and written per statement

_FTS5 = [
    "CREATE VIRTUAL TABLE record_search USING fts5("
    "search_message, search_names, search_body, content='records',"
    " tokenize='unicode61 remove_diacritics 0')",
    "INSERT INTO record_search(record_search) VALUES ('rebuild')",
]
_TSVECTOR = [
    "ALTER TABLE records ADD COLUMN search_vector tsvector GENERATED ALWAYS AS ("
    "setweight(to_tsvector('simple'::regconfig, search_message), 'A')"
    " || setweight(to_tsvector('simple'::regconfig, search_names), 'B')"
    " || setweight(to_tsvector('simple'::regconfig, search_body), 'C')) STORED",
    "CREATE INDEX ix_records_search_vector ON records USING gin (search_vector)",
]


def upgrade() -> None:
    for name in _WORDS:
        op.add_column("records", sa.Column(name, sa.Text(), nullable=False, server_default=""))
    op.add_column(
        "records", sa.Column("curated", sa.Boolean(), nullable=False, server_default=sa.true())
    )
    _fill(
        lambda document: {
            **search_columns(document),
            "curated": document.get("documentationSource") != "derived",
        }
    )
    op.drop_column("records", "search_text")
    for statement in _TSVECTOR if op.get_bind().dialect.name == "postgresql" else _FTS5:
        op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.drop_index("ix_records_search_vector", "records")
        op.drop_column("records", "search_vector")
    else:
        op.execute("DROP TABLE record_search")
    op.add_column("records", sa.Column("search_text", sa.Text(), nullable=False, server_default=""))
    _fill(
        lambda document: {
            "search_text": "\n".join(
                [
                    document.get("errorMessage") or "",
                    document.get("documentation") or "",
                    *(document.get("solutions") or []),
                ]
            ).lower()
        }
    )
    for name in ("curated", *_WORDS):
        op.drop_column("records", name)


def _fill(columns: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
    """Each record's ``columns``, worked out from its document, written in chunks."""
    connection = op.get_bind()
    for chunk in _chunks([row.id for row in connection.execute(sa.select(_RECORDS.c.id))]):
        documents = connection.execute(
            sa.select(_RECORDS.c.id, _RECORDS.c.document).where(_RECORDS.c.id.in_(chunk))
        )
        values = [
            {"record_id": key, **{f"new_{k}": v for k, v in columns(document or {}).items()}}
            for key, document in documents
        ]
        names = [key.removeprefix("new_") for key in values[0] if key != "record_id"]
        connection.execute(
            _RECORDS.update()
            .where(_RECORDS.c.id == sa.bindparam("record_id"))
            .values({name: sa.bindparam(f"new_{name}") for name in names}),
            values,
        )


def _chunks(ids: list[str]) -> Iterator[list[str]]:
    return (ids[start : start + _CHUNK] for start in range(0, len(ids), _CHUNK))
