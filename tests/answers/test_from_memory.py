"""Services told not to run the engine answer exactly what it answered before, or say so."""

from __future__ import annotations

import itertools
import json

import pytest
from sqlalchemy.orm import Session, sessionmaker

from app.answers.catalog import Catalog
from app.answers.catalog_cache import CatalogCache
from app.answers.compute import ComputeService, EngineNeeded
from app.answers.match import MatchService
from app.config import Settings
from app.records.importer import import_paths
from app.records.version_watch import VersionWatch
from app.schemas.compute import ComputeRequest
from app.schemas.match import MatchRequest

# Lengths no other test asks the engine about (odd: not whole bytes of int4), a new one for
# each test, so that the engine's caches start without them.
_ODD_LENGTHS = itertools.count(4093, 2)


@pytest.fixture
def catalog(settings: Settings, session_factory: sessionmaker[Session]) -> Catalog:
    """The seeds, the records and the annotations that tie the seeds to their rules."""
    import_paths(session_factory, [path for path in settings.seed_paths if path.exists()])
    return CatalogCache(session_factory, VersionWatch()).current()


def test_a_compute_from_memory_waits_for_the_engine_then_answers_the_same(
    catalog: Catalog,
) -> None:
    shape = [3, next(_ODD_LENGTHS)]
    request = ComputeRequest(operation="copy_gmem_to_smem", shape=shape, dtype="int4")
    with pytest.raises(EngineNeeded):
        ComputeService(catalog, run_engine=False).compute(request)
    computed = ComputeService(catalog).compute(request)
    assert not computed.ok and computed.fixes
    assert ComputeService(catalog, run_engine=False).compute(request) == computed


def test_a_match_from_memory_waits_for_the_engine_then_answers_the_same(
    catalog: Catalog,
) -> None:
    length = next(_ODD_LENGTHS)
    paste = f"ValueError: Can only transfer integer bytes (shape=[{length}], dtype=i4)"
    request = MatchRequest(text=paste)
    with pytest.raises(EngineNeeded):
        MatchService(catalog, run_engine=False).match(request)
    matched = MatchService(catalog).match(request)
    assert [found.errorId for found in matched.matches] == ["225d0e9c2ee22311"]
    assert matched.matches[0].fix is not None
    assert MatchService(catalog, run_engine=False).match(request) == matched


def test_an_answer_is_kept_with_its_catalog_and_not_past_it(
    catalog: Catalog, session_factory: sessionmaker[Session]
) -> None:
    request = ComputeRequest(operation="copy_gmem_to_smem", shape=[7], dtype="int4")
    first = ComputeService(catalog).answer(request)
    assert ComputeService(catalog, run_engine=False).answer(request) is first
    assert json.loads(first.json) == first.response.model_dump(mode="json")
    rebuilt = CatalogCache(session_factory, VersionWatch()).current()
    again = ComputeService(rebuilt, run_engine=False).answer(request)
    assert again is not first and again.json == first.json
