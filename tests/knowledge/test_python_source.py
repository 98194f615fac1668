"""The Python miner on a fixture package that holds every message form it reads."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from app.jaxref.scope import SourceTreeError, backend_of, repo_root
from app.knowledge.python_source import mine_python
from app.knowledge.sites import Site

SOURCE = Path(__file__).parents[1] / "fixtures" / "jax_source"
LOWERING = "jax/_src/pallas/mosaic_gpu/lowering.py"


@pytest.fixture(scope="module")
def sites() -> list[Site]:
    return mine_python(SOURCE)


def one(sites: list[Site], fragment: str) -> Site:
    found = [site for site in sites if fragment in (site.template or f"assert {site.condition}")]
    assert len(found) == 1, [s.template for s in found]
    return found[0]


def test_fstring_with_implicit_concatenation_is_the_seeds_template(sites: list[Site]) -> None:
    site = one(sites, "integer bytes")
    assert site.template == (
        "Can only transfer integer bytes (shape={dst_ty.shape}, dtype={dst_ty.element_type})"
    )
    assert site.pattern == r"Can only transfer integer bytes \(shape=(.+?), dtype=(.+?)\)"
    assert (site.file_path, site.line, site.kind) == (LOWERING, 28, "raise")
    assert site.error_class == "ValueError"
    assert site.function == "_copy_gmem_to_smem_lowering"
    assert site.backend == "mosaic_gpu"
    assert site.condition == "bits % 8"
    assert site.definitions == (
        "dst_ty = ir.MemRefType(dst.type)",
        "bits = math.prod(dst_ty.shape) * mgpu.bitwidth(dst_ty.element_type)",
    )
    assert site.lowering_rule == (
        "@register_lowering_rule(primitives.copy_gmem_to_smem_p, mgpu.LoweringSemantics.Lane)"
    )


def test_self_documenting_value_keeps_its_spelling(sites: list[Site]) -> None:
    site = one(sites, "warpgroup size")
    assert site.template == (
        "Only copies transferring a number of bytes divisible by the warpgroup size are"
        " supported. Got {bytes=} but warpgroup size is {WARPGROUP_SIZE}"
    )
    assert site.pattern.endswith(r"supported\. Got (.+?) but warpgroup size is (.+?)")
    assert site.condition == "bytes % WARPGROUP_SIZE"
    assert "bytes = bits // 8" in site.definitions


def test_else_branch_is_guarded_by_the_negated_test(sites: list[Site]) -> None:
    site = one(sites, "left over")
    assert site.template == "Plus {str(bytes)} bytes left over"
    assert site.condition == "not (bytes % WARPGROUP_SIZE)"


def test_code_for_type_checkers_alone_is_not_mined_and_its_else_is(sites: list[Site]) -> None:
    """JAX never runs what stands under ``if TYPE_CHECKING:``: its Python ``safe_map`` and
    ``safe_zip`` there raise nothing that a user can meet (jaxlib's C++ ones run instead)."""
    of_util = [site for site in sites if site.file_path == "jax/_src/util.py"]
    assert [(site.template, site.condition) for site in of_util] == [
        ("jaxlib's utils are missing for safe_zip", "jaxlib_utils is None")
    ]


def test_printf_formatting(sites: list[Site]) -> None:
    site = one(sites, "Cannot take")
    assert site.template == "Cannot take {'abs'} of {x.bits}-bit {x.dtype}"
    assert site.error_class == "TypeError"


def test_str_format_with_positional_and_keyword_fields(sites: list[Site]) -> None:
    assert one(sites, "Rank").template == "Rank {x.ndim} is more than {2}"


def test_an_fstring_formatted_again_is_the_fstrings_message(sites: list[Site]) -> None:
    """``str.format`` of an f-string with no brace left changes nothing; one whose text
    still holds braces is formatted again at run time, and is not read as the f-string."""
    site = one(sites, "requires ndarray")
    assert site.template == (
        "{fun_name} requires ndarray or scalar arguments, got {type(arg)} at position {pos}."
    )
    assert one(sites, "msg.format(name)").function == "check_braces"


def test_message_bound_to_a_local_and_extended(sites: list[Site]) -> None:
    site = one(sites, "a scalar")
    assert site.template == "abs of a scalar {x} is not lowered"
    assert site.error_class == "NotImplementedError"


def test_helper_building_the_exception_is_one_call_away(sites: list[Site]) -> None:
    site = one(sites, "Unsupported in Mosaic GPU lowering")
    assert site.template == "Unsupported in Mosaic GPU lowering: {what}"
    assert site.error_class == "NotImplementedError"
    assert site.function == "_abs_lowering_rule"


def test_helper_building_the_message_is_one_call_away(sites: list[Site]) -> None:
    assert one(sites, "Bad block shape").template == "Bad block shape {shape}"


def test_assert_with_a_message_and_a_bare_assert(sites: list[Site]) -> None:
    with_message = one(sites, "expected a matrix")
    assert with_message.kind == "assert"
    assert with_message.error_class == "AssertionError"
    assert with_message.template == "expected a matrix, got {x.ndim=}"
    assert with_message.condition == "x.ndim == 2"
    bare = one(sites, "assert all(")
    assert bare.template == ""
    assert bare.condition == "all((d % t == 0 for d, t in zip(x.shape, (8, 128))))"


def test_a_raise_without_a_message_is_a_site_and_a_re_raise_is_not(sites: list[Site]) -> None:
    """``raise NotImplementedError`` prints the class alone: the site is kept, for the
    frames to find; ``raise`` and ``raise e`` re-raise what another site raised."""
    scan = [site for site in sites if site.function == "_scan_lowering_rule"]
    assert [(s.line, s.kind, s.error_class, s.template, s.condition) for s in scan] == [
        (81, "raise", "NotImplementedError", "", "num_extensive"),
        (83, "raise", "NotImplementedError", "", "jaxpr.effects"),
    ]


def test_method_of_a_class_is_named_with_its_class(sites: list[Site]) -> None:
    site = one(sites, "does not fit")
    assert site.function == "TilingTransform.transform_shape"
    assert site.template == "Tiling {self.tiling} does not fit {shape!r}"
    assert site.lowering_rule is None


def test_every_template_renders_into_what_its_pattern_matches(sites: list[Site]) -> None:
    for site in sites:
        if not site.template:
            continue
        rendered = re.sub(r"\{[^{}]*\}", "VALUE", site.template)
        assert re.fullmatch(site.pattern, rendered), site.template


def test_backend_follows_the_path(sites: list[Site]) -> None:
    triton = [site for site in sites if site.file_path.startswith("jax/_src/pallas/triton/")]
    assert [site.backend for site in triton] == ["triton"]
    assert backend_of("jax/_src/pallas/mosaic/lowering.py") == "tpu"
    assert backend_of("jax/experimental/mosaic/gpu/utils.py") == "mosaic_gpu"
    assert backend_of("jax/_src/pallas/core.py") == "core"


def test_the_kernels_jax_ships_are_mined_with_their_backends_and_not_its_examples(
    sites: list[Site],
) -> None:
    shipped = {
        site.template: (site.file_path, site.backend)
        for site in sites
        if site.file_path.startswith("jax/experimental/pallas/ops/")
    }
    ops = "jax/experimental/pallas/ops"
    assert shipped == {
        "{block_name}={block} should be smaller or equal to {dim_name}={dim}": (
            f"{ops}/tpu/flash_attention.py",
            "tpu",
        ),
        "{dim_name}={dim} should be divisible by {block_name}={block}": (
            f"{ops}/tpu/flash_attention.py",
            "tpu",
        ),
        "head_dim must be a multiple of 64, got {q.shape[-1]}": (
            f"{ops}/gpu/attention_mgpu.py",
            "mosaic_gpu",
        ),
        "{k.shape[0]=} must be a multiple of {block_k=}": (
            f"{ops}/gpu/decode_attention.py",
            "triton",
        ),
    }
    # Before 0.4.2x the GPU kernels stood in ops/ itself: Triton's.
    assert backend_of(f"{ops}/attention.py") == "triton"


def test_mosaic_tpus_passes_as_python_ran_them_are_tpus(sites: list[Site]) -> None:
    """Up to 0.4.23 jaxlib held Mosaic TPU's passes in Python too; 0.4.20 ran them."""
    site = one(sites, "unsupported layout change for")
    assert (site.file_path, site.function, site.backend) == (
        "jaxlib/mosaic/python/apply_vector_layout.py",
        "relayout",
        "tpu",
    )


def test_an_installed_package_and_a_checkout_read_alike(tmp_path: Path) -> None:
    assert repo_root(SOURCE) == SOURCE.resolve()
    assert repo_root(SOURCE / "jax") == SOURCE.resolve()
    with pytest.raises(SourceTreeError):
        repo_root(tmp_path)
