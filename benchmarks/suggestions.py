"""How well the suggestions' scores say which record a message is, where no pattern matched.

Pastes are drawn from the catalog's own live messages, seeded: each placeholder filled with
a value, then drifted as another release or a hurried copy would (cut to 60% of its words,
one word replaced, one dropped, or left whole). For half of them the record, and every
record with the same words, is held out of the catalog: what then comes first is wrong, and
its score is what a wrong suggestion scores. Both scorers rank the same shortlist (the 30
records the word sets' overlap puts first), so the figures compare the scores alone:

- ``overlap``: rapidfuzz's token set ratio, the score suggestions had before;
- ``similarity``: the overlap times the Dice share of words (``Catalog.similar``).

For each: how often the right record comes first (held in), and of the first suggestions
scoring at least 0.95, 0.9 and 0.8 (both halves), the share that is right.

    .venv/bin/python -m benchmarks.suggestions --pastes 600
"""

from __future__ import annotations

import argparse
import random
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

if __package__ in (None, ""):  # run as a file: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rapidfuzz import fuzz, process, utils

from app.answers.catalog import SIMILAR_SHORTLIST, similarity
from app.answers.offline import prepared

_PLACEHOLDER = re.compile(r"\{[^{}]*\}")
_VALUES = ("(3, 5)", "7", "float32", "x_ref", "128", "int4[8,128]")
_FILLER = ("the", "value", "given", "block", "array")
THRESHOLDS = (0.95, 0.9, 0.8)


@dataclass(frozen=True)
class First:
    """The first suggestion for one paste under one scorer."""

    score: float
    right: bool
    held_out: bool


def drifted(message: str, rng: random.Random) -> str:
    """The message with values in its placeholders, changed as a copy of it may be."""
    words = _PLACEHOLDER.sub(lambda _: rng.choice(_VALUES), message).split()
    drift = rng.choice(("cut", "swap", "drop", "whole"))
    if drift == "cut" and len(words) > 4:
        words = words[: max(3, int(len(words) * 0.6))]
    elif drift == "swap" and len(words) > 3:
        words[rng.randrange(len(words))] = rng.choice(_FILLER)
    elif drift == "drop" and len(words) > 3:
        del words[rng.randrange(len(words))]
    return " ".join(words)


def overlap(text: str, message: str) -> float:
    return fuzz.token_set_ratio(text, message, processor=utils.default_process) / 100


SCORERS: dict[str, Callable[[str, str], float]] = {"overlap": overlap, "similarity": similarity}


def firsts(messages: Sequence[str], pastes: int, seed: int) -> dict[str, list[First]]:
    rng = random.Random(seed)
    found: dict[str, list[First]] = {name: [] for name in SCORERS}
    for position in rng.sample(range(len(messages)), pastes):
        text = drifted(messages[position], rng)
        held_out = rng.random() < 0.5
        shortlist = [
            each
            for _, _, each in process.extract(
                text,
                messages,
                scorer=fuzz.token_set_ratio,
                processor=utils.default_process,
                limit=SIMILAR_SHORTLIST + 8,
            )
            if not (held_out and messages[each] == messages[position])
        ][:SIMILAR_SHORTLIST]
        for name, scorer in SCORERS.items():
            scored = [(scorer(text, messages[each]), -rank) for rank, each in enumerate(shortlist)]
            if not scored:
                continue
            score, rank = max(scored)
            right = messages[shortlist[-rank]] == messages[position]
            found[name].append(First(score, right, held_out))
    return found


def report(found: dict[str, list[First]]) -> str:
    head = "| scorer | right first (held in) | " + " | ".join(
        f"right of first ≥ {t}" for t in THRESHOLDS
    )
    lines = [head + " |", "|---" * (2 + len(THRESHOLDS)) + "|"]
    for name, results in found.items():
        held_in = [each for each in results if not each.held_out]
        cells = [f"{sum(each.right for each in held_in) / len(held_in):.0%}"]
        for threshold in THRESHOLDS:
            chosen = [each for each in results if each.score >= threshold]
            share = sum(each.right for each in chosen) / len(chosen) if chosen else 0.0
            cells.append(f"{share:.0%} of {len(chosen)}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pastes", type=int, default=600)
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args(argv)
    messages, _, _ = prepared().catalog.live_messages()
    print(f"{len(messages)} live messages, {args.pastes} pastes, seed {args.seed}")
    print(report(firsts(messages, args.pastes, args.seed)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
