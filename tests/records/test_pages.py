import contextlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.records.text_pages import PageParseError, parse_page

SEEDS = Path(__file__).resolve().parents[2] / "data" / "seeds"
FULL_SHA = "1e1c6a8fc06dfcd1247076ec5cae4640cea5d7bb"
LOWERING = "jax/_src/pallas/mosaic_gpu/lowering.py"


def seed_text(name: str) -> str:
    return (SEEDS / name).read_text()


def seed_record(name: str) -> dict[str, Any]:
    record: dict[str, Any] = json.loads(seed_text(name))["record"]
    return record


PAGE_002 = seed_text("002_66802f042cd293ea.txt")
PAGE_004 = seed_text("004_8cdedc0b03030c8e.txt")
RECORD_000 = seed_record("000_3bebb9c19a64106a.txt")
RECORD_001 = seed_record("001_08f723cb3bf58b12.txt")


def resolve(prefix: str) -> str | None:
    return FULL_SHA if FULL_SHA.startswith(prefix) else None


def line_at(record: dict[str, Any], line_number: int) -> str:
    """The window's line for a source line number."""
    code_line: str = record["sourceCode"].split("\n")[line_number - record["sourceCodeStart"]]
    return code_line


def without_lines(page: str, *unwanted: str) -> str:
    return "\n".join(line for line in page.split("\n") if line not in unwanted)


def minimal_page(message: str, *sections: str) -> str:
    return "\n\n".join(
        [
            "jax-ml/jax · error · ValueError",
            message,
            "Error message",
            message,
            *sections,
            "AI-assisted analysis of jax-ml/jax@1e1c6a8fc0 (2026-08-27). "
            "Data as JSON: /api/errors/0123456789abcdef. Report an issue: GitHub.",
        ]
    )


def source_section(record: dict[str, Any]) -> str:
    """A Source section rendered from a JSON seed, the way the pages render it."""
    return (
        f"Source\n\nThrown at {record['filePath']}:{record['lineNumber']}\n\n"
        f"{record['sourceCode']}\n\nView on GitHub (pinned to {record['analyzedSha'][:10]})"
    )


def test_keys_follow_the_dataset_schema_order() -> None:
    assert list(parse_page(PAGE_004)) == [*RECORD_000, "relatedErrors"]


def test_page_004_fields() -> None:
    record = parse_page(PAGE_004, resolve_sha=resolve)

    assert record["id"] == "19b6a360721eb407"
    assert record["repo"] == "jax-ml/jax"
    assert record["slug"] == "can-not-bitcast-memory-region-of-size-shape-bitwi"
    assert record["errorMessage"] == (
        "Can not bitcast memory region of size {shape_bitwidth} bits "
        "to dtype with {target_bitwidth} bits."
    )
    assert record["errorType"] == "exception"
    assert record["errorClass"] == "ValueError"
    assert record["severity"] == "error"
    assert record["documentation"].startswith("After bitcasting, the total size in bits")
    assert record["documentation"].endswith("the reshape is impossible and ValueError is raised.")

    assert record["filePath"] == LOWERING
    assert record["lineNumber"] == 1501
    assert (record["sourceCodeStart"], record["sourceCodeEnd"]) == (1483, 1519)
    code = record["sourceCode"].split("\n")
    assert len(code) == 37
    assert code[0] == "  ref_ty = ir.MemRefType(ref.type)"
    assert code[-1] == "@overload"
    assert "" in code  # the blank lines inside the window are kept
    assert line_at(record, 1501) == "    raise ValueError("
    assert line_at(record, 1502).lstrip().startswith('f"Can not bitcast memory region')
    assert record["analyzedSha"] == FULL_SHA
    assert record["githubUrl"] == (
        f"https://github.com/jax-ml/jax/blob/{FULL_SHA}/{LOWERING}#L1483-L1519"
    )

    assert record["solutions"] == [
        "Round the buffer allocation up to a multiple of the target dtype size "
        "(pad and slice after view)",
        "Choose a target dtype whose bitwidth divides the region size "
        "(e.g. view as i8/i16 instead of f32)",
        "Assert/validate byte length divisibility in kernel setup",
    ]
    assert record["exampleFix"] == (
        "# before\n"
        "buf = alloc_smem((6,), jnp.uint8))\n"
        "v = buf.view(jnp.float32)  # 48 bits % 32 != 0\n"
        "# after\n"
        "buf = alloc_smem((8,), jnp.uint8))\n"
        "v = buf.view(jnp.float32)  # 64 bits / 32 = 2 elements"
    )
    assert record["handlingStrategy"] == "validation"
    assert record["validationCode"] == (
        "n_bytes = int(buf.shape[0]) if buf.dtype == jnp.uint8 else None\n"
        "target_bits = jnp.dtype(target_dtype).itemsize * 8\n"
        "assert n_bytes is not None and (n_bytes * 8) % target_bits == 0, "
        "f'{n_bytes}B not divisible by {target_dtype}'"
    )
    assert record["typeGuard"] == (
        "def fits_bitcast(n_bytes: int, target: jnp.dtype) -> bool:\n"
        "    return (n_bytes * 8) % (jnp.dtype(target).itemsize * 8) == 0"
    )
    assert record["preventionTips"] == [
        "Allocate buffers in multiples of the widest target dtype size",
        "Validate sizes once at kernel-launch config time",
        "Pad dynamically-sized buffers to dtype multiples",
    ]
    assert record["triggerScenarios"].startswith("Viewing an i8 SMEM buffer whose length")
    assert record["commonSituations"].startswith("Dynamic block sizes that produce")
    assert record["relatedErrors"] == []
    assert record["analyzedAt"] == "2026-08-27"

    assert record["errorCode"] is None
    assert record["messagePattern"] is None
    assert record["httpStatus"] is None
    assert record["tryCatchPattern"] is None
    assert record["tags"] == []
    assert record["backgroundTag"] is None
    assert record["schemaVersion"] == 2


def test_page_002_fields() -> None:
    record = parse_page(PAGE_002, resolve_sha=resolve)

    assert record["id"] == "b6ff9cfce0e99931"
    assert record["errorMessage"] == "Only byte-aligned bitcasts are supported."
    assert record["slug"] == "only-byte-aligned-bitcasts-are-supported"
    assert record["errorClass"] == "NotImplementedError"
    assert record["filePath"] == LOWERING
    assert record["lineNumber"] == 1593
    assert (record["sourceCodeStart"], record["sourceCodeEnd"]) == (1575, 1611)
    assert line_at(record, 1593).strip() == (
        'raise NotImplementedError("Only byte-aligned bitcasts are supported.")'
    )
    assert record["githubUrl"] == (
        f"https://github.com/jax-ml/jax/blob/{FULL_SHA}/{LOWERING}#L1575-L1611"
    )
    assert record["solutions"] == [
        "Pad the block/element count so total bits are byte-aligned",
        "Promote sub-byte dtypes to i8 before aliasing",
        "Repack data so aliased regions start and end on byte boundaries",
    ]
    # No "Defensive patterns" here: the validation snippet and the type guard trail the fix.
    assert record["exampleFix"] == (
        "# before\n"
        "b = alloc_smem((3,), jnp.int4))  # 12 bits total\n"
        "v = b.view(...)\n"
        "# after\n"
        "b = alloc_smem((4,), jnp.int4))  # 16 bits, byte-aligned\n"
        "v = b.view(...)"
    )
    assert record["validationCode"] == (
        "total_bits = int(np.prod(shape)) * jnp.dtype(dt).itemsize * 8\n"
        "assert total_bits % 8 == 0, f'{total_bits} bits is not byte-aligned'"
    )
    assert record["typeGuard"] == (
        "def is_byte_aligned(shape, dt) -> bool:\n"
        "    return (int(np.prod(shape)) * jnp.dtype(dt).itemsize * 8) % 8 == 0"
    )
    assert record["handlingStrategy"] is None
    assert record["preventionTips"] == []
    assert record["triggerScenarios"].startswith("Aliasing/biting an SMEM ref")
    assert record["commonSituations"].startswith("Using sub-byte packed dtypes")
    assert record["relatedErrors"] == [
        "Only workgroup memory is supported but got {ref}.",
        "Can not bitcast memory region of size {shape_bitwidth} bits",
        "packed, collective and layout arguments are only supported f",
        "Only byte-aligned shapes are supported. Got shape: {ref.dtyp",
        "All aliased Refs must have the same memory space (SMEM or TM",
    ]
    assert record["analyzedSha"] == FULL_SHA
    assert record["analyzedAt"] == "2026-08-27"


def test_unresolved_sha_stays_abbreviated() -> None:
    record = parse_page(PAGE_004, resolve_sha=lambda prefix: None)
    assert record["analyzedSha"] == "1e1c6a8fc0"
    assert record["githubUrl"] == (
        f"https://github.com/jax-ml/jax/blob/1e1c6a8fc0/{LOWERING}#L1483-L1519"
    )
    assert parse_page(PAGE_004)["analyzedSha"] == "1e1c6a8fc0"


@pytest.mark.parametrize("seed", [RECORD_000, RECORD_001], ids=["000", "001"])
def test_source_window_matches_json_seed(seed: dict[str, Any]) -> None:
    """Seed 000's window ends on a blank line and seed 001's starts on one."""
    page = minimal_page(seed["errorMessage"], source_section(seed))
    record = parse_page(page, resolve_sha=resolve)
    for field in ("filePath", "lineNumber", "sourceCode", "sourceCodeStart", "sourceCodeEnd"):
        assert record[field] == seed[field], field
    assert record["githubUrl"] == seed["githubUrl"]
    assert record["analyzedSha"] == seed["analyzedSha"]


def test_window_is_placed_by_the_raise_of_this_error() -> None:
    """With three lines cut from the window's top the raise, not the convention, decides."""
    cut = "\n".join(PAGE_004.split("\n")[:19] + PAGE_004.split("\n")[22:])
    record = parse_page(cut)
    assert (record["sourceCodeStart"], record["sourceCodeEnd"]) == (1486, 1519)
    assert line_at(record, 1501) == "    raise ValueError("


@pytest.mark.parametrize(("line_number", "start"), [(100, 82), (5, 1)])
def test_window_without_a_matching_raise_follows_the_convention(
    line_number: int, start: int
) -> None:
    code = "\n".join(f"x{k} = {k}" for k in range(min(line_number + 18, 37)))
    source = f"Source\n\nThrown at a.py:{line_number}\n\n{code}"
    record = parse_page(minimal_page("Something else went wrong entirely", source))
    assert record["sourceCodeStart"] == start
    assert record["sourceCode"] == code
    assert record["githubUrl"] == (
        f"https://github.com/jax-ml/jax/blob/1e1c6a8fc0/a.py#L{start}-L{record['sourceCodeEnd']}"
    )


def test_heading_like_line_inside_the_source_block_is_code() -> None:
    code = 'def f():\n\nSolutions\n\n    raise ValueError("Boom went the kernel again, loudly")'
    source = f"Source\n\nThrown at a.py:5\n\n{code}\n\nView on GitHub (pinned to 1e1c6a8fc0)"
    record = parse_page(minimal_page("Boom went the kernel again, loudly", source))
    assert record["sourceCode"] == code
    assert (record["sourceCodeStart"], record["sourceCodeEnd"]) == (1, 5)
    assert record["solutions"] == []


def test_missing_optional_sections_are_empty() -> None:
    record = parse_page(minimal_page("Boom."))
    assert record["id"] == "0123456789abcdef"
    assert record["errorMessage"] == "Boom."
    for field in (
        "filePath",
        "lineNumber",
        "sourceCode",
        "sourceCodeStart",
        "sourceCodeEnd",
        "githubUrl",
        "documentation",
        "triggerScenarios",
        "commonSituations",
        "exampleFix",
        "handlingStrategy",
        "validationCode",
        "typeGuard",
    ):
        assert record[field] is None, field
    for field in ("solutions", "preventionTips", "tags", "relatedErrors"):
        assert record[field] == [], field
    assert record["analyzedSha"] == "1e1c6a8fc0"


def test_crlf_and_trailing_whitespace_are_ignored() -> None:
    messy = "\r\n".join(f"{line}  \t" for line in PAGE_004.split("\n"))
    assert parse_page(messy) == parse_page(PAGE_004)


def test_missing_header_is_unparseable() -> None:
    page = PAGE_004.split("\n", 1)[1]  # the title is now on line 2
    with pytest.raises(PageParseError) as caught:
        parse_page(page)
    assert (caught.value.field, caught.value.line) == ("repo", 2)
    assert "repo" in str(caught.value)
    assert "line 2" in str(caught.value)


def test_empty_page_is_unparseable() -> None:
    with pytest.raises(PageParseError) as caught:
        parse_page(" \n\n")
    assert (caught.value.field, caught.value.line) == ("repo", None)


def test_missing_footer_is_unparseable() -> None:
    page = PAGE_004.rstrip("\n").rsplit("\n", 1)[0]
    with pytest.raises(PageParseError) as caught:
        parse_page(page)
    assert (caught.value.field, caught.value.line) == ("id", None)
    assert "id" in str(caught.value)


def test_missing_error_message_is_unparseable() -> None:
    page = without_lines(PAGE_002, "Error message")
    with pytest.raises(PageParseError) as caught:
        parse_page(page)
    assert (caught.value.field, caught.value.line) == ("errorMessage", None)


def test_empty_error_message_is_unparseable() -> None:
    lines = PAGE_002.split("\n")
    assert lines[4:7] == ["Error message", "", "Only byte-aligned bitcasts are supported."]
    page = "\n".join(lines[:6] + lines[7:])
    with pytest.raises(PageParseError) as caught:
        parse_page(page)
    assert (caught.value.field, caught.value.line) == ("errorMessage", 5)


def test_title_contradicting_the_message_is_unparseable() -> None:
    page = PAGE_004.replace("Can not bitcast memory region", "Cannot view memory region", 1)
    with pytest.raises(PageParseError) as caught:
        parse_page(page)
    assert (caught.value.field, caught.value.line) == ("errorMessage", 3)


@given(st.text())
def test_arbitrary_text_fails_only_with_page_parse_error(text: str) -> None:
    with contextlib.suppress(PageParseError):
        parse_page(text)


@given(
    page=st.sampled_from([PAGE_002, PAGE_004]),
    dropped=st.sets(st.integers(min_value=0, max_value=120)),
    noise=st.lists(st.tuples(st.integers(min_value=0, max_value=120), st.text())),
)
def test_damaged_pages_fail_only_with_page_parse_error(
    page: str, dropped: set[int], noise: list[tuple[int, str]]
) -> None:
    lines = [line for k, line in enumerate(page.split("\n")) if k not in dropped]
    for at, text in noise:
        lines.insert(at, text)
    try:
        record = parse_page("\n".join(lines))
    except PageParseError:
        return
    assert record["errorMessage"]
    assert record["id"]
