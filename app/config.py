"""Typed settings, read from the environment (prefix ``ERRATA_``) when the app is built.

Nothing here runs at import time: the app factory and the CLI call :func:`load_settings`,
so tests can build as many differently configured apps as they like.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

REPO_ROOT = Path(__file__).resolve().parent.parent


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="ERRATA_", env_file=".env", extra="ignore")

    data_dir: Path = Field(
        default=Path("var"), description="Writable directory for the embedded SQLite database."
    )
    database_url: str | None = Field(
        default=None,
        description="SQLAlchemy URL; unset means an SQLite file in data_dir. "
        "Production: postgresql+psycopg://user@host/db.",
    )
    seed_paths: Annotated[list[Path], NoDecode] = Field(
        default_factory=lambda: [
            REPO_ROOT / "data" / name for name in ("seeds", "records", "annotations")
        ],
        description="Files or folders loaded into an empty database on start.",
    )
    migrations_dir: Path = REPO_ROOT / "migrations"
    admin_tokens: Annotated[list[SecretStr], NoDecode] = Field(
        default_factory=list,
        description="Bearer tokens allowed to write records (comma-separated).",
    )
    max_body_bytes: int = Field(default=4 * 1024 * 1024, ge=1024)
    prepare_database: bool = Field(
        default=True,
        description="Migrate and seed on start (off in workers `errata serve` spawns).",
    )

    @field_validator("seed_paths", mode="before")
    @classmethod
    def _split_paths(cls, value: object) -> object:
        if isinstance(value, str):
            return [Path(part) for part in value.split(",") if part.strip()]
        return value

    @field_validator("admin_tokens", mode="before")
    @classmethod
    def _split_tokens(cls, value: object) -> object:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @property
    def resolved_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.data_dir / 'errata.sqlite3').resolve()}"


def load_settings(**overrides: object) -> Settings:
    """Build settings from the environment; keyword overrides win (used by tests and the CLI)."""
    return Settings(**overrides)  # type: ignore[arg-type]
