"""Typed settings, read from the environment (prefix ``ERRATA_``) when the app is built.

Nothing here runs at import time: the app factory and the CLI call :func:`load_settings`,
so tests can build as many differently configured apps as they like.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from app.db import POOL_OVERFLOW, POOL_SIZE, POOL_TIMEOUT_S, PoolLimits

REPO_ROOT = Path(__file__).resolve().parent.parent

# Writes through other workers show within this many seconds.
DEFAULT_MAX_AGE_S = 0.5

# What people wrote (the seeds, the alignment family, errata's notes on the seeds); the
# records mined from JAX's source (data/mined) are loaded after them.
CURATED_SEED_PATHS = tuple(
    REPO_ROOT / "data" / name for name in ("seeds", "records", "annotations")
)
SEED_PATHS = (*CURATED_SEED_PATHS, REPO_ROOT / "data" / "mined")


class Settings(BaseSettings):
    # The environment only: no settings (and so no secret) file is read.
    model_config = SettingsConfigDict(env_prefix="ERRATA_", extra="ignore")

    data_dir: Path = Field(
        default=Path("var"), description="Writable directory for the embedded SQLite database."
    )
    database_url: str | None = Field(
        default=None,
        description="SQLAlchemy URL; unset means an SQLite file in data_dir. "
        "Production: postgresql+psycopg://user@host/db.",
    )
    guide_dir: Path = Field(
        default=REPO_ROOT / "site",
        description="The documentation site make docs builds, served at /guide/ when built.",
    )
    seed_paths: Annotated[list[Path], NoDecode] = Field(
        default_factory=lambda: list(SEED_PATHS),
        description="Files or folders loaded into an empty database on start.",
    )
    migrations_dir: Path = REPO_ROOT / "migrations"
    admin_tokens: Annotated[list[SecretStr], NoDecode] = Field(
        default_factory=list,
        description="Bearer tokens allowed to write records (comma-separated).",
    )
    max_body_bytes: int = Field(default=4 * 1024 * 1024, ge=1024)
    slack_signing_secret: SecretStr | None = Field(
        default=None, description="Signing secret of the Slack app; unset turns /chatops/slack off."
    )
    mattermost_tokens: Annotated[list[SecretStr], NoDecode] = Field(
        default_factory=list,
        description="Slash-command tokens Mattermost may send (comma-separated).",
    )
    public_base_url: str | None = Field(
        default=None,
        description="Where people reach this service, for links in bot answers "
        "(e.g. https://errata.example.org); unset means the request's own URL.",
    )
    prepare_database: bool = Field(
        default=True,
        description="Migrate and seed on start (off in workers `errata serve` spawns).",
    )
    log_level: str = Field(default="INFO", pattern=r"(?i)^(debug|info|warning|error|critical)$")
    log_format: Literal["auto", "json", "console"] = Field(
        default="auto",
        description="One JSON object a line, or plain text for a person; auto: plain text "
        "(coloured) when stderr is a terminal, JSON otherwise.",
    )
    rate_limit_per_second: float = Field(
        default=50.0,
        ge=0,
        description="Expensive POSTs (match, compute, import, chat) a client address may make "
        "per second in each process; 0 turns the limit off.",
    )
    rate_limit_burst: int = Field(
        default=100, ge=1, description="Expensive POSTs a client may make at once."
    )
    cors_allow_origins: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Origins allowed to call the API from a browser (comma-separated); "
        "empty turns CORS off.",
    )
    database_statement_timeout_ms: int = Field(
        default=30_000,
        ge=0,
        description="PostgreSQL cancels any one statement of a request after this long; 0: never.",
    )
    database_pool_size: int = Field(
        default=POOL_SIZE, ge=1, description="Database connections each process keeps."
    )
    database_max_overflow: int = Field(
        default=POOL_OVERFLOW,
        ge=0,
        description="Connections a process opens beyond the pool's while all are in use.",
    )
    database_pool_timeout_s: float = Field(
        default=POOL_TIMEOUT_S,
        gt=0,
        le=60,
        description="Seconds a request waits for a connection while all are in use, then 503.",
    )
    store_version_max_age_s: float = Field(
        default=DEFAULT_MAX_AGE_S,
        ge=0,
        le=60,
        description="Other workers' writes show within this many seconds; 0: at once, at the "
        "cost of one query a request.",
    )

    @field_validator("seed_paths", mode="before")
    @classmethod
    def _split_paths(cls, value: object) -> object:
        if isinstance(value, str):
            return [Path(part) for part in value.split(",") if part.strip()]
        return value

    @field_validator("admin_tokens", "mattermost_tokens", "cors_allow_origins", mode="before")
    @classmethod
    def _split_tokens(cls, value: object) -> object:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("slack_signing_secret", mode="before")
    @classmethod
    def _blank_is_unset(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("public_base_url", mode="before")
    @classmethod
    def _check_base_url(cls, value: object) -> object:
        if isinstance(value, str):
            value = value.strip().rstrip("/")
            if not value:
                return None
            if not value.startswith(("http://", "https://")):
                raise ValueError("public_base_url must start with http:// or https://")
        return value

    @property
    def pool_limits(self) -> PoolLimits:
        return PoolLimits(
            self.database_pool_size, self.database_max_overflow, self.database_pool_timeout_s
        )

    @property
    def resolved_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.data_dir / 'errata.sqlite3').resolve()}"


def load_settings(**overrides: object) -> Settings:
    """Build settings from the environment; keyword overrides win (used by tests and the CLI)."""
    return Settings(**overrides)  # type: ignore[arg-type]
