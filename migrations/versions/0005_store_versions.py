"""The store version at which each record and annotation last changed, so that a process
holding the catalog of an older version reads only what changed since.

Revision ID: 0005_store_versions
Revises: 0004
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005_store_versions"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TABLES = ("records", "annotations")


def upgrade() -> None:
    for table in _TABLES:
        with op.batch_alter_table(table) as batch_op:
            batch_op.add_column(
                sa.Column("store_version", sa.BigInteger(), nullable=False, server_default="0")
            )
            batch_op.create_index(
                op.f(f"ix_{table}_store_version"), ["store_version"], unique=False
            )


def downgrade() -> None:
    for table in _TABLES:
        with op.batch_alter_table(table) as batch_op:
            batch_op.drop_index(op.f(f"ix_{table}_store_version"))
            batch_op.drop_column("store_version")
