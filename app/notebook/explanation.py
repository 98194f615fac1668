"""An explanation as a notebook shows it (HTML) and as a terminal does (text): for each error
found, the headline, Do this with its diff, and the links. The other fixes and the details
are one link away (the record, All fixes), so a failing cell's output stays short."""

from __future__ import annotations

from html import escape

from app.answers.answer import Answer, MatchAnswer
from app.answers.cards import step_heading

# Errors explained below one cell: a paste seldom holds more, and a cell's output stays short.
ANSWERS_SHOWN = 3
_BOX = "border-left:3px solid #d9822b;padding:2px 10px;margin:6px 0"
_DIFF_COLOURS = {"-": "#b31d28", "+": "#22863a"}


def known(answer: MatchAnswer) -> list[Answer]:
    """The answers that say something: none when errata knows no error in the paste."""
    found = answer.matches or answer.compilerMessages or answer.memory or answer.raisePoints
    return list(answer.answers[:ANSWERS_SHOWN]) if found else []


def explanation_text(answers: list[Answer]) -> str:
    lines: list[str] = []
    for answer in answers:
        lines.append(f"errata: {answer.headline}")
        if answer.doThis is not None:
            step = answer.doThis
            note = f" ({step.note})" if step.note else ""
            lines.append(f"{step_heading(answer, 0)}{note}")
            lines += [f"    {line}" for line in (step.diff or "").splitlines()]
        lines += [f"{link.label} → {link.url}" for link in answer.links]
        lines.append("")
    return "\n".join(lines)


def explanation_html(answers: list[Answer]) -> str:
    return "".join(_answer_html(answer) for answer in answers)


def _answer_html(answer: Answer) -> str:
    parts = [f"<div><b>errata</b> · <b>{escape(answer.headline)}</b></div>"]
    if answer.doThis is not None:
        step = answer.doThis
        note = f' <span style="opacity:.7">— {escape(step.note)}</span>' if step.note else ""
        parts.append(f"<div>{escape(step_heading(answer, 0))}{note}</div>")
        if step.diff:
            parts.append(f'<pre style="margin:4px 0">{_diff_html(step.diff)}</pre>')
    links = [_link_html(link.label, link.url) for link in answer.links]
    if links:
        parts.append(f"<div>{' · '.join(links)}</div>")
    return f'<div class="errata" style="{_BOX}">{"".join(parts)}</div>'


def _diff_html(diff: str) -> str:
    lines = []
    for line in diff.splitlines():
        colour = _DIFF_COLOURS.get(line[:1])
        text = escape(line)
        lines.append(f'<span style="color:{colour}">{text}</span>' if colour else text)
    return "\n".join(lines)


def _link_html(label: str, url: str) -> str:
    """A web address as a link; a command (no server: ``errata show …``) as code to copy."""
    if url.startswith(("https://", "http://")):
        return f'<a href="{escape(url)}" target="_blank">{escape(label)}</a>'
    return f"{escape(label)}: <code>{escape(url)}</code>"
