"""The releases an error of Pallas's public API can be raised in, copied out for filtering:
the releases without the name (``missingIn``) or refusing the call (``raisedIn``), as the
store now writes them for such records (``?release=`` lists them). Records written before
are filled in here; an import of the same record, unchanged, would not rewrite its row.

Revision ID: 0006_api_releases
Revises: 0005_store_versions
Create Date: 2026-12-03
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006_api_releases"
down_revision: str | None = "0005_store_versions"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_RECORDS = sa.table(
    "records",
    sa.column("id", sa.String),
    sa.column("document", sa.JSON),
    sa.column("releases", sa.Text),
)


def upgrade() -> None:
    connection = op.get_bind()
    unset = connection.execute(
        sa.select(_RECORDS.c.id, _RECORDS.c.document).where(_RECORDS.c.releases.is_(None))
    )
    filled = [
        {"record_id": record_id, "releases": f" {' '.join(releases)} "}
        for record_id, document in unset
        if (releases := (document or {}).get("raisedIn") or (document or {}).get("missingIn"))
    ]
    if filled:
        connection.execute(
            _RECORDS.update()
            .where(_RECORDS.c.id == sa.bindparam("record_id"))
            .values(releases=sa.bindparam("releases")),
            filled,
        )


def downgrade() -> None:
    """Nothing to undo: the column holds what the store would write."""
