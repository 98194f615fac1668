"""A message as the dataset writes it: a template and the seeds' pattern, from its parts.

The miner reads a message out of source as literal text and placeholders (the source's own
spelling of each value: ``dst_ty.shape``, ``bytes=``). The seeds write the template with each
placeholder in braces and the pattern with literals escaped and ``(.+?)`` per placeholder;
both are made here, for Python and C++ alike.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

# What the seeds escape: the characters special to a regular expression, and nothing else
# (not spaces, quotes or ``=``, which Python's ``re.escape`` would also escape).
_SPECIAL = frozenset(".^$*+?{}[]\\|()")


@dataclass(frozen=True)
class Placeholder:
    """A value the message prints, spelled as the source spells it (``bytes=``, ``{0}``)."""

    spelling: str


Part = str | Placeholder


def normalize(parts: Iterable[Part]) -> list[Part]:
    """Adjacent literals joined, empty ones dropped."""
    joined: list[Part] = []
    for part in parts:
        if isinstance(part, str):
            if not part:
                continue
            if joined and isinstance(joined[-1], str):
                joined[-1] = joined[-1] + part
                continue
        joined.append(part)
    return joined


def template(parts: Sequence[Part]) -> str:
    """``Got {bytes=} but …``: literal braces doubled, as in the f-string they came from."""
    return "".join(
        f"{{{part.spelling}}}"
        if isinstance(part, Placeholder)
        else part.replace("{", "{{").replace("}", "}}")
        for part in normalize(parts)
    )


def pattern(parts: Sequence[Part]) -> str:
    """``Got (.+?) but …``: the seeds' pattern of the same message."""
    return "".join(
        "(.+?)" if isinstance(part, Placeholder) else escape(part) for part in normalize(parts)
    )


def escape(literal: str) -> str:
    return "".join(f"\\{char}" if char in _SPECIAL else char for char in literal)
