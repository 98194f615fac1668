"""The Pallas TPU engine: what ``pallas_call`` on TPU raises for the user's values, and fixes.

Plain Python, numpy and ml_dtypes; no JAX at runtime. Chip facts come from JAX's own
``tpu_info`` (``data/tpu-chips.json``), message wordings from each modelled release's
source (``data/tpu-block-rules.json``).

Public API:

- ``check_blocks(array_shape, block_shape, dtype, chip=None, jax_version=None, **context)``
  → ``BlockCheck``: the verdict on one BlockSpec (None in ``block_shape``: squeezed).
- ``block_fixes(array_shape, block_shape, dtype, chip=None, jax_version=None, limit=5)``
  → ``list[Fix]``: blocks that pass every check, nearest first, each re-checked.
- ``CHIPS``, ``get_chip(name)``: v4, v5e, v5p, v6e, v7x.
- ``sublane_tiling(chip, dtype)``, ``operand_tile(chip, dtype)``,
  ``infer_tiling(chip, shape, dtype)``, ``padded_bytes(chip, shape, dtype)``.

Bad input raises ``InputValueError`` naming the argument (``array_shape``, ``block_shape``,
``dtype``, ``chip``, ``jax_version``).
"""

from app.engines.verdicts import CodeChange, Fix, Violation
from app.jaxref.inputs import InputValueError

from .block_fixes import block_fixes
from .blocks import BlockCheck, check_blocks, modelled_releases
from .chips import CHIPS, Chip, get_chip, infer_tiling, operand_tile, padded_bytes, sublane_tiling

__all__ = [
    "CHIPS",
    "BlockCheck",
    "Chip",
    "CodeChange",
    "Fix",
    "InputValueError",
    "Violation",
    "block_fixes",
    "check_blocks",
    "get_chip",
    "infer_tiling",
    "modelled_releases",
    "operand_tile",
    "padded_bytes",
    "sublane_tiling",
]
