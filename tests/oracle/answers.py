"""Reading errata's answer to a traceback JAX printed."""

from __future__ import annotations

from collections.abc import Sequence

from app.schemas.match import MatchOut


def answers_to_the_raised_error(matches: Sequence[MatchOut]) -> list[MatchOut]:
    """The matches of the error raised: Python prints it last, after the causes chained to
    it, which an answer lists first."""
    if not matches:
        return []
    last = max(found.chainPosition or 0 for found in matches)
    return [found for found in matches if (found.chainPosition or 0) == last]
