from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.jaxref.regex_syntax import (
    SyntaxUnsupported,
    extend_trailing_lazy,
    parse,
    prefix_pattern,
    render,
    required_literals,
)
from app.jaxref.templates import derive_pattern

from .catalog import WORDED

# --- a generator of (pattern, text the pattern matches) pairs ----------------------------

_WORD = st.text(alphabet="abcxyz .:=", min_size=1, max_size=6)


def _literal() -> st.SearchStrategy[tuple[str, str]]:
    return _WORD.map(lambda text: (re.escape(text).replace("\\ ", " "), text))


def _digits() -> st.SearchStrategy[tuple[str, str]]:
    return st.integers(0, 999).map(lambda n: (r"\d+", str(n)))


def _class() -> st.SearchStrategy[tuple[str, str]]:
    return st.sampled_from([("[ab]", "a"), ("[^x]", "q"), (".", "z"), (r"\w", "k")])


def _extend(children: st.SearchStrategy[tuple[str, str]]) -> st.SearchStrategy[tuple[str, str]]:
    sequence = st.lists(children, min_size=1, max_size=4).map(
        lambda parts: ("".join(p for p, _ in parts), "".join(t for _, t in parts))
    )
    group = st.tuples(st.sampled_from(["(", "(?:", "(?P<g>"]), children).map(
        lambda pair: (pair[0] + pair[1][0] + ")", pair[1][1])
    )
    optional = st.tuples(children, st.booleans()).map(
        lambda pair: (f"(?:{pair[0][0]})?", pair[0][1] if pair[1] else "")
    )
    repeated = st.tuples(children, st.integers(1, 3), st.sampled_from(["+", "*", "{1,3}"])).map(
        lambda t: (f"(?:{t[0][0]}){t[2]}", t[0][1] * t[1])
    )
    alternation = st.tuples(children, children, st.booleans()).map(
        lambda t: (f"(?:{t[0][0]}|{t[1][0]})", t[0][1] if t[2] else t[1][1])
    )
    return st.one_of(sequence, group, optional, repeated, alternation)


PAIRS = st.recursive(st.one_of(_literal(), _digits(), _class()), _extend, max_leaves=12).map(
    lambda pair: (_unique_names(pair[0]), pair[1])
)


def _unique_names(pattern: str) -> str:
    counter = iter(range(1000))
    return re.sub(r"\(\?P<g>", lambda _: f"(?P<g{next(counter)}>", pattern)


@settings(max_examples=300, deadline=None)
@given(PAIRS)
def test_required_literals_occur_in_every_match(pair: tuple[str, str]) -> None:
    pattern, text = pair
    assert re.fullmatch(pattern, text, re.DOTALL)
    for literal in required_literals(pattern):
        assert literal in text


@settings(max_examples=300, deadline=None)
@given(PAIRS)
def test_render_reproduces_the_pattern(pair: tuple[str, str]) -> None:
    assert render(parse(pair[0])) == pair[0]


@settings(max_examples=200, deadline=None)
@given(PAIRS, st.data())
def test_prefix_pattern_accepts_every_prefix(pair: tuple[str, str], data: st.DataObject) -> None:
    pattern, text = pair
    cut = data.draw(st.integers(0, len(text)))
    assert re.fullmatch(prefix_pattern(parse(pattern)), text[:cut], re.DOTALL)


@pytest.mark.parametrize("rule", WORDED, ids=lambda rule: rule["rule_id"])
def test_catalog_patterns_round_trip(rule: dict[str, str]) -> None:
    pattern = derive_pattern(rule["template"])
    assert render(parse(pattern)) == pattern
    assert max(required_literals(pattern), key=len)


@pytest.mark.parametrize(
    ("pattern", "literals"),
    [
        (r"(abc)?def", ["def"]),
        (r"(a|b)cd", ["cd"]),
        (r"a|bc", []),
        (r"x(?:ab(cd)?ef)gh", ["x", "ab", "ef", "gh"]),
        (r"abc\.?d", ["abc", "d"]),
        (r"^abc$", ["abc"]),
        (r"a(?i)bc", ["abc"]),
        (r"\x{41}\x42 [x]y", ["AB ", "y"]),
        (r"x\Qa.b\Ey", ["xa.by"]),
        (r"hello\d+world", ["hello", "world"]),
    ],
)
def test_required_literals(pattern: str, literals: list[str]) -> None:
    assert required_literals(pattern) == literals


def test_extend_trailing_lazy_only_touches_the_end() -> None:
    pattern = r"Got (.+?) but size is (.+?)"
    assert render(extend_trailing_lazy(parse(pattern))) == r"Got (.+?) but size is (.+)"
    assert render(extend_trailing_lazy(parse(r"(a+?)b"))) == r"(a+?)b"


@pytest.mark.parametrize("pattern", [r"(abc", r"abc)", r"a\1", r"*a", r"[abc"])
def test_unsupported_syntax_is_reported(pattern: str) -> None:
    with pytest.raises(SyntaxUnsupported):
        parse(pattern)
