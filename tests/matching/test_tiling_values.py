"""read_tiled_refs: the tiled SMEM refs a paste's code writes, for a bare AssertionError."""

from __future__ import annotations

from app.matching.tiling_values import MAX_CALLS, MAX_READ, read_tiled_refs


def test_a_tiling_bound_to_a_name_and_used_in_a_wrapped_call() -> None:
    code = """tiling = plgpu.TilingTransform((8, 32))
swizzle = plgpu.SwizzleTransform(64)
scratch_shapes=[
    plgpu.SMEM(
        (16, 48),
        jnp.float16,
        transforms=(tiling, swizzle),
    ),
]"""
    [ref] = read_tiled_refs(code)
    assert (ref.shape, ref.dtype, ref.tiling, ref.swizzle) == ((16, 48), "float16", (8, 32), 64)
    assert (ref.tiling_written, ref.line_number) == ("(8, 32)", 4)


def test_inline_transforms_a_blockspec_without_a_dtype_and_untiled_refs() -> None:
    code = (
        "a = plgpu.SMEM((128, 64), jnp.bfloat16)\n"
        "b = plgpu.BlockSpec((100, 64), lambda i: (i, 0), "
        "transforms=[plgpu.TilingTransform((8, 64))])\n"
        "c = SMEM((4, 256), dtype=np.int8, transforms=(plgpu.TilingTransform((4, 128)),))\n"
    )
    refs = read_tiled_refs(code)
    assert [(r.shape, r.dtype, r.tiling) for r in refs] == [
        ((100, 64), None, (8, 64)),
        ((4, 256), "int8", (4, 128)),
    ]


def test_prose_and_unknown_dtypes_are_not_values() -> None:
    said = "the SMEM((16, 48)) ref with TilingTransform((8, 32)) fails"
    assert read_tiled_refs(said) == []
    [ref] = read_tiled_refs("SMEM((16, 48), jnp.float99, transforms=(TilingTransform((8, 32)),))")
    assert ref.dtype is None


def test_a_paste_of_many_calls_is_read_to_a_bound() -> None:
    one = "plgpu.SMEM((16, 48), jnp.float16, transforms=(plgpu.TilingTransform((8, 32)),))\n"
    assert len(read_tiled_refs(one * 5000)) == MAX_READ
    assert read_tiled_refs("SMEM(" * MAX_CALLS + one) == []  # past the calls looked into
