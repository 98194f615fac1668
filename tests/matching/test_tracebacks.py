from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.matching import tracebacks
from app.matching.normalize import normalize
from app.matching.tracebacks import ExceptionRecord, read_exceptions

from .catalog import PASTES, PYTEST_LONG, TRACEBACK_LINES, TRACEBACKS, fixture_text

COPY_INT4 = "Can only transfer integer bytes (shape=[7], dtype=i4)"


def read(text: str) -> list[ExceptionRecord]:
    return read_exceptions(normalize(text).lines).exceptions


def test_plain_chain_root_first() -> None:
    records = read(
        "Traceback (most recent call last):\n"
        '  File "a.py", line 1, in <module>\n'
        "KeyError: 'x'\n"
        "\n"
        "The above exception was the direct cause of the following exception:\n"
        "\n"
        "Traceback (most recent call last):\n"
        '  File "a.py", line 3, in <module>\n'
        "    raise ValueError('wrapped') from e\n"
        "    ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
        "ValueError: wrapped\n"
        "\n"
        "During handling of the above exception, another exception occurred:\n"
        "\n"
        "Traceback (most recent call last):\n"
        '  File "a.py", line 5, in <module>\n'
        "RuntimeError: while handling\n"
    )
    assert [(r.short_class, r.chain, r.chain_position, r.link) for r in records] == [
        ("KeyError", 0, 0, None),
        ("ValueError", 0, 1, "cause"),
        ("RuntimeError", 0, 2, "context"),
    ]
    assert all(r.in_traceback for r in records)


@pytest.mark.parametrize("name", ["MGPU-COPY-INTEGER-BYTES.txt", "MGPU-TMA-BOX-256.txt"])
def test_jax_message_printed_twice_is_one_exception(name: str) -> None:
    paste = normalize(fixture_text(TRACEBACKS / name))
    [record] = read_exceptions(paste.lines).exceptions
    assert record.wrapped_by == ("JaxStackTraceBeforeTransformation",)
    assert record.chain_position == 0
    assert len(record.repeats) == 1
    assert record.repeats[0] < record.line  # the announcement comes first
    assert record.qualified_class == "ValueError"


def test_verbose_lowering_error_wraps_the_root_cause() -> None:
    text = fixture_text(TRACEBACKS / "MGPU-COPY-INTEGER-BYTES-verbose.txt")
    root, wrapper = read(text)
    assert (root.short_class, root.chain_position, root.message) == ("ValueError", 0, COPY_INT4)
    assert wrapper.short_class == "LoweringError"
    assert wrapper.is_wrapper
    assert wrapper.chain_position == 1
    assert wrapper.message_lines[0] == "Exception while lowering eqn:"
    assert any(line.startswith("With inval types=[MemRefType(") for line in wrapper.message_lines)


def test_trace_time_error_footer_is_a_note() -> None:
    [record] = read(fixture_text(TRACEBACKS / "MGPU-REFUNION-BYTE-ALIGNED-SHAPES.txt"))
    assert record.message == "Only byte-aligned shapes are supported. Got shape: int4(7,)"
    assert record.notes[0].startswith("For simplicity, JAX has removed its internal frames")


def test_exception_group_members_are_separate_chains() -> None:
    records = read(fixture_text(PASTES / "exception-group.txt"))
    assert [r.short_class for r in records] == ["ExceptionGroup", "ValueError", "ValueError"]
    assert len({r.chain for r in records}) == 3
    assert records[1].message == "Can only transfer integer bytes (shape=[3, 5], dtype=i4)"


def test_ipython_traceback() -> None:
    [record] = read(fixture_text(PASTES / "ipython-warpgroup-ansi.txt"))
    assert record.short_class == "NotImplementedError"
    assert record.wrapped_by == ("JaxStackTraceBeforeTransformation",)
    assert record.message.endswith("Got bytes=32 but warpgroup size is 128")


def test_lone_message_line_without_traceback() -> None:
    [record] = read("it says\nValueError: " + COPY_INT4 + "\n\nany idea?")
    assert not record.in_traceback
    assert record.message == COPY_INT4


def test_prose_with_colons_is_not_an_exception() -> None:
    assert read("Note: this happens on H100\nSolution: pad the block") == []
    assert read("Error: the job was preempted") == []


def test_pythons_own_exception_class_is_an_exception_line() -> None:
    [record] = read("it says\nException: Invalid fixpoint\n")
    assert (record.qualified_class, record.message) == ("Exception", "Invalid fixpoint")


def test_traceback_without_its_header() -> None:
    [record] = read(
        '  File "kernel.py", line 9, in body\n    copy(x, smem)\nValueError: ' + COPY_INT4
    )
    assert record.in_traceback


def test_multi_line_message_ends_at_a_blank_line() -> None:
    [record] = read(
        "Traceback (most recent call last):\n"
        '  File "a.py", line 1, in <module>\n'
        "LoweringError: Exception while lowering eqn:\n"
        "  copy a -> b\n"
        "With context:\n"
        "\n"
        "unrelated chatter\n"
    )
    assert record.message_lines == (
        "Exception while lowering eqn:",
        "  copy a -> b",
        "With context:",
    )


@pytest.mark.parametrize("fence", ["```", "~~~", "> ```"])
def test_a_closing_code_fence_ends_the_message(fence: str) -> None:
    """What a chat message says after the block is not part of the error's message."""
    [record] = read(
        f"my kernel fails:\n{fence}\nTraceback (most recent call last):\n"
        f'  File "kernel.py", line 9, in body\n    copy(x, smem)\nValueError: {COPY_INT4}\n'
        f"{fence}\nusing jax==0.7.2 btw"
    )
    assert record.in_traceback
    assert record.message_lines == (COPY_INT4,)


@pytest.mark.parametrize("prompt", [">>> jax.__version__", "In [4]: jax.__version__"])
def test_an_interactive_prompt_ends_the_message(prompt: str) -> None:
    """The user's next command in a REPL session is not part of the error's message."""
    [record] = read(f"ValueError: {COPY_INT4}\n{prompt}\n'0.8.1'")
    assert record.message_lines == (COPY_INT4,)


def test_two_lone_exceptions_are_not_one_message() -> None:
    records = read("ValueError: first problem\nNotImplementedError: second problem")
    assert [r.message for r in records] == ["first problem", "second problem"]
    assert records[0].chain != records[1].chain


def test_truncated_message() -> None:
    [record] = read("NotImplementedError: Only copies transferring a number of bytes divis…")
    assert record.truncated
    assert record.message == "Only copies transferring a number of bytes divis"


def test_bare_assertion_error() -> None:
    [record] = read(
        "Traceback (most recent call last):\n"
        '  File "core.py", line 733, in transform_type\n'
        "    assert all(d % t == 0 for d, t in zip(dims, tiling))\n"
        "AssertionError\n"
    )
    assert (record.short_class, record.message) == ("AssertionError", "")


def test_source_lines_are_structure() -> None:
    paste = normalize(fixture_text(TRACEBACKS / "MGPU-ALIAS-BYTE-ALIGNED-BITCAST.txt"))
    reading = read_exceptions(paste.lines)
    raising = [n for n, line in enumerate(paste.lines) if "raise NotImplementedError(" in line]
    assert raising and all(n in reading.structure for n in raising)


def test_colab_ipython7_traceback() -> None:
    [record] = read(
        "---------------------------------------------------------------------------\n"
        "ValueError                                Traceback (most recent call last)\n"
        "<ipython-input-7-3f2a1b9c> in <module>()\n"
        "      2 x = jnp.zeros((7,), jnp.int4)\n"
        "----> 3 kernel(x)\n"
        "\n"
        "/usr/local/lib/python3.10/dist-packages/jax/_src/pallas/mosaic_gpu/primitives.py"
        " in _copy_gmem_to_smem_lowering(ctx, src, dst)\n"
        "    818   if bits % 8:\n"
        "--> 819     raise ValueError(\n"
        "\n"
        "ValueError: " + COPY_INT4 + "\n"
    )
    assert (record.short_class, record.message, record.in_traceback) == (
        "ValueError",
        COPY_INT4,
        True,
    )


def test_older_jax_unfiltered_stack_trace_is_merged() -> None:
    [record] = read(
        "Traceback (most recent call last):\n"
        '  File "k.py", line 4, in <module>\n'
        "jax._src.traceback_util.UnfilteredStackTrace: ValueError: " + COPY_INT4 + "\n"
        "\n"
        "The stack trace below excludes JAX-internal frames.\n"
        "The preceding is the original exception that occurred, unmodified.\n"
        "\n"
        "--------------------\n"
        "\n"
        "The above exception was the direct cause of the following exception:\n"
        "\n"
        "Traceback (most recent call last):\n"
        '  File "k.py", line 4, in <module>\n'
        "ValueError: " + COPY_INT4 + "\n"
    )
    assert record.wrapped_by == ("UnfilteredStackTrace",)
    assert record.repeats


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(TRACEBACK_LINES), max_size=40))
def test_passing_frames_in_bulk_reads_exactly_as_line_by_line(lines: list[str]) -> None:
    assert_bulk_reading_is_exact(lines)


@pytest.mark.parametrize(
    "path", sorted([*TRACEBACKS.glob("*.txt"), *PASTES.glob("*")]), ids=lambda path: path.name
)
def test_passing_frames_in_bulk_reads_every_fixture_exactly(path: Path) -> None:
    assert_bulk_reading_is_exact(list(normalize(fixture_text(path)).lines))


def test_passing_frames_in_bulk_under_headers_indented_any_way_reads_exactly() -> None:
    lines = []
    indents = range(0, 2 * tracebacks.MAX_BULK_INDENT + 4, 3)
    for indent in indents:
        pad = " " * indent
        lines += [
            f"{pad}Traceback (most recent call last):",
            f'{pad}  File "k.py", line {indent}, in f',
            f"{pad}    source line",
            f"{pad}ValueError: {COPY_INT4}",
        ]
    assert_bulk_reading_is_exact(lines)
    assert len(read_exceptions(lines).exceptions) == len(indents)


def assert_bulk_reading_is_exact(lines: list[str]) -> None:
    """The reader with its bulk pass over frames, and without it (every line through
    ``_step``), find the same exceptions and the same structure."""
    bulk = read_exceptions(lines)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tracebacks._Reader, "_pass_in_bulk", lambda _reader: None)
        one_by_one = read_exceptions(lines)
    assert bulk == one_by_one


def test_error_printed_twice_keeps_every_line_of_its_first_printing() -> None:
    [record] = read(
        "jax._src.source_info_util.JaxStackTraceBeforeTransformation: ValueError: first line\n"
        "second line\n"
        "\n"
        "The above exception was the direct cause of the following exception:\n"
        "\n"
        "Traceback (most recent call last):\n"
        '  File "a.py", line 1, in <module>\n'
        "ValueError: first line\n"
        "second line\n"
    )
    assert record.wrapped_by == ("JaxStackTraceBeforeTransformation",)
    assert record.message_line_numbers == (7, 8)
    assert record.repeats == (0,)
    assert record.repeated_lines == (0, 1)


# --- pytest's report ----------------------------------------------------------------------


def test_a_pytest_report_is_a_traceback_up_to_its_e_lines() -> None:
    paste = normalize(PYTEST_LONG)
    reading = read_exceptions(paste.lines)
    [record] = reading.exceptions
    assert record.in_traceback
    assert record.message_lines == (COPY_INT4,)  # ended by the summary's rule
    at = paste.lines.index(
        "/usr/lib/python3.11/site-packages/jax/_src/pallas/mosaic_gpu/primitives.py:820: ValueError"
    )
    # Arguments (one running on at no indent), the source with another message in it,
    # and the location after the E line are the report's furniture, not errors.
    assert set(range(1, record.line)) <= reading.structure
    assert at in reading.structure


@pytest.mark.parametrize("style", ["pytest", "pytest-short"])
def test_the_next_exception_of_a_pytest_report_is_in_the_same_chain(style: str) -> None:
    """JAX's announcement and the error it announces are one exception, as in Python's own
    traceback, whether the frame that raised is printed after its E lines or not."""
    report = fixture_text(TRACEBACKS / f"MGPU-COPY-INTEGER-BYTES-{style}.txt")
    [record] = read_exceptions(normalize(report).lines).exceptions
    assert record.wrapped_by == ("JaxStackTraceBeforeTransformation",)
    assert len(record.repeats) == 1 and record.in_traceback
    assert record.message_lines == (COPY_INT4,)


def test_the_source_pytest_prints_after_a_chain_sentence_is_furniture() -> None:
    """The next exception's first frame comes right after the sentence, its source first;
    a test asserting a message (``pytest.raises(match=...)``) holds it in that source."""
    report = PYTEST_LONG.replace(
        "ctx = LoweringRuleContext",
        "E       ValueError: earlier\n\n"
        "The above exception was the direct cause of the following exception:\n\n"
        "    def test_bitcast():\n"
        '        with pytest.raises(ValueError, match="Only byte-aligned bitcasts are'
        ' supported."):\n'
        ">           lower(x)\n\n"
        "test_kernel.py:9: \n"
        "_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ \n\n"
        "ctx = LoweringRuleContext",
    )
    paste = normalize(report)
    reading = read_exceptions(paste.lines)
    assert [(r.message, r.chain, r.chain_position) for r in reading.exceptions] == [
        ("earlier", 0, 0),
        (COPY_INT4, 0, 1),
    ]
    raises = next(n for n, line in enumerate(paste.lines) if "pytest.raises" in line)
    assert raises in reading.structure


def test_a_message_ends_at_the_next_test_of_a_pytest_report() -> None:
    header = "_" * 30 + " test_{} " + "_" * 30
    report = "\n".join(
        [
            header.format("a"),
            "test_k.py:5: in test_a",
            "    lower(x)",
            f"E   ValueError: {COPY_INT4}",
            header.format("b"),
            "test_k.py:9: in test_b",
            "    lower(y)",
            "E   ValueError: " + COPY_INT4.replace("[7]", "[5]"),
        ]
    )
    records = read(report)
    assert [(len(r.message_lines), r.chain, r.in_traceback) for r in records] == [
        (1, 0, True),
        (1, 1, True),
    ]


def test_a_pytest_report_copied_without_its_header() -> None:
    """Its first frame tells: only the exception ends its frames, not a frame's arguments."""
    report = PYTEST_LONG.split("\n", 2)[2].replace(
        "ctx = LoweringRuleContext", "test_kernel.py:5: in test_int4_copy\n    lower(x)\n\nctx = L"
    )
    paste = normalize(report)
    reading = read_exceptions(paste.lines)
    [record] = reading.exceptions
    assert record.in_traceback and record.message_lines == (COPY_INT4,)
    assert set(range(1, record.line)) <= reading.structure  # all but the blank line first


def test_pytest_s_location_of_the_frame_that_raised_follows_its_message() -> None:
    """Right after the message and a blank line; further down it is some other line."""
    location = (
        "/usr/lib/python3.11/site-packages/jax/_src/pallas/mosaic_gpu/primitives.py:820: ValueError"
    )
    [record] = read(f"E   ValueError: {COPY_INT4}\n\n{location}")
    assert record.raised_at == 2
    [record] = read(f"E   ValueError: {COPY_INT4}\n\nsome words\nmore words\n{location}")
    assert record.raised_at is None


CUT_FRAMES = (
    "Traceback (most recent call last):\n"
    '  File "/home/me/kernel.py", line 3, in <module>\n'
    "    run()\n"
    '  File "/x/jax/_src/pallas/mosaic_gpu/primitives.py", line 820, in _copy_lowering\n'
    "    raise ValueError(\n"
)


@pytest.mark.parametrize(
    ("after", "unfinished"),
    [
        ("", 6),  # the paste ends with the frames (and the line its last line break starts)
        ("\n\n", 8),  # and blank lines
        ("and then it fails, no idea why\n", 5),  # prose where the exception line was due
        ('Traceback (most recent call last):\n  File "a.py", line 1, in f\nValueError: x\n', 5),
        ("ValueError: Can only transfer integer bytes (shape=[7], dtype=i4)\n", None),
        ("ValueError\n", None),  # a bare class is an exception line too
    ],
)
def test_a_traceback_cut_before_its_exception_line_is_unfinished(
    after: str, unfinished: int | None
) -> None:
    lines = normalize(CUT_FRAMES + after).lines
    reading = read_exceptions(lines)
    assert reading.unfinished == (() if unfinished is None else (unfinished,))
    assert {1, 2, 3, 4} <= reading.structure  # the frames and their source lines


def test_every_fixtures_traceback_ends_in_its_exception_line() -> None:
    """Real tracebacks: none is taken for one cut before its message (pytest's reports,
    whose frames end at their E lines, are not read so)."""
    for path in sorted(TRACEBACKS.glob("*.txt")):
        reading = read_exceptions(normalize(path.read_text()).lines)
        assert reading.exceptions and reading.unfinished == (), path.name
