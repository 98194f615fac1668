"""The fixes a match answer leads with for a Pallas TPU paste, lowered by JAX itself.

The pastes were captured from JAX 0.10.2's TPU lowering on the CPU (tests/oracle/
capture_tpu_pastes.py); each kernel's array, block and dtype are in the paste's first line.
Every fix the answer gives must lower for the chip it names, with the kernel's own dtype.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from app.answers.catalog import Catalog
from app.answers.match import MatchService
from app.schemas.match import MatchRequest

from .tpu_kernels import as_chip, jax_verdict

pytestmark = pytest.mark.oracle

PASTES = Path(__file__).parent.parent / "fixtures" / "pastes"
# paste → the array and dtype the captured kernel had (the paste's own first line says so)
KERNELS = {
    "tpu-block-not-aligned.txt": ((256, 256), "float32"),
    "tpu-rank1-block.txt": ((4000,), "float32"),
    "tpu-int8-block-rows.txt": ((64, 256), "int8"),
    "tpu-int4-rank1-block.txt": ((8192,), "int4"),
}


@pytest.mark.parametrize("paste", sorted(KERNELS))
def test_every_fix_of_the_answer_lowers(catalog: Catalog, paste: str) -> None:
    array, dtype = KERNELS[paste]
    text = (PASTES / paste).read_text()
    assert f"{dtype} block" in text.splitlines()[0]
    response = MatchService(catalog).match(MatchRequest(text=text))
    [found] = response.tpu
    assert found.compute is not None and found.compute.fixes
    block = tuple(found.compute.blockShape or ())
    with as_chip(found.chip):
        assert jax_verdict(array, block, dtype, found.chip)[0] is not None  # the paste's error
        for fix in found.compute.fixes:
            lowered = jax_verdict(array, tuple(fix.shape), dtype, found.chip)
            assert lowered == (None, None), (fix.shape, lowered)
