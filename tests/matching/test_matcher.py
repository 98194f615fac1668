from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.matching.frames import FrameIndex
from app.matching.index import PatternEntry, PatternIndex
from app.matching.matcher import match_paste
from app.matching.normalize import UnreadablePaste
from app.matching.report import Match, MatchReport

from .catalog import (
    EXAMPLES,
    PASTES,
    PYTEST_LONG,
    SEED_001,
    TRACEBACKS,
    catalog_index,
    fixture_text,
)

RULE_FIXTURES = sorted(TRACEBACKS.glob("MGPU-*.txt"))
OTHER_FIXTURES = sorted(p for p in TRACEBACKS.glob("*.txt") if not p.name.startswith("MGPU-"))
# What each real traceback's message says, by rule.
FIXTURE_VALUES = {
    "MGPU-ALIAS-BYTE-ALIGNED-BITCAST": {},
    "MGPU-COPY-INTEGER-BYTES": {"shape": [7], "dtype": "int4", "bits": 28},
    "MGPU-COPY-WARPGROUP-BYTES": {"bytes": 32, "bits": 256},
    "MGPU-DTYPE-BITCAST-REGION": {"bits": 24},
    "MGPU-REFUNION-BYTE-ALIGNED-SHAPES": {"shape": [7], "dtype": "int4", "bits": 28},
    "MGPU-TMA-BOX-256": {"shape": [512]},
    "MGPU-TMA-GMEM-STRIDES-16B": {},
    "MGPU-TMA-LASTDIM-128BITS": {},
    "MGPU-WGSTRIDED-ELEMENT-MULTIPLE": {"shape": [32], "dtype": "float32", "memory_space": "smem"},
}


def rule_of(path: Path) -> str:
    return re.sub(r"-(verbose|formatted|pytest|pytest-short)$", "", path.stem)


def only_match(report: MatchReport) -> Match:
    assert len(report.matches) == 1, [(m.record_id, m.line_number) for m in report.matches]
    return report.matches[0]


def colour(text: str) -> str:
    """What a terminal or IPython paste looks like before its colours are stripped."""
    return "\n".join(f"\x1b[0;31m{line}\x1b[0m\x1b[38;5;241m\x1b[39m" for line in text.split("\n"))


# --- the catalog's own examples ----------------------------------------------------------


@pytest.mark.parametrize(("rule_id", "template", "text", "captures"), EXAMPLES)
def test_rendered_example_as_a_lone_line(
    rule_id: str, template: str, text: str, captures: dict[str, str]
) -> None:
    match = only_match(match_paste(text, catalog_index()))
    assert rule_id in (match.record_id, *match.alternatives)
    if match.record_id == rule_id:
        assert match.captures == captures
    assert match.chain_position is None
    assert match.line_number == 1


@pytest.mark.parametrize(("rule_id", "template", "text", "captures"), EXAMPLES)
def test_rendered_example_with_its_class(
    rule_id: str, template: str, text: str, captures: dict[str, str]
) -> None:
    match = only_match(match_paste(f"ValueError: {text}\n", catalog_index()))
    assert rule_id in (match.record_id, *match.alternatives)
    assert match.chain_position == 0


# --- real JAX tracebacks -----------------------------------------------------------------


@pytest.mark.parametrize("path", RULE_FIXTURES, ids=lambda path: path.name)
@pytest.mark.parametrize("dress", [str, colour], ids=["plain", "ansi"])
def test_real_traceback(path: Path, dress: object) -> None:
    text = fixture_text(path)
    report = match_paste(dress(text), catalog_index())  # type: ignore[operator]
    match = report.matches[0]
    rule_id = rule_of(path)
    assert match.record_id == rule_id
    assert match.chain_position == 0
    assert match.score == 1.0
    assert [m.record_id for m in report.matches].count(rule_id) == 1  # printed twice, one match
    pasted = text.split("\n")[match.line_number - 1]
    assert match.normalized_line in pasted
    for key, expected in FIXTURE_VALUES.get(rule_id, {}).items():
        assert getattr(match.values, key) == expected, key
    # Only JAX's verbose wrapper is left over (trace-time errors have none).
    assert all(e.short_class == "LoweringError" for e in report.unmatched)


# Real tracebacks with the message as older JAX releases worded it.
OLDER_WORDINGS = [
    (
        "MGPU-COPY-WARPGROUP-BYTES",
        "Only copies transferring a number of bytes divisible by the warpgroup size are supported."
        " Got bytes=32 but warpgroup size is 128",
        "Only aligned copies are supported",
        "older wording 1",
    ),
    (
        "MGPU-COPY-WARPGROUP-BYTES",
        "Only copies transferring a number of bytes divisible by the warpgroup size are supported."
        " Got bytes=32 but warpgroup size is 128",
        "Only copies transferring a number of bytes divisible by the warpgroup size are supported",
        "older wording 2",
    ),
    (
        "MGPU-WGSTRIDED-ELEMENT-MULTIPLE",
        "memref<32xf32, strided<[1], offset: ?>, #gpu.address_space<workgroup>> must have",
        "Ref must have",
        "older wording 2",
    ),
    (
        "MGPU-TMA-LASTDIM-128BITS",
        "number of bits copied along the last dimension to be divisible by 128, but got 96",
        "number of bytes copied along the last dimension to be divisible by 16, but got 12",
        "older wording 1",
    ),
    (
        "MGPU-TMA-BOX-256",
        "along each dimension, got (512,)",
        "along each dimension",
        "older wording 1",
    ),
]


@pytest.mark.parametrize(("rule_id", "current", "older", "variant"), OLDER_WORDINGS)
def test_real_traceback_with_an_older_wording(
    rule_id: str, current: str, older: str, variant: str
) -> None:
    text = fixture_text(TRACEBACKS / f"{rule_id}.txt")
    assert current in text
    match = only_match(match_paste(text.replace(current, older), catalog_index()))
    assert (match.record_id, match.variant, match.score) == (rule_id, variant, 1.0)


def test_verbose_error_infers_the_missing_buffer() -> None:
    text = fixture_text(TRACEBACKS / "MGPU-COPY-WARPGROUP-BYTES-verbose.txt")
    match = match_paste(text, catalog_index()).matches[0]
    assert match.values.bytes == 32
    assert (match.values.shape, match.values.dtype) == ([1, 8], "float32")
    assert match.values.memory_space == "smem"
    assert "shape" in match.values.inferred and "bytes" not in match.values.inferred


@pytest.mark.parametrize("path", OTHER_FIXTURES, ids=lambda path: path.name)
def test_errors_outside_the_catalog_match_nothing(path: Path) -> None:
    report = match_paste(fixture_text(path), catalog_index())
    assert report.matches == ()
    assert report.unmatched and report.unmatched[0].chain_position == 0


# --- how people paste --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "rule_id", "line_number", "values"),
    [
        (
            "ipython-warpgroup-ansi.txt",
            "MGPU-COPY-WARPGROUP-BYTES",
            43,
            {"bytes": 32, "shape": [8], "dtype": "float32"},
        ),
        (
            "slack-refunion.txt",
            "MGPU-REFUNION-BYTE-ALIGNED-SHAPES",
            7,
            {"shape": [7], "dtype": "int4"},
        ),
        (
            "html-dashboard-wgstrided.html",
            "MGPU-WGSTRIDED-ELEMENT-MULTIPLE",
            6,
            {"shape": [32], "memory_space": "smem"},
        ),
        ("markdown-issue-copy-int4.md", "MGPU-COPY-INTEGER-BYTES", 20, {"shape": [7]}),
        ("pytest-tma-box.txt", "MGPU-TMA-BOX-256", 16, {"shape": [512], "dtype": "float32"}),
        (
            "log-warpgroup-oldest-wording.txt",
            "MGPU-COPY-WARPGROUP-BYTES",
            19,
            {"shape": [8], "dtype": "float32", "bytes": 32},
        ),
        ("terminal-wrapped-message.txt", "MGPU-COPY-WARPGROUP-BYTES", 4, {"bytes": 96}),
    ],
)
def test_pastes(name: str, rule_id: str, line_number: int, values: dict[str, object]) -> None:
    match = only_match(match_paste(fixture_text(PASTES / name), catalog_index()))
    assert (match.record_id, match.line_number) == (rule_id, line_number)
    for key, expected in values.items():
        assert getattr(match.values, key) == expected, key


def test_a_coloured_paste_is_shown_back_without_its_colour_codes() -> None:
    match = only_match(
        match_paste(fixture_text(PASTES / "ipython-warpgroup-ansi.txt"), catalog_index())
    )
    assert "\x1b" not in match.matched_line and "[0m" not in match.matched_line
    assert match.matched_line.lstrip().startswith("NotImplementedError: Only copies")


def test_oldest_wording_says_what_it_inferred() -> None:
    text = fixture_text(PASTES / "log-warpgroup-oldest-wording.txt")
    match = only_match(match_paste(text, catalog_index()))
    assert match.variant == "older wording 1"
    assert match.captures == {}
    assert {"shape", "dtype", "bytes"} <= set(match.values.inferred)


def test_exception_group_reports_each_member() -> None:
    report = match_paste(fixture_text(PASTES / "exception-group.txt"), catalog_index())
    assert [m.record_id for m in report.matches] == [
        "MGPU-COPY-INTEGER-BYTES",
        "MGPU-SWIZZLE-VALUE",
    ]
    assert report.matches[0].alternatives == ("MGPU-ASYNC-STORE-INTEGER-BYTES",)
    assert [e.short_class for e in report.unmatched] == ["ExceptionGroup"]


def test_truncated_message_in_a_dashboard_table() -> None:
    text = fixture_text(PASTES / "dashboard-table-truncated.txt")
    match = only_match(match_paste(text, catalog_index()))
    assert match.record_id == "MGPU-COPY-WARPGROUP-BYTES"
    assert match.truncated
    assert 0.3 < match.score < 0.85
    assert match.line_number == 2


def test_truncated_exception_scores_below_a_full_one() -> None:
    cut = (
        "NotImplementedError: Only copies transferring a number of bytes divisible by the"
        " warpgroup size are supported. Got bytes=96 but warp…"
    )
    match = only_match(match_paste(cut, catalog_index()))
    assert match.truncated
    assert match.captures == {"bytes": "96"}
    assert match.values.bytes == 96
    assert match.score < 0.95


def test_each_cut_message_is_read_on_its_own_line() -> None:
    """Messages cut off part-way are searched together, past those matched in full."""
    paste = "\n".join(
        [
            "ValueError: Can only transfer integer bytes (shape=[7], dtype=i4)",
            "",
            "NotImplementedError: Only copies transferring a number of bytes divisible by the"
            " warpgroup size are supported. Got bytes=96 but warp…",
            "",
            "ValueError: Can only transfer integer bytes (shape=[5], dty…",
        ]
    )
    found = [
        (m.record_id, m.line_number, m.found_in, m.captures)
        for m in match_paste(paste, catalog_index()).matches
    ]
    assert sorted(found) == [
        ("MGPU-COPY-INTEGER-BYTES", 1, "exception message", {"shape": "[7]", "dtype": "i4"}),
        ("MGPU-COPY-INTEGER-BYTES", 5, "cut message", {"shape": "[5]"}),
        ("MGPU-COPY-WARPGROUP-BYTES", 3, "cut message", {"bytes": "96"}),
    ]


def test_distractors_match_nothing() -> None:
    report = match_paste(fixture_text(PASTES / "distractors-tpu-triton.txt"), catalog_index())
    assert report.matches == ()
    assert len(report.unmatched) == 8


# --- one match per error -----------------------------------------------------------------


def test_the_same_traceback_pasted_twice_is_one_match() -> None:
    text = fixture_text(TRACEBACKS / "MGPU-TMA-BOX-256.txt")
    report = match_paste(text + "\n\n" + text, catalog_index())
    only_match(report)
    assert len(report.exceptions) == 2


@pytest.mark.parametrize(
    "path", sorted(TRACEBACKS.glob("MGPU-*-pytest*.txt")), ids=lambda path: path.name
)
def test_a_pytest_report_is_one_match_read_from_its_e_lines(path: Path) -> None:
    """Not from the source pytest prints for a frame, which may raise other messages, nor
    from its short summary, which cuts the message and so fits other records too."""
    match = only_match(match_paste(fixture_text(path), catalog_index()))
    assert (match.record_id, match.score, match.found_in) == (
        rule_of(path),
        1.0,
        "exception message",
    )


def test_the_source_and_the_summary_of_pytest_s_long_form_match_nothing() -> None:
    """Its printed source raises another site's message; its summary cuts the message."""
    match = only_match(match_paste(PYTEST_LONG, catalog_index()))
    assert (match.record_id, match.score) == ("MGPU-COPY-INTEGER-BYTES", 1.0)


def test_a_cut_line_quoting_an_exception_of_the_paste_is_that_exception() -> None:
    text = fixture_text(TRACEBACKS / "MGPU-COPY-INTEGER-BYTES.txt")
    chat = "same as yesterday: `ValueError: Can only transfer integer…` any idea?\n\n"
    match = only_match(match_paste(chat + text, catalog_index()))
    assert (match.record_id, match.found_in) == ("MGPU-COPY-INTEGER-BYTES", "exception message")
    # Without the traceback, the cut line is all the paste says.
    assert only_match(match_paste(chat, catalog_index())).found_in == "cut line"


def test_different_errors_are_all_reported_root_first() -> None:
    first = fixture_text(TRACEBACKS / "MGPU-TMA-BOX-256-verbose.txt")
    second = fixture_text(TRACEBACKS / "MGPU-COPY-INTEGER-BYTES.txt")
    report = match_paste(first + "\n" + second, catalog_index())
    assert [m.record_id for m in report.matches] == ["MGPU-TMA-BOX-256", "MGPU-COPY-INTEGER-BYTES"]
    assert all(m.chain_position == 0 for m in report.matches)


def test_seed_pattern_returns_the_whole_warpgroup_size() -> None:
    index = PatternIndex.build([PatternEntry(SEED_001["id"], SEED_001["messagePattern"])])
    text = fixture_text(TRACEBACKS / "MGPU-COPY-WARPGROUP-BYTES.txt")
    match = only_match(match_paste(text, index))
    assert match.captures == {"1": "bytes=32", "2": "128"}
    assert match.values.bytes == 32
    assert match.values.numbers == {"2": 128}


def test_jax_version_outside_a_wording_lowers_its_score() -> None:
    entries = [
        PatternEntry(
            "old", "Only aligned copies are supported", "jax<=0.7", {"jax_versions": "<0.7.1"}
        )
    ]
    index = PatternIndex.build(entries)
    text = "NotImplementedError: Only aligned copies are supported"
    assert only_match(match_paste(text, index, jax_version="0.5.0")).score == 0.95
    assert only_match(match_paste(text, index, jax_version="0.10.2")).score < 0.95


def test_exception_class_disagreement_lowers_the_score() -> None:
    text = "TypeError: Transfer is not a multiple of 128 bytes"
    match = only_match(match_paste(text, catalog_index()))
    assert match.score < 0.95


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=300))
def test_match_paste_never_crashes(text: str) -> None:
    try:
        report = match_paste(text, catalog_index())
    except UnreadablePaste:
        return
    for match in report.matches:
        assert 0 <= match.score <= 1
        assert match.line_number >= 1


def test_message_cut_without_a_marker() -> None:
    text = fixture_text(TRACEBACKS / "MGPU-COPY-WARPGROUP-BYTES.txt")
    full = "are supported. Got bytes=32 but warpgroup size is 128"
    match = only_match(match_paste(text.replace(full, "are supported. Got byt"), catalog_index()))
    # Seed 001's record words the same error; either may lead, the other is an alternative.
    assert {match.record_id, *match.alternatives} == {"MGPU-COPY-WARPGROUP-BYTES", SEED_001["id"]}
    assert match.truncated
    assert match.score < 1.0


_LAYOUT = PatternEntry("layout", r"Unsupported (?P<what>.*?) layout: (?P<layout>.*?)\.")
_TPU_KERNEL = "XlaRuntimeError: INTERNAL: Mosaic failed to compile TPU kernel: "


def test_a_whole_message_beginning_as_a_pattern_does_is_not_a_cut() -> None:
    """Only "Unsupported " (12 characters) of the pattern's literal text shows: too little
    to take a message that ends without a marker for a cut."""
    index = PatternIndex.build([_LAYOUT])
    paste = f"{_TPU_KERNEL}Unsupported input data type in matrix multiplication.\n"
    assert match_paste(paste, index).matches == ()


def test_a_marked_cut_needs_only_the_head_of_the_message() -> None:
    index = PatternIndex.build([_LAYOUT])
    match = only_match(match_paste(f"{_TPU_KERNEL}Unsupported vector lay…\n", index))
    assert (match.record_id, match.truncated) == ("layout", True)
    assert match.captures == {"what": "vector"}


def test_root_cause_comes_first() -> None:
    text = fixture_text(TRACEBACKS / "MGPU-COPY-INTEGER-BYTES-verbose.txt")
    report = match_paste(text, catalog_index())
    assert report.root is report.matches[0]
    assert report.root is not None and report.root.chain_position == 0
    assert report.exceptions[1].is_wrapper


# A multi-line message that JAX announces, then prints again at the end of the lowering
# traceback. Its second line alone fits a narrower pattern.
_ANNOUNCED_TWICE = (
    "Traceback (most recent call last):\n"
    '  File "repro.py", line 3, in <module>\n'
    "    copy_gmem_to_smem(x, smem)\n"
    "jax._src.source_info_util.JaxStackTraceBeforeTransformation: ValueError: Lowering failed:\n"
    "the copy of 7 int4 elements is not aligned\n"
    "\n"
    "The preceding stack trace is the source of the JAX operation that, once transformed by "
    "JAX, triggered the following exception.\n"
    "\n"
    "--------------------\n"
    "\n"
    "The above exception was the direct cause of the following exception:\n"
    "\n"
    "Traceback (most recent call last):\n"
    '  File "lowering.py", line 820, in _copy_gmem_to_smem_lowering\n'
    "    raise ValueError(\n"
    "ValueError: Lowering failed:\n"
    "the copy of 7 int4 elements is not aligned\n"
)


def test_every_line_of_an_earlier_printing_belongs_to_its_exception() -> None:
    index = PatternIndex.build(
        [
            PatternEntry("whole", r"Lowering failed: the copy of (?P<n>\d+) int4 elements"),
            PatternEntry("part", r"elements is not aligned"),
        ]
    )
    report = match_paste(_ANNOUNCED_TWICE, index)
    match = only_match(report)  # not also "part", from the announcement's second line
    assert (match.record_id, match.chain_position, match.line_number) == ("whole", 0, 16)
    assert match.alternatives == ("part",)
    [found] = report.exceptions
    assert found.repeated_at == (4,)


@pytest.mark.parametrize("curated_first", [True, False])
def test_of_sites_raising_one_message_the_curated_record_leads(curated_first: bool) -> None:
    """Without a frame to tell the sites apart, the record people wrote advice for comes
    first, whichever order the catalog lists them in; the others stay alternatives."""
    message = r"Only byte-aligned shapes are supported\. Got shape: "
    written = message + r"(?P<dtype>[a-z]\w*?)(?P<shape>[(][\d, ]*[)])"
    curated = PatternEntry("curated", written, metadata={"curated": "true"})
    # Derived from the template: the same literal text, the values captured more loosely
    # (a shorter pattern, which would otherwise win).
    derived = message + r"(?P<shape>.*)"
    mined = [PatternEntry(f"mined-{n}", derived, metadata={"curated": "false"}) for n in range(2)]
    entries = [curated, *mined] if curated_first else [*mined, curated]
    report = match_paste(
        "fails with Only byte-aligned shapes are supported. Got shape: int4(3,)",
        PatternIndex.build(entries),
    )
    match = only_match(report)
    assert match.record_id == "curated"
    assert set(match.alternatives) == {"mined-0", "mined-1"}


_LOWERINGS = ("jax/_src/pallas/mosaic/lowering.py", "jax/_src/pallas/triton/lowering.py")


@pytest.mark.parametrize(
    ("paste", "raised_in"),
    [
        (  # the class right before the message is the module that raised it
            "jax._src.pallas.triton.lowering.TritonLoweringException: Exception while "
            "lowering eqn:",
            _LOWERINGS[1],
        ),
        (  # the same, inside a wrapper of another module's
            "jax._src.pallas.mosaic.lowering.LoweringException: "
            "jax._src.pallas.triton.lowering.TritonLoweringException: Exception while "
            "lowering eqn:",
            _LOWERINGS[1],
        ),
        (
            "Traceback (most recent call last):\n"
            '  File "/home/me/k.py", line 3, in <module>\n'
            "    f(x)\n"
            "jax._src.pallas.mosaic.lowering.LoweringException: Exception while lowering eqn:",
            _LOWERINGS[0],
        ),
    ],
)
@pytest.mark.parametrize("order", [1, -1])
def test_of_lowerings_raising_one_message_the_module_of_its_class_leads(
    paste: str, raised_in: str, order: int
) -> None:
    report = match_paste(paste, PatternIndex.build(_lowering_entries(order)))
    assert only_match(report).record_id == raised_in


@pytest.mark.parametrize("order", [1, -1])
def test_a_builtin_class_names_no_module_to_tell_lowerings_apart(order: int) -> None:
    entries = _lowering_entries(order)
    report = match_paste("ValueError: Exception while lowering eqn:", PatternIndex.build(entries))
    assert only_match(report).record_id == entries[0].record_id  # the catalog's order


def _lowering_entries(order: int) -> list[PatternEntry]:
    """Two sites of one message, one in each lowering's module, listed in ``order``."""
    return [
        PatternEntry(file, r"Exception while lowering eqn:", metadata={"file": file})
        for file in _LOWERINGS[::order]
    ]


def test_a_backends_own_site_comes_after_a_core_one_only_where_the_frames_were_read() -> None:
    """One message at a Mosaic GPU site and a core one, in a paste that shows no backend:
    read with the frame index, the core site leads; without one, nothing is known of the
    paste's backend and the records keep their order."""
    message = "Invalid dtype for `swap`. Ref dtype: float32. Value dtype: int32."
    pattern = re.escape(message)
    entries = [
        PatternEntry(record, pattern, "current", {"file": file, "curated": "false"})
        for record, file in (
            ("gpu", "jax/_src/pallas/mosaic_gpu/primitives.py"),
            ("core", "jax/_src/state/primitives.py"),
        )
    ]
    index = PatternIndex.build(entries)
    paste = f"ValueError: {message}\n"
    [read] = match_paste(paste, index, None, FrameIndex.load()).matches
    assert (read.record_id, read.alternatives) == ("core", ("gpu",))
    [unread] = match_paste(paste, index).matches
    assert (unread.record_id, unread.alternatives) == ("gpu", ("core",))


@pytest.mark.parametrize("order", [1, -1])
def test_a_message_behind_the_tpu_compilers_wrapper_is_mosaic_tpus_even_without_frames(
    order: int,
) -> None:
    """Mosaic GPU raises "Only 32-bit types supported" in Python, and Mosaic TPU's layout
    inference said the same until 0.7.0: behind ``Mosaic failed to compile TPU kernel:`` it is
    TPU's, in either catalog order, and Mosaic GPU's site is no alternative; the same words
    alone keep the catalog's order and both records."""
    pattern = r"(?:'(.+?)' op )?Only 32-bit types supported"
    entries = [
        PatternEntry(record, pattern, "current", {"file": file, "curated": "false"})
        for record, file in (
            ("gpu", "jax/experimental/mosaic/gpu/utils.py"),
            ("tpu", "jaxlib/mosaic/dialect/tpu/transforms/infer_vector_layout.cc"),
        )[::order]
    ]
    index = PatternIndex.build(entries)
    wrapped = (
        "jaxlib._jax.XlaRuntimeError: INTERNAL: Mosaic failed to compile TPU kernel: "
        "Only 32-bit types supported\n"
    )
    [tpu] = match_paste(wrapped, index).matches
    assert (tpu.record_id, tpu.alternatives) == ("tpu", ())
    [alone] = match_paste("ValueError: Only 32-bit types supported\n", index).matches
    first, second = (entry.record_id for entry in entries)
    assert (alone.record_id, alone.alternatives) == (first, (second,))


def test_todays_wording_is_chosen_over_an_older_one_that_prints_the_same_text() -> None:
    """``{np.shape(a)}`` until 0.4.31 and ``{arr.shape}`` since print the same message; the
    older wording's untyped pattern is the shorter, yet the message is today's."""
    entries = [
        PatternEntry(
            "reshape",
            r"cannot reshape array of shape (?P<shape>[\[(][-\d,\s]*[\])]) into (?P<new>.*)",
            "current",
            {"file": "jax/_src/numpy/array_methods.py", "curated": "false"},
        ),
        PatternEntry(
            "reshape",
            r"cannot reshape array of shape (.+?) into (.+)",
            "older wording (0.4.31)",
            {"file": "jax/_src/numpy/array_methods.py", "curated": "false"},
        ),
    ]
    paste = "TypeError: cannot reshape array of shape (8, 128) into shape (3, 128)\n"
    [match] = match_paste(paste, PatternIndex.build(entries)).matches
    assert (match.record_id, match.variant) == ("reshape", "current")
    assert match.values.shape == [8, 128]
