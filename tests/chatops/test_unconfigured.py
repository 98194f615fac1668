"""Without a secret or tokens (the defaults) the chat routes are off, and say so."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.api.test_records_api import assert_problem
from tests.chatops.chat import FORM, slack_body, slack_headers
from tests.conftest import start_server, stop_server


@pytest.fixture(scope="module")
def unconfigured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    folder = tmp_path_factory.mktemp("unconfigured")
    env = {
        "ERRATA_DATABASE_URL": f"sqlite:///{folder / 'errata.sqlite3'}",
        "ERRATA_SLACK_SIGNING_SECRET": "",
        "ERRATA_MATTERMOST_TOKENS": "",
        "ERRATA_SEED_PATHS": "",
    }
    server = start_server(env, folder / "server.log")
    with server.client() as client:
        yield client
    stop_server(server)


def test_slack_is_off_without_a_signing_secret(unconfigured: httpx.Client) -> None:
    body = slack_body("help")
    response = unconfigured.post("/chatops/slack", content=body, headers=slack_headers(body))
    assert_problem(response, 503, "ERRATA_SLACK_SIGNING_SECRET")


def test_mattermost_is_off_without_tokens(unconfigured: httpx.Client) -> None:
    response = unconfigured.post(
        "/chatops/mattermost", content=b"token=anything&text=help", headers={"Content-Type": FORM}
    )
    assert_problem(response, 503, "ERRATA_MATTERMOST_TOKENS")
