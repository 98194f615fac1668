"""Mined facts of a record's site, copied out for filtering: function, backend, releases.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("records") as batch:
        batch.add_column(sa.Column("function", sa.String(length=300), nullable=True))
        batch.add_column(sa.Column("backend", sa.String(length=20), nullable=True))
        batch.add_column(sa.Column("releases", sa.Text(), nullable=True))
        batch.create_index(op.f("ix_records_function"), ["function"])
        batch.create_index(op.f("ix_records_backend"), ["backend"])


def downgrade() -> None:
    with op.batch_alter_table("records") as batch:
        batch.drop_index(op.f("ix_records_backend"))
        batch.drop_index(op.f("ix_records_function"))
        batch.drop_column("releases")
        batch.drop_column("backend")
        batch.drop_column("function")
