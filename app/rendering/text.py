"""Cutting text to a length limit without breaking what it is made of."""

from __future__ import annotations

import re

from pydantic import ValidationError

from app.errors import field_errors, fields_detail

ELLIPSIS = "…"
# A word joiner after "@" keeps "@all", "@here", "@channel" or "@user" from being read as a
# mention by Slack or Mattermost, and one after "<" Slack's "<!channel>" and "<@U123>"; it
# shows nothing to the reader.
_MENTION_START = re.compile(r"(?<=@)(?=\w)|(?<=<)(?=[!@#])")
_WORD_JOINER = "\u2060"
TRUNCATED = "… (truncated)"
_FENCE = re.compile(r"^(`{3,})")


def quiet_mentions(text: str) -> str:
    """Prose for a chat that mentions nobody, whatever wrote it (a paste, a stored record):
    chats do not read mentions inside code, so code is left as it is."""
    return _MENTION_START.sub(_WORD_JOINER, text)


def clip_line(text: str, limit: int) -> str:
    """One line of at most ``limit`` characters (whitespace collapsed), ending in … when cut."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - len(ELLIPSIS)].rstrip() + ELLIPSIS


def clip(text: str, limit: int, marker: str = TRUNCATED) -> str:
    """At most ``limit`` characters of Markdown-like text, cut at a line end where one is near.

    A code fence left open by the cut is closed, so the rest of the message is not swallowed
    into a code block, and ``marker`` says that something was left out.
    """
    if len(text) <= limit:
        return text
    budget = limit - len(marker) - 1
    while True:
        cut = text[:budget]
        line_end = cut.rfind("\n")
        if line_end > budget // 2:
            cut = cut[:line_end]
        fence = open_fence(cut)
        closing = f"\n{fence}" if fence else ""
        if len(cut) + len(closing) + 1 + len(marker) <= limit:
            return f"{cut}{closing}\n{marker}"
        budget -= len(closing)


def open_fence(text: str) -> str | None:
    """The fence of a code block still open at the end of ``text``, if any."""
    fence: str | None = None
    for line in text.split("\n"):
        found = _FENCE.match(line)
        if fence is None and found:
            fence = found.group(1)
        elif fence is not None and line.strip() == fence:
            fence = None
    return fence


def validation_problem(exc: ValidationError) -> str:
    """Pydantic's errors as one line a person reads: ``shape: Field required``."""
    return fields_detail(field_errors(exc.errors()), most=None)
