"""Every pooled connection in use: a request waits the pool's short timeout, then is told
the server is busy (503 with Retry-After), not that the database is unreachable."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from app.api.problems import BUSY_RETRY_AFTER_S
from app.config import load_settings
from app.main import create_app
from tests.conftest import SEED_DIR, Backend
from tests.ops.conftest import run_on_a_loop_of_its_own


@pytest.fixture
def one_connection(backend: Backend) -> Iterator[Any]:
    """An app whose pool holds one connection and waits a fraction of a second for it."""
    app = create_app(
        load_settings(
            database_url=backend.new_database(),
            seed_paths=[SEED_DIR],
            database_pool_size=1,
            database_max_overflow=0,
            database_pool_timeout_s=0.2,
        )
    )
    yield app
    app.state.engine.dispose()


def test_an_exhausted_pool_answers_busy_not_unreachable(one_connection: Any) -> None:
    app = one_connection

    async def scenario() -> tuple[httpx.Response, httpx.Response, httpx.Response]:
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://errata") as http:
                with app.state.engine.connect():  # the pool's only connection, held
                    busy = await http.get("/api/errors", params={"limit": 1})
                    page = await http.get("/search", headers={"Accept": "text/html"})
                freed = await http.get("/api/errors", params={"limit": 1})
        return busy, page, freed

    busy, page, freed = run_on_a_loop_of_its_own(scenario())
    assert busy.status_code == 503, busy.text
    assert busy.headers["content-type"].startswith("application/problem+json")
    assert busy.headers["retry-after"] == str(BUSY_RETRY_AFTER_S)
    assert "busy" in busy.json()["detail"]
    assert "unreachable" not in busy.json()["detail"]
    assert page.status_code == 503 and page.headers["retry-after"] == str(BUSY_RETRY_AFTER_S)
    assert freed.status_code == 200
