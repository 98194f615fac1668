"""sweep(): which sizes of one block dimension pass an operation, as an autotuner asks."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from app.jaxref.inputs import InputValueError
from app.jaxref.shapes import largest_size, validate_dims

from .engine import DTypeLike, resolve
from .operations import passes, vary_axis

MAX_SWEEP = 10**6  # sizes evaluated per call: a few MB of int64, well under a second


def sweep(
    operation: str,
    dtype: DTypeLike,
    start: int,
    stop: int,
    axis: int = -1,
    other_dims: Sequence[int] | None = None,
    target_dtype: DTypeLike | None = None,
    jax_version: str | None = None,
    lowering_semantics: str | None = None,
) -> np.ndarray:
    """Sizes in ``[start, stop)`` for the dimension at ``axis`` that pass every check.

    The block is ``other_dims`` with the swept dimension inserted at ``axis``
    (``axis=-1``: appended last). ``stop - start`` may not exceed ``MAX_SWEEP``.
    """
    others = validate_dims(list(other_dims or ()), "other_dims")
    rank = len(others) + 1
    if not -rank <= axis < rank:
        raise InputValueError("axis", f"axis {axis} is out of range for a rank-{rank} block")
    if not 0 <= start <= stop:
        raise InputValueError("start", f"need 0 <= start <= stop, got [{start}, {stop})")
    if stop - start > MAX_SWEEP:
        raise InputValueError(
            "stop", f"a sweep covers at most {MAX_SWEEP} sizes, got {stop - start}"
        )
    largest = largest_size(others)
    if stop - 1 > largest:
        raise InputValueError(
            "stop", f"sizes above {largest} exceed the shape limits with other dims {others}"
        )
    position = axis % rank
    placeholder = (*others[:position], start, *others[position:])
    case = resolve(operation, placeholder, dtype, target_dtype, jax_version, lowering_semantics)
    sizes = np.arange(start, stop, dtype=np.int64)
    batch = vary_axis(placeholder, position, sizes)
    passing: np.ndarray = sizes[passes(case.operation, batch, case.dtype, case.target, case.checks)]
    return passing
