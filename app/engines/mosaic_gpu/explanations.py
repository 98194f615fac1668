"""How a Mosaic GPU rule explains its verdict: the arithmetic behind a failed (or passed)
condition, written out for one case.

Shared by ``catalog_rules`` and ``observed_rules``. The two conditions of the strided
register layout are here too, beside the vector arithmetic their explanations repeat.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .rule_types import TMA_MAX_BOX, TMA_ROW_BITS, WARPGROUP_SIZE, Quantities


def modulo(value: int, modulus: int) -> str:
    return f"{value} mod {modulus} = {value % modulus}"


def bits_of(q: Quantities) -> str:
    return f"{q['elements']} × {q['bits']} bits = {q['total_bits']} bits"


def explain_integer_bytes(q: Quantities) -> str:
    return f"{bits_of(q)}; {modulo(q['total_bits'], 8)}"


def explain_warpgroup_bytes(q: Quantities) -> str:
    total = q["total_bits"]
    in_bytes = (
        f"{q['bytes']} bytes" if total % 8 == 0 else f"{total / 8:g} bytes, counted as {q['bytes']}"
    )
    return f"{bits_of(q)} = {in_bytes}; {modulo(q['bytes'], WARPGROUP_SIZE)}"


def explain_strides(q: Quantities) -> str:
    bad = [s for s in q["gmem_strides"] if s * q["bits"] % TMA_ROW_BITS]
    if not bad:
        return "every GMEM stride but the last is a multiple of 128 bits"
    stride = bad[0]
    return (
        f"GMEM stride {stride} elements × {q['bits']} bits = {stride * q['bits']} bits; "
        f"{modulo(stride * q['bits'], TMA_ROW_BITS)} (16 bytes = 128 bits)"
    )


def explain_last_dim(q: Quantities) -> str:
    bits = q["slice_minor"] * q["bits"]
    last = f"last dimension {q['slice_minor']}" if q["slice_rank"] else "no dimension but 1s: 1"
    return f"{last} × {q['bits']} bits = {bits} bits; {modulo(bits, 128)}"


def explain_box(q: Quantities) -> str:
    return f"largest dimension {q['slice_max']} > {TMA_MAX_BOX} elements (TMA box limit)"


def explain_element_multiple(q: Quantities) -> str:
    if q["bits"] % 8:
        return (
            f"{q['bits']}-bit elements: JAX up to 0.10.x finds no strided register layout "
            f"for sub-byte dtypes, whatever the element count ({q['elements']})"
        )
    if q["elements"] == 0:
        return "0 elements: an empty block has no strided register layout"
    return f"{q['elements']} elements; {modulo(q['elements'], WARPGROUP_SIZE)}"


def _strided_vector_size(elements: Any, bits: int) -> Any:
    """The vector length ``WGStridedFragLayout`` picks from 0.11.0 (0 = none)."""
    size = np.asarray(elements, dtype=np.int64)
    vec = np.minimum(64 // bits, size // WARPGROUP_SIZE)
    for _ in range(8):  # vec starts at most at 64: eight halvings reach 0
        misfit = (vec > 0) & (size % np.maximum(vec * WARPGROUP_SIZE, 1) != 0)
        vec = np.where(misfit, vec // 2, vec)
    return vec


def strided_layout_fails_sub_byte(q: Quantities) -> Any:
    vec = _strided_vector_size(q["elements"], q["bits"])
    return (
        (np.asarray(q["elements"]) % WARPGROUP_SIZE != 0) | (vec == 0) | (vec * q["bits"] % 8 != 0)
    )


def explain_element_multiple_sub_byte(q: Quantities) -> str:
    if q["elements"] % WARPGROUP_SIZE or q["elements"] == 0:
        return explain_element_multiple({**q, "bits": 8})
    vec = int(_strided_vector_size(q["elements"], q["bits"]))
    return (
        f"{q['elements']} elements give a vector length of {vec}; "
        f"{vec} × {q['bits']} bits = {vec * q['bits']} bits, {modulo(vec * q['bits'], 8)}"
    )


def unhalved_vector_misfits(q: Quantities) -> Any:
    """A multiple of 128 elements whose vector (8 bytes, at most elements // 128) does not
    divide it: ``WGStridedFragLayout`` raised ``ValueError((layout, 128))`` until 0.9.2 halved
    the vector instead."""
    elements = np.asarray(q["elements"])
    fits = (elements % np.maximum(np.asarray(q["unhalved_vector"]) * WARPGROUP_SIZE, 1)) == 0
    return (q["bits"] % 8 == 0) & (elements % WARPGROUP_SIZE == 0) & (elements > 0) & ~fits


def explain_unhalved_vector(q: Quantities) -> str:
    vec = q["unhalved_vector"]
    return (
        f"{q['elements']} elements of {q['bits']} bits: each thread loads vectors of {vec} "
        f"(8 bytes, at most {q['elements']} // 128); {modulo(q['elements'], vec * WARPGROUP_SIZE)}"
        "; from 0.9.2 JAX shortens the vector until it fits"
    )


def explain_bitcast_region(q: Quantities) -> str:
    return (
        f"{q['region_bytes']} bytes × 8 = {q['region_bits']} bits; "
        f"{modulo(q['region_bits'], q['target_bits'])}"
    )
