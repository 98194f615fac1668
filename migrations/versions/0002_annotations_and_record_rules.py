"""Annotations, and the rule each record documents.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "annotations",
        sa.Column("record_id", sa.String(length=64), nullable=False),
        sa.Column("rule", sa.String(length=100), nullable=True),
        sa.Column("document", sa.JSON(), nullable=False),
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        sa.PrimaryKeyConstraint("record_id", name=op.f("pk_annotations")),
    )
    with op.batch_alter_table("annotations", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_annotations_rule"), ["rule"], unique=False)

    with op.batch_alter_table("records", schema=None) as batch_op:
        batch_op.add_column(sa.Column("rule", sa.String(length=100), nullable=True))
        batch_op.create_index(batch_op.f("ix_records_rule"), ["rule"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("records", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_records_rule"))
        batch_op.drop_column("rule")

    with op.batch_alter_table("annotations", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_annotations_rule"))

    op.drop_table("annotations")
