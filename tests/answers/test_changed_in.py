"""A mined site with no advice of its own, which a later release no longer has: the answer
says which release to upgrade to, and the commits between, from the mined history."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from app.answers.cards import match_answers
from app.answers.catalog import Catalog
from app.answers.computed import changed_in
from app.answers.links import Links
from app.answers.match import MatchService
from app.jaxref.releases import commit_of, newest_release
from app.knowledge.mining import MINED_SITES
from app.matching.frames import FrameIndex
from app.schemas.match import MatchRequest
from tests.conftest import Backend

# Mosaic GPU's interpret mode: a barrier indexed by more than one index, 0.9.1-0.10.2.
SINGLETON_INDEX = "020c61b073590ae2"
# Mosaic TPU's interpret mode: an out-of-bounds read, in interpret.py to 0.7.2, then moved.
MOVED_READ = "ba3c79a3137743f5"
# A check of Pallas's core that the newest release still has.
STILL_THERE = "225d0e9c2ee22311"


@pytest.fixture(scope="module")
def catalog(backend: Backend) -> Iterator[Catalog]:
    with backend.curated_catalog((SINGLETON_INDEX, MOVED_READ)) as catalog:
        yield catalog


def test_the_release_after_the_sites_last_is_the_upgrade() -> None:
    found = changed_in(SINGLETON_INDEX, FrameIndex.load())
    assert found is not None
    assert (found.lastRelease, found.release) == ("0.10.2", "0.11.0")
    assert found.commit == commit_of("0.11.0")
    assert found.compareUrl == (
        f"https://github.com/jax-ml/jax/compare/{commit_of('0.10.2')}...{commit_of('0.11.0')}"
    )
    assert found.advice.startswith("Upgrade to JAX 0.11.0 or later: 0.11.0 no longer has")


def test_a_site_still_in_the_newest_release_or_moved_elsewhere_has_no_upgrade() -> None:
    frames = FrameIndex.load()
    assert newest_release() in frames.releases_of(STILL_THERE)
    assert changed_in(STILL_THERE, frames) is None
    # the same check stands in interpret/shared_memory.py from 0.8.0: moved, not fixed
    assert frames.releases_of(MOVED_READ)[-1] == "0.7.2"
    assert changed_in(MOVED_READ, frames) is None


def test_a_site_of_jaxlibs_mosaic_has_no_upgrade() -> None:
    """jaxlib's Mosaic passes went from Python (to 0.4.23) to C++ and then into libtpu (after
    0.8.1), whose checks go on there: a release without them fixed nothing."""
    frames = FrameIndex.load()
    python = [site.record_id for site in frames.sites if site.file.startswith("jaxlib/mosaic/")]
    assert python and frames.releases_of(python[0])[-1] == "0.4.23"
    cpp = [
        record["id"]
        for line in MINED_SITES.read_text(encoding="utf-8").splitlines()
        for record in [json.loads(line).get("record")]
        if record and record["filePath"].endswith("tpu/transforms/apply_vector_layout.cc")
    ]
    assert len(cpp) > 100
    assert all(changed_in(record_id, frames) is None for record_id in [*python, *cpp])


def test_the_answer_to_such_a_site_says_to_upgrade(catalog: Catalog) -> None:
    paste = "ValueError: Expected a singleton index, but got (Slice(0, 2), 1)"
    found = MatchService(catalog).match(MatchRequest(text=paste))
    [match] = found.matches
    assert match.errorId == SINGLETON_INDEX
    assert match.sourceOnly is not None and match.sourceOnly.changedIn is not None
    [card] = match_answers(found, catalog.records, Links(""))
    assert card.doThis is not None
    assert card.doThis.title.startswith("Upgrade to JAX 0.11.0 or later")
    assert str(commit_of("0.11.0")) in card.doThis.title
