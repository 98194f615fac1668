from __future__ import annotations

import importlib
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.matching.normalize import (
    MAX_PASTE_BYTES,
    PasteTooLarge,
    UnreadablePaste,
    normalize,
    paste_text,
)
from app.matching.tracebacks import read_exceptions

from .catalog import TRACEBACK_LINES

# The module itself: ``app.matching`` exports its ``normalize`` function under that name.
normalize_module = importlib.import_module("app.matching.normalize")
MESSAGE = "ValueError: Can only transfer integer bytes (shape=[7], dtype=i4)"


def lines(text: str) -> list[str]:
    return list(normalize(text).lines)


@pytest.mark.parametrize(
    ("pasted", "cleaned"),
    [
        ("\x1b[0;31mValueError\x1b[0m: Can only transfer", "ValueError: Can only transfer"),
        ("\x1b[38;5;241m=\x1b[39m", "="),
        ("[0;31mValueError[0m: x", "ValueError: x"),  # colour codes that lost their ESC
        ("memref&lt;7xi4&gt; &amp; more", "memref<7xi4> & more"),
        ("&gt; quoted line", "quoted line"),
        ("> > nested quote", "nested quote"),
        (">>> prompt stays", ">>> prompt stays"),
        ("*ValueError*: bold and **bold** too", "ValueError: bold and bold too"),
        ("a * b * c and x**2", "a * b * c and x**2"),
        ("assert failed: !*(it - 1) || !*(it - 2)", "assert failed: !*(it - 1) || !*(it - 2)"),
        ("(*bold*) and ~*struck*~", "(bold) and ~struck~"),
        ("see <https://example.com/x|the docs>", "see the docs"),
        ("`ValueError: inline code`", "ValueError: inline code"),
        ("```ValueError: fenced on one line```", "ValueError: fenced on one line"),
        ("2026-08-27T09:53:25.647Z ERROR ValueError: x", "ValueError: x"),
        ("[2026-08-27 09:53:25,647] WARNING: ValueError: x", "ValueError: x"),
        ("E0827 09:53:25.647000 12345 re2.cc:242] text", "text"),
        ("ERROR:root:Traceback (most recent call last):", "Traceback (most recent call last):"),
        ("[stderr] ValueError: x", "ValueError: x"),
        ("(pid=4242) ValueError: x", "ValueError: x"),
        ("(EngineCore_DP0 pid=4) ERROR 11-20 23:44:40 [core.py:843]   File", "  File"),
        ("INFO 01-07 22:51:20.512 [__init__.py:239] text", "text"),
        ("E   ValueError: x", "ValueError: x"),
        ("E       ValueError: x", "ValueError: x"),  # pytest, under an indented source line
        ("\tFile here\t", "    File here"),
        ("non\u00a0breaking\u200bspace", "non breakingspace"),
        (
            "memref<32xf32, strided<[1], offset: ?>, #gpu.address_space<workgroup>>",
            "memref<32xf32, strided<[1], offset: ?>, #gpu.address_space<workgroup>>",
        ),
    ],
)
def test_cleaning(pasted: str, cleaned: str) -> None:
    assert lines(pasted) == [cleaned]


def test_prefixes_nest() -> None:
    assert lines("> 2026-08-27T09:53:25Z [stderr] E   ValueError: x") == ["ValueError: x"]


def test_code_fences_are_left_blank_and_lines_keep_their_numbers() -> None:
    paste = normalize("intro\n```python\nValueError: x\n```\nafter")
    assert paste.lines == ("intro", "", "ValueError: x", "", "after")
    assert paste.origins == (1, 2, 3, 4, 5)
    assert paste.original_line(2) == "ValueError: x"


def test_a_fence_typed_short_ends_its_block_too() -> None:
    """jax#20168 closed its block with two backticks, read until then as the message's tail."""
    paste = normalize("```\nNotImplementedError: x.\n``\nthanks")
    assert paste.lines == ("", "NotImplementedError: x.", "", "thanks")


def test_crlf_and_cr_line_breaks() -> None:
    paste = normalize("one\r\ntwo\rthree\nfour")
    assert paste.lines == ("one", "two", "three", "four")
    assert paste.origins == (1, 2, 3, 4)


def test_html_breaks_split_lines_but_keep_the_pasted_line_number() -> None:
    paste = normalize("<pre>Traceback (most recent call last):<br>" + MESSAGE + "</pre>")
    assert paste.lines[:2] == ("Traceback (most recent call last):", MESSAGE)
    assert paste.origins[:2] == (1, 1)


def test_html_tags_only_stripped_from_html() -> None:
    assert lines("<b>" + MESSAGE + "</b>") == [MESSAGE]
    # Not HTML: angle brackets belong to the message.
    assert lines("got <bytes> and i<4>") == ["got <bytes> and i<4>"]


def test_size_limit() -> None:
    normalize("x" * MAX_PASTE_BYTES)
    with pytest.raises(PasteTooLarge):
        normalize("x" * (MAX_PASTE_BYTES + 1))
    with pytest.raises(PasteTooLarge):
        normalize("é" * (MAX_PASTE_BYTES // 2 + 1))  # counted in UTF-8 bytes


@pytest.mark.parametrize(
    "paste",
    ["", "   \n\t\n", "\x1b[0m\x1b[31m", "ab\x00cd", b"\x89PNG\r\n\x1a\n\x00\x00", "\x01\x02\x03x"],
)
def test_unreadable(paste: str | bytes) -> None:
    with pytest.raises(UnreadablePaste):
        normalize(paste)


def test_bytes_and_lone_surrogates_are_read() -> None:
    assert lines(MESSAGE.encode()) == [MESSAGE]
    assert lines("bad \ud800 surrogate") == ["bad \ufffd surrogate"]


@settings(max_examples=400, deadline=None)
@given(st.text(max_size=400) | st.binary(max_size=400))
def test_normalize_and_read_never_crash(paste: str | bytes) -> None:
    try:
        normalized = normalize(paste)
    except UnreadablePaste:
        return
    assert len(normalized.lines) == len(normalized.origins)
    assert all(1 <= origin <= len(normalized.original) for origin in normalized.origins)
    reading = read_exceptions(normalized.lines)
    for record in reading.exceptions:
        assert 0 <= record.line < len(normalized.lines)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(TRACEBACK_LINES), max_size=40))
def test_grammar_survives_shuffled_traceback_lines(pasted: list[str]) -> None:
    text = "\n".join(pasted)
    if not text.strip():
        return
    reading = read_exceptions(normalize(text).lines)
    positions: dict[int, list[int]] = {}
    for record in reading.exceptions:
        positions.setdefault(record.chain, []).append(record.chain_position)
    assert all(found == list(range(len(found))) for found in positions.values())


_PLAIN_PIECES = [
    "2026-08-27T09:53:25.647Z ",
    "[2026-08-27 09:53:25,647] WARNING: ",
    "INFO ",
    "E0827 09:53:25.647000 12345 re2.cc:242] ",
    "ERROR:root:",
    "[stderr] ",
    "Stdout | ",
    "(MyActor pid=4242, ip=10.0.0.1) ",
    "ERROR 11-20 23:44:40 [core.py:843] ",
    "E   ",
    "E",
    "> ",
    "  > ",
    ">>> ",
    "*bold*",
    "**kw",
    "x**2",
    "<https://example.com|docs>",
    "<module>",
    "`code`",
    "```",
    "~~~",
    "&amp;",
    "&",
    " ",
    "   ",
    "1",
    "(",
    "[",
    "ValueError: Can only transfer integer bytes",
    '  File "a.py", line 3, in f',
    "Traceback (most recent call last):",
]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.lists(st.sampled_from(_PLAIN_PIECES), max_size=5).map("".join), max_size=12))
def test_the_plain_text_path_cleans_exactly_as_the_line_by_line_one(pasted: list[str]) -> None:
    text = "\n".join(pasted)
    if not text.strip():
        return
    fast = normalize(text)
    with pytest.MonkeyPatch.context() as patch:
        decode = normalize_module._decode
        patch.setattr(normalize_module, "_decode", lambda p: decode(p)._replace(plain=False))
        general = normalize(text)
    assert (fast.lines, fast.origins) == (general.lines, general.origins)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PLAIN_PIECES), max_size=6).map("".join))
def test_one_match_strips_nested_prefixes_as_stripping_one_at_a_time_does(line: str) -> None:
    expected = line
    for _ in range(8):
        found = next(
            (f for p in normalize_module._PREFIXES if (f := p.match(expected)) is not None), None
        )
        if found is None:
            break
        expected = expected[found.end() :]
    assert normalize_module._strip_prefixes(line) == expected


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="*ab _(),\n", max_size=30))
def test_every_bold_match_has_the_closing_the_quick_test_looks_for(text: str) -> None:
    if normalize_module._BOLD.search(text) is not None:
        assert normalize_module._BOLD_CLOSING.search(text) is not None


def test_a_pastes_bytes_are_utf_8_text_without_nul_or_say_which_they_are_not() -> None:
    assert paste_text("ValueError: é\n".encode()) == "ValueError: é\n"
    for data, said in (
        (b"Value\xc3Error", "not UTF-8 text (byte 5 is 0xc3)"),
        (b"ValueError:\x00", "binary data, not a paste"),
        (b"\xff\x00", "binary data, not a paste"),
    ):
        with pytest.raises(UnreadablePaste, match=re.escape(said)):
            paste_text(data)
