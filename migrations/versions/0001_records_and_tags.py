"""Records and their tags.

Revision ID: 0001
Revises:
Create Date: 2026-11-30
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "records",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("slug", sa.String(length=200), nullable=False),
        sa.Column("repo", sa.String(length=200), nullable=True),
        sa.Column("error_class", sa.String(length=200), nullable=True),
        sa.Column("severity", sa.String(length=50), nullable=True),
        sa.Column("file_path", sa.String(length=500), nullable=True),
        sa.Column("background_tag", sa.String(length=200), nullable=True),
        sa.Column("analyzed_sha", sa.String(length=64), nullable=True),
        sa.Column("error_message", sa.Text(), nullable=False),
        sa.Column("search_text", sa.Text(), nullable=False),
        sa.Column("document", sa.JSON(), nullable=False),
        sa.Column("dataset_version", sa.String(length=64), nullable=True),
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        sa.Column("retired", sa.Boolean(), nullable=False),
        sa.Column(
            "updated_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_records")),
    )
    with op.batch_alter_table("records", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_records_analyzed_sha"), ["analyzed_sha"], unique=False)
        batch_op.create_index(
            batch_op.f("ix_records_background_tag"), ["background_tag"], unique=False
        )
        batch_op.create_index(batch_op.f("ix_records_error_class"), ["error_class"], unique=False)
        batch_op.create_index(batch_op.f("ix_records_file_path"), ["file_path"], unique=False)
        batch_op.create_index(batch_op.f("ix_records_repo"), ["repo"], unique=False)
        batch_op.create_index(batch_op.f("ix_records_retired"), ["retired"], unique=False)
        batch_op.create_index(batch_op.f("ix_records_severity"), ["severity"], unique=False)
        batch_op.create_index(batch_op.f("ix_records_slug"), ["slug"], unique=False)

    op.create_table(
        "record_tags",
        sa.Column("record_id", sa.String(length=64), nullable=False),
        sa.Column("tag", sa.String(length=200), nullable=False),
        sa.ForeignKeyConstraint(
            ["record_id"],
            ["records.id"],
            name=op.f("fk_record_tags_record_id_records"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("record_id", "tag", name=op.f("pk_record_tags")),
    )
    with op.batch_alter_table("record_tags", schema=None) as batch_op:
        batch_op.create_index("ix_record_tags_tag", ["tag"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("record_tags", schema=None) as batch_op:
        batch_op.drop_index("ix_record_tags_tag")

    op.drop_table("record_tags")
    with op.batch_alter_table("records", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_records_slug"))
        batch_op.drop_index(batch_op.f("ix_records_severity"))
        batch_op.drop_index(batch_op.f("ix_records_retired"))
        batch_op.drop_index(batch_op.f("ix_records_repo"))
        batch_op.drop_index(batch_op.f("ix_records_file_path"))
        batch_op.drop_index(batch_op.f("ix_records_error_class"))
        batch_op.drop_index(batch_op.f("ix_records_background_tag"))
        batch_op.drop_index(batch_op.f("ix_records_analyzed_sha"))

    op.drop_table("records")
