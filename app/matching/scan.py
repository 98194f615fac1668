"""One regular-expression search over a whole paste instead of a match on every line.

A long traceback is mostly lines a given pattern cannot match; a search for the pattern's
leading literal over the joined lines passes them at C speed, where a loop would try each.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from itertools import accumulate, repeat
from operator import add


def line_starts(lines: Sequence[str]) -> list[int]:
    """Where each line starts in the lines joined by ``\n``, then where a line after the
    last would."""
    return list(accumulate(map(add, map(len, lines), repeat(1)), initial=0))


def lines_holding(words: Sequence[str], text: str, starts: Sequence[int]) -> list[int]:
    """The numbers of the lines of ``text`` (starting at ``starts``) holding any of ``words``."""
    numbers: set[int] = set()
    for word in words:
        found = text.find(word)
        while found != -1:
            line = bisect_right(starts, found) - 1
            numbers.add(line)
            found = text.find(word, starts[line + 1])
    return sorted(numbers)


def indented_matches(
    pattern: re.Pattern[str], lines: Sequence[str]
) -> Iterator[tuple[int, re.Match[str]]]:
    """Each line ``pattern`` matches right after the line's indent, as the line's number
    and the match: what ``re.match(r"\\s*" + pattern, line)`` finds line by line, for a
    pattern that starts with a literal other than whitespace and matches no line break."""
    text = "\n".join(lines)
    line = position = 0
    for found in pattern.finditer(text):
        start = found.start()
        line += text.count("\n", position, start)
        position = start
        indent = text[text.rfind("\n", 0, start) + 1 : start]
        if not indent or indent.isspace():
            yield line, found
