"""A paste's reading is bounded by caps, not by how often the paste repeats itself."""

from __future__ import annotations

import importlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.matching import tracebacks
from app.matching.matcher import MAX_EXCEPTIONS_READ, match_paste
from app.matching.normalize import HTML_SEARCH_PIECE, normalize
from app.matching.tracebacks import MAX_BULK_CHARS, read_exceptions

from .catalog import EXAMPLES, catalog_index

RULE_ID, _, KNOWN, _ = EXAMPLES[0]
# The module, not the function the package exports under its name.
normalize_module = importlib.import_module("app.matching.normalize")
UNKNOWN = "ValueError: nothing errata knows, number {n}"


def _lines(count: int) -> list[str]:
    return [UNKNOWN.format(n=n) for n in range(count)]


def test_only_the_last_exceptions_are_read_and_the_rest_are_counted() -> None:
    extra = 40
    paste = "\n".join(
        [f"ValueError: {KNOWN}", *_lines(MAX_EXCEPTIONS_READ + extra - 2), f"ValueError: {KNOWN}"]
    )
    report = match_paste(paste, catalog_index())
    assert len(report.exceptions) == MAX_EXCEPTIONS_READ
    assert report.skipped_exceptions == extra
    # The known error on the last line is read; the one on the first line is skipped, and its
    # line is not read again as a loose line either.
    assert [m.line_number for m in report.matches] == [MAX_EXCEPTIONS_READ + extra]
    assert RULE_ID in (report.matches[0].record_id, *report.matches[0].alternatives)


def test_a_paste_under_the_cap_skips_nothing() -> None:
    paste = "\n".join([f"ValueError: {KNOWN}", *_lines(MAX_EXCEPTIONS_READ - 1)])
    report = match_paste(paste, catalog_index())
    assert report.skipped_exceptions == 0
    assert len(report.exceptions) == MAX_EXCEPTIONS_READ
    assert [m.line_number for m in report.matches] == [1]


def test_an_html_tag_across_the_pieces_searched_is_found() -> None:
    for before in range(HTML_SEARCH_PIECE - 8, HTML_SEARCH_PIECE + 1):
        paste = "x" * before + "<span class='e'>ValueError: y</span>\n"
        assert normalize(paste).lines[0].endswith("xValueError: y"), before


@given(st.text(alphabet="<>/bpa x\n", max_size=60), st.integers(1, 12))
def test_html_is_found_in_pieces_as_in_one_search(text: str, piece: int) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(normalize_module, "HTML_SEARCH_PIECE", piece)
        found = normalize_module._holds_html(text)
    assert found is (normalize_module._HTML_TAG.search(text) is not None)


def test_frames_read_in_bulk_passes_read_as_one_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    frame = '  File "/site-packages/jax/_src/pallas/core.py", line {n}, in f\n    y = x\n'
    frames = "".join(frame.format(n=n) for n in range(3 * MAX_BULK_CHARS // len(frame)))
    lines = f"Traceback (most recent call last):\n{frames}ValueError: {KNOWN}".splitlines()
    pieces = read_exceptions(lines)
    monkeypatch.setattr(tracebacks, "MAX_BULK_CHARS", 1 << 30)
    assert pieces == read_exceptions(lines)
    assert len(pieces.exceptions) == 1 and len(pieces.structure) == len(lines) - 1
