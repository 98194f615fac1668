"""The TPU engine against each JAX release it models, each installed in a venv of its own.

Off by default (``-m releases``), as ``test_releases.py``: each release lowers the grid of
``test_tpu_vs_jax.py`` in its own interpreter (``tpu_kernels -``). Where the engine models
the release, its first error must be the release's, class and message, or both must say the
kernel lowers; and each fix it gives must lower there.
"""

from __future__ import annotations

import json

import pytest

from app.engines.tpu import block_fixes, check_blocks, modelled_releases

from .test_releases import run_in_release
from .test_tpu_vs_jax import GRID, Case
from .tpu_kernels import KERNEL, fixed_block

pytestmark = pytest.mark.releases

# Every release the engine models for TPU (blocks.modelled_releases()), oldest first.
TPU_RELEASES = modelled_releases()
Verdict = tuple[str | None, str | None]


def release_verdicts(version: str, cases: list[Case]) -> list[Verdict]:
    verdicts = run_in_release(version, "tpu_kernels", "-", given=json.dumps(cases))
    return [(error_class, message) for error_class, message in verdicts]


def engine_verdict(case: Case, version: str) -> Verdict:
    array, block, dtype, chip = case
    first = check_blocks(array, block, dtype, chip, version, kernel=KERNEL).first_violation
    return (first.error_class, first.message) if first else (None, None)


@pytest.mark.parametrize("version", TPU_RELEASES)
def test_engine_agrees_with_the_release(version: str) -> None:
    disagreements = [
        (case, engine_verdict(case, version), jax)
        for case, jax in zip(GRID, release_verdicts(version, GRID), strict=True)
        if engine_verdict(case, version) != jax
    ]
    print(f"JAX {version}: {len(GRID)} cases, {len(disagreements)} disagree")
    assert not disagreements, disagreements[:3]


@pytest.mark.parametrize("version", TPU_RELEASES)
def test_every_fix_lowers_in_the_release(version: str) -> None:
    fixed = []
    for array, block, dtype, chip in GRID:
        for fix in block_fixes(array, block, dtype, chip, version, limit=2):
            fixed.append((array, fixed_block(block, fix.shape), dtype, chip))
    failing = [
        (case, verdict)
        for case, verdict in zip(fixed, release_verdicts(version, fixed), strict=True)
        if verdict != (None, None)
    ]
    assert not failing, failing[:3]
