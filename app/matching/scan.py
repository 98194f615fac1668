"""The few lines of a paste holding some text, found by searching the whole paste at once.

A long traceback is mostly lines that hold none of the text a step looks for: ``str.find``
over the joined lines passes them at C speed, where a loop would test each.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
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
