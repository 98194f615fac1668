"""The Answer: what every surface says about one thing found, in the order people need it.

1. ``headline``: what went wrong, in one sentence;
2. ``doThis``: the one recommended change, as a diff of the user's code where there is code;
3. ``alternatives``: the other changes, best first;
4. the details, which surfaces fold: ``facts`` (values, release, rule), ``quotes`` (the
   paste's line and JAX's words, each once), ``notes`` and ``links``.

JSON, Markdown, HTML, Slack and Mattermost blocks and the terminal all render this model.
Headlines and prose hold only text this service wrote or curated; anything copied from a
paste travels in a :class:`Quote` or a :class:`Step`'s code, which every format shows as
code, so it can neither format the answer nor mention anybody.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from app.schemas.match import MatchResponse

AnswerKind = Literal[
    "match", "site", "memory", "compiler", "unknown", "compute", "record", "notice"
]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class Quote(_Frozen):
    """Text shown word for word, as code: JAX's message, a line of the paste, an input error."""

    label: str
    text: str
    note: str | None = None


class Snippet(_Frozen):
    label: str
    code: str


class Step(_Frozen):
    """One change that makes the kernel compile: a computed fix, a rewrite, or advice."""

    title: str
    note: str = ""
    diff: str | None = None
    """A unified diff of the user's code (from the paste's own line where it shows one), or
    of the construct with the user's values; None for advice in words."""
    snippets: tuple[Snippet, ...] = ()
    ranked: bool = True
    """One of the engine's fixes, best first; a record's example fix is not ranked."""


class Fact(_Frozen):
    label: str
    value: str


class Link(_Frozen):
    label: str
    url: str


class Answer(_Frozen):
    """One thing to say: a matched error, a site, a memory report, a verdict, a record."""

    kind: AnswerKind
    headline: str
    doThis: Step | None = None
    alternatives: tuple[Step, ...] = ()
    facts: tuple[Fact, ...] = ()
    quotes: tuple[Quote, ...] = ()
    notes: tuple[str, ...] = ()
    links: tuple[Link, ...] = ()

    @property
    def steps(self) -> tuple[Step, ...]:
        """Do this, then the alternatives."""
        return (self.doThis, *self.alternatives) if self.doThis else self.alternatives

    @classmethod
    def with_steps(cls, steps: Sequence[Step], **fields: Any) -> Answer:
        """An answer whose steps come ranked best first: the first is what to do."""
        return cls(doThis=steps[0] if steps else None, alternatives=tuple(steps[1:]), **fields)


def code_diff(before: str, after: str) -> str:
    """``before`` changed into ``after``, as a unified diff's body: unchanged lines (the
    paste's ``# file, line N`` comment) as context, then the lines removed and added."""
    old, new = before.splitlines(), after.splitlines()
    if len(old) == len(new):  # line for line: each change under the line it replaces
        pairs = zip(old, new, strict=True)
        return "\n".join(f" {a}" if a == b else f"-{a}\n+{b}" for a, b in pairs)
    lines = difflib.unified_diff(old, new, lineterm="", n=3)
    return "\n".join(line for line in list(lines)[2:] if not line.startswith("@@"))


class MatchAnswer(MatchResponse):
    """A match's JSON: what the paste holds, then ``answers``, what to do about it."""

    answers: list[Answer]
