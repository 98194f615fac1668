"""The web forms and the chat commands take their turn at the process's CPU worker, like the
API's matches and computes, rather than running in the shared thread pool."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio.to_thread
import httpx
import pytest

from app.config import load_settings
from app.main import create_app
from tests.chatops.chat import slack_body, slack_headers
from tests.conftest import MATTERMOST_TOKENS, SEED_DIR, SLACK_SIGNING_SECRET
from tests.ops.conftest import run_on_a_loop_of_its_own

PASTE = "ValueError: Can only transfer integer bytes (shape=[7], dtype=i4)"
COMPUTE = {"operation": "copy_gmem_to_smem", "shape": "[7]", "dtype": "int4"}


def _through_cpu_turns(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    call: Callable[[httpx.AsyncClient], Awaitable[httpx.Response]],
) -> tuple[httpx.Response, int]:
    """The response to ``call`` and how many pieces of work it ran under the CPU limiter."""
    app = create_app(
        load_settings(
            data_dir=tmp_path,
            seed_paths=[SEED_DIR],
            slack_signing_secret=SLACK_SIGNING_SECRET,
            mattermost_tokens=list(MATTERMOST_TOKENS),
        )
    )
    turns = 0
    run_sync = anyio.to_thread.run_sync

    async def counting(func: Callable[[], Any], *args: Any, **kwargs: Any) -> Any:
        nonlocal turns
        if kwargs.get("limiter") is app.state.cpu_turns:
            turns += 1
        return await run_sync(func, *args, **kwargs)

    monkeypatch.setattr(anyio.to_thread, "run_sync", counting)

    async def run() -> httpx.Response:
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://errata") as http:
                return await call(http)

    response = run_on_a_loop_of_its_own(run())
    return response, turns


def test_the_paste_form_matches_in_the_cpu_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    response, turns = _through_cpu_turns(
        tmp_path, monkeypatch, lambda http: http.post("/", data={"text": PASTE})
    )
    assert response.status_code == 200 and "integer bytes" in response.text
    assert turns == 1


def test_the_compute_form_computes_in_the_cpu_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    response, turns = _through_cpu_turns(
        tmp_path, monkeypatch, lambda http: http.get("/compute", params=COMPUTE)
    )
    assert response.status_code == 200
    assert turns == 1


def test_chat_commands_answer_in_the_cpu_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    form = {"command": "/errata", "text": PASTE, "token": MATTERMOST_TOKENS[0]}
    response, turns = _through_cpu_turns(
        tmp_path, monkeypatch, lambda http: http.post("/chatops/mattermost", data=form)
    )
    assert response.status_code == 200 and turns == 1
    body = slack_body(PASTE)
    response, turns = _through_cpu_turns(
        tmp_path / "slack",
        monkeypatch,
        lambda http: http.post("/chatops/slack", content=body, headers=slack_headers(body)),
    )
    assert response.status_code == 200 and turns == 1
