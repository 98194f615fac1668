"""Slack: request signatures, the command text as Slack sends it, answers as Block Kit.

Limits from Slack's Block Kit reference: 50 blocks a message, 150 characters a header,
3000 characters a section's text. Everything cut says so.
"""

from __future__ import annotations

import re
from typing import Any

from slack_sdk.signature import Clock, SignatureVerifier

from app.answers.answer import Answer, Quote, Step
from app.answers.cards import hidden_steps_note, step_heading
from app.chatops.answers import Reply
from app.rendering.text import clip, clip_line, quiet_mentions

MAX_BLOCKS = 50
HEADER_LIMIT = 150
SECTION_LIMIT = 3000
FALLBACK_LIMIT = 3000
TIMESTAMP_PATTERN = r"[0-9]{1,12}"
"""X-Slack-Request-Timestamp: Unix seconds."""
SIGNATURE_PATTERN = r"v0=[0-9a-f]{64}"
"""X-Slack-Signature: the version, and the HMAC-SHA256 in hex."""
_TIMESTAMP = re.compile(TIMESTAMP_PATTERN)
_SIGNATURE = re.compile(SIGNATURE_PATTERN)
_ZERO_WIDTH_SPACE = "\u200b"


class SlackSignature:
    """Slack's v0 signature: HMAC-SHA256 of ``v0:{timestamp}:{raw body}`` with the signing
    secret, compared in constant time, within five minutes of the clock."""

    def __init__(self, secret: str, clock: Clock | None = None) -> None:
        self._verifier = SignatureVerifier(secret, clock or Clock())

    def verify(self, body: bytes, timestamp: str, signature: str) -> bool:
        # Malformed headers or a non-UTF-8 body are refused here: the SDK would raise on them.
        if not (_TIMESTAMP.fullmatch(timestamp) and _SIGNATURE.fullmatch(signature)):
            return False
        try:
            body.decode("utf-8")
        except UnicodeDecodeError:
            return False
        return self._verifier.is_valid(body, timestamp, signature)


def command_text(text: str) -> str:
    """Slack escapes &, < and > in what the user typed; a traceback needs them back."""
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def slack_message(reply: Reply) -> dict[str, Any]:
    """The slash command's response: private to the user unless they asked to share."""
    blocks: list[dict[str, Any]] = []
    for index, card in enumerate(reply.cards):
        if index:
            blocks.append({"type": "divider"})
        blocks += _card_blocks(card)
    if len(blocks) > MAX_BLOCKS:
        blocks = [*blocks[: MAX_BLOCKS - 1], _context("… (truncated: more than Slack shows)")]
    return {
        "response_type": "in_channel" if reply.share else "ephemeral",
        # Shown in notifications, and read as mrkdwn: escaped like any other text.
        "text": escape(
            clip_line(" · ".join(answer.headline for answer in reply.cards), FALLBACK_LIMIT)
        ),
        "blocks": blocks,
    }


def _card_blocks(answer: Answer) -> list[dict[str, Any]]:
    """The headline, Do this, then the details; the other steps behind All fixes."""
    blocks = [
        {
            "type": "header",
            "text": {
                "type": "plain_text",
                "text": quiet_mentions(clip_line(answer.headline, HEADER_LIMIT)),
            },
        }
    ]
    if answer.doThis:
        blocks.append(_section(_step(answer.doThis, step_heading(answer, 0))))
    if answer.facts:
        facts = " · ".join(f"*{escape(fact.label)}* {_code(fact.value)}" for fact in answer.facts)
        blocks.append(_section(facts))
    blocks += [_section(_quote(quote)) for quote in answer.quotes]
    blocks += [_section(escape(paragraph)) for paragraph in answer.notes]
    footer = [f"<{link.url}|{escape(link.label)}>" for link in answer.links]
    hidden = hidden_steps_note(answer, shown=1)
    if hidden:
        footer.insert(0, escape(hidden))
    if footer:
        blocks.append(_context(" · ".join(footer)))
    return blocks


def _quote(quote: Quote) -> str:
    text = f"*{escape(quote.label)}*\n{_code_block(quote.text)}"
    return f"{text}\n{escape(quote.note)}" if quote.note else text


def _step(step: Step, heading: str) -> str:
    head = f"*{escape(heading)}*" + (f" — _{escape(step.note)}_" if step.note else "")
    parts = [head]
    if step.diff:
        parts.append(_code_block(step.diff))
    for snippet in step.snippets:
        if snippet.label:
            parts.append(f"*{escape(snippet.label)}*")
        parts.append(_code_block(snippet.code))
    return "\n".join(parts)


def _section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": clip(text, SECTION_LIMIT)}}


def _context(text: str) -> dict[str, Any]:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": clip(text, SECTION_LIMIT)}]}


def escape(text: str) -> str:
    """mrkdwn control characters and mentions; escaped, ``<!channel>``, ``@here`` and links
    in any text, pasted or stored, stay text."""
    return quiet_mentions(_entities(text))


def _entities(text: str) -> str:
    """What mrkdwn reads as markup, even in code: links, ``<!channel>`` and entities."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _code(text: str) -> str:
    """Inline code cannot hold a backtick in mrkdwn; a look-alike quote takes its place."""
    one_line = " ".join(text.split()).replace("`", "'")
    return f"`{_entities(one_line)}`"


def _code_block(code: str) -> str:
    """A code block cannot hold its own fence; a zero-width space breaks any inside it."""
    body = code.rstrip().replace("```", "`" + _ZERO_WIDTH_SPACE + "``")
    return f"```\n{_entities(body)}\n```"
