"""The documentation site, served by the service itself where make docs built it."""

from __future__ import annotations

from pathlib import Path

import httpx

from app.config import load_settings
from app.main import create_app
from tests.api.test_records_api import assert_problem
from tests.ops.conftest import run_on_a_loop_of_its_own


def _get(guide_dir: Path, data_dir: Path, path: str, accept: str) -> httpx.Response:
    app = create_app(load_settings(data_dir=data_dir, guide_dir=guide_dir, prepare_database=False))

    async def call() -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://errata") as http:
            return await http.get(path, headers={"Accept": accept})

    return run_on_a_loop_of_its_own(call())


def test_a_built_guide_is_served_at_guide(tmp_path: Path) -> None:
    site = tmp_path / "site"
    (site / "operations").mkdir(parents=True)
    (site / "index.html").write_text("<h1>errata guide</h1>")
    (site / "operations" / "index.html").write_text("<h1>Operations</h1>")
    home = _get(site, tmp_path, "/guide/", "text/html")
    assert home.status_code == 200 and "errata guide" in home.text
    page = _get(site, tmp_path, "/guide/operations/", "text/html")
    assert page.status_code == 200 and "Operations" in page.text


def test_a_guide_not_built_says_how_to_build_it(tmp_path: Path) -> None:
    missing = tmp_path / "no-site"
    problem = assert_problem(_get(missing, tmp_path, "/guide/", "application/json"), 404)
    assert "make docs" in problem["detail"]
    page = _get(missing, tmp_path, "/guide/", "text/html")
    assert page.status_code == 404 and "make docs" in page.text
