"""Whole pastes, as people send them, drawn by hypothesis: log output, tracebacks of JAX's
frames and the user's, chat quoting, HTML, terminal colours, CRLF, junk Unicode, cut lines.
Whatever a paste holds, reading it never fails, and a known error on a line of its own is
found wherever it stands."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.matching.matcher import match_paste
from app.matching.normalize import UnreadablePaste

from .catalog import EXAMPLES, catalog_index

LOG_LINE = st.sampled_from(
    [
        "I1205 12:00:01.123 4567 compilation_cache.cc:80] Persistent cache miss",
        "2026-12-05 12:00:01 INFO train.py:88] step 100 loss=2.3012",
        "W1205 gpu_helpers.cc:12] shared memory of 4096 bytes is not optimal",
        "$ python train.py --config=configs/tiny.py",
        "Epoch 1/10",
        "",
    ]
)
JAX_FRAME = st.builds(
    '  File "/site-packages/jax/_src/pallas/{}.py", line {}, in {}\n    {}'.format,
    st.sampled_from(["mosaic_gpu/lowering", "mosaic/lowering", "pallas_call", "core"]),
    st.integers(1, 99_999),
    st.sampled_from(["lower_jaxpr", "_pallas_call_lowering", "wrapped"]),
    st.sampled_from(["return f(*args)", "raise ValueError(msg)", "out = fn(x)"]),
)
USER_FRAME = st.builds(
    '  File "/home/me/kernels/{}.py", line {}, in {}\n    {}'.format,
    st.sampled_from(["attention", "matmul", "train"]),
    st.integers(1, 2_000),
    st.sampled_from(["kernel", "main", "<module>"]),
    st.sampled_from(["out = pl.pallas_call(kernel, grid=(8,))(x)", "jax.jit(f)(x)"]),
)
TRACEBACK_HEAD = st.sampled_from(
    [
        "Traceback (most recent call last):",
        "jax.errors.SimplifiedTraceback: For simplicity, JAX has removed its internal frames",
        "The above exception was the direct cause of the following exception:",
        "During handling of the above exception, another exception occurred:",
    ]
)
# Anything but a line break: the tests count lines by "\n".
LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
JUNK = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00" + LINE_BREAKS),
    max_size=40,
)
LINE = st.one_of(LOG_LINE, JAX_FRAME, USER_FRAME, TRACEBACK_HEAD, JUNK)
KNOWN_ERRORS = [(rule_id, text) for rule_id, _, text, _ in EXAMPLES if "\n" not in text]


def _dressed(draw: st.DrawFn, line: str) -> str:
    """One line as some place shows it: quoted in chat, coloured, inside HTML, or cut."""
    dress = draw(st.sampled_from(["plain", "quote", "ansi", "html", "prompt", "cut"]))
    if dress == "quote":
        return "> " + line
    if dress == "ansi":
        return f"\x1b[31m{line}\x1b[0m"
    if dress == "html":
        return f"<div class='out'>{line.replace('&', '&amp;').replace('<', '&lt;')}</div>"
    if dress == "prompt":
        return "In [3]: " + line
    if dress == "cut":
        return line[: draw(st.integers(0, len(line)))]
    return line


@st.composite
def noise(draw: st.DrawFn) -> str:
    """Lines around an error: no exception line of their own (a junk line may look like one)."""
    lines = draw(st.lists(LINE, max_size=25))
    return "\n".join(_dressed(draw, line) for line in lines)


@st.composite
def pastes(draw: st.DrawFn) -> str:
    """A whole paste: noise with known errors, in any dress, joined by any line ending."""
    pieces = draw(st.lists(st.one_of(noise(), st.sampled_from(KNOWN_ERRORS)), max_size=6))
    lines = [
        piece if isinstance(piece, str) else _dressed(draw, f"ValueError: {piece[1]}")
        for piece in pieces
    ]
    return draw(st.sampled_from(["\n", "\r\n", "\r"])).join(lines)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pastes())
def test_any_paste_is_read_without_failing(paste: str) -> None:
    try:
        report = match_paste(paste, catalog_index())
    except UnreadablePaste:
        return
    lines = len(paste.splitlines()) or 1
    for match in report.matches:
        assert 1 <= match.line_number <= lines
        assert 0 <= match.score <= 1
    assert report.skipped_exceptions == 0


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(noise(), st.sampled_from(KNOWN_ERRORS), noise(), st.sampled_from(["\n", "\r\n"]))
def test_a_known_error_is_found_wherever_it_stands(
    before: str, known: tuple[str, str], after: str, newline: str
) -> None:
    rule_id, message = known
    paste = newline.join([before, f"ValueError: {message}", after])
    report = match_paste(paste, catalog_index())
    line = before.count("\n") + 2
    found = {
        record_id
        for match in report.matches
        for record_id in (match.record_id, *match.alternatives)
        if match.line_number == line
    }
    assert rule_id in found, [(m.record_id, m.line_number) for m in report.matches]
