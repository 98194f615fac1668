"""A user's script and its traceback, pasted: the diffs of the answer, applied to the script,
make it lower for CUDA in JAX (on the CPU).

Each script fails in JAX as a user's would; errata reads the paste, and every step with a
diff is applied to the script line by line and run again. The diffs must change every line
the fix needs (the array, ``out_shape``, the scratch), or the script fails on the next check.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.answers.answer import Answer
from app.answers.cards import match_answers
from app.answers.catalog import Catalog
from app.answers.links import Links
from app.answers.match import MatchService
from app.schemas.match import MatchRequest

pytestmark = pytest.mark.oracle

_KERNEL = """import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu


def body(x_gmem, o_gmem, smem, barrier):
    plgpu.copy_gmem_to_smem(x_gmem, smem, barrier)
    plgpu.barrier_wait(barrier)
    plgpu.copy_smem_to_gmem(smem, o_gmem)
    plgpu.wait_smem_to_gmem(0)


"""
SCRIPTS = {
    "tiling-assert": _KERNEL
    + """tiling = plgpu.TilingTransform((8, 32))
x = jnp.zeros((16, 48), jnp.float16)
kernel = plgpu.kernel(
    body,
    out_type=jax.ShapeDtypeStruct((16, 48), jnp.float16),
    scratch_types=[
        plgpu.SMEM((16, 48), jnp.float16, transforms=(tiling,)),
        plgpu.Barrier(),
    ],
)
jax.jit(kernel).trace(x).lower(lowering_platforms=("cuda",))
""",
    "tiling-assert-swizzled": _KERNEL
    + """x = jnp.zeros((100, 64), jnp.float16)
kernel = plgpu.kernel(
    body,
    out_type=jax.ShapeDtypeStruct((100, 64), jnp.float16),
    scratch_types=[
        plgpu.SMEM(
            (100, 64),
            jnp.float16,
            transforms=(plgpu.TilingTransform((8, 64)), plgpu.SwizzleTransform(128)),
        ),
        plgpu.Barrier(),
    ],
)
jax.jit(kernel).trace(x).lower(lowering_platforms=("cuda",))
""",
    "copy-int4": _KERNEL
    + """x = jnp.zeros((7,), jnp.int4)
kernel = plgpu.kernel(
    body,
    out_type=jax.ShapeDtypeStruct((7,), jnp.int4),
    scratch_types=[plgpu.SMEM((7,), jnp.int4), plgpu.Barrier()],
)
jax.jit(kernel).trace(x).lower(lowering_platforms=("cuda",))
""",
}
LINKS = Links("https://errata.example")


def run(script: str, folder: Path) -> subprocess.CompletedProcess[str]:
    path = folder / "repro.py"
    path.write_text(script)
    environment = {**os.environ, "JAX_PLATFORMS": "cpu", "PYTHONWARNINGS": "ignore"}
    return subprocess.run(
        [sys.executable, str(path)], env=environment, capture_output=True, text=True
    )


def applied(script: str, diff: str) -> str:
    """``script`` with each removed line of ``diff`` replaced by the added line under it,
    the script's indentation kept."""
    lines = script.splitlines()
    changes = diff.splitlines()
    for removed, added in zip(changes[::2], changes[1::2], strict=True):
        assert removed.startswith("-") and added.startswith("+"), (removed, added)
        [at] = [n for n, line in enumerate(lines) if line.strip() == removed[1:]]
        indent = lines[at][: len(lines[at]) - len(lines[at].lstrip())]
        lines[at] = indent + added[1:]
    return "\n".join(lines) + "\n"


def answer_to(catalog: Catalog, paste: str) -> Answer:
    response = MatchService(catalog).match(MatchRequest(text=paste))
    return match_answers(response, catalog.records, LINKS)[0]


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_every_diff_of_the_answer_makes_the_script_lower(
    catalog: Catalog, name: str, tmp_path: Path
) -> None:
    script = SCRIPTS[name]
    failed = run(script, tmp_path)
    assert failed.returncode == 1, failed.stderr[-500:]
    answer = answer_to(catalog, f"$ cat repro.py\n{script}$ python repro.py\n{failed.stderr}")
    diffs = [step.diff for step in answer.steps if step.diff]
    assert answer.doThis is not None and answer.doThis.diff is not None
    assert len(diffs) >= 2
    for diff in diffs:
        fixed = run(applied(script, diff), tmp_path)
        assert fixed.returncode == 0, f"{diff}\n{fixed.stderr[-800:]}"
