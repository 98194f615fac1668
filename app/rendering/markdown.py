"""Answers as Markdown (CommonMark): the API's text/markdown answers and the Mattermost bot's.

In the answer's order: the headline, **Do this** with its diff, the alternatives, then the
details (facts, quotes, notes, links)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from app.answers.answer import Answer, Quote, Step
from app.answers.cards import hidden_steps_note, step_heading
from app.rendering.text import clip, quiet_mentions

MEDIA_TYPE = "text/markdown; charset=utf-8"
# What would turn prose into markup: emphasis, code, links, HTML, strikethrough, tables, and
# a heading or quote at the start. An underscore inside a word emphasizes nothing.
_SPECIAL = re.compile(r"([\\`*\[\]<~|]|(?<!\w)_|_(?!\w)|^[#>])")
_BACKTICKS = re.compile(r"`+")


def markdown(
    answers: Sequence[Answer], *, max_fixes: int | None = None, limit: int | None = None
) -> str:
    """Answers separated by rules; ``max_fixes`` steps each (all when None), ``limit``
    characters."""
    text = "\n\n---\n\n".join(_answer(answer, max_fixes) for answer in answers) + "\n"
    return clip(text, limit) if limit is not None else text


def _answer(answer: Answer, max_fixes: int | None) -> str:
    parts = [f"### {escape(answer.headline)}"]
    steps = answer.steps if max_fixes is None else answer.steps[:max_fixes]
    parts += [_step(step, step_heading(answer, index)) for index, step in enumerate(steps)]
    hidden = hidden_steps_note(answer, len(steps))
    if hidden:
        parts.append(f"_{escape(hidden)}_")
    if answer.facts:
        parts.append(
            " · ".join(f"{escape(fact.label)} {code_span(fact.value)}" for fact in answer.facts)
        )
    parts += [_quote(quote) for quote in answer.quotes]
    parts += [escape(paragraph) for paragraph in answer.notes]
    if answer.links:
        parts.append(" · ".join(f"[{escape(link.label)}]({link.url})" for link in answer.links))
    return "\n\n".join(parts)


def _quote(quote: Quote) -> str:
    line = f"**{escape(quote.label)}:** {code_span(quote.text)}"
    return f"{line}  \n{escape(quote.note)}" if quote.note else line


def _step(step: Step, heading: str) -> str:
    head = f"**{escape(heading)}**" + (f" — {escape(step.note)}" if step.note else "")
    blocks = [code_block(step.diff, "diff")] if step.diff else []
    blocks += [
        f"{escape(snippet.label)}:\n{code_block(snippet.code)}"
        if snippet.label
        else code_block(snippet.code)
        for snippet in step.snippets
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
