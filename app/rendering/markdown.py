"""Cards as Markdown (CommonMark): the API's text/markdown answers and the Mattermost bot's."""

from __future__ import annotations

import re
from collections.abc import Sequence

from app.rendering.cards import Card, FixCard, Quote, fix_heading, hidden_fixes_note
from app.rendering.text import clip, quiet_mentions

MEDIA_TYPE = "text/markdown; charset=utf-8"
# What would turn prose into markup: emphasis, code, links, HTML, strikethrough, tables, and
# a heading or quote at the start. An underscore inside a word emphasizes nothing.
_SPECIAL = re.compile(r"([\\`*\[\]<~|]|(?<!\w)_|_(?!\w)|^[#>])")
_BACKTICKS = re.compile(r"`+")


def markdown(
    cards: Sequence[Card], *, max_fixes: int | None = None, limit: int | None = None
) -> str:
    """Cards separated by rules; ``max_fixes`` per card (all when None), ``limit`` characters."""
    text = "\n\n---\n\n".join(_card(card, max_fixes) for card in cards) + "\n"
    return clip(text, limit) if limit is not None else text


def _card(card: Card, max_fixes: int | None) -> str:
    parts = [f"### {escape(card.title)}"]
    if card.facts:
        parts.append(
            " · ".join(f"{escape(label)} {code_span(value)}" for label, value in card.facts)
        )
    parts += [_quote(quote) for quote in card.quotes]
    parts += [escape(paragraph) for paragraph in card.text]
    shown = card.fixes if max_fixes is None else card.fixes[:max_fixes]
    parts += [_fix(fix, fix_heading(card, index)) for index, fix in enumerate(shown)]
    hidden = hidden_fixes_note(card, len(shown))
    if hidden:
        parts.append(f"_{escape(hidden)}_")
    if card.links:
        parts.append(" · ".join(f"[{escape(link.label)}]({link.url})" for link in card.links))
    return "\n\n".join(parts)


def _quote(quote: Quote) -> str:
    line = f"**{escape(quote.label)}:** {code_span(quote.text)}"
    return f"{line}  \n{escape(quote.note)}" if quote.note else line


def _fix(fix: FixCard, heading: str) -> str:
    head = f"**{escape(heading)}**" + (f" — {escape(fix.note)}" if fix.note else "")
    blocks = [
        f"{escape(snippet.label)}:\n{code_block(snippet.code)}"
        if snippet.label
        else code_block(snippet.code)
        for snippet in fix.snippets
    ]
    return "\n\n".join([head, *blocks])


def escape(text: str) -> str:
    """Prose that Markdown shows as written: no emphasis, links, HTML or headings, and no
    mention a chat would act on."""
    return quiet_mentions(_SPECIAL.sub(r"\\\1", " ".join(text.split())))


def code_span(text: str) -> str:
    """Inline code on one line, fenced with more backticks than it contains."""
    text = " ".join(text.split())
    fence = "`" * (_longest_backticks(text) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def code_block(code: str, language: str = "python") -> str:
    fence = "`" * max(3, _longest_backticks(code) + 1)
    return f"{fence}{language}\n{code.rstrip()}\n{fence}"


def _longest_backticks(text: str) -> int:
    return max((len(run) for run in _BACKTICKS.findall(text)), default=0)
