"""POST /chatops/mattermost on a real server: its token, the commands, the post limit."""

from __future__ import annotations

import httpx
import pytest

from app.chatops.mattermost import POST_LIMIT
from tests.api.test_records_api import assert_problem
from tests.chatops.chat import traceback
from tests.conftest import MATTERMOST_TOKENS, PUBLIC_BASE_URL


def mattermost(client: httpx.Client, text: str, **fields: str) -> httpx.Response:
    form = {
        "channel_id": "c1",
        "command": "/errata",
        "team_domain": "team",
        "text": text,
        "token": MATTERMOST_TOKENS[0],
        "user_id": "u1",
        "user_name": "ana",
        **fields,
    }
    return client.post("/chatops/mattermost", data=form)


@pytest.mark.parametrize("token", MATTERMOST_TOKENS)
def test_every_configured_token_is_accepted(client: httpx.Client, token: str) -> None:
    response = mattermost(client, "help", token=token)
    assert response.status_code == 200
    body = response.json()
    assert body["response_type"] == "ephemeral"
    assert body["text"].startswith("### errata: JAX Pallas / Mosaic GPU alignment errors")


def test_a_wrong_token_is_forbidden(client: httpx.Client) -> None:
    assert_problem(mattermost(client, "help", token="mattermost-token-three"), 403, "token")


def test_a_missing_token_is_unauthorized(client: httpx.Client) -> None:
    form = {"command": "/errata", "text": "help"}
    assert_problem(client.post("/chatops/mattermost", data=form), 401, "token")


def test_a_paste_is_answered_in_markdown(client: httpx.Client) -> None:
    body = mattermost(client, "share " + traceback("MGPU-COPY-INTEGER-BYTES")).json()
    assert body["response_type"] == "in_channel"
    text = body["text"]
    assert text.startswith(
        "### ValueError: Can only transfer integer bytes (shape=\\[7\\], dtype=i4)"
    )
    assert "shape `[7]` · dtype `int4` · bit width `4`" in text
    assert text.count("Can only transfer integer bytes") == 1  # the message once
    assert "**Do this: Pad the block from 7 to 256 elements**" in text
    assert (
        "```diff\n-lower('copy_gmem_to_smem', (7,), 'int4', None)\n"
        "+lower('copy_gmem_to_smem', (256,), 'int4', None)\n```"
    ) in text
    assert "_3 more fixes: follow All fixes._" in text
    assert "plgpu.SMEM((128,), jnp.int8)" not in text, "the best fix only, as in Slack"
    assert f"[Record page]({PUBLIC_BASE_URL}/errors/225d0e9c2ee22311)" in text


def test_a_record_and_a_computation(client: httpx.Client) -> None:
    record = mattermost(client, "only-copies-transferring-a-number-of-bytes-divisib").json()
    assert "**Example fix, as corrected by errata**" in record["text"]
    computed = mattermost(client, "pad shape=(8, 512) dtype=float32 op=copy_gmem_to_smem").json()
    assert computed["text"].startswith(
        "### ValueError: Async copies only support copying \\<=256 elements along each dimension"
    )


def test_a_long_answer_stays_within_the_post_limit(client: httpx.Client) -> None:
    """Three matched errors, each on a line of 8,000 characters: cut at 16,383, and said."""
    lines = [
        "ValueError: Can only transfer integer bytes (shape=[7], dtype=i4)",
        "NotImplementedError: Only copies transferring a number of bytes divisible by the "
        "warpgroup size are supported. Got bytes=32 but warpgroup size is 128",
        "ValueError: Async copies only support copying <=256 elements along each dimension, "
        "got (8, 512)",
    ]
    paste = "\n".join(line + " ~" * 4000 for line in lines)
    text = mattermost(client, paste).json()["text"]
    assert len(text) <= POST_LIMIT
    assert text.endswith("… (truncated)")
    assert text.count("```") % 2 == 0, "no code block left open"
