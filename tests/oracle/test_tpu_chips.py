"""``data/tpu-chips.json`` is JAX's own ``tpu_info``, and the engine reads it as JAX does."""

from __future__ import annotations

import json

import jax.numpy as jnp
import pytest
from jax._src import core as jax_core
from jax._src.pallas.mosaic import tpu_info

from app.engines.tpu import CHIPS, get_chip, infer_tiling, sublane_tiling
from app.engines.tpu.chips import CHIPS_FILE
from app.jaxref.dtypes import parse_dtype

from .tpu_facts import facts
from .tpu_kernels import as_chip

pytestmark = pytest.mark.oracle

TILING_DTYPES = ("float32", "bfloat16", "int8", "int4", "float8_e4m3fn", "int32", "float16")
SHAPES = ((1024,), (8, 128), (1, 128), (2, 256), (4, 3, 512), (16, 64))


def test_chip_file_is_jax_tpu_info() -> None:
    """Rewrite with ``python -m tests.oracle.tpu_facts > data/tpu-chips.json``."""
    assert json.loads(CHIPS_FILE.read_text()) == json.loads(json.dumps(facts()))


@pytest.mark.parametrize("chip", list(CHIPS))
@pytest.mark.parametrize("dtype", TILING_DTYPES)
def test_sublane_tiling_is_jax(chip: str, dtype: str) -> None:
    with as_chip(chip):
        expected = tpu_info.get_tpu_info().get_sublane_tiling(jnp.dtype(dtype))
    assert sublane_tiling(get_chip(chip), parse_dtype(dtype)) == expected


@pytest.mark.parametrize("chip", list(CHIPS))
@pytest.mark.parametrize("dtype", TILING_DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_infer_tiling_is_jax(chip: str, dtype: str, shape: tuple[int, ...]) -> None:
    with as_chip(chip):
        expected = tpu_info.infer_tiling(jax_core.ShapedArray(shape, jnp.dtype(dtype)))
    assert infer_tiling(get_chip(chip), shape, parse_dtype(dtype)) == expected
