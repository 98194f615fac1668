"""The oracle tests lower real Pallas kernels with JAX; mark them so they can be selected."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from jax._src.pallas.mosaic import tpu_info
from sqlalchemy.orm import Session, sessionmaker

from app.answers.catalog import Catalog
from app.answers.catalog_cache import CatalogCache
from app.config import CURATED_SEED_PATHS, load_settings
from app.db import make_engine, make_session_factory
from app.jaxref.files import XLA_ERRORS_FILE
from app.knowledge.calls import MINED_CALLS
from app.knowledge.mining import MINED_SITES
from app.knowledge.public_names import MINED_API
from app.migrate import upgrade
from app.records.importer import import_paths
from app.records.version_watch import VersionWatch
from tests.conftest import Backend


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "oracle: runs JAX itself to confirm the engine")


def v5e() -> tpu_info.TpuInfo:
    return tpu_info.get_tpu_info_for_chip(tpu_info.ChipVersion.TPU_V5E, 1)


@pytest.fixture
def cpu_as_tpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """TPU lowering reads the chip's sublanes and lanes from the device: say it is a v5e."""
    monkeypatch.setitem(tpu_info.registry, "cpu", v5e)


@pytest.fixture(scope="module")
def catalog(session_factory: sessionmaker[Session]) -> Catalog:
    """What people wrote (seeds, records, annotations), as the matcher reads it."""
    import_paths(session_factory, list(CURATED_SEED_PATHS))
    return CatalogCache(session_factory, VersionWatch()).current()


@pytest.fixture(scope="module")
def full_catalog(backend: Backend) -> Iterator[Catalog]:
    """Everything the service loads: the curated records, then every mined site."""
    settings = load_settings(database_url=backend.new_database())
    engine = make_engine(settings.resolved_database_url)
    upgrade(settings, engine)
    sessions: sessionmaker[Session] = make_session_factory(engine)
    import_paths(
        sessions, [*CURATED_SEED_PATHS, MINED_SITES, MINED_API, MINED_CALLS, XLA_ERRORS_FILE]
    )
    yield CatalogCache(sessions, VersionWatch()).current()
    engine.dispose()
