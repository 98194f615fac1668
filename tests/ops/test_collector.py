"""A worker's catalog, built before it answers, is kept out of the collector's passes for
as long as the app runs: each full pass would walk all of it again."""

from __future__ import annotations

import gc
from pathlib import Path

from app.answers.catalog import Catalog
from app.config import load_settings
from app.main import create_app
from tests.conftest import SEED_DIR
from tests.ops.conftest import run_on_a_loop_of_its_own


def test_the_catalog_built_at_start_is_frozen_until_the_app_ends(tmp_path: Path) -> None:
    app = create_app(load_settings(data_dir=tmp_path, seed_paths=[SEED_DIR]))

    async def started() -> tuple[Catalog | None, bool]:
        async with app.router.lifespan_context(app):
            catalog = app.state.catalog.newest()
            collected = any(
                held is catalog.patterns
                for generation in range(3)
                for held in gc.get_objects(generation)
            )
            return catalog, collected

    try:
        catalog, collected = run_on_a_loop_of_its_own(started())
    finally:
        app.state.engine.dispose()
    assert catalog is not None and catalog.live_records > 0
    assert not collected  # frozen: in none of the collector's generations
    assert gc.get_freeze_count() == 0  # and collectable again once the app is over
