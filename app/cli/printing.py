"""What the commands print: answers as prose, a problem as one line on stderr, and help.

Output is coloured on a terminal and plain when piped (rich decides).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from rich.text import Text

if TYPE_CHECKING:
    from app.answers.answer import Answer

# soft_wrap: a long line stays one line when piped, for grep; markup off: pasted text and
# code are printed as they are, brackets and all.
out = Console(soft_wrap=True, highlight=False, markup=False)
err = Console(stderr=True, soft_wrap=True, highlight=False, markup=False)
USAGE_ERROR = 2  # the exit code of input errata cannot take
FIXES_SHOWN = 3  # a match's fixes printed; its All fixes command lists every one


def command[F: Callable[..., Any]](
    commands: typer.Typer, name: str | None = None, **options: Any
) -> Callable[[F], F]:
    """``commands.command``, its help the function's docstring as ``help_text`` reads it."""

    def register(function: F) -> F:
        described = help_text(function.__doc__ or "")
        registered: F = commands.command(name, help=described, **options)(function)
        return registered

    return register


def help_text(docstring: str) -> str:
    """A docstring as help: each paragraph one line, for rich to wrap to the terminal (it
    keeps a docstring's own breaks, wrapped at 100 columns), and no markup read into it."""
    paragraphs = inspect.cleandoc(docstring).split("\n\n")
    return "\n\n".join(escape(" ".join(paragraph.split())) for paragraph in paragraphs)


def usage_error(message: str) -> NoReturn:
    """Say what errata cannot take in one line on stderr, and exit 2."""
    err.print(Text.assemble(("errata: ", "bold red"), message))
    raise typer.Exit(code=USAGE_ERROR)


def print_cards(
    answers: list[Answer], max_fixes: int | None = None, console: Console = out
) -> None:
    """Answers one after the other, a rule between two."""
    for number, answer in enumerate(answers):
        if number:
            console.print()
            console.rule(style="dim")
            console.print()
        print_card(answer, max_fixes, console)


def print_card(answer: Answer, max_fixes: int | None = None, console: Console = out) -> None:
    """An answer as prose for a terminal: what ``rustc --explain`` is to rustc's errors. The
    headline, Do this and at most ``max_fixes`` steps (every one when None), then the
    details; on standard output unless ``console`` says otherwise."""
    from app.answers.cards import hidden_steps_note, step_heading

    console.print(Text(answer.headline, style="bold"))
    steps = answer.steps if max_fixes is None else answer.steps[:max_fixes]
    for index, step in enumerate(steps):
        console.print(Text.assemble("\n", (step_heading(answer, index), "bold green")))
        if step.note:
            console.print(Text(step.note, style="dim"))
        if step.diff:
            console.print(_diff_text(step.diff))
        for snippet in step.snippets:
            if snippet.label:
                console.print(Text(f"{snippet.label}:", style="dim"))
            console.print(Text(_indent(snippet.code), style="cyan"))
    hidden = hidden_steps_note(answer, len(steps))
    if hidden:
        console.print(Text("\n" + hidden, style="dim"))
    if answer.facts:
        console.print()
        console.print(
            Text(" · ").join(
                Text.assemble((f"{fact.label}:", "dim"), " ", fact.value) for fact in answer.facts
            )
        )
    for quote in answer.quotes:
        console.print(Text.assemble("\n", (f"{quote.label}: ", "bold"), (quote.text, "cyan")))
        if quote.note:
            console.print(Text("  " + quote.note))
    for paragraph in answer.notes:
        console.print(Text("\n" + paragraph))
    if answer.links:
        console.print()
    for link in answer.links:
        console.print(Text.assemble(link.label, (" → ", "dim"), (link.url, "cyan")))


def _diff_text(diff: str) -> Text:
    """A diff's removed lines red, added green, indented like the other code."""
    styles = {"-": "red", "+": "green"}
    return Text("\n").join(
        Text(_indent(line), style=styles.get(line[:1], "dim")) for line in diff.splitlines()
    )


def _indent(code: str) -> str:
    return "\n".join("    " + line if line else "" for line in code.rstrip("\n").split("\n"))
