"""Mattermost: the slash command's token, and answers as one Markdown post."""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

from pydantic import SecretStr

from app.chatops.answers import Reply
from app.rendering.markdown import markdown

POST_LIMIT = 16_383
"""Mattermost's longest post, in characters."""


def token_allowed(given: str, allowed: list[SecretStr]) -> bool:
    """Constant-time: every configured token is compared, as digests of equal length."""
    digest = hashlib.sha256(given.encode()).digest()
    found = False
    for token in allowed:
        found |= hmac.compare_digest(
            digest, hashlib.sha256(token.get_secret_value().encode()).digest()
        )
    return found


def mattermost_message(reply: Reply) -> dict[str, Any]:
    """Private to the user unless they asked to share; the best fix per error, as in Slack."""
    return {
        "response_type": "in_channel" if reply.share else "ephemeral",
        "text": markdown(reply.cards, max_fixes=1, limit=POST_LIMIT),
    }
