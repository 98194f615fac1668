"""One regular-expression search over a whole paste instead of a match on every line.

A long traceback is mostly lines a given pattern cannot match; a search for the pattern's
leading literal over the joined lines skips them at C speed, where a loop would try each.
"""

from __future__ import annotations

import re
from collections.abc import Iterator


def indented_matches(pattern: re.Pattern[str], text: str) -> Iterator[tuple[int, re.Match[str]]]:
    """Each line of ``text`` (lines joined by ``\\n``) that ``pattern`` matches right after
    the line's indent, as the line's number and the match: what ``re.match(r"\\s*" +
    pattern, line)`` finds line by line, for a pattern that starts with a literal other
    than whitespace and matches no line break."""
    line = position = 0
    for found in pattern.finditer(text):
        start = found.start()
        line += text.count("\n", position, start)
        position = start
        indent = text[text.rfind("\n", 0, start) + 1 : start]
        if not indent or indent.isspace():
            yield line, found
