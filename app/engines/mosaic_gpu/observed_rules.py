"""The Mosaic GPU rules that are not in the catalog (``catalog_rank=None``), as data.

They are errors that JAX raises for the same constructs, found by lowering them with JAX
(0.10.2, unless a rule says which release), kept so that the engine's verdict is JAX's
verdict. Wordings are per JAX release, as for ``catalog_rules``.
"""

from __future__ import annotations

import numpy as np

from .explanations import explain_unhalved_vector, unhalved_vector_misfits
from .rule_types import (
    MAX_SMEM_BYTES,
    TMA_FLOATS,
    TMA_INTEGER_BITS,
    Rule,
    Wording,
    make_rule,
)
from .versions import OLDEST_MODELLED

OBSERVED_RULES: tuple[Rule, ...] = (
    make_rule(
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
    make_rule(
        "MGPU-REFUNION-UNSUPPORTED-DTYPE",
        None,
        "RefUnion members must have an integer or floating dtype.",
        "NotImplementedError",
        "Unsupported dtype: {dtype_name}",
        lambda q: q["kind"] not in ("int", "uint", "float"),
        lambda q: f"{q['dtype_name']} is neither an integer nor a floating dtype",
        since=(0, 6, 1),
    ),
    make_rule(
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
    make_rule(
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
    make_rule(
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
    make_rule(
        "MGPU-REFUNION-EMPTY",
        None,
        "A RefUnion whose members hold no bytes cannot be sliced.",
        "IndexError",
        "Slice slice(0, 0, None) along axis 0 is out of bounds for shape [0]",
        lambda q: np.asarray(q["elements"]) == 0,
        lambda q: "the member has no elements, so the union has 0 bytes to slice",
        since=(0, 6, 1),
    ),
    make_rule(
        "MGPU-TMA-RANK-5",
        None,
        "TMA addresses at most 5 dimensions (after dropping unit dimensions).",
        "ValueError",
        "Async copies only support striding up to 5 dimensions",
        lambda q: q["slice_rank"] > 5,
        lambda q: f"{q['slice_rank']} dimensions larger than 1; TMA addresses at most 5",
        since=(0, 5, 0),
    ),
    make_rule(
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
    make_rule(
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
    make_rule(
        "MGPU-LOAD-BYTEWIDTH",
        None,
        "Until 0.7.1, loading a sub-byte ref into registers asserted whole-byte elements.",
        "AssertionError",
        "{element_type}",
        lambda q: q["bits"] % 8 != 0,
        lambda q: f"{q['bits']}-bit elements: the load's bytewidth() asserts bits mod 8 = 0",
    ),
    make_rule(
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
    make_rule(
        "MGPU-WGSTRIDED-VECTOR-MULTIPLE",
        None,
        "Up to JAX 0.9.1 the strided layout's vector did not shrink to fit the element count.",
        "ValueError",
        "(WGStridedFragLayout(shape={shape_tuple}, vec_size={unhalved_vector}), {WARPGROUP_SIZE})",
        unhalved_vector_misfits,
        explain_unhalved_vector,
    ),
    make_rule(
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
    make_rule(
        "MGPU-DTYPE-BITCAST-FROM-I8",
        None,
        "A dtype bitcast of SMEM starts from an i8 (int8/uint8) buffer.",
        "NotImplementedError",
        "Data type bitcast is only supported from i8 to other types.",
        lambda q: q["element_type"] != "i8",
        lambda q: f"the buffer's element type is {q['element_type']} ({q['dtype_name']}), not i8",
        since=(0, 6, 1),
    ),
    make_rule(
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
