from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.jaxref.templates import (
    PatternError,
    compile_pattern,
    derive_pattern,
    split_template,
)

from .catalog import CATALOG, EXAMPLES, WORDED


def test_catalog_has_all_rules() -> None:
    assert len(CATALOG) == 25
    assert len(WORDED) == 24  # the TilingTransform check is a bare assert


@pytest.mark.parametrize(("rule_id", "template", "text", "captures"), EXAMPLES)
def test_derived_pattern_matches_rendered_example(
    rule_id: str, template: str, text: str, captures: dict[str, str]
) -> None:
    pattern = derive_pattern(template)
    match = compile_pattern(pattern).search(text)
    assert match is not None, rule_id
    assert match.groupdict() == captures
    assert re.search(pattern, text) is not None  # the same pattern works in Python's re


@pytest.mark.parametrize("rule", WORDED, ids=lambda rule: rule["rule_id"])
def test_older_templates_compile(rule: dict[str, object]) -> None:
    for template in rule.get("older_templates", []):
        compile_pattern(derive_pattern(str(template)))


def test_self_documenting_field() -> None:
    assert derive_pattern("Got {bytes=} but") == r"Got bytes=(?P<bytes>\d+) but"


def test_constant_and_expression_names() -> None:
    pattern = derive_pattern("{WARPGROUP_SIZE} {swizzle*8//bw} {fa.WARPGROUP_SIZE}")
    assert re.compile(pattern).groupindex.keys() == {
        "warpgroup_size",
        "swizzle_8_bw",
        "warpgroup_size_2",
    }
    assert r"(?P<swizzle_8_bw>\d+)" in pattern


def test_dtype_glued_to_shape() -> None:
    match = re.search(derive_pattern("Got shape: {ref.dtype}{ref.shape}"), "Got shape: int4(3,)")
    assert match is not None
    assert match.groupdict() == {"dtype": "int4", "shape": "(3,)"}


def test_tuple_call_is_a_shape() -> None:
    pattern = derive_pattern("got {tuple(slice_shape)}")
    match = re.search(pattern, "got (8, 512)")
    assert match is not None
    assert match["shape"] == "(8, 512)"


def test_a_slice_is_what_it_slices_and_a_tuple_of_arithmetic_no_number() -> None:
    """Mosaic GPU's ``{tuple(slice_shape[len(squeezed_dims):])}`` prints a shape: the ``len``
    inside is not what is printed."""
    pattern = derive_pattern(
        "same shape: {tuple(ref.shape)} != {tuple(slice_shape[len(squeezed_dims):])}"
    )
    match = re.search(pattern, "same shape: (128, 128) != (256, 128)")
    assert match is not None and match["shape_2"] == "(256, 128)"
    assert re.search(derive_pattern("got {tuple(a + b)}"), "got (1, 2)") is not None
    assert r"(?P<len_dims>\d+)" in derive_pattern("got {len(dims)}")


@pytest.mark.parametrize("printed", ["(8, 128)", "[8, 128]"])
def test_a_types_shape_is_read_in_either_brackets(printed: str) -> None:
    """An MLIR type's shape prints as a list, an aval's (``expected_out_ty``) as a tuple."""
    for template in ("Expected shape: {expected_out_ty.shape}.", "shape={dst_ty.shape}."):
        match = re.search(derive_pattern(template), f"{template.split('{')[0]}{printed}.")
        assert match is not None and match["shape"] == printed, template


@pytest.mark.parametrize(
    "printed", ["float32[8,128]", "memref<8x128xf32, #gpu.address_space<workgroup>>"]
)
def test_a_type_is_read_as_mlir_prints_it_or_as_an_aval(printed: str) -> None:
    """Mosaic's ``{x_ty}`` is an MLIR type; lax's ``{exp_type}`` an aval."""
    template = "input type={arr_aval} and requested type={exp_type}"
    line = f"input type=float32[3,128] and requested type={printed}"
    match = re.fullmatch(derive_pattern(template), line)
    assert match is not None
    assert match.groupdict() == {"arr_aval": "float32[3,128]", "memref": printed}


def test_a_message_ending_in_a_space_matches_the_line_pasted_without_it() -> None:
    pattern = derive_pattern(
        "Invalid dtype for `swap`. Ref dtype: {ref.dtype}. Value dtype: {v.dtype}. "
    )
    line = "Invalid dtype for `swap`. Ref dtype: float32. Value dtype: int32."
    match = re.fullmatch(pattern, line)
    assert match is not None and match["dtype_2"] == "int32"


def test_trailing_text_group_takes_rest_of_line() -> None:
    match = re.search(derive_pattern("got: {result}"), "got: complex<f32> here")
    assert match is not None
    assert match["result"] == "complex<f32> here"


def test_empty_text_placeholder() -> None:
    pattern = derive_pattern("No valid out swizzle{what}: minor dimension has {bits} bits")
    match = re.search(pattern, "No valid out swizzle: minor dimension has 192 bits")
    assert match is not None
    assert match["what"] == ""


def test_double_space_tolerates_collapsed_space() -> None:
    pattern = derive_pattern("does not fit swizzle:  expected {e}, got {t}")
    assert re.search(pattern, "does not fit swizzle: expected 64, got 32")
    assert re.search(pattern, "does not fit swizzle:  expected 64, got 32")


def test_literal_braces_and_regex_characters() -> None:
    pattern = derive_pattern("a {{b}} (c) [d] *e+ ^f$ | g? \\ h. {x!r:>4}")
    assert re.fullmatch(pattern, r"a {b} (c) [d] *e+ ^f$ | g? \ h. 'v'")


@given(st.text(st.characters(blacklist_characters="{}", blacklist_categories=("Cs",))))
def test_literal_text_matches_itself_and_only_itself(text: str) -> None:
    """Every regular-expression character, tab and line break of a message is literal, but
    for the whitespace ending it, which no pasted line keeps."""
    pattern = derive_pattern(text)
    shown = text.rstrip()
    assert re.fullmatch(pattern, shown)
    for at, char in enumerate(shown):
        other = shown[:at] + ("b" if char == "a" else "a") + shown[at + 1 :]
        assert re.fullmatch(pattern, other) is None, other


@pytest.mark.parametrize(
    ("template", "printed"),
    [
        ("'tpu.iota' op iota rank below 2D unsupported", "iota rank below 2D unsupported"),
        ("'{op}' op Invalid input layout for {what}", "Invalid input layout for vreg"),
    ],
)
def test_an_ops_diagnostic_matches_with_or_without_the_op(template: str, printed: str) -> None:
    """MLIR prints ``'<op>' op <message>``; Mosaic TPU's compiler prints the message alone."""
    pattern = compile_pattern(derive_pattern(template))
    with_op = pattern.search(f"MLIRError: 'tpu.iota' op {printed}")
    assert with_op is not None and with_op.start() == len("MLIRError: ")
    alone = pattern.search(f"INTERNAL: Mosaic failed to compile TPU kernel: {printed}")
    assert alone is not None and alone.group(0) == printed
    assert pattern.search(printed[: len(printed) // 2]) is None


def test_an_op_stays_required_where_the_rest_is_too_short_to_tell() -> None:
    pattern = compile_pattern(derive_pattern("'{op}' op failed: {reason}"))
    assert pattern.search("failed: no reason") is None
    assert pattern.search("'tpu.matmul' op failed: no reason") is not None


def test_unclosed_brace_is_literal() -> None:
    assert split_template("size {oops") == ["size {oops"]


def test_conversion_and_format_spec_are_dropped() -> None:
    [placeholder] = [
        p for p in split_template("{max_concurrent_steps!r}") if not isinstance(p, str)
    ]
    assert placeholder.name == "max_concurrent_steps"
    assert placeholder.kind == "number"


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [
        (r"(?=a)b", "lookahead"),
        (r"(?<=a)b", "lookbehind"),
        (r"(a)\1", "backreference"),
        (r"a\Z", r"\z"),
        (r"\pL{1000}", "too big"),
        (r"(\w{1000}){1000}", "repetition"),
        (r".*", "empty text"),
        (r"(?P<a>x)(?P<a>y)", "duplicate group names: a"),
        ("", "empty"),
        ("a" * 5000, "too long"),
    ],
)
def test_compile_pattern_rejects(pattern: str, reason: str) -> None:
    with pytest.raises(PatternError, match=re.escape(reason)):
        compile_pattern(pattern)


def test_pattern_error_is_a_value_error() -> None:
    assert issubclass(PatternError, ValueError)
