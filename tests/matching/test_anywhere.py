"""Known errors read wherever a paste puts them: inside a sentence, a log line, a table cell,
inline code or a fence, HTML-escaped, without their class, inside the wrappers JAX and its
runtimes add, or cut off; and prose that merely resembles a message is not matched."""

from __future__ import annotations

import html

import pytest

from app.matching.matcher import match_paste
from app.matching.report import Match, MatchReport

from .catalog import EXAMPLES, catalog_index, everything, mined_records


def mined_id(message: str) -> str:
    [record] = [r for r in mined_records() if r["errorMessage"] == message]
    return str(record["id"])


def found(report: MatchReport, record_id: str) -> Match:
    for match in report.matches:
        if record_id in (match.record_id, *match.alternatives):
            return match
    raise AssertionError(f"{record_id} not in {[m.record_id for m in report.matches]}")


# Each example message, with its class ``{c}``, as pastes put it in a line of their own.
INSIDE_A_LINE = {
    "log line": "2026-08-27 09:53:25,647 worker-3 step=12 status=error, {c}: {m}",
    "failed with": "Kernel build failed with {c}: {m}",
    "code comment": "    x = x_ref[...]  # {m}",
    "quote": "> {c}: {m}",
    "list item": "- {m}",
    "table cell": "| 3 | `pallas_call` | {m} | open |",
    "inline code": "I keep getting `{c}: {m}` when I lower the kernel",
    "quoted in prose": 'It says "{c}: {m}" on H100, then it stops.',
    "fence": "Here is the error:\n```python\n{c}: {m}\n```\nany idea?",
    "html-escaped": "<p>Error: {e}</p>",
    "no class, in prose": "After upgrading I see {m}, then it stops.",
}


@pytest.mark.parametrize("form", INSIDE_A_LINE, ids=list(INSIDE_A_LINE))
def test_every_example_is_found_inside_a_line(form: str) -> None:
    for rule_id, _template, text, captures in EXAMPLES:
        classes = {"ValueError", "NotImplementedError"}
        paste = INSIDE_A_LINE[form].format(c="ValueError", m=text, e=html.escape(text))
        match = found(match_paste(paste, catalog_index()), rule_id)
        assert match.exception_class in (None, *classes)
        if match.record_id == rule_id and form != "no class, in prose":
            assert match.captures == captures
        elif match.record_id == rule_id:  # a trailing free value runs on into the sentence
            assert all(match.captures[k].startswith(v) for k, v in captures.items())


# What JAX and its runtimes put before the message they carry.
WRAPPERS = {
    "JaxRuntimeError": "jax.errors.JaxRuntimeError: INTERNAL: Mosaic failed to compile TPU "
    "kernel: {c}: {m}",
    "XlaRuntimeError": "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: {m}",
    "JaxStackTraceBeforeTransformation": "jax._src.source_info_util."
    "JaxStackTraceBeforeTransformation: {c}: {m}",
    "LoweringError": "jax._src.pallas.mosaic_gpu.lowering.LoweringError: Exception while "
    "lowering eqn: {c}: {m}",
    "TritonLoweringException": "TritonLoweringException: {m}",
}


@pytest.mark.parametrize("wrapper", WRAPPERS, ids=list(WRAPPERS))
def test_a_wrapped_message_scores_as_its_own_exception_would(wrapper: str) -> None:
    """The wrapper's words are left out of the share of the message the pattern explains,
    and the class named inside the wrapper is the one compared with the record's."""
    template = WRAPPERS[wrapper]
    for rule_id, _template, text, _captures in EXAMPLES:
        paste = template.format(c="ValueError", m=text)
        match = found(match_paste(paste, catalog_index()), rule_id)
        bare = found(match_paste(f"ValueError: {text}", catalog_index()), rule_id)
        assert match.score >= bare.score * 0.8 - 1e-9, (paste, match.score, bare.score)
        assert match.score >= 0.75
        # JAX's announcing wrapper is read as the error it announces
        assert match.exception_class is not None
        assert wrapper in match.exception_class or match.exception_class == "ValueError"


@pytest.mark.parametrize(
    "words",
    [
        "Mosaic failed to compile TPU kernel",
        "Failed to compile a Mosaic module",  # libtpu's wording in JAX 0.4.20 (jax#18595)
    ],
)
def test_a_tpu_message_inside_the_runtime_error_is_its_site_at_full_score(words: str) -> None:
    message = "Only copies of a multiple of 128 bytes are supported"
    paste = f"jax.errors.JaxRuntimeError: INTERNAL: {words}: {message}"
    match = found(match_paste(paste, everything()), mined_id(message))
    assert match.score == 0.95  # a lone exception line, nothing unexplained, no class clash
    assert match.stripped == f"INTERNAL: {words}:"
    assert match.literal == message
    assert match.found_in == "exception message"


MLIR_ERROR = (
    "jaxlib.mlir._mlir_libs._site_initialize.<locals>.MLIRError: "
    "Failure while executing pass pipeline:\n"
)


@pytest.mark.parametrize(
    "prefix",
    [
        'error: "/transpose[permutation=(1, 0)]"("/root/test_tpu.py":16:0):',
        'error: loc("/root/test_tpu.py":16:0):',
        "error:",
    ],
)
def test_a_diagnostic_after_mlirs_location_scores_as_the_diagnostic_alone(prefix: str) -> None:
    """An MLIRError prints each diagnostic after ``error:`` and the op's location
    (jax#18370): those words are MLIR's, not text the pattern leaves unexplained."""
    diagnostic = "'vector.transpose' op Padded transposes unsupported"
    alone = match_paste(f"{MLIR_ERROR}{diagnostic}\n", everything()).matches[0]
    match = match_paste(f"{MLIR_ERROR}{prefix} {diagnostic}\n", everything()).matches[0]
    assert (match.record_id, match.score) == (alone.record_id, alone.score)
    assert match.score > 0.9
    assert match.stripped == prefix


def test_the_class_before_a_message_inside_a_line_is_compared_with_the_records() -> None:
    text = "Can only transfer integer bytes (shape=[7], dtype=i4)"
    rule = "MGPU-COPY-INTEGER-BYTES"
    right = found(match_paste(f"job 7 status=error, ValueError: {text}", catalog_index()), rule)
    wrong = found(match_paste(f"job 7 status=error, TypeError: {text}", catalog_index()), rule)
    assert right.exception_class == "ValueError"
    assert wrong.exception_class == "TypeError"
    assert wrong.score < right.score


ISSUE_EXAMPLE = (
    "memref<4xi32, #gpu.address_space<workgroup>> must have a number of elements "
    "that is a multiple of 128"
)


@pytest.mark.parametrize(
    "paste",
    [
        ISSUE_EXAMPLE,
        f"worker 3: {ISSUE_EXAMPLE}",
        f"It says `{ISSUE_EXAMPLE}` and stops",
        f"- {ISSUE_EXAMPLE} (and more)…",
        f"anyone seen `{ISSUE_EXAMPLE[:-10]}…` on H100?",
    ],
    ids=["end of line", "after a prefix", "closing backtick", "marker", "marker in backticks"],
)
def test_a_message_cut_short_is_read_with_its_values(paste: str) -> None:
    match = found(match_paste(paste, catalog_index()), "MGPU-WGSTRIDED-ELEMENT-MULTIPLE")
    assert match.truncated
    assert match.found_in == "cut line"
    assert "prod_shape" in match.unread
    assert match.values.shape == [4]
    assert match.values.dtype == "int32"
    assert match.values.memory_space == "smem"


def test_a_cut_shows_enough_of_the_message_to_be_sure() -> None:
    """``memref<…> must have`` is the start of a known message, but too little of it."""
    paste = "memref<4xi32, #gpu.address_space<workgroup>> must have"
    assert match_paste(paste, catalog_index()).matches == ()


# Sentences that read like known messages but are not errors JAX printed.
NEAR_MISSES = [
    "The block should have a number of elements that is a multiple of 128 so it works.",
    "Make sure the last dimension is a multiple of 128 bytes.",
    "I think the shape must be divisible by the warpgroup size.",
    "We only support copies of a multiple of 128 bytes right now, says the doc.",
    "The kernel failed because the block shape is not supported.",
    "Note that the index map must return a tuple of the same length as the block shape.",
    "Unsupported dtype in my experiments was float8, not sure why.",
    "Unsupported layout: I'll try a different one",
    "TMA requires the last dimension to be contiguous, which is fine.",
    "Only byte-aligned accesses are fast on this GPU, so pad the block.",
    "Can only transfer whole tiles, I guess?",
    "Swizzle is not supported on my card, apparently.",
    "Async copies are slow when the shape is odd.",
    "The stride of the last dimension should be 1 for TMA to work",
]


@pytest.mark.parametrize("sentence", NEAR_MISSES)
def test_prose_that_resembles_a_message_matches_nothing(sentence: str) -> None:
    report = match_paste(f"Hi all,\n{sentence}\nThanks!", everything())
    assert report.matches == (), [(m.record_id, m.pattern) for m in report.matches]


def test_every_match_says_why() -> None:
    paste = "2026-08-27 09:53:25 ERROR run 7 failed with ValueError: " + EXAMPLES[0][2]
    match = match_paste(paste, catalog_index()).matches[0]
    assert match.found_in == "line"
    assert match.literal and match.literal in match.normalized_line
    assert match.stripped == "run 7 failed with ValueError:"


WARPGROUP = (
    "Only copies transferring a number of bytes divisible by the warpgroup size are "
    "supported. Got bytes=32 but warpgroup size is 128"
)


@pytest.mark.parametrize(
    "paste",
    [
        # a Markdown list item whose continuation is indented
        f"- the copy fails: {WARPGROUP[:60]}\n  {WARPGROUP[60:].lstrip()}\n- next item",
        # a log formatter indenting continuation lines
        f"2026-08-27 09:53:25 WARN worker-3: {WARPGROUP[:70]}\n    {WARPGROUP[70:].lstrip()}",
        # a Markdown paragraph's next line, going on with the sentence (jax#39997)
        'It fails with "NotImplementedError: {}\n{}" on H100.'.format(
            *WARPGROUP.split(" the warpgroup", 1)
        ).replace("\n", "\nthe warpgroup"),
        # a code comment going on in the next comment line
        "    x = f(y)\n    # Fails with: NotImplementedError: {}\n    # the warpgroup{}\n"
        "    out = x + 1".format(*WARPGROUP.split(" the warpgroup", 1)),
        # a terminal 80 columns wide cutting mid-word
        "\n".join(
            (f"status=failed reason={WARPGROUP}"[i : i + 80])
            for i in range(0, len(f"status=failed reason={WARPGROUP}"), 80)
        ),
    ],
    ids=["markdown list", "log formatter", "markdown paragraph", "code comment", "terminal"],
)
def test_a_message_broken_over_lines_is_read_as_one(paste: str) -> None:
    match = found(match_paste(paste, catalog_index()), "MGPU-COPY-WARPGROUP-BYTES")
    assert match.found_in == "wrapped line"
    assert match.captures["bytes"] == "32"
    assert match.values.bytes == 32


def test_a_log_record_after_a_line_does_not_go_on_with_it() -> None:
    """Only a line as pasted continues a sentence: one a logger's prefix starts is a record
    of its own, though it reads on in lower case once the prefix is cleaned off."""
    first, rest = WARPGROUP.split(" the warpgroup", 1)
    paste = f"{first}\n2026-08-27 09:53:25,647 INFO the warpgroup{rest}"
    assert match_paste(paste, catalog_index()).matches == ()
    assert match_paste(paste.replace("2026-08-27 09:53:25,647 INFO ", ""), catalog_index()).matches


@pytest.mark.parametrize("width", [80, 120])
def test_an_exception_line_a_terminal_cut_at_its_width_is_read_as_printed(width: int) -> None:
    """The cut falls mid-word (``warpgrou`` / ``p size``): joined with a space, as the
    lines of a message are, it would match nothing."""
    line = f"ValueError: {WARPGROUP}"
    printed = "\n".join(line[i : i + width] for i in range(0, len(line), width))
    assert line[width - 1 : width + 1].isalpha()  # mid-word
    paste = f'Traceback (most recent call last):\n  File "k.py", line 3, in <module>\n{printed}'
    match = found(match_paste(paste, catalog_index()), "MGPU-COPY-WARPGROUP-BYTES")
    assert match.found_in == "wrapped message"
    assert match.values.bytes == 32
