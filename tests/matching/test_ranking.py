"""Each ranking criterion on its own: two candidates for one message that differ only in
what the criterion looks at, which it orders, and which no criterion before it tells apart."""

from __future__ import annotations

import re
from collections.abc import Mapping

import pytest

from app.matching.frames import Frame
from app.matching.index import Hit, PatternEntry, PatternIndex
from app.matching.matcher import match_paste
from app.matching.normalize import normalize
from app.matching.ranking import (
    RANKING,
    PasteContext,
    RankingContext,
    deciding_criterion,
    modules_named,
    preference,
)
from app.matching.report import Candidate

MESSAGE = "Unsupported bitcast of an int4 array to float32 in memory space SMEM"
PATTERN = (
    r"Unsupported bitcast of an (?P<dtype>\w+) array to (?P<to>\w+) in memory space (?P<space>\w+)"
)


def index_of(*entries: tuple[str, str, str, Mapping[str, str]]) -> PatternIndex:
    """An index of ``(record_id, pattern, variant, metadata)`` entries, all of which read
    ``MESSAGE``."""
    index = PatternIndex.build([PatternEntry(*entry) for entry in entries])
    assert len(index.entries) == len(entries)
    return index


def two_records(
    a: Mapping[str, str] | None = None, b: Mapping[str, str] | None = None
) -> PatternIndex:
    """Records ``A`` and ``B`` printing the same words, with their metadata."""
    return index_of(("A", PATTERN, "current", a or {}), ("B", PATTERN, "current", b or {}))


def candidate(
    entry: int,
    *,
    lead_in: str = "",
    score: float = 0.85,
    caller: Frame | None = None,
) -> Candidate:
    """A fit of entry ``entry`` to ``MESSAGE`` on a line of its own, after ``lead_in``."""
    text = lead_in + MESSAGE
    hit = Hit(entry, 0, {}, len(lead_in), len(text))
    return Candidate(("line", 0), hit, 0, None, text, score, caller=caller)


def assert_orders(name: str, better: Candidate, worse: Candidate, context: RankingContext) -> None:
    """``name`` is the criterion that puts ``better`` before ``worse``."""
    criterion = deciding_criterion(better, worse, context)
    assert criterion is not None
    assert criterion.name == name
    assert criterion.key(better, context) < criterion.key(worse, context)
    assert deciding_criterion(worse, better, context) is criterion
    assert preference(better, context) < preference(worse, context)
    ranked = sorted([worse, better], key=lambda c: preference(c, context))
    assert ranked == [better, worse]


def test_raising_frame() -> None:
    context = RankingContext(two_records(), raised_here={"B"}, several=True)
    assert_orders("raising-frame", candidate(1), candidate(0), context)


def test_quoted_statement() -> None:
    context = RankingContext(two_records(), several=True, quoted=frozenset({"B"}))
    assert_orders("quoted-statement", candidate(1), candidate(0), context)


def test_class_module() -> None:
    index = two_records(
        {"file": "jax/_src/pallas/mosaic/lowering.py"},
        {"file": "jax/_src/pallas/triton/lowering.py"},
    )
    lead_in = "jax._src.pallas.triton.lowering.TritonLoweringException: "
    better, worse = candidate(1, lead_in=lead_in), candidate(0, lead_in=lead_in)
    context = RankingContext(index, several=True, defined=modules_named([better, worse]))
    assert_orders("class-module", better, worse, context)


def test_printed_class() -> None:
    index = two_records(
        {"exception_class": "LoweringException"}, {"exception_class": "TritonLoweringException"}
    )
    lead_in = "TritonLoweringException: "
    context = RankingContext(index, several=True)
    assert_orders(
        "printed-class", candidate(1, lead_in=lead_in), candidate(0, lead_in=lead_in), context
    )


def test_surest() -> None:
    context = RankingContext(two_records())
    assert_orders("surest", candidate(0, score=0.95), candidate(0, score=0.85), context)


def test_most_literal() -> None:
    wilder = r"Unsupported bitcast of an (?P<dtype>\w+) array to (?P<to>\w+) in (?P<where>.+)"
    index = index_of(("A", wilder, "current", {}), ("B", PATTERN, "current", {}))
    context = RankingContext(index, several=True)
    assert_orders("most-literal", candidate(1), candidate(0), context)


def test_paste_release() -> None:
    context = RankingContext(two_records(), several=True, outside=lambda record: record == "A")
    assert_orders("paste-release", candidate(1), candidate(0), context)


def test_curated() -> None:
    index = two_records({"curated": "false"}, {})
    context = RankingContext(index, several=True)
    assert_orders("curated", candidate(1), candidate(0), context)


def test_shown_backend() -> None:
    index = two_records(
        {"file": "jax/_src/pallas/mosaic_gpu/primitives.py"},
        {"file": "jax/_src/pallas/triton/primitives.py"},
    )
    context = RankingContext(index, several=True, backends=frozenset({"core", "triton"}))
    assert_orders("shown-backend", candidate(1), candidate(0), context)


def test_outermost_call() -> None:
    outer = Frame("jax/_src/pallas/mosaic_gpu/pallas_call_registration.py", 90, "kernel", 3)
    inner = Frame("jax/_src/pallas/primitives.py", 880, "run_scoped", 9)
    context = RankingContext(two_records())
    assert_orders("outermost-call", candidate(0, caller=outer), candidate(0, caller=inner), context)


def test_current_wording() -> None:
    index = index_of(("A", PATTERN, "older wording (0.4.31)", {}), ("A", PATTERN, "current", {}))
    context = RankingContext(index)
    assert_orders("current-wording", candidate(1), candidate(0), context)


def test_shortest_pattern() -> None:
    longer = PATTERN.replace(r"(?P<space>\w+)", r"(?P<space>[A-Za-z0-9_]+)")
    index = index_of(("A", longer, "current", {}), ("B", PATTERN, "current", {}))
    assert index.literals(0) == index.literals(1)
    context = RankingContext(index, several=True)
    assert_orders("shortest-pattern", candidate(1), candidate(0), context)


def test_newest_release() -> None:
    ranks = {"A": 1, "B": 2}
    context = RankingContext(two_records(), several=True, newest=ranks.__getitem__)
    assert_orders("newest-release", candidate(1), candidate(0), context)


def test_every_criterion_is_named_explained_and_tested() -> None:
    names = [criterion.name for criterion in RANKING]
    assert names == [
        "raising-frame",
        "quoted-statement",
        "class-module",
        "printed-class",
        "surest",
        "most-literal",
        "paste-release",
        "curated",
        "shown-backend",
        "outermost-call",
        "current-wording",
        "shortest-pattern",
        "newest-release",
    ]
    for criterion in RANKING:
        assert re.fullmatch(r"[a-z]+(?:-[a-z]+)*", criterion.name)
        assert criterion.why.endswith(".") and ". " not in criterion.why
        assert callable(globals().get(f"test_{criterion.name.replace('-', '_')}"))


def test_candidates_alike_in_all_are_decided_by_none() -> None:
    context = RankingContext(two_records(), several=True)
    assert deciding_criterion(candidate(0), candidate(0), context) is None


def never() -> frozenset[str]:
    raise AssertionError("worked out for a message that fits one record")


def paste_context(index: PatternIndex) -> PasteContext:
    """A paste of ``MESSAGE`` whose facts telling records apart must not be asked for."""
    return PasteContext(index, normalize(MESSAGE), None, None, {}, never, never, never)


def test_a_message_fitting_one_record_leaves_what_tells_records_apart_unread() -> None:
    index = index_of(("A", PATTERN, "current", {}), ("A", PATTERN, "older wording (0.4.31)", {}))
    rivals = paste_context(index).rivals(("line", 0), [candidate(0), candidate(1)])
    assert rivals == RankingContext(index)


@pytest.mark.parametrize("raised", [set(), {"B"}])
def test_a_message_fitting_several_records_reads_the_paste(raised: set[str]) -> None:
    index = two_records()
    context = PasteContext(
        index,
        normalize(MESSAGE),
        None,
        None,
        {("line", 0): raised},
        lambda: frozenset({"A"}),
        lambda: frozenset({"core"}),
        frozenset,
    )
    rivals = context.rivals(("line", 0), [candidate(0), candidate(1)])
    assert rivals.several and rivals.raised_here == raised
    assert rivals.quoted == {"A"} and rivals.backends == {"core"}
    expected = "raising-frame" if raised else "quoted-statement"
    winner, loser = (candidate(1), candidate(0)) if raised else (candidate(0), candidate(1))
    assert_orders(expected, winner, loser, rivals)


def test_a_match_names_the_criterion_that_ranked_it_first() -> None:
    literal = PATTERN.replace(r"(?P<to>\w+)", "float32")
    index = index_of(("A", PATTERN, "current", {}), ("B", literal, "current", {}))
    [match] = match_paste(f"ValueError: {MESSAGE}", index).matches
    assert (match.record_id, match.alternatives) == ("B", ("A",))
    assert match.ranked_by == "most-literal"


def test_a_match_no_other_record_fits_names_no_criterion() -> None:
    index = index_of(("A", PATTERN, "current", {}))
    [match] = match_paste(f"ValueError: {MESSAGE}", index).matches
    assert match.ranked_by is None
