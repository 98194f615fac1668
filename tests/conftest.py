"""Shared fixtures: each database backend, and a real errata server on each.

The PostgreSQL backend gets a fresh database of its own for the run. Locally it is skipped
when no server answers; under CI (``CI`` set) an unreachable server is a failure.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session, sessionmaker

from app.answers.catalog import Catalog
from app.answers.catalog_cache import CatalogCache
from app.config import CURATED_SEED_PATHS, REPO_ROOT, Settings, load_settings
from app.db import make_engine, make_session_factory
from app.knowledge.mining import MINED_SITES
from app.migrate import upgrade
from app.records.importer import import_paths
from app.records.version_watch import VersionWatch

POSTGRES_ADMIN_URL = os.environ.get(
    "ERRATA_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)
ADMIN_TOKEN = "curator-token-for-tests"
SLACK_SIGNING_SECRET = "slack-signing-secret-for-tests"
MATTERMOST_TOKENS = ("mattermost-token-one", "mattermost-token-two")
PUBLIC_BASE_URL = "https://errata.example.test"
SEED_DIR = REPO_ROOT / "data" / "seeds"


class Backend:
    """One database server kind; hands out fresh, empty databases and drops them at the end."""

    def __init__(self, name: str, tmp_path_factory: pytest.TempPathFactory) -> None:
        self.name = name
        self._tmp = tmp_path_factory
        self._created: list[str] = []
        self._admin = (
            create_engine(POSTGRES_ADMIN_URL, isolation_level="AUTOCOMMIT", pool_pre_ping=True)
            if name == "postgresql"
            else None
        )

    def new_database(self) -> str:
        if self._admin is None:
            return f"sqlite:///{self._tmp.mktemp('sqlite') / 'errata.sqlite3'}"
        name = f"errata_test_{uuid.uuid4().hex[:10]}"
        with self._admin.connect() as connection:
            connection.execute(text(f'CREATE DATABASE "{name}"'))
        self._created.append(name)
        return make_url(POSTGRES_ADMIN_URL).set(database=name).render_as_string(hide_password=False)

    @contextmanager
    def curated_catalog(self, sites: Collection[str]) -> Iterator[Catalog]:
        """The curated records and, of the mined sites, only ``sites`` (a mined record, or
        the annotation of a curated record's site), in a new database of their own."""
        settings = load_settings(database_url=self.new_database())
        engine = make_engine(settings.resolved_database_url)
        upgrade(settings, engine)
        mined = self._tmp.mktemp("mined") / "sites.jsonl"
        mined.write_text(
            "".join(
                line
                for line in MINED_SITES.read_text(encoding="utf-8").splitlines(keepends=True)
                if any(
                    f'"id": "{site}"' in line or f'"recordId": "{site}"' in line for site in sites
                )
            ),
            encoding="utf-8",
        )
        sessions = make_session_factory(engine)
        import_paths(sessions, [*CURATED_SEED_PATHS, mined])
        yield CatalogCache(sessions, VersionWatch()).current()
        engine.dispose()

    def close(self) -> None:
        if self._admin is None:
            return
        with self._admin.connect() as connection:
            for name in self._created:
                connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        self._admin.dispose()


def _require_postgres() -> None:
    try:
        with create_engine(POSTGRES_ADMIN_URL).connect() as connection:
            connection.execute(text("SELECT 1"))
    except Exception as exc:
        if os.environ.get("CI"):
            pytest.fail(f"PostgreSQL is required under CI and is unreachable: {exc}")
        pytest.skip(f"PostgreSQL unreachable: {exc}")


@pytest.fixture(scope="session", params=["sqlite", "postgresql"])
def backend(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Backend]:
    if request.param == "postgresql":
        _require_postgres()
    backend = Backend(request.param, tmp_path_factory)
    yield backend
    backend.close()


@pytest.fixture(scope="session")
def settings(backend: Backend) -> Settings:
    """Settings for in-process tests, on a database of their own (servers get another)."""
    return load_settings(
        database_url=backend.new_database(),
        admin_tokens=[ADMIN_TOKEN],
        seed_paths=list(CURATED_SEED_PATHS),
    )


@pytest.fixture(scope="session")
def session_factory(settings: Settings) -> Iterator[sessionmaker[Session]]:
    engine = make_engine(settings.resolved_database_url)
    upgrade(settings, engine)
    yield make_session_factory(engine)
    engine.dispose()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class LiveServer:
    base_url: str
    process: subprocess.Popen[bytes]
    log_path: Path

    def client(self, **kwargs: object) -> httpx.Client:
        return httpx.Client(base_url=self.base_url, timeout=30, **kwargs)  # type: ignore[arg-type]


# Servers and commands under test load the curated records unless a test says otherwise:
# the thousands of records mined from JAX's source are tested in tests/knowledge.
CURATED_SEEDS_ENV = {"ERRATA_SEED_PATHS": ",".join(map(str, CURATED_SEED_PATHS))}


def start_server(
    env: dict[str, str], log_path: Path, workers: int = 1, ready_within: float = 60
) -> LiveServer:
    """Run ``errata serve`` as a user would, and wait until it answers /readyz."""
    port = free_port()
    log = log_path.open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "app", "serve", "--port", str(port), "--workers", str(workers)],
        cwd=REPO_ROOT,
        env={**os.environ, **CURATED_SEEDS_ENV, **env},
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base_url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + ready_within
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited early:\n{log_path.read_text()}")
        try:
            if httpx.get(f"{base_url}/readyz", timeout=1).status_code == 200:
                return LiveServer(base_url, process, log_path)
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    process.kill()
    raise RuntimeError(f"server did not become ready:\n{log_path.read_text()}")


def stop_server(server: LiveServer) -> None:
    server.process.terminate()
    try:
        server.process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        server.process.kill()


@pytest.fixture(scope="session")
def live_server(backend: Backend, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    env = {
        "ERRATA_DATABASE_URL": backend.new_database(),
        "ERRATA_ADMIN_TOKENS": ADMIN_TOKEN,
        "ERRATA_SLACK_SIGNING_SECRET": SLACK_SIGNING_SECRET,
        "ERRATA_MATTERMOST_TOKENS": ",".join(MATTERMOST_TOKENS),
        "ERRATA_PUBLIC_BASE_URL": PUBLIC_BASE_URL,
    }
    server = start_server(env, tmp_path_factory.mktemp("server") / "server.log")
    yield server
    stop_server(server)


@pytest.fixture
def client(live_server: LiveServer) -> Iterator[httpx.Client]:
    with live_server.client() as http:
        yield http


@pytest.fixture
def curator(live_server: LiveServer) -> Iterator[httpx.Client]:
    with live_server.client(headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}) as http:
        yield http
