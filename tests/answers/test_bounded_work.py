"""Work a request does is bounded by caps, whatever the size of what it sends."""

from __future__ import annotations

import pytest
from sqlalchemy.orm import Session, sessionmaker

from app.answers.catalog import SIMILAR_QUERY_CHARS, Catalog
from app.answers.catalog_cache import CatalogCache
from app.answers.match import MatchService
from app.config import Settings
from app.records.importer import import_paths
from app.records.version_watch import VersionWatch
from app.schemas.match import MatchRequest

WARPGROUP_WORDS = "copies transferring bytes divisible by the warpgroup size are supported"


@pytest.fixture
def catalog(settings: Settings, session_factory: sessionmaker[Session]) -> Catalog:
    import_paths(session_factory, [path for path in settings.seed_paths if path.exists()])
    return CatalogCache(session_factory, VersionWatch()).current()


def _suggested(catalog: Catalog, message: str) -> list[str]:
    response = MatchService(catalog).match(MatchRequest(text=f"ValueError: {message}"))
    assert not response.matches
    return [suggestion.errorId for suggestion in response.suggestions]


def test_suggestions_read_only_the_head_of_a_long_message(catalog: Catalog) -> None:
    # The words of the warpgroup record, alone, suggest it; past the first
    # SIMILAR_QUERY_CHARS of a message they are not read.
    [best, *_] = _suggested(catalog, WARPGROUP_WORDS)
    head = "zq " * ((SIMILAR_QUERY_CHARS - len(WARPGROUP_WORDS)) // 3 - 1)
    assert _suggested(catalog, head + WARPGROUP_WORDS)[0] == best
    assert best not in _suggested(catalog, "zq " * (SIMILAR_QUERY_CHARS // 3) + WARPGROUP_WORDS)
