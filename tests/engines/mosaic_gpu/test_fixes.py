"""suggest_fixes(): verified, minimal, ranked by added bytes, with runnable snippets."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.engines.mosaic_gpu import DTYPES, InputValueError, check, resolve, suggest_fixes
from app.engines.mosaic_gpu.versions import render_version

SHAPED = ["copy_gmem_to_smem", "copy_smem_to_gmem", "pallas_call", "ref_union", "smem_alias"]
COMMON_DTYPES = [
    "bool", "int2", "int4", "uint4", "float4_e2m1fn", "int8", "float8_e4m3fn",
    "float8_e4m3", "bfloat16", "float16", "int16", "float32", "int32",
]  # fmt: skip
quick = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def test_int4_copy_pads_to_the_first_size_passing_both_byte_checks() -> None:
    best = suggest_fixes("copy_gmem_to_smem", [7], "int4")[0]
    assert (best.kind, best.axis, best.shape, best.dtype) == ("pad", -1, (256,), "int4")
    assert best.added_bytes == 124.5  # 256 × 4 bits = 128 bytes, minus 3.5
    assert best.verified
    assert best.code.before == "plgpu.SMEM((7,), jnp.int4)"
    assert best.code.after == "plgpu.SMEM((256,), jnp.int4)"
    assert "ml_dtypes.iinfo(dtype).bits" in best.validation


def test_quickstart_pads_to_128_elements() -> None:
    best = suggest_fixes("pallas_call", [8], "float32")[0]
    assert (best.shape, best.added_bytes) == ((128,), 480.0)
    assert best.code.after == "jax.ShapeDtypeStruct((128,), jnp.float32)"


def test_pallas_call_int4_can_only_be_promoted() -> None:
    fixes = suggest_fixes("pallas_call", [7], "int4")
    assert {fix.kind for fix in fixes} == {"promote"}
    assert (fixes[0].dtype, fixes[0].shape) == ("int16", (128,))


def test_long_block_is_reshaped_to_2d() -> None:
    best = suggest_fixes("pallas_call", [1024], "float32")[0]
    assert (best.kind, best.shape, best.added_bytes) == ("reshape", (4, 256), 0.0)


def test_bool_block_is_promoted_and_reshaped() -> None:
    best = suggest_fixes("copy_gmem_to_smem", [1024], "bool")[0]
    assert (best.kind, best.dtype, best.shape) == ("promote", "int8", (4, 256))


def test_bitcast_pads_the_buffer_before_offering_other_views() -> None:
    """Reading the data as another type is rarely what the user meant; padding is."""
    pad, *views = suggest_fixes("smem_bitcast", [6], "uint8", "float32")
    assert (pad.kind, pad.shape, pad.added_bytes, pad.target_dtype) == ("pad", (8,), 2.0, "float32")
    assert pad.code.after == "plgpu.SMEM((8,), jnp.uint8)  # viewed as jnp.float32"
    assert pad.note == ""
    assert [fix.target_dtype for fix in views] == ["bfloat16", "float16", "int16"]
    assert all("only if the buffer holds" in fix.note for fix in views)


@pytest.mark.parametrize("size", [3, 5, 7, 9])
@pytest.mark.parametrize("target", ["int16", "float32", "bfloat16", "int32"])
def test_no_exotic_view_unless_the_user_has_one(size: int, target: str) -> None:
    fixes = suggest_fixes("smem_bitcast", [size], "uint8", target, limit=20)
    assert fixes[0].kind == "pad" and fixes[0].target_dtype == target
    offered = {fix.target_dtype for fix in fixes}
    assert not {name for name in offered if name.startswith(("float8", "float6", "float4"))}
    assert not offered & {"bool", "int2", "uint2", "int4", "uint4"}


def test_narrow_float_views_are_offered_to_a_narrow_float_user() -> None:
    fixes = suggest_fixes("smem_bitcast", [5], "uint8", "float6_e2m3fn", limit=20)
    views = [fix.target_dtype or "" for fix in fixes if fix.kind == "view"]
    assert views and all(view.startswith(("float8", "float4")) for view in views)


def test_fixes_keeping_the_dtypes_rank_before_type_changes() -> None:
    for case in (
        ("copy_gmem_to_smem", [7], "int4", None),
        ("copy_gmem_to_smem", [3, 5], "int4", None),
        ("smem_bitcast", [6], "uint8", "float32"),
    ):
        fixes = suggest_fixes(*case, limit=10)
        kept = [(fix.dtype, fix.target_dtype) == (case[2], case[3]) for fix in fixes]
        assert kept == sorted(kept, reverse=True), case
        assert kept[0], case


def test_a_promotion_says_the_data_must_be_converted() -> None:
    promoted = [
        fix for fix in suggest_fixes("copy_gmem_to_smem", [7], "int4") if fix.kind == "promote"
    ]
    assert promoted and all("x.astype(jnp." in fix.note for fix in promoted)
    assert "every int4 value is exact in int8" in promoted[0].note
    (narrowed,) = [
        fix for fix in suggest_fixes("copy_gmem_to_smem", [7], "float64") if fix.kind == "promote"
    ]
    assert "float32 cannot hold every float64 value exactly" in narrowed.note


@pytest.mark.parametrize(
    ("operation", "shape", "dtype"),
    [
        ("pallas_call", (3, 7), "float32"),
        ("copy_gmem_to_smem", (3, 5), "int4"),
        ("pallas_call", (), "float32"),
    ],
)
def test_a_reshape_keeps_the_element_count_and_more_elements_is_a_pad(
    operation: str, shape: tuple[int, ...], dtype: str
) -> None:
    fixes = suggest_fixes(operation, shape, dtype, limit=10)
    for fix in fixes:
        if fix.kind == "reshape":
            assert math.prod(fix.shape) == math.prod(shape), fix
        elif fix.kind == "pad" and fix.axis is None:
            assert math.prod(fix.shape) > math.prod(shape)
            assert fix.description.startswith("pad ") and "reshape" in fix.description
    best = fixes[0]
    assert best.kind == "pad"


def test_the_quickstart_3x7_pads_its_last_axis_before_a_flatten() -> None:
    """A pad that keeps the block's axes ranks first, though the flatten adds fewer bytes:
    it moves no data, where a flatten changes what every index reads."""
    best, *others = suggest_fixes("pallas_call", [3, 7], "float32")
    assert (best.kind, best.axis, best.shape) == ("pad", -1, (3, 128))
    [flat] = [fix for fix in others if fix.axis is None]
    assert flat.description == "pad the 21 elements to 128 and reshape (3, 7) to (128,)"
    assert flat.added_bytes < best.added_bytes


def test_no_fix_for_a_passing_case() -> None:
    assert suggest_fixes("copy_gmem_to_smem", [256], "int4") == []


def test_huge_dimensions_are_answered_without_scanning_them() -> None:
    assert suggest_fixes("copy_gmem_to_smem", [2**31], "int4") == []
    for fix in suggest_fixes("copy_smem_to_gmem", [3, 2**24 - 1], "int8"):
        assert check("copy_smem_to_gmem", fix.shape, fix.dtype).ok


def _keeps_axes(shape: tuple[int, ...], fixed: tuple[int, ...]) -> bool:
    if len(fixed) != len(shape):
        return False
    return all(new >= old for new, old in zip(fixed, shape, strict=True))


def test_ranked_by_dtype_then_axes_kept_then_added_bytes_and_limited() -> None:
    fixes = suggest_fixes("copy_gmem_to_smem", [3, 5], "int4", limit=8)
    assert len(fixes) <= 8
    ranks = [(fix.dtype != "int4", not _keeps_axes((3, 5), fix.shape)) for fix in fixes]
    assert ranks == sorted(ranks)
    assert ranks[0] == (False, False)  # a pad of the block's own axes comes first
    for rank in set(ranks):
        added = [fix.added_bytes for fix, each in zip(fixes, ranks, strict=True) if each == rank]
        assert added == sorted(added)


@quick
@given(
    st.sampled_from(SHAPED),
    st.lists(st.integers(0, 300), min_size=1, max_size=3).map(tuple),
    st.sampled_from(COMMON_DTYPES),
)
def test_every_fix_passes_check(operation: str, shape: tuple[int, ...], dtype: str) -> None:
    for fix in suggest_fixes(operation, shape, dtype):
        assert fix.verified
        assert check(operation, fix.shape, fix.dtype, fix.target_dtype).ok
        old_bits = math.prod(shape) * DTYPES[dtype].bits
        assert fix.added_bytes == (math.prod(fix.shape) * DTYPES[fix.dtype].bits - old_bits) / 8


@quick
@given(st.integers(1, 400), st.sampled_from(["uint8", "int8"]), st.sampled_from(COMMON_DTYPES))
def test_bitcast_fixes_pass_check(size: int, dtype: str, target: str) -> None:
    for fix in suggest_fixes("smem_bitcast", [size], dtype, target):
        assert check("smem_bitcast", fix.shape, fix.dtype, fix.target_dtype).ok


@quick
@given(st.sampled_from(SHAPED), st.integers(0, 300), st.sampled_from(COMMON_DTYPES))
def test_no_smaller_padding_passes(operation: str, size: int, dtype: str) -> None:
    for fix in suggest_fixes(operation, [size], dtype, limit=10):
        if fix.kind == "pad" and fix.axis is not None:
            (padded,) = fix.shape
            assert padded > size
            smaller = range(size + 1, padded)
            assert not any(check(operation, [n], dtype).ok for n in smaller)


def run_validation(snippet: str) -> None:
    exec(compile(snippet, "<validation>", "exec"), {})


@pytest.mark.parametrize(
    ("operation", "shape", "dtype", "target"),
    [
        ("copy_gmem_to_smem", (7,), "int4", None),
        ("pallas_call", (8,), "float32", None),
        ("pallas_call", (3, 5), "bfloat16", None),
        ("ref_union", (3,), "int4", None),
        ("smem_bitcast", (6,), "uint8", "float32"),
    ],
)
def test_validation_snippet_accepts_the_fix_and_rejects_the_original(
    operation: str, shape: tuple[int, ...], dtype: str, target: str | None
) -> None:
    fix = suggest_fixes(operation, shape, dtype, target)[0]
    run_validation(fix.validation)
    original = fix.validation.replace(f"shape, dtype = {fix.shape!r}", f"shape, dtype = {shape!r}")
    original = original.replace(f"jnp.{fix.dtype}\n", f"jnp.{dtype}\n", 1)
    if target is not None:
        original = original.replace(f"jnp.{fix.target_dtype}\n", f"jnp.{target}\n", 1)
    assert original != fix.validation
    with pytest.raises(AssertionError):
        run_validation(original)


MODELLED_RELEASES = (
    "0.7.0", "0.7.1", "0.7.2", "0.8.0", "0.8.1", "0.8.2", "0.8.3", "0.9.0", "0.9.0.1", "0.9.1",
    "0.9.2", "0.10.0", "0.10.1", "0.10.2", "0.11.0", "0.11.1", "0.11.2", "0.12.0", "0.12.0.1",
)  # fmt: skip


def test_a_fix_for_several_releases_passes_in_each_and_is_the_smallest_that_does() -> None:
    """0.12.0.1 (Warpgroup by default) takes 16 bytes of int4; 0.10.2 (Lane) a multiple of
    128: a block for both is the first that both pass."""
    alone = suggest_fixes("copy_gmem_to_smem", [7], "int4", jax_version="0.12.0.1")[0]
    assert alone.shape == (32,)
    both = suggest_fixes(
        "copy_gmem_to_smem", [7], "int4", jax_version="0.12.0.1", also_in=["0.10.2"]
    )
    assert both[0].shape == (256,)
    for fix in both:
        for release in ("0.12.0.1", "0.10.2"):
            assert check("copy_gmem_to_smem", fix.shape, fix.dtype, jax_version=release).ok
    smaller = range(8, 256)
    assert not any(
        all(
            check("copy_gmem_to_smem", [n], "int4", jax_version=r).ok
            for r in ("0.12.0.1", "0.10.2")
        )
        for n in smaller
    )
    # Lane's multiple of 128 bytes is asserted too: the 0.12.0.1 fix fails the snippet.
    assert "bytes not a multiple of 128" not in alone.validation
    run_validation(both[0].validation)
    with pytest.raises(AssertionError, match="bytes not a multiple of 128"):
        run_validation(both[0].validation.replace("(256,)", "(32,)"))


@quick
@given(
    st.sampled_from(SHAPED),
    st.lists(st.integers(0, 300), min_size=1, max_size=2).map(tuple),
    st.sampled_from(COMMON_DTYPES),
    st.lists(st.sampled_from(MODELLED_RELEASES[:-1]), min_size=1, max_size=4),
)
def test_every_fix_for_several_releases_passes_check_in_each(
    operation: str, shape: tuple[int, ...], dtype: str, releases: list[str]
) -> None:
    """Releases that check alike are searched once: the fixes must still pass in each."""
    semantics = "Lane"  # modelled for every construct in every release
    try:
        fixes = suggest_fixes(
            operation, shape, dtype, jax_version="0.12.0.1", lowering_semantics=semantics,
            also_in=releases,
        )  # fmt: skip
    except InputValueError:  # a construct some release does not have
        return
    for fix in fixes:
        for release in ("0.12.0.1", *releases):
            assert check(operation, fix.shape, fix.dtype, jax_version=release,
                         lowering_semantics=semantics).ok  # fmt: skip


def test_releases_checked_alike_are_searched_once() -> None:
    case = resolve("copy_gmem_to_smem", [7], "int4", None, "0.12.0.1", None, MODELLED_RELEASES)
    assert len(case.releases) == 1 + len(MODELLED_RELEASES)
    distinct = case.in_distinct_releases
    assert 1 < len(distinct) < 8
    # Each release passes and fails the same shapes as the distinct one that stands for it.
    shapes = [[n] for n in (7, 8, 16, 32, 128, 256, 300, 512)]
    for version, semantics in case.releases:
        stands_for = next(
            each for each in distinct
            if each.operation.checks(each.version, each.semantics)
            == case.operation.checks(version, semantics)
        )  # fmt: skip
        for shape in shapes:
            asked = check("copy_gmem_to_smem", shape, "int4", jax_version=render_version(version))
            alike = check("copy_gmem_to_smem", shape, "int4",
                          jax_version=render_version(stands_for.version))  # fmt: skip
            assert asked.ok == alike.ok


@pytest.mark.parametrize(
    ("also_in", "message"),
    [
        (["0.5.0"], "not modelled"),
        (["banana"], "cannot read JAX version"),
        (["0.12.0"], "exists up to JAX 0.11.2"),
    ],
)
def test_a_release_the_engine_cannot_check_names_also_in(also_in: list[str], message: str) -> None:
    with pytest.raises(InputValueError) as raised:
        suggest_fixes(
            "smem_bitcast", [6], "uint8", "float32", jax_version="0.10.2", also_in=also_in
        )
    assert raised.value.field == "also_in"
    assert message in str(raised.value)
