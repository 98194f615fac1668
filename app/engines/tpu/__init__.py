"""The Pallas TPU engine: what ``pallas_call`` on TPU raises for the user's values, and fixes.

Plain Python, numpy and ml_dtypes; no JAX at runtime. Chip facts come from JAX's own
``tpu_info`` (``data/tpu-chips.json``), message wordings from each modelled release's
source (``data/tpu-block-rules.json``).

Public API:

- ``check_blocks(array_shape, block_shape, dtype, chip=None, jax_version=None, **context)``
  → ``BlockCheck``: the verdict on one BlockSpec (None in ``block_shape``: squeezed).
- ``block_fixes(array_shape, block_shape, dtype, chip=None, jax_version=None, limit=5)``
  → ``list[Fix]``: blocks that pass every check, nearest first, each re-checked.
- ``vmem_budget(blocks, chip=None, vmem_limit_bytes=None, jax_version=None)``
  → ``VmemBudget``: each ``VmemBlock(shape, dtype, role, buffer_count, array_shape)``
  padded to its tiles and counted per pipeline buffer, against the scoped limit and
  physical VMEM; its ``fixes``: the ``vmem_limit_bytes`` that would do, ``pl.Buffered(1)``
  on an input, and the largest blocks per axis that fit and pass the block checks.
- ``operand_tiling(block_shape, dtype, chip=None, array_shape=None)`` → ``OperandTiling``
  (E2002: the (rows, lanes) tile and the nearest blocks of whole tiles).
- ``matmul_support(lhs, rhs, chip=None, accumulator=None)`` → ``MatmulSupport`` (the MXU's
  operand dtypes, the 32-bit accumulator, alternatives keeping the user's dtypes).
- ``dynamic_offset_advice(axis, dtype, chip=None, start_multiple=None)`` → ``str`` (E2003).
- ``CHIPS``, ``get_chip(name)``: v4, v5e, v5p, v6e, v7x (JAX's device kinds read too).
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
from .mosaic_checks import (
    MatmulSupport,
    OperandTiling,
    dynamic_offset_advice,
    matmul_support,
    operand_tiling,
)
from .vmem import VmemBlock, VmemBudget, vmem_budget

__all__ = [
    "CHIPS",
    "BlockCheck",
    "Chip",
    "CodeChange",
    "Fix",
    "InputValueError",
    "MatmulSupport",
    "OperandTiling",
    "Violation",
    "VmemBlock",
    "VmemBudget",
    "block_fixes",
    "check_blocks",
    "dynamic_offset_advice",
    "get_chip",
    "infer_tiling",
    "matmul_support",
    "modelled_releases",
    "operand_tile",
    "operand_tiling",
    "padded_bytes",
    "sublane_tiling",
    "vmem_budget",
]
