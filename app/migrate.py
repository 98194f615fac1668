"""Run and inspect Alembic migrations from inside errata (serve, CLI, readiness, tests)."""

from __future__ import annotations

from alembic import command
from alembic.config import Config
from alembic.script import ScriptDirectory
from sqlalchemy import Engine

from app.config import Settings


def alembic_config(settings: Settings) -> Config:
    config = Config()
    config.set_main_option("script_location", str(settings.migrations_dir))
    config.set_main_option("sqlalchemy.url", settings.resolved_database_url)
    return config


def upgrade(settings: Settings, engine: Engine) -> None:
    """Bring the schema to the newest revision, on the app's own engine."""
    config = alembic_config(settings)
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "head")


def head_revision(settings: Settings) -> str | None:
    return ScriptDirectory.from_config(alembic_config(settings)).get_current_head()
