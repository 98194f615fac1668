"""The Mosaic GPU alignment rules of the catalog (ranks 1 to 25), as data.

Message wordings are per JAX release. The ranges were read from the source of
each PyPI release of ``jax`` rather than guessed from commit dates (0.7.0 to
0.12.0.1 are modelled); the catalog's dated commits land in these releases:

* COPY-WARPGROUP-BYTES: bb2e2303d7 (2024-10-24) -> 0.4.36, ab57051f06
  (2025-08-18) -> 0.7.1, 26509a46a3 (2025-11-27) -> 0.8.2.
* COPY-INTEGER-BYTES: da7b1577e2 (2025-04-04) -> 0.6.0.
* TMA-LASTDIM-128BITS: e287c7ffc0 (2025-04-10) -> 0.6.0 (bits).
* TMA-BOX-256: the ``, got (...)`` tail arrived in 0.8.2.
* WGSTRIDED-ELEMENT-MULTIPLE: ``{memref}`` subject from 0.5.0 on.
* REFUNION-BYTE-ALIGNED-SHAPES: the ``Got shape: ...`` tail arrived in 0.8.2.
* REFUNION/ALIAS/BITCAST (5687a523fe, 2025-04-23) -> 0.6.1; async stores -> 0.10.1.
* WGSTRIDED-ELEMENT-MULTIPLE: the catalog's condition at main (sub-byte layouts) -> 0.11.0.
* TMA-GMEM-STRIDES-16B: reworded (``Async copies require …``) and checked after the rank
  in 0.12.0, which also copies a slice of unit dimensions as one element.
"""

from __future__ import annotations

import numpy as np

from .explanations import (
    bits_of,
    explain_bitcast_region,
    explain_box,
    explain_element_multiple,
    explain_element_multiple_sub_byte,
    explain_integer_bytes,
    explain_last_dim,
    explain_strides,
    explain_warpgroup_bytes,
    modulo,
    strided_layout_fails_sub_byte,
)
from .rule_types import (
    SUB_BYTE_STRIDED_LAYOUTS,
    TMA_MAX_BOX,
    TMA_ROW_BITS,
    WARPGROUP_SIZE,
    Rule,
    Wording,
    make_rule,
)
from .versions import OLDEST_MODELLED

CATALOG_RULES: tuple[Rule, ...] = (
    make_rule(
        "MGPU-COPY-INTEGER-BYTES",
        1,
        "A GMEM->SMEM copy must move a whole number of bytes.",
        "ValueError",
        "Can only transfer integer bytes (shape={shape_list}, dtype={element_type})",
        lambda q: q["total_bits"] % 8 != 0,
        explain_integer_bytes,
    ),
    make_rule(
        "MGPU-COPY-WARPGROUP-BYTES",
        2,
        "A TMA copy must move a multiple of 128 bytes (the warpgroup size, used as bytes).",
        "NotImplementedError",
        "Only copies transferring a number of bytes divisible by the warpgroup size are "
        "supported. Got bytes={bytes} but warpgroup size is {WARPGROUP_SIZE}",
        lambda q: q["bytes"] % WARPGROUP_SIZE != 0,
        explain_warpgroup_bytes,
        since=(0, 8, 2),
        older=(
            Wording(OLDEST_MODELLED, "NotImplementedError", "Only aligned copies are supported"),
            Wording(
                (0, 7, 1),
                "NotImplementedError",
                "Only copies transferring a number of bytes divisible by the warpgroup size "
                "are supported",
            ),
        ),
    ),
    make_rule(
        "MGPU-ALIAS-BYTE-ALIGNED-BITCAST",
        3,
        "An aliased SMEM view must cover a whole number of bytes.",
        "NotImplementedError",
        "Only byte-aligned bitcasts are supported.",
        lambda q: q["total_bits"] % 8 != 0,
        explain_integer_bytes,
        since=(0, 6, 1),
    ),
    make_rule(
        "MGPU-DTYPE-BITCAST-REGION",
        4,
        "A byte region viewed as another dtype must hold a whole number of its elements.",
        "ValueError",
        "Can not bitcast memory region of size {region_bits} bits to dtype with "
        "{target_bits} bits.",
        lambda q: q["region_bits"] % q["target_bits"] != 0,
        explain_bitcast_region,
        since=(0, 6, 1),
    ),
    make_rule(
        "MGPU-REFUNION-BYTE-ALIGNED-SHAPES",
        5,
        "Every RefUnion member must be a whole number of bytes.",
        "ValueError",
        "Only byte-aligned shapes are supported. Got shape: {dtype_name}{shape_tuple}",
        lambda q: q["total_bits"] % 8 != 0,
        explain_integer_bytes,
        since=(0, 8, 2),
        older=(Wording((0, 6, 1), "ValueError", "Only byte-aligned shapes are supported."),),
    ),
    Rule(
        "MGPU-WGSTRIDED-ELEMENT-MULTIPLE",
        6,
        "An untiled SMEM load needs a strided register layout: a multiple of 128 elements.",
        lambda q: (
            (q["bits"] % 8 != 0)
            | (np.asarray(q["elements"]) % WARPGROUP_SIZE != 0)
            | (np.asarray(q["elements"]) == 0)
        ),
        explain_element_multiple,
        (
            Wording(
                OLDEST_MODELLED,
                "ValueError",
                "{ref_ty} must have a number of elements that is a multiple of "
                "{WARPGROUP_SIZE} (got {elements})",
            ),
            Wording(  # sub-byte dtypes get a layout when the vector is whole bytes
                SUB_BYTE_STRIDED_LAYOUTS,
                "ValueError",
                "{ref_ty} must have a number of elements that is a multiple of "
                "{WARPGROUP_SIZE} (got {elements})",
                condition=strided_layout_fails_sub_byte,
                explain=explain_element_multiple_sub_byte,
            ),
        ),
    ),
    make_rule(
        "MGPU-ASYNC-STORE-INTEGER-BYTES",
        7,
        "An async SMEM store must move a whole number of bytes.",
        "ValueError",
        "Can only transfer integer bytes (shape={shape_tuple}, dtype={dtype_name})",
        lambda q: q["total_bits"] % 8 != 0,
        explain_integer_bytes,
        since=(0, 10, 1),
    ),
    make_rule(
        "MGPU-ASYNC-STORE-WARPGROUP-BYTES",
        8,
        "An async SMEM store must move a multiple of 128 bytes.",
        "NotImplementedError",
        "Transfer is not a multiple of {WARPGROUP_SIZE} bytes",
        lambda q: q["bytes"] % WARPGROUP_SIZE != 0,
        explain_warpgroup_bytes,
        since=(0, 10, 1),
    ),
    make_rule(
        "MGPU-DIALECT-ASYNC-STORE-BITS",
        9,
        "Under Warpgroup semantics an async SMEM store must move a multiple of 1024 bits.",
        "NotImplementedError",
        "Transfer of {total_bits} bits is not divisible by 1024",
        lambda q: q["total_bits"] % (8 * WARPGROUP_SIZE) != 0,
        lambda q: f"{bits_of(q)}; {modulo(q['total_bits'], 8 * WARPGROUP_SIZE)}",
        since=(0, 10, 1),
    ),
    make_rule(
        "MGPU-TMA-GMEM-STRIDES-16B",
        10,
        "Every GMEM stride but the last must be a multiple of 16 bytes.",
        "ValueError",
        "Async copies require all GMEM strides except the last one to be a multiple of 16 bytes",
        lambda q: np.any(
            np.asarray(q["gmem_strides"], dtype=np.int64) * q["bits"] % TMA_ROW_BITS != 0, axis=-1
        ),
        explain_strides,
        since=(0, 12, 0),
        older=(
            Wording(
                OLDEST_MODELLED,
                "ValueError",
                "async_copy requires all GMEM strides except the last one to be a multiple of "
                "16 bytes",
            ),
        ),
    ),
    make_rule(
        "MGPU-TMA-LASTDIM-128BITS",
        11,
        "A TMA copy must move a multiple of 128 bits along the last dimension.",
        "ValueError",
        "Async copies require the number of bits copied along the last dimension to be "
        "divisible by 128, but got {zeroth_bits}",
        lambda q: q["slice_minor"] * q["bits"] % TMA_ROW_BITS != 0,
        explain_last_dim,
        since=(0, 12, 0),
        older=(
            Wording(  # up to 0.11.2 a slice of unit dimensions failed before this check
                OLDEST_MODELLED,
                "ValueError",
                "Async copies require the number of bits copied along the last dimension to be "
                "divisible by 128, but got {zeroth_bits}",
                condition=lambda q: q["slice_last"] * q["bits"] % TMA_ROW_BITS != 0,
            ),
        ),
    ),
    make_rule(
        "MGPU-TMA-SWIZZLE-LASTDIM",
        12,
        "A swizzled TMA copy must move exactly one swizzle of bytes along the last dimension.",
        "ValueError",
        "Async copies with swizzle={swizzle} require the last dimension of the slice to be "
        "exactly {swizzle} bytes i.e.  {swizzle_elements} elements, but got {slice_last} elements.",
        lambda q: q["slice_last"] != q["swizzle"] * 8 // q["bits"],
        lambda q: (
            f"swizzle {q['swizzle']} bytes = {q['swizzle'] * 8 // q['bits']} elements "
            f"of {q['bits']} bits, but the last dimension is {q['slice_last']}"
        ),
    ),
    make_rule(
        "MGPU-TMA-BOX-256",
        13,
        "The TMA tensor-map path copies at most 256 elements per dimension.",
        "ValueError",
        "Async copies only support copying <=256 elements along each dimension, "
        "got {slice_shape_tuple}",
        lambda q: q["slice_max"] > TMA_MAX_BOX,
        explain_box,
        since=(0, 8, 2),
        older=(
            Wording(
                OLDEST_MODELLED,
                "ValueError",
                "Async copies only support copying <=256 elements along each dimension",
            ),
        ),
    ),
    make_rule(
        "MGPU-TMA-LASTDIM-STRIDE1",
        14,
        "The transformed GMEM reference must have a unit last stride.",
        "ValueError",
        "TMA requires the stride of the last dimension after transforming the GMEM reference "
        "to be 1, but it is {last_stride}.",
        lambda q: q["last_stride"] != 1,
        lambda q: f"last GMEM stride is {q['last_stride']}, not 1",
        since=(0, 6, 0),
    ),
    make_rule(
        "MGPU-CPASYNC-ELEMENTS-128",
        15,
        "Pre-Hopper cp.async copies need a multiple of 128 elements.",
        "ValueError",
        "CP_ASYNC requires the number of elements to be a multiple of {WARPGROUP_SIZE}",
        lambda q: (q["bits"] % 8 != 0) | (np.asarray(q["elements"]) % WARPGROUP_SIZE != 0),
        explain_element_multiple,
    ),
    make_rule(
        "MGPU-CPASYNC-4BYTES",
        16,
        "Each cp.async transfer must move at least 4 bytes.",
        "ValueError",
        "CP_ASYNC requires at least 4 bytes per transfer",
        lambda q: q["vector_length"] * q["bits"] < 32,
        lambda q: (
            f"{q['vector_length']} × {q['bits']} bits = "
            f"{q['vector_length'] * q['bits']} bits < 32 bits"
        ),
    ),
    make_rule(
        "MGPU-GATHER-TMA-128B",
        17,
        "A gather/scatter TMA row group must be a multiple of 128 bytes.",
        "ValueError",
        "Gather/scatter TMA would require breaking it up into transfers of {gather_bytes} "
        "bytes, but need a multiple of 128 bytes",
        lambda q: 4 * q["slice_last"] * q["bits"] % 1024 != 0,
        lambda q: (
            f"4 rows × {q['slice_last']} × {q['bits']} bits = "
            f"{4 * q['slice_last'] * q['bits']} bits; "
            f"{modulo(4 * q['slice_last'] * q['bits'], 1024)}"
        ),
    ),
    make_rule(
        "MGPU-SWIZZLE-VALUE",
        18,
        "Pallas accepts swizzles of 32, 64 and 128 bytes only.",
        "ValueError",
        "Swizzle {swizzle} is not supported. Only 32, 64 and 128 are accepted.",
        lambda q: q["swizzle"] not in (32, 64, 128),
        lambda q: f"swizzle {q['swizzle']} is not one of 32, 64, 128",
    ),
    make_rule(
        "MGPU-SWIZZLE-TRAILING-DIM",
        19,
        "A swizzled ref's tiled trailing dimension must be exactly one swizzle wide.",
        "ValueError",
        "Swizzle {swizzle} requires the trailing dimension to be of size {swizzle_elements}, "
        "but got shape: {shape_tuple}",
        lambda q: q["swizzle"] * 8 // q["bits"] != q["slice_last"],
        lambda q: (
            f"swizzle {q['swizzle']} bytes = {q['swizzle'] * 8 // q['bits']} elements "
            f"of {q['bits']} bits, but the trailing dimension is {q['slice_last']}"
        ),
    ),
    make_rule(
        "MGPU-TILING-SWIZZLE-FIT",
        20,
        "The minor tile must be exactly one swizzle wide.",
        "NotImplementedError",
        "Minor tiling dimension does not fit swizzle:  expected {swizzle_elements}, "
        "got {tiling_minor}",
        lambda q: q["tiling_minor"] != q["swizzle"] * 8 // q["bits"],
        lambda q: (
            f"swizzle {q['swizzle']} bytes = {q['swizzle'] * 8 // q['bits']} elements, "
            f"minor tile {q['tiling_minor']}"
        ),
    ),
    make_rule(
        "MGPU-FIND-SWIZZLE-16B",
        21,
        "find_swizzle needs a minor dimension of a multiple of 128 bits.",
        "ValueError",
        "No valid out swizzle{what}: minor dimension has {minor_dim_bits} bits, which is not "
        "a multiple of 128 (16 bytes)",
        lambda q: q["minor_dim_bits"] % 128 != 0,
        lambda q: modulo(q["minor_dim_bits"], 128),
    ),
    make_rule(
        "MGPU-BITWIDTH-POW2",
        22,
        "Mosaic GPU only handles power-of-two bit widths.",
        "ValueError",
        "Only power of 2 bitwidths are supported, got: {bits}",
        lambda q: (q["bits"] & (q["bits"] - 1)) != 0,
        lambda q: f"{q['dtype_name']} is {q['bits']} bits wide; {q['bits']} is not a power of two",
        since=(0, 5, 1),
    ),
    make_rule(
        "MGPU-LAYOUTINF-MINOR-TILING-BYTES",
        23,
        "Under Warpgroup semantics the minor tile must be a whole number of bytes.",
        "ValueError",
        "Minor tiling dimension is not byte aligned. Got {tiling_minor} elements of {bits} bits.",
        lambda q: q["tiling_minor"] * q["bits"] % 8 != 0,
        lambda q: (
            f"{q['tiling_minor']} × {q['bits']} bits = {q['tiling_minor'] * q['bits']} "
            f"bits; {modulo(q['tiling_minor'] * q['bits'], 8)}"
        ),
    ),
    make_rule(
        "MGPU-TRANSFER-VECTOR-BYTES",
        24,
        "A tiled SMEM transfer's vector must be a whole number of bytes.",
        "ValueError",
        "Vector length ({vector_length}) must be a multiple of bytes, but has {vector_bits} bits",
        lambda q: q["vector_length"] * q["bits"] % 8 != 0,
        lambda q: (
            f"{q['vector_length']} × {q['bits']} bits = "
            f"{q['vector_length'] * q['bits']} bits; {modulo(q['vector_length'] * q['bits'], 8)}"
        ),
    ),
    make_rule(
        "MGPU-TILINGTRANSFORM-DIVISIBILITY",
        25,
        "Every tiled dimension must be divisible by its tile (a bare assert).",
        "AssertionError",
        "",
        lambda q: np.any(np.asarray(q["tiled_dims"]) % np.asarray(q["tiling"]) != 0, axis=-1),
        lambda q: (
            f"dimensions {tuple(q['tiled_dims'])} are not all divisible by the tiling "
            f"{tuple(q['tiling'])}"
        ),
    ),
)
