"""The TPU facts errata keeps in ``data/tpu-chips.json``, read from JAX's own ``tpu_info``.

    python -m tests.oracle.tpu_facts > data/tpu-chips.json

rewrites the file from the installed JAX; ``test_tpu_chips.py`` holds the file to it.
"""

from __future__ import annotations

import json
from typing import Any

import jax
import jax.numpy as jnp
from jax._src.pallas.mosaic import tpu_info

# errata's chip names → JAX's ChipVersion (7x is JAX's "7x", errata's "v7x").
CHIPS = {
    "v4": tpu_info.ChipVersion.TPU_V4,
    "v5e": tpu_info.ChipVersion.TPU_V5E,
    "v5p": tpu_info.ChipVersion.TPU_V5P,
    "v6e": tpu_info.ChipVersion.TPU_V6E,
    "v7x": tpu_info.ChipVersion.TPU_7X,
}
# The dtypes a matmul operand may have, as ``is_matmul_supported`` sorts them.
MATMUL_DTYPES = (
    "float32",
    "bfloat16",
    "float16",
    "int8",
    "uint8",
    "int4",
    "uint4",
    "float8_e5m2",
    "float8_e4m3fn",
    "float8_e4m3b11fnuz",
)
# Bit widths of the dtypes Pallas TPU blocks hold.
BIT_WIDTHS = (4, 8, 16, 32)
# Not in JAX's source: libtpu's default for --xla_tpu_scoped_vmem_limit_kib, per chip; a
# v5e printed "limit 16.00M" (data/tpu-verdicts/), the others are assumed.
DEFAULT_SCOPED_VMEM = {
    "v4": 16 * 2**20,
    "v5e": 16 * 2**20,
    "v5p": 16 * 2**20,
    "v6e": 32 * 2**20,
    "v7x": 32 * 2**20,
}
_BY_BITS = {4: jnp.int4, 8: jnp.int8, 16: jnp.bfloat16, 32: jnp.float32}


def chip_facts(name: str) -> dict[str, Any]:
    version = CHIPS[name]
    info = tpu_info.get_tpu_info_for_chip(version, 1)
    return {
        "chip": name,
        "jaxChipVersion": version.value,
        "generation": info.generation,
        "tensorCoresPerChip": version.num_physical_tensor_cores_per_chip,
        "lanes": info.num_lanes,
        "sublanes": info.num_sublanes,
        "mxuColumnSize": info.mxu_column_size,
        "mxus": info.num_mxus,
        "vmemBytes": info.vmem_capacity_bytes,
        "smemBytes": info.smem_capacity_bytes,
        "hbmBytes": info.hbm_capacity_bytes,
        "defaultScopedVmemBytes": DEFAULT_SCOPED_VMEM[name],
        "sublaneTiling": {
            str(bits): info.get_sublane_tiling(jnp.dtype(_BY_BITS[bits])) for bits in BIT_WIDTHS
        },
        # Per lhs dtype, the rhs dtypes the MXU takes with it (none: the lhs is refused).
        "matmulOperands": {
            lhs: rhs
            for lhs in MATMUL_DTYPES
            if (
                rhs := [
                    rhs
                    for rhs in MATMUL_DTYPES
                    if info.is_matmul_supported(jnp.dtype(lhs), jnp.dtype(rhs))
                ]
            )
        },
    }


def facts() -> dict[str, Any]:
    return {
        "jaxVersion": jax.__version__,
        "source": "jax/_src/pallas/mosaic/tpu_info.py (get_tpu_info_for_chip, one TensorCore; "
        "get_sublane_tiling; is_matmul_supported)",
        "defaultScopedVmemSource": "libtpu's default scoped VMEM limit; not in JAX's source: "
        "a v5e's recorded, the rest assumed",
        "chips": [chip_facts(name) for name in CHIPS],
    }


if __name__ == "__main__":
    print(json.dumps(facts(), indent=1))
