"""Every Mosaic GPU alignment rule of the catalog, as data.

A rule has a condition and an explanation, both functions of named quantities
(``elements``, ``bits``, ``total_bits``...). Conditions use only arithmetic and
numpy reductions, so the same function answers for one case (Python ints) and
for a whole batch of candidate shapes (numpy arrays).

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

Rules marked ``catalog_rank=None`` are not in the catalog: they are errors that
JAX raises for the same constructs (found by lowering them), kept so that
the engine's verdict is JAX's verdict.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .versions import OLDEST_MODELLED, Version, render_version

WARPGROUP_SIZE = 128
TMA_MAX_BOX = 256
TMA_ROW_BITS = 128
# sm90's opt-in SMEM per block: JAX's default when no GPU is there to ask.
MAX_SMEM_BYTES = 227 * 1024
CONSTANTS = {"WARPGROUP_SIZE": WARPGROUP_SIZE, "MAX_SMEM_BYTES": MAX_SMEM_BYTES}

Quantities = Mapping[str, Any]
Condition = Callable[[Quantities], Any]
Explain = Callable[[Quantities], str]

# Element types the TMA descriptor accepts, besides integers (launch_context._tma_dma_type).
TMA_FLOATS = frozenset({"f16", "f32", "bf16", "f8E5M2", "f8E4M3FN", "f8E8M0FNU", "f4E2M1FN"})
TMA_INTEGER_BITS = frozenset({2, 4, 8, 16, 32, 64})
# From 0.11.0 a sub-byte block loads untiled when its strided vector is whole bytes (Lane).
SUB_BYTE_STRIDED_LAYOUTS: Version = (0, 11, 0)


@dataclass(frozen=True)
class Wording:
    """How releases from ``since`` on (until the next wording) report a rule."""

    since: Version
    error_class: str
    template: str
    condition: Condition | None = None  # when this range checks something else
    explain: Explain | None = None


@dataclass(frozen=True)
class Rule:
    id: str
    catalog_rank: int | None  # None: observed by lowering with JAX, not in the catalog
    summary: str
    condition: Condition
    explain: Explain
    wordings: tuple[Wording, ...]  # oldest first

    @property
    def since(self) -> Version:
        return self.wordings[0].since

    @property
    def error_class(self) -> str:
        """The exception class in the newest wording."""
        return self.wordings[-1].error_class

    def exists_in(self, version: Version) -> bool:
        return self.since <= version

    def wording(self, version: Version) -> Wording:
        """The wording in force at ``version``."""
        if not self.exists_in(version):
            raise LookupError(f"{self.id} is not checked by JAX {render_version(version)}")
        return [wording for wording in self.wordings if wording.since <= version][-1]

    def condition_in(self, version: Version) -> Condition:
        """What the rule checks at ``version``: a wording's own condition, or the rule's."""
        return self.wording(version).condition or self.condition

    def fails(self, quantities: Quantities, version: Version) -> Any:
        """Whether the rule fails: a bool, or a bool array for a batch."""
        return self.condition_in(version)(quantities)

    def render(self, quantities: Quantities, version: Version) -> str:
        """The message exactly as that JAX version prints it."""
        return self.wording(version).template.format(**CONSTANTS, **quantities)

    def explanation(self, quantities: Quantities, version: Version) -> str:
        return (self.wording(version).explain or self.explain)(quantities)


def _mod(value: int, modulus: int) -> str:
    return f"{value} mod {modulus} = {value % modulus}"


def _bits_of(q: Quantities) -> str:
    return f"{q['elements']} × {q['bits']} bits = {q['total_bits']} bits"


def _explain_integer_bytes(q: Quantities) -> str:
    return f"{_bits_of(q)}; {_mod(q['total_bits'], 8)}"


def _explain_warpgroup_bytes(q: Quantities) -> str:
    total = q["total_bits"]
    in_bytes = (
        f"{q['bytes']} bytes" if total % 8 == 0 else f"{total / 8:g} bytes, counted as {q['bytes']}"
    )
    return f"{_bits_of(q)} = {in_bytes}; {_mod(q['bytes'], WARPGROUP_SIZE)}"


def _explain_strides(q: Quantities) -> str:
    bad = [s for s in q["gmem_strides"] if s * q["bits"] % TMA_ROW_BITS]
    if not bad:
        return "every GMEM stride but the last is a multiple of 128 bits"
    stride = bad[0]
    return (
        f"GMEM stride {stride} elements × {q['bits']} bits = {stride * q['bits']} bits; "
        f"{_mod(stride * q['bits'], TMA_ROW_BITS)} (16 bytes = 128 bits)"
    )


def _explain_last_dim(q: Quantities) -> str:
    bits = q["slice_minor"] * q["bits"]
    last = f"last dimension {q['slice_minor']}" if q["slice_rank"] else "no dimension but 1s: 1"
    return f"{last} × {q['bits']} bits = {bits} bits; {_mod(bits, 128)}"


def _explain_box(q: Quantities) -> str:
    return f"largest dimension {q['slice_max']} > {TMA_MAX_BOX} elements (TMA box limit)"


def _explain_element_multiple(q: Quantities) -> str:
    if q["bits"] % 8:
        return (
            f"{q['bits']}-bit elements: JAX up to 0.10.x finds no strided register layout "
            f"for sub-byte dtypes, whatever the element count ({q['elements']})"
        )
    if q["elements"] == 0:
        return "0 elements: an empty block has no strided register layout"
    return f"{q['elements']} elements; {_mod(q['elements'], WARPGROUP_SIZE)}"


def _strided_vector_size(elements: Any, bits: int) -> Any:
    """The vector length ``WGStridedFragLayout`` picks from 0.11.0 (0 = none)."""
    size = np.asarray(elements, dtype=np.int64)
    vec = np.minimum(64 // bits, size // WARPGROUP_SIZE)
    for _ in range(8):  # vec starts at most at 64: eight halvings reach 0
        misfit = (vec > 0) & (size % np.maximum(vec * WARPGROUP_SIZE, 1) != 0)
        vec = np.where(misfit, vec // 2, vec)
    return vec


def _strided_layout_fails_sub_byte(q: Quantities) -> Any:
    vec = _strided_vector_size(q["elements"], q["bits"])
    return (
        (np.asarray(q["elements"]) % WARPGROUP_SIZE != 0) | (vec == 0) | (vec * q["bits"] % 8 != 0)
    )


def _explain_element_multiple_sub_byte(q: Quantities) -> str:
    if q["elements"] % WARPGROUP_SIZE or q["elements"] == 0:
        return _explain_element_multiple({**q, "bits": 8})
    vec = int(_strided_vector_size(q["elements"], q["bits"]))
    return (
        f"{q['elements']} elements give a vector length of {vec}; "
        f"{vec} × {q['bits']} bits = {vec * q['bits']} bits, {_mod(vec * q['bits'], 8)}"
    )


def _unhalved_vector_misfits(q: Quantities) -> Any:
    """A multiple of 128 elements whose vector (8 bytes, at most elements // 128) does not
    divide it: ``WGStridedFragLayout`` raised ``ValueError((layout, 128))`` until 0.9.2 halved
    the vector instead."""
    elements = np.asarray(q["elements"])
    fits = (elements % np.maximum(np.asarray(q["unhalved_vector"]) * WARPGROUP_SIZE, 1)) == 0
    return (q["bits"] % 8 == 0) & (elements % WARPGROUP_SIZE == 0) & (elements > 0) & ~fits


def _explain_unhalved_vector(q: Quantities) -> str:
    vec = q["unhalved_vector"]
    return (
        f"{q['elements']} elements of {q['bits']} bits: each thread loads vectors of {vec} "
        f"(8 bytes, at most {q['elements']} // 128); {_mod(q['elements'], vec * WARPGROUP_SIZE)}"
        "; from 0.9.2 JAX shortens the vector until it fits"
    )


def _explain_bitcast_region(q: Quantities) -> str:
    return (
        f"{q['region_bytes']} bytes × 8 = {q['region_bits']} bits; "
        f"{_mod(q['region_bits'], q['target_bits'])}"
    )


def _rule(
    id: str,
    rank: int | None,
    summary: str,
    error_class: str,
    template: str,
    condition: Condition,
    explain: Explain,
    *,
    since: Version = OLDEST_MODELLED,
    older: tuple[Wording, ...] = (),
) -> Rule:
    """A rule whose newest wording is ``template``, in force from ``since``."""
    return Rule(
        id,
        rank,
        summary,
        condition,
        explain,
        (*older, Wording(since, error_class, template)),
    )


_RULES: tuple[Rule, ...] = (
    _rule(
        "MGPU-COPY-INTEGER-BYTES",
        1,
        "A GMEM->SMEM copy must move a whole number of bytes.",
        "ValueError",
        "Can only transfer integer bytes (shape={shape_list}, dtype={element_type})",
        lambda q: q["total_bits"] % 8 != 0,
        _explain_integer_bytes,
    ),
    _rule(
        "MGPU-COPY-WARPGROUP-BYTES",
        2,
        "A TMA copy must move a multiple of 128 bytes (the warpgroup size, used as bytes).",
        "NotImplementedError",
        "Only copies transferring a number of bytes divisible by the warpgroup size are "
        "supported. Got bytes={bytes} but warpgroup size is {WARPGROUP_SIZE}",
        lambda q: q["bytes"] % WARPGROUP_SIZE != 0,
        _explain_warpgroup_bytes,
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
    _rule(
        "MGPU-ALIAS-BYTE-ALIGNED-BITCAST",
        3,
        "An aliased SMEM view must cover a whole number of bytes.",
        "NotImplementedError",
        "Only byte-aligned bitcasts are supported.",
        lambda q: q["total_bits"] % 8 != 0,
        _explain_integer_bytes,
        since=(0, 6, 1),
    ),
    _rule(
        "MGPU-DTYPE-BITCAST-REGION",
        4,
        "A byte region viewed as another dtype must hold a whole number of its elements.",
        "ValueError",
        "Can not bitcast memory region of size {region_bits} bits to dtype with "
        "{target_bits} bits.",
        lambda q: q["region_bits"] % q["target_bits"] != 0,
        _explain_bitcast_region,
        since=(0, 6, 1),
    ),
    _rule(
        "MGPU-REFUNION-BYTE-ALIGNED-SHAPES",
        5,
        "Every RefUnion member must be a whole number of bytes.",
        "ValueError",
        "Only byte-aligned shapes are supported. Got shape: {dtype_name}{shape_tuple}",
        lambda q: q["total_bits"] % 8 != 0,
        _explain_integer_bytes,
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
        _explain_element_multiple,
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
                condition=_strided_layout_fails_sub_byte,
                explain=_explain_element_multiple_sub_byte,
            ),
        ),
    ),
    _rule(
        "MGPU-ASYNC-STORE-INTEGER-BYTES",
        7,
        "An async SMEM store must move a whole number of bytes.",
        "ValueError",
        "Can only transfer integer bytes (shape={shape_tuple}, dtype={dtype_name})",
        lambda q: q["total_bits"] % 8 != 0,
        _explain_integer_bytes,
        since=(0, 10, 1),
    ),
    _rule(
        "MGPU-ASYNC-STORE-WARPGROUP-BYTES",
        8,
        "An async SMEM store must move a multiple of 128 bytes.",
        "NotImplementedError",
        "Transfer is not a multiple of {WARPGROUP_SIZE} bytes",
        lambda q: q["bytes"] % WARPGROUP_SIZE != 0,
        _explain_warpgroup_bytes,
        since=(0, 10, 1),
    ),
    _rule(
        "MGPU-DIALECT-ASYNC-STORE-BITS",
        9,
        "Under Warpgroup semantics an async SMEM store must move a multiple of 1024 bits.",
        "NotImplementedError",
        "Transfer of {total_bits} bits is not divisible by 1024",
        lambda q: q["total_bits"] % (8 * WARPGROUP_SIZE) != 0,
        lambda q: f"{_bits_of(q)}; {_mod(q['total_bits'], 8 * WARPGROUP_SIZE)}",
        since=(0, 10, 1),
    ),
    _rule(
        "MGPU-TMA-GMEM-STRIDES-16B",
        10,
        "Every GMEM stride but the last must be a multiple of 16 bytes.",
        "ValueError",
        "Async copies require all GMEM strides except the last one to be a multiple of 16 bytes",
        lambda q: np.any(
            np.asarray(q["gmem_strides"], dtype=np.int64) * q["bits"] % TMA_ROW_BITS != 0, axis=-1
        ),
        _explain_strides,
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
    _rule(
        "MGPU-TMA-LASTDIM-128BITS",
        11,
        "A TMA copy must move a multiple of 128 bits along the last dimension.",
        "ValueError",
        "Async copies require the number of bits copied along the last dimension to be "
        "divisible by 128, but got {zeroth_bits}",
        lambda q: q["slice_minor"] * q["bits"] % TMA_ROW_BITS != 0,
        _explain_last_dim,
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
    _rule(
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
    _rule(
        "MGPU-TMA-BOX-256",
        13,
        "The TMA tensor-map path copies at most 256 elements per dimension.",
        "ValueError",
        "Async copies only support copying <=256 elements along each dimension, "
        "got {slice_shape_tuple}",
        lambda q: q["slice_max"] > TMA_MAX_BOX,
        _explain_box,
        since=(0, 8, 2),
        older=(
            Wording(
                OLDEST_MODELLED,
                "ValueError",
                "Async copies only support copying <=256 elements along each dimension",
            ),
        ),
    ),
    _rule(
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
    _rule(
        "MGPU-CPASYNC-ELEMENTS-128",
        15,
        "Pre-Hopper cp.async copies need a multiple of 128 elements.",
        "ValueError",
        "CP_ASYNC requires the number of elements to be a multiple of {WARPGROUP_SIZE}",
        lambda q: (q["bits"] % 8 != 0) | (np.asarray(q["elements"]) % WARPGROUP_SIZE != 0),
        _explain_element_multiple,
    ),
    _rule(
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
    _rule(
        "MGPU-GATHER-TMA-128B",
        17,
        "A gather/scatter TMA row group must be a multiple of 128 bytes.",
        "ValueError",
        "Gather/scatter TMA would require breaking it up into transfers of {gather_bytes} "
        "bytes, but need a multiple of 128 bytes",
        lambda q: 4 * q["slice_last"] * q["bits"] % 1024 != 0,
        lambda q: (
            f"4 rows × {q['slice_last']} × {q['bits']} bits = "
            f"{4 * q['slice_last'] * q['bits']} bits; {_mod(4 * q['slice_last'] * q['bits'], 1024)}"
        ),
    ),
    _rule(
        "MGPU-SWIZZLE-VALUE",
        18,
        "Pallas accepts swizzles of 32, 64 and 128 bytes only.",
        "ValueError",
        "Swizzle {swizzle} is not supported. Only 32, 64 and 128 are accepted.",
        lambda q: q["swizzle"] not in (32, 64, 128),
        lambda q: f"swizzle {q['swizzle']} is not one of 32, 64, 128",
    ),
    _rule(
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
    _rule(
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
    _rule(
        "MGPU-FIND-SWIZZLE-16B",
        21,
        "find_swizzle needs a minor dimension of a multiple of 128 bits.",
        "ValueError",
        "No valid out swizzle{what}: minor dimension has {minor_dim_bits} bits, which is not "
        "a multiple of 128 (16 bytes)",
        lambda q: q["minor_dim_bits"] % 128 != 0,
        lambda q: _mod(q["minor_dim_bits"], 128),
    ),
    _rule(
        "MGPU-BITWIDTH-POW2",
        22,
        "Mosaic GPU only handles power-of-two bit widths.",
        "ValueError",
        "Only power of 2 bitwidths are supported, got: {bits}",
        lambda q: (q["bits"] & (q["bits"] - 1)) != 0,
        lambda q: f"{q['dtype_name']} is {q['bits']} bits wide; {q['bits']} is not a power of two",
        since=(0, 5, 1),
    ),
    _rule(
        "MGPU-LAYOUTINF-MINOR-TILING-BYTES",
        23,
        "Under Warpgroup semantics the minor tile must be a whole number of bytes.",
        "ValueError",
        "Minor tiling dimension is not byte aligned. Got {tiling_minor} elements of {bits} bits.",
        lambda q: q["tiling_minor"] * q["bits"] % 8 != 0,
        lambda q: (
            f"{q['tiling_minor']} × {q['bits']} bits = {q['tiling_minor'] * q['bits']} "
            f"bits; {_mod(q['tiling_minor'] * q['bits'], 8)}"
        ),
    ),
    _rule(
        "MGPU-TRANSFER-VECTOR-BYTES",
        24,
        "A tiled SMEM transfer's vector must be a whole number of bytes.",
        "ValueError",
        "Vector length ({vector_length}) must be a multiple of bytes, but has {vector_bits} bits",
        lambda q: q["vector_length"] * q["bits"] % 8 != 0,
        lambda q: (
            f"{q['vector_length']} × {q['bits']} bits = "
            f"{q['vector_length'] * q['bits']} bits; {_mod(q['vector_length'] * q['bits'], 8)}"
        ),
    ),
    _rule(
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
    # Observed by lowering the same constructs with JAX (0.10.2, unless a rule says which
    # release); not in the catalog.
    _rule(
        "MGPU-BITWIDTH-UNSUPPORTED-TYPE",
        None,
        "mgpu.bitwidth() knows integer and float types only (complex raises).",
        "NotImplementedError",
        "{element_type}",
        lambda q: q["kind"] == "complex",
        lambda q: (
            f"{q['dtype_name']} is {q['element_type']}, which Mosaic GPU has no bit width for"
        ),
    ),
    _rule(
        "MGPU-REFUNION-UNSUPPORTED-DTYPE",
        None,
        "RefUnion members must have an integer or floating dtype.",
        "NotImplementedError",
        "Unsupported dtype: {dtype_name}",
        lambda q: q["kind"] not in ("int", "uint", "float"),
        lambda q: f"{q['dtype_name']} is neither an integer nor a floating dtype",
        since=(0, 6, 1),
    ),
    _rule(
        "MGPU-GMEM-CONTIGUOUS",
        None,
        "A zero-sized dimension after the first makes MLIR's strides differ from the "
        "contiguous ones async_copy expects.",
        "NotImplementedError",
        "async_copy assumes the GMEM reference is contiguous",
        lambda q: q["zero_inner_dim"],
        lambda q: (
            "a dimension after the first is 0; MLIR's strides skip zero-sized "
            "dimensions, so they are not the contiguous strides async_copy expects"
        ),
    ),
    _rule(
        "MGPU-SMEM-CAPACITY",
        None,
        "The kernel's SMEM (each buffer rounded up to 1024 bytes, plus 8 per barrier) must "
        "fit the 227 KiB an sm90 block can opt into.",
        "ValueError",
        "Mosaic GPU kernel exceeds available shared memory: smem_bytes={smem_bytes} > "
        "max_smem_bytes={MAX_SMEM_BYTES}",
        lambda q: q["smem_bytes"] > MAX_SMEM_BYTES,
        lambda q: (
            f"{q['smem_buffers']} × {q['smem_buffer_bytes']} bytes (each rounded up to "
            f"1024) + {q['smem_barriers']} × 8 barrier bytes = {q['smem_bytes']} bytes, "
            "over the per-block limit"
        ),
        since=(0, 7, 1),
        older=(
            Wording(
                OLDEST_MODELLED,
                "ValueError",
                "Mosaic GPU kernel exceeds available shared memory smem_bytes={smem_bytes} "
                "> 228000",
                condition=lambda q: q["smem_bytes"] > 228000,
            ),
        ),
    ),
    _rule(
        "MGPU-PIPELINE-EMPTY-BLOCK",
        None,
        "A pallas_call block with a zero-sized dimension cannot be sliced out of its "
        "pipeline buffer.",
        "IndexError",
        "Slice slice(0, 0, 1) along axis {pipeline_zero_axis} is out of bounds for shape "
        "{pipeline_buffer_shape}",
        lambda q: np.asarray(q["elements"]) == 0,
        lambda q: "the block has no elements; its pipeline buffer slot cannot be sliced",
    ),
    _rule(
        "MGPU-REFUNION-EMPTY",
        None,
        "A RefUnion whose members hold no bytes cannot be sliced.",
        "IndexError",
        "Slice slice(0, 0, None) along axis 0 is out of bounds for shape [0]",
        lambda q: np.asarray(q["elements"]) == 0,
        lambda q: "the member has no elements, so the union has 0 bytes to slice",
        since=(0, 6, 1),
    ),
    _rule(
        "MGPU-TMA-RANK-5",
        None,
        "TMA addresses at most 5 dimensions (after dropping unit dimensions).",
        "ValueError",
        "Async copies only support striding up to 5 dimensions",
        lambda q: q["slice_rank"] > 5,
        lambda q: f"{q['slice_rank']} dimensions larger than 1; TMA addresses at most 5",
        since=(0, 5, 0),
    ),
    _rule(
        "MGPU-TMA-EMPTY-SLICE",
        None,
        "A copy whose dimensions are all 1 leaves nothing once unit dimensions are dropped.",
        "IndexError",
        "list index out of range",
        lambda q: q["slice_rank"] == 0,
        lambda q: (
            "every dimension is 1 (or the block is a scalar): nothing is left after "
            "async_copy drops unit dimensions"
        ),
        since=(0, 10, 0),
        # Python's own words (3.11 says "max() arg is an empty sequence"): JAX took the max
        # of the empty slice's dimensions.
        older=(Wording(OLDEST_MODELLED, "ValueError", "max() iterable argument is empty"),),
    ),
    _rule(
        "MGPU-TMA-INTEGER-BITWIDTH",
        None,
        "The TMA descriptor moves integers of 2, 4, 8, 16, 32 or 64 bits (2 from 0.7.1).",
        "ValueError",
        "Unsupported integer bitwidth: {bits}",
        lambda q: q["kind"] in ("bool", "int", "uint") and q["bits"] not in TMA_INTEGER_BITS,
        lambda q: (
            f"{q['dtype_name']} is {q['element_type']} ({q['bits']} bit); TMA moves "
            "integers of 2, 4, 8, 16, 32 or 64 bits"
        ),
        since=(0, 7, 1),
        older=(
            Wording(
                (0, 6, 1),
                "ValueError",
                "Unsupported integer bitwidth: {bits}",
                condition=lambda q: (
                    q["kind"] in ("bool", "int", "uint") and q["bits"] not in TMA_INTEGER_BITS - {2}
                ),
                explain=lambda q: (
                    f"{q['dtype_name']} is {q['element_type']} ({q['bits']} bit); TMA moves "
                    "integers of 4, 8, 16, 32 or 64 bits until 0.7.0"
                ),
            ),
        ),
    ),
    Rule(
        "MGPU-TMA-DTYPE",
        None,
        "The TMA descriptor has no element type for some floats (f64, most float8 variants).",
        lambda q: q["kind"] == "float" and q["element_type"] not in TMA_FLOATS,
        lambda q: f"TMA has no element type for {q['element_type']}",
        (Wording(OLDEST_MODELLED, "ValueError", "unsupported TMA dtype {element_type}"),),
    ),
    _rule(
        "MGPU-LOAD-BYTEWIDTH",
        None,
        "Until 0.7.1, loading a sub-byte ref into registers asserted whole-byte elements.",
        "AssertionError",
        "{element_type}",
        lambda q: q["bits"] % 8 != 0,
        lambda q: f"{q['bits']}-bit elements: the load's bytewidth() asserts bits mod 8 = 0",
    ),
    _rule(
        "MGPU-POINTWISE-NARROW-BITWIDTH",
        None,
        "Mosaic GPU does no arithmetic on types of 8 bits or fewer (bitwise ops aside).",
        "NotImplementedError",
        "Pointwise operations on {bits}-bit types are unsupported (except bitwise operations). "
        "Upcast to a 16- or 32-bit type before performing the operation.",
        lambda q: q["bits"] <= 8 and q["bits"] != 1,
        lambda q: f"{q['dtype_name']} is {q['bits']} bits wide; arithmetic needs 16 or 32 bits",
        since=(0, 9, 1),
    ),
    _rule(
        "MGPU-WGSTRIDED-VECTOR-MULTIPLE",
        None,
        "Up to JAX 0.9.1 the strided layout's vector did not shrink to fit the element count.",
        "ValueError",
        "(WGStridedFragLayout(shape={shape_tuple}, vec_size={unhalved_vector}), {WARPGROUP_SIZE})",
        _unhalved_vector_misfits,
        _explain_unhalved_vector,
    ),
    _rule(
        "MGPU-PALLAS-CALL-UNREGISTERED",
        None,
        "From JAX 0.11.2 pl.pallas_call has no Mosaic GPU lowering: plgpu.kernel replaces it.",
        "AssertionError",
        "",
        lambda q: True,
        lambda q: (
            "JAX 0.11.2 and later register no lowering of pl.pallas_call for "
            "plgpu.CompilerParams, so gpu_lowering (jax/_src/pallas/pallas_call.py) fails its "
            "`assert rule is not None` whatever the block; write the kernel with plgpu.kernel "
            "and plgpu.emit_pipeline"
        ),
        since=(0, 11, 2),
    ),
    _rule(
        "MGPU-DTYPE-BITCAST-FROM-I8",
        None,
        "A dtype bitcast of SMEM starts from an i8 (int8/uint8) buffer.",
        "NotImplementedError",
        "Data type bitcast is only supported from i8 to other types.",
        lambda q: q["element_type"] != "i8",
        lambda q: f"the buffer's element type is {q['element_type']} ({q['dtype_name']}), not i8",
        since=(0, 6, 1),
    ),
    _rule(
        "MGPU-DTYPE-BITCAST-1D",
        None,
        "A dtype bitcast of SMEM works on 1-D buffers only.",
        "NotImplementedError",
        "Data type bitcast is only supported for 1D arrays.",
        lambda q: q["rank"] != 1,
        lambda q: f"the buffer has rank {q['rank']}, not 1",
        since=(0, 6, 1),
    ),
)

RULES: dict[str, Rule] = {rule.id: rule for rule in _RULES}
# The wordings that print no value, each the words of one rule in some release.
_RULE_OF_WORDING = {
    wording.template: rule.id
    for rule in _RULES
    for wording in rule.wordings
    if wording.template and "{" not in wording.template
}


def rule_worded(message: str) -> str | None:
    """The rule that some release words exactly ``message``: how a site of Mosaic GPU mined
    from JAX's source is known as a rule's, in a release newer than the rule's record."""
    return _RULE_OF_WORDING.get(message)
