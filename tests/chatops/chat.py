"""Sending slash commands the way Slack and Mattermost do."""

from __future__ import annotations

import hashlib
import hmac
import time
from pathlib import Path
from urllib.parse import urlencode

import httpx

from tests.conftest import REPO_ROOT, SLACK_SIGNING_SECRET

TRACEBACKS = REPO_ROOT / "tests" / "fixtures" / "tracebacks"
FORM = "application/x-www-form-urlencoded"


# The line of the captured tracebacks' own script that writes the block (their "user code"),
# and the first fix written into it.
USERS_LINE = "lower('copy_gmem_to_smem', (7,), 'int4', None)"
USERS_LINE_FIXED = "lower('copy_gmem_to_smem', (256,), 'int4', None)"


def traceback(name: str) -> str:
    return Path(TRACEBACKS / f"{name}.txt").read_text()


def slack_body(text: str) -> bytes:
    fields = {
        "token": "deprecated-verification-token",
        "team_id": "T0001",
        "channel_id": "C0001",
        "user_id": "U0001",
        "command": "/errata",
        "text": slack_escaped(text),
        "response_url": "https://hooks.slack.test/commands/1",
        "trigger_id": "1.2.3",
    }
    return urlencode(fields).encode()


def slack_escaped(text: str) -> str:
    """Slack sends &, < and > in the user's text as HTML entities."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def slack_headers(
    body: bytes, timestamp: int | None = None, secret: str = SLACK_SIGNING_SECRET
) -> dict[str, str]:
    stamp = str(int(time.time()) if timestamp is None else timestamp)
    digest = hmac.new(secret.encode(), f"v0:{stamp}:".encode() + body, hashlib.sha256)
    return {
        "Content-Type": FORM,
        "X-Slack-Request-Timestamp": stamp,
        "X-Slack-Signature": f"v0={digest.hexdigest()}",
    }


def slack(client: httpx.Client, text: str) -> httpx.Response:
    body = slack_body(text)
    return client.post("/chatops/slack", content=body, headers=slack_headers(body))


def block_texts(message: dict[str, object]) -> str:
    """Every text in a Block Kit message, one per line, to search in."""
    texts = []
    for block in message["blocks"]:  # type: ignore[attr-defined]
        if "text" in block:
            texts.append(block["text"]["text"])
        texts += [element["text"] for element in block.get("elements", [])]
    return "\n".join(texts)
