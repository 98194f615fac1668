"""A record's own text (stored, curated or mined) mentions nobody when a chat shows it."""

from __future__ import annotations

import json
import re

import httpx
import pytest

from tests.api.test_records_api import new_record
from tests.chatops.chat import slack
from tests.chatops.test_mattermost import mattermost

# What Slack or Mattermost would act on, outside code.
LIVE_MENTION = re.compile(r"<![a-z]+|<@\w|@(?:all|here|channel|everyone)\b")
_CODE = re.compile(r"```.*?```|`[^`\n]*`", re.DOTALL)


@pytest.fixture
def loud_record(curator: httpx.Client) -> dict[str, object]:
    record = new_record(
        errorMessage="ping <!channel> and @all now {n}",
        documentation="Tell @here and <!everyone> about <@U0001>.",
        exampleFix="@jax.jit\ndef f(x):\n    return x",
    )
    imported = curator.post("/api/import", json=[{"record": record}])
    assert imported.status_code == 200, imported.text
    return record


def _prose(text: str) -> str:
    return _CODE.sub("", text)


def test_slack_shares_a_loud_record_without_mentioning_anybody(
    client: httpx.Client, loud_record: dict[str, object]
) -> None:
    message = slack(client, f"share {loud_record['id']}").json()
    assert message["response_type"] == "in_channel"
    texts = [message["text"]]
    for block in message["blocks"]:
        texts += [block["text"]["text"]] if "text" in block else []
        texts += [element["text"] for element in block.get("elements", [])]
    shown = "\n".join(texts)
    assert "ping" in message["text"] and "Tell" in shown
    assert not LIVE_MENTION.search(shown), shown
    assert "@jax.jit" in shown, "code is shown as written"


def test_mattermost_shares_a_loud_record_without_mentioning_anybody(
    client: httpx.Client, loud_record: dict[str, object]
) -> None:
    body = mattermost(client, f"share {loud_record['id']}").json()
    assert body["response_type"] == "in_channel"
    text = body["text"]
    assert text.startswith("### ValueError: ping")
    assert not LIVE_MENTION.search(_prose(text)), text
    assert "@jax.jit" in text, "code is shown as written"
    assert json.dumps(body)
