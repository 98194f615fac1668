from __future__ import annotations

import random
import re
from collections.abc import Callable

import pytest

from app.jaxref.regex_syntax import SyntaxUnsupported, parse, prefix_pattern
from app.jaxref.templates import PatternError, compile_bounded, derive_pattern
from app.matching.index import HEAD_CHARS, MAX_UNINDEXED, MIN_HEAD, PatternEntry, PatternIndex

from .catalog import SEED_001, catalog_index

WORDS = [
    *("copy", "transfer", "bytes", "shape", "dtype", "swizzle", "tile", "warp", "group"),
    *("memory", "region", "aligned", "must", "have", "number", "elements", "multiple"),
    *("supported", "only", "async", "tensor", "block", "grid", "lowering", "kernel", "barrier"),
]
# Regex features beyond plain derived templates, each with a text that matches it.
FEATURE_PATTERNS = [
    r"(?i)tensor MAP (?P<n>\d+) failed",
    r"barrier (?:count|size) mismatch: (\d+) vs (\d+)",
    r"(?:optional prefix )?grid dims? (?P<dims>\[[\d, ]+\]) unsupported",
    r"kernel \w+ uses \d+ registers?, limit (?P<limit>\d+)",
    r"tile(?:s)? of [0-9]+x[0-9]+ (?:are|is) not supported\.",
    r"literal \(quoted\) text \[x\] then (\d+)",
    r"^lowering failed at line (\d+)$",
    r"\d+x\d+",  # no usable literal: verified on every text
    r"[ab]{2}\s+[cd]+",  # no literal at all
    r"^\d+ ?x ?\d+$",  # no usable literal, anchored to the line
    r"warp specialization (on|off) is not (?:yet )?supported",
    r"group \d+ \| region (\w+)",
]
FEATURE_TEXTS = [
    "tensor map 12 failed",
    "barrier size mismatch: 3 vs 4",
    "grid dim [1, 2] unsupported",
    "optional prefix grid dims [8] unsupported",
    "kernel foo uses 255 registers, limit 128",
    "tiles of 64x128 are not supported.",
    "literal (quoted) text [x] then 7",
    "lowering failed at line 12",
    "ab   dd",
    "12 x 34",
    "warp specialization on is not yet supported",
    "group 3 | region smem",
]


def _corpus(size: int, seed: int) -> tuple[list[PatternEntry], list[str]]:
    """Derived patterns from random templates, plus the feature patterns; texts that hit some."""
    rng = random.Random(seed)
    entries = []
    texts = list(FEATURE_TEXTS)
    for number in range(size):
        words = rng.sample(WORDS, rng.randint(3, 8))
        words.insert(rng.randint(0, len(words)), rng.choice(["{bytes=}", "{n}", "{x.shape}"]))
        template = f"{rng.choice(WORDS)}{number} " + " ".join(words)
        entries.append(PatternEntry(f"r{number}", derive_pattern(template), "current"))
        if number % 97 == 0:
            rendered = template.replace("{bytes=}", "bytes=96").replace("{n}", "7")
            texts.append("ValueError: " + rendered.replace("{x.shape}", "(3, 5)"))
    entries += [PatternEntry(f"f{i}", p, "feature") for i, p in enumerate(FEATURE_PATTERNS)]
    texts += [" ".join(rng.choices(WORDS, k=12)) for _ in range(200)]
    return entries, texts


def _naive(index: PatternIndex, texts: list[str]) -> list[tuple[int, int, dict[str, str]]]:
    """Every pattern against every text with Python's re: what the index must reproduce."""
    found = []
    compiled_patterns = [re.compile(index.pattern(entry)) for entry in range(len(index))]
    for number, text in enumerate(texts):
        for entry, compiled in enumerate(compiled_patterns):
            match = compiled.search(text)
            if match is not None:
                names = {i: n for n, i in compiled.groupindex.items()}
                captures = {
                    names.get(i, str(i)): value
                    for i, value in enumerate(match.groups(), start=1)
                    if value is not None
                }
                found.append((entry, number, captures))
    return sorted(found, key=lambda hit: (hit[1], hit[0]))


@pytest.mark.parametrize("seed", [1, 2])
def test_index_agrees_with_a_naive_loop(seed: int) -> None:
    entries, texts = _corpus(2500, seed)
    index = PatternIndex.build(entries)
    hits = [(hit.entry, hit.text, hit.captures) for hit in index.search(texts)]
    assert hits == _naive(index, texts)
    assert len(hits) > 30  # the corpus does exercise matches


def test_index_of_literal_patterns_only_agrees_with_a_naive_loop() -> None:
    """Without unindexed patterns only the texts holding a literal are verified; and a
    character that lowercases to two ("İ") must not shift the texts after it."""
    entries, texts = _corpus(500, 3)
    index = PatternIndex.build([entry for entry in entries if entry.variant != "feature"])
    texts = [f"İİ {text}" if number % 3 == 0 else text for number, text in enumerate(texts)]
    hits = [(hit.entry, hit.text, hit.captures) for hit in index.search(texts)]
    assert hits == _naive(index, texts)
    assert len({text for _, text, _ in hits}) > 5


def test_hits_are_in_characters_for_ascii_text_and_beyond() -> None:
    """ASCII text is searched as bytes, other text as ``str``: both give ``str`` captures
    and offsets in characters, as Python's ``re`` does."""
    pattern = derive_pattern("tile {x.shape} of {name} is not supported")
    index = PatternIndex.build([PatternEntry("r", pattern, "current")])
    texts = [
        "E: tile (3, 5) of smem is not supported",
        "Échec : tile (3, 5) of sméм is not supported",
    ]
    hits = index.search(texts)
    assert [hit.text for hit in hits] == [0, 1]
    for hit in hits:
        expected = re.search(pattern, texts[hit.text])
        assert expected is not None
        assert (hit.start, hit.end) == expected.span()
        assert hit.captures == expected.groupdict()
    assert hits[1].captures["name"] == "sméм"


def test_tuple_entries_and_variants() -> None:
    index = PatternIndex.build([("rec", "Only aligned copies are supported", "jax<=0.7 wording")])
    [hit] = index.search(["NotImplementedError: Only aligned copies are supported"])
    assert index.entries[hit.entry].variant == "jax<=0.7 wording"


def test_seed_pattern_trailing_lazy_group_captures_whole_number() -> None:
    index = PatternIndex.build([PatternEntry("seed", SEED_001["messagePattern"])])
    message = (
        "Only copies transferring a number of bytes divisible by the warpgroup size are"
        " supported. Got bytes=32 but warpgroup size is 128"
    )
    [hit] = index.search([message])
    assert hit.captures == {"1": "bytes=32", "2": "128"}
    assert index.pattern(hit.entry).endswith("(.+)")


def test_patterns_without_literal_are_capped() -> None:
    entries = [PatternEntry(f"r{i}", rf"\d+x{i % 10}\d") for i in range(MAX_UNINDEXED + 5)]
    index = PatternIndex.build(entries)
    assert len(index) == MAX_UNINDEXED
    assert len(index.skipped) == 5
    assert "literal" in index.skipped[0].reason


def test_broken_pattern_never_matches_and_is_reported() -> None:
    index = PatternIndex.build([PatternEntry("bad", r"(?=lookahead) unsupported text")])
    assert index.search(["lookahead unsupported text"]) == []
    assert "lookahead" in index.broken[0]


def test_truncated_message_matches_the_start_of_a_pattern() -> None:
    index = catalog_index()
    cut = (
        "Only copies transferring a number of bytes divisible by the warpgroup size are"
        " supported. Got bytes=32 but warpg"
    )
    hits = index.search_truncated(cut)
    assert {index.entries[hit.entry].record_id for hit in hits} >= {"MGPU-COPY-WARPGROUP-BYTES"}
    current = next(h for h in hits if index.entries[h.entry].variant == "current")
    assert current.truncated
    assert current.captures == {"bytes": "32"}
    assert 0.5 < current.coverage < 1


def _cut_texts(texts: list[str], seed: int) -> list[str]:
    """Each text cut at random points, some behind other words or with the case changed."""
    rng = random.Random(seed)
    cuts = []
    for text in texts:
        for _ in range(4):
            cut = text[: rng.randint(len(text) // 3, len(text))]
            cuts.append(rng.choice(["", "log: ", "E   ", "copy bytes "]) + cut)
            cuts.append(cut.swapcase() if rng.random() < 0.3 else cut.lower())
    return cuts


def _naive_truncated(index: PatternIndex) -> Callable[[str], list[tuple[int, int, dict[str, str]]]]:
    """Every pattern tried as cut off at the end of a text, without any prefilter."""
    patterns = []
    for entry in range(len(index)):
        head = next((run for run in index.literals(entry) if len(run) >= MIN_HEAD), None)
        try:
            full = compile_bounded(index.pattern(entry))
            prefix = compile_bounded(f"(?:{prefix_pattern(parse(index.pattern(entry)))})\\z")
        except (SyntaxUnsupported, PatternError):
            continue
        if head is not None:
            patterns.append((entry, head[:HEAD_CHARS].lower(), full, prefix))

    def search(text: str) -> list[tuple[int, int, dict[str, str]]]:
        found = []
        for entry, head, full, prefix in patterns:
            match = prefix.search(text)
            if full.search(text) is not None or match is None:
                continue
            if head in text[match.start() :].lower():
                names = {i: n for n, i in match.re.groupindex.items()}
                groups = enumerate(match.groups(), start=1)
                captures = {names.get(i, str(i)): value for i, value in groups if value}
                found.append((entry, match.start(), captures))
        return found

    return search


@pytest.mark.parametrize("seed", [4, 5])
def test_truncated_reading_agrees_with_trying_every_pattern(seed: int) -> None:
    entries, texts = _corpus(300, seed)
    index = PatternIndex.build(entries)
    cuts = _cut_texts(texts[: len(FEATURE_TEXTS) + 12], seed)
    naive = _naive_truncated(index)
    found = 0
    expected = []
    for number, text in enumerate(cuts):
        hits = [(hit.entry, hit.start, hit.captures) for hit in index.search_truncated(text)]
        assert hits == naive(text), text
        found += bool(hits)
        expected += [(number, *hit) for hit in hits]
    assert found > 20  # the cuts do exercise truncated matches
    together = index.search_truncated_in(cuts)  # one pass over all, numbered by text
    assert [(hit.text, hit.entry, hit.start, hit.captures) for hit in together] == expected


def test_truncation_must_leave_the_head_of_the_message() -> None:
    assert catalog_index().search_truncated("Only copies tra") == []


def test_complete_message_is_not_a_truncated_match() -> None:
    assert catalog_index().search_truncated("Transfer is not a multiple of 128 bytes") == []


@pytest.mark.parametrize(
    "line",
    [
        "NotImplementedError: Unsupported memref slicing: offset 3 is not aligned to tiling (128)",
        "MosaicError: INTERNAL: Mosaic failed to compile TPU kernel: memref must be aligned to"
        " tiling (8, 128)",
        "ValueError: The Pallas TPU lowering currently requires that the last two dimensions of"
        " your block shape are divisible by 8 and 128 respectively",
        "CompilationError: the number of elements in a block must be a multiple of 128",
        "ValueError: block size must be a multiple of 128 (got 96)",
        "RuntimeError: Triton Error [CUDA]: misaligned address",
    ],
)
def test_tpu_and_triton_distractors_match_nothing(line: str) -> None:
    index = catalog_index()
    assert index.search([line]) == []
    assert index.search_truncated(line) == []
