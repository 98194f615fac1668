"""Mattermost: answers as one Markdown post (its token is checked by ``app.api.tokens``)."""

from __future__ import annotations

from typing import Any

from app.chatops.answers import Reply
from app.rendering.markdown import markdown

POST_LIMIT = 16_383
"""Mattermost's longest post, in characters."""


def mattermost_message(reply: Reply) -> dict[str, Any]:
    """Private to the user unless they asked to share; the best fix per error, as in Slack."""
    return {
        "response_type": "in_channel" if reply.share else "ephemeral",
        "text": markdown(reply.cards, max_fixes=1, limit=POST_LIMIT),
    }
