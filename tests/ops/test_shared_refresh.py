"""Requests that find the store's version reading stale together share one thread-pool run
to read it again (the catalog's, or one record's answer), unless a write through this
process came between."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import pytest

from app.answers.catalog import Catalog
from app.api.deps import get_catalog
from app.config import load_settings
from app.main import create_app
from tests.conftest import SEED_DIR
from tests.ops.conftest import run_on_a_loop_of_its_own


@pytest.fixture
def app(tmp_path: Path) -> Iterator[Any]:
    app = create_app(load_settings(data_dir=tmp_path, seed_paths=[SEED_DIR]))
    app.state.version_watch.max_age = 0  # every reading is stale at once
    yield app
    app.state.engine.dispose()


def _counting_runs(app: Any, release: threading.Event) -> list[int]:
    """Make the catalog's refresh wait for ``release``; the list grows by one per run."""
    runs: list[int] = []
    current = app.state.catalog.current

    def counted() -> Catalog:
        runs.append(1)
        release.wait(5)
        return current()

    app.state.catalog.current = counted
    return runs


def _run(app: Any, scenario: Any) -> Any:
    async def with_lifespan() -> Any:
        async with app.router.lifespan_context(app):
            return await scenario()

    return run_on_a_loop_of_its_own(with_lifespan())


def test_requests_finding_the_reading_stale_share_one_run(app: Any) -> None:
    request = SimpleNamespace(app=app)

    async def sixteen_at_once() -> tuple[list[Catalog], list[int]]:
        release = threading.Event()
        runs = _counting_runs(app, release)
        waiting = [asyncio.ensure_future(get_catalog(request)) for _ in range(16)]  # type: ignore[arg-type]
        await asyncio.sleep(0.05)  # every request is waiting now
        release.set()
        return await asyncio.gather(*waiting), runs

    catalogs, runs = _run(app, sixteen_at_once)
    assert len(runs) == 1
    assert len({id(catalog) for catalog in catalogs}) == 1
    assert catalogs[0].version == app.state.catalog.current().version


def test_a_request_after_a_write_does_not_join_a_run_begun_before_it(app: Any) -> None:
    request = SimpleNamespace(app=app)

    async def write_between() -> list[int]:
        release = threading.Event()
        runs = _counting_runs(app, release)
        before = asyncio.ensure_future(get_catalog(request))  # type: ignore[arg-type]
        await asyncio.sleep(0.05)
        app.state.version_watch.forget()  # what a commit that wrote does
        after = asyncio.ensure_future(get_catalog(request))  # type: ignore[arg-type]
        await asyncio.sleep(0.05)
        release.set()
        await asyncio.gather(before, after)
        return runs

    assert len(_run(app, write_between)) == 2


def test_one_request_giving_up_does_not_cancel_the_run_the_others_wait_for(app: Any) -> None:
    request = SimpleNamespace(app=app)

    async def one_cancelled() -> Catalog:
        release = threading.Event()
        _counting_runs(app, release)
        impatient = asyncio.ensure_future(get_catalog(request))  # type: ignore[arg-type]
        patient = asyncio.ensure_future(get_catalog(request))  # type: ignore[arg-type]
        await asyncio.sleep(0.05)
        impatient.cancel()
        release.set()
        return await patient

    assert isinstance(_run(app, one_cancelled), Catalog)


def test_requests_for_one_record_finding_the_reading_stale_share_one_run(
    app: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.api import records

    release = threading.Event()
    runs: list[str] = []
    answer = records._record_answer

    def counted(state: Any, key: tuple[str, bool]) -> bytes:
        runs.append(key[0])
        release.wait(5)
        return answer(state, key)

    monkeypatch.setattr(records, "_record_answer", counted)

    async def sixteen_at_once() -> list[httpx.Response]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://errata") as http:
            waiting = [
                asyncio.ensure_future(http.get("/api/errors/225d0e9c2ee22311")) for _ in range(16)
            ]
            await asyncio.sleep(0.1)
            release.set()
            return await asyncio.gather(*waiting)

    responses = _run(app, sixteen_at_once)
    assert [response.status_code for response in responses] == [200] * 16
    assert len({response.content for response in responses}) == 1
    assert runs == ["225d0e9c2ee22311"]
