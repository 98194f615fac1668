"""TPU generations as JAX 0.10.2's ``tpu_info`` describes them (``data/tpu-chips.json``).

The file is written from JAX's own ``get_tpu_info_for_chip`` (one TensorCore),
``get_sublane_tiling`` and ``is_matmul_supported`` by ``tests/oracle/tpu_facts.py``, and
held to them by ``tests/oracle/test_tpu_chips.py``: no figure here is typed by hand, except
the default scoped VMEM limit, which is libtpu's and appears nowhere in JAX's source.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import cache

from app.jaxref.dtypes import DType
from app.jaxref.files import DATA_DIR
from app.jaxref.inputs import InputValueError
from app.jaxref.shapes import Dims

CHIPS_FILE = DATA_DIR / "tpu-chips.json"
DEFAULT_CHIP = "v5e"
# Mosaic stores a bool as an i32 (lowering.py's BOOL_MEMREF_TYPE).
BOOL_BITS = 32
# The lane tile of JAX's COMPACT tiling (tpu_info.Tiling.COMPACT: (8, 128)).
COMPACT_TILE = (8, 128)


@dataclass(frozen=True)
class Chip:
    """One TensorCore of a TPU generation: what a Pallas kernel's blocks live in."""

    name: str  # errata's spelling: v4, v5e, v5p, v6e, v7x
    jax_chip_version: str  # tpu_info.ChipVersion's value: "v5e", "7x"
    generation: int
    tensor_cores_per_chip: int
    lanes: int
    sublanes: int
    mxu_column_size: int
    mxus: int
    vmem_bytes: int
    smem_bytes: int
    hbm_bytes: int
    default_scoped_vmem_bytes: int
    sublane_tiling: dict[int, int]  # bit width → rows of a tile (get_sublane_tiling)
    matmul_operands: dict[str, tuple[str, ...]]  # lhs dtype → the rhs dtypes the MXU takes


@cache
def _load() -> dict[str, Chip]:
    facts = json.loads(CHIPS_FILE.read_text())
    return {
        entry["chip"]: Chip(
            name=entry["chip"],
            jax_chip_version=entry["jaxChipVersion"],
            generation=entry["generation"],
            tensor_cores_per_chip=entry["tensorCoresPerChip"],
            lanes=entry["lanes"],
            sublanes=entry["sublanes"],
            mxu_column_size=entry["mxuColumnSize"],
            mxus=entry["mxus"],
            vmem_bytes=entry["vmemBytes"],
            smem_bytes=entry["smemBytes"],
            hbm_bytes=entry["hbmBytes"],
            default_scoped_vmem_bytes=entry["defaultScopedVmemBytes"],
            sublane_tiling={int(bits): rows for bits, rows in entry["sublaneTiling"].items()},
            matmul_operands={lhs: tuple(rhs) for lhs, rhs in entry["matmulOperands"].items()},
        )
        for entry in facts["chips"]
    }


CHIPS: dict[str, Chip] = _load()

# Other spellings of each chip: JAX's device kinds (tpu_info.chip_version_from_device_kind)
# and ChipVersion values, as pastes and users write them.
_ALIASES = {
    "tpu v4": "v4",
    "tpu v5 lite": "v5e",
    "tpu v5e": "v5e",
    "v5 lite": "v5e",
    "v5litepod": "v5e",
    "tpu v5": "v5p",
    "tpu v5p": "v5p",
    "tpu v6 lite": "v6e",
    "tpu v6e": "v6e",
    "v6 lite": "v6e",
    "tpu7x": "v7x",
    "7x": "v7x",
}


def get_chip(name: str | None, field: str = "chip") -> Chip:
    """The chip ``name`` spells (v5e when None); an unknown one raises naming ``field``."""
    if name is None:
        return CHIPS[DEFAULT_CHIP]
    key = name.strip().lower()
    chip = CHIPS.get(_ALIASES.get(key, key))
    if chip is None:
        raise InputValueError(field, f"unknown TPU chip {name!r}; modelled: {', '.join(CHIPS)}")
    return chip


def tpu_bits(dtype: DType) -> int:
    """The bit width Mosaic stores ``dtype`` in: a bool takes an i32."""
    return BOOL_BITS if dtype.kind == "bool" else dtype.bits


def check_tpu_dtype(dtype: DType, field: str = "dtype") -> DType:
    """A dtype a Pallas TPU block may hold (4 to 32 bits); others raise naming ``field``."""
    if tpu_bits(dtype) not in (4, 8, 16, 32) or dtype.kind == "complex":
        raise InputValueError(
            field, f"{dtype.name} is not modelled on TPU: blocks of 4, 8, 16 or 32-bit types are"
        )
    return dtype


def sublane_tiling(chip: Chip, dtype: DType) -> int:
    """Rows of one (rows, lanes) tile of ``dtype`` on ``chip`` (``get_sublane_tiling``)."""
    return chip.sublane_tiling[tpu_bits(check_tpu_dtype(dtype))]


def operand_tile(chip: Chip, dtype: DType) -> tuple[int, int]:
    """The (sublanes, lanes) tile Mosaic lays a 2-D-or-more operand of ``dtype`` out in."""
    return sublane_tiling(chip, dtype), chip.lanes


def infer_tiling(chip: Chip, shape: Dims, dtype: DType) -> Dims:
    """``tpu_info.infer_tiling`` with the COMPACT tiling: 1 for the leading dimensions, then
    the second-minor factor and 128; a 1-D shape gets one tile of packing × 128."""
    # JAX packs int4 by 8 but every other dtype by 4 // itemsize (uint4 is one byte: 4).
    packing = 8 if dtype.name == "int4" else 4 // max(1, tpu_bits(dtype) // 8)
    rows, lanes = COMPACT_TILE
    if len(shape) == 1:
        return ((1 + int(chip.generation < 4)) * packing * lanes,)
    if len(shape) < len(COMPACT_TILE):
        raise InputValueError("shape", f"Shape must have at least 2 dimensions: shape={shape}")
    factor = (1 + int(chip.generation < 4)) * packing
    while factor < min(shape[-2], rows):
        factor *= 2
    return (*(1,) * (len(shape) - 2), factor, lanes)


def padded_bytes(chip: Chip, shape: Dims, dtype: DType) -> int:
    """Bytes a block of ``shape`` takes in VMEM, its last two dimensions rounded up to whole
    tiles (a 1-D block to whole rows of sublanes × lanes)."""
    bits = tpu_bits(dtype)
    if not shape:
        return max(1, bits // 8)
    if len(shape) == 1:
        per_row = chip.lanes * sublane_tiling(chip, dtype)
        return math.ceil(shape[0] / per_row) * per_row * bits // 8
    rows, lanes = operand_tile(chip, dtype)
    padded = math.prod(shape[:-2]) * _round_up(shape[-2], rows) * _round_up(shape[-1], lanes)
    return padded * bits // 8


def _round_up(size: int, multiple: int) -> int:
    return -(-size // multiple) * multiple
