"""Capture the tracebacks of Pallas TPU kernels that JAX's own lowering refuses, as pastes.

    python -m tests.oracle.capture_tpu_pastes                    # with this JAX (0.10.2)
    python -m tests.oracle.capture_tpu_pastes --release 0.6.0 block-not-aligned

Each case is a small user script, run in a subprocess with ``JAX_PLATFORMS=cpu``: it lowers
its kernel for TPU (``jax.jit(f).trace(*avals).lower(lowering_platforms=("tpu",))``) with the
CPU registered as a TPU v5e, as ``tests/oracle/conftest.py``'s ``cpu_as_tpu`` does, through a
``sitecustomize`` module so that the script itself reads as a user's. Its uncaught error, as
Python prints it, is written to ``tests/fixtures/pastes/tpu-<name>.txt`` behind a header
saying how it was made. With ``--release``, the script runs in a venv of that JAX release
(``test_releases.release_python``) and the paste is ``tpu-<name>-<release>.txt``.

The pastes of what only libtpu checks (E1001, E2002, E2003, the matmul dtypes a chip
refuses) cannot be made here: they are written by hand from the recorded wordings, and their
headers say so.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import jax

from .capture_tracebacks import REPO_ROOT, neutral_paths
from .test_releases import release_python

PASTES = REPO_ROOT / "tests" / "fixtures" / "pastes"

# Registers the CPU as a TPU v5e ("TPU v5 lite"): the rank-1 and tiling checks ask for its
# sublanes and lanes.
SITECUSTOMIZE = """\
try:
    from jax._src.pallas.mosaic import tpu_info

    tpu_info.registry["cpu"] = lambda: tpu_info.get_tpu_info_for_chip(
        tpu_info.ChipVersion.TPU_V5E, 1
    )
except (ImportError, AttributeError):
    pass  # releases before tpu_info's registry ask nothing of the chip
"""

_COPY = """\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def copy_kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...]


def copy(x):
    return pl.pallas_call(
        copy_kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        grid={grid},
        in_specs=[pl.BlockSpec({block}, lambda {index}: ({index}))],
        out_specs=pl.BlockSpec({block}, lambda {index}: ({index})),
    )(x)


x = jax.ShapeDtypeStruct({shape}, jnp.{dtype})
jax.jit(copy).trace(x).lower(lowering_platforms=("tpu",))
"""

_MATMUL = """\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def matmul_kernel(x_ref, w_ref, o_ref):
    o_ref[...] = x_ref[...] @ w_ref[...]


def matmul(x, w):
    return pl.pallas_call(
        matmul_kernel,
        out_shape=jax.ShapeDtypeStruct((x.shape[0], w.shape[1]), x.dtype),
    )(x, w)


x = jax.ShapeDtypeStruct((512, 512), jnp.bfloat16)
w = jax.ShapeDtypeStruct((512, 256), jnp.bfloat16)
jax.jit(matmul).trace(x, w).lower(lowering_platforms=("tpu",))
"""


def _copy(shape: tuple[int, ...], block: tuple[int, ...], dtype: str) -> str:
    grid = tuple(-(-s // b) for s, b in zip(shape, block, strict=True))
    index = ", ".join("ijk"[: len(shape)])
    return _COPY.format(shape=shape, block=block, dtype=dtype, grid=grid, index=index)


# name: (what the paste shows, the user's script, the error class JAX raises)
CASES: dict[str, tuple[str, str, str]] = {
    "block-not-aligned": (
        "a float32 block (100, 100) of a (256, 256) array",
        _copy((256, 256), (100, 100), "float32"),
        "ValueError",
    ),
    "int8-block-rows": (
        "an int8 block of 4 rows, (4, 256), of a (64, 256) array",
        _copy((64, 256), (4, 256), "int8"),
        "ValueError",
    ),
    "rank1-block": (
        "a rank-1 float32 block (500,) of a (4000,) array",
        _copy((4000,), (500,), "float32"),
        "ValueError",
    ),
    "int4-rank1-block": (
        "a rank-1 int4 block (512,) of an (8192,) array, under int4's tiling of 1024",
        _copy((8192,), (512,), "int4"),
        "ValueError",
    ),
    "matmul-bf16-acc": (
        "a bfloat16 @ bfloat16 matmul in the kernel, accumulating in bfloat16",
        _MATMUL,
        "VerificationError",
    ),
}


def header(description: str, release: str) -> str:
    return (
        f"# {description}: the traceback JAX {release} printed lowering it for TPU\n"
        "# on a CPU (captured: python -m tests.oracle.capture_tpu_pastes writes it again).\n"
    )


def run_case(script_text: str, work: Path, python: Path) -> str:
    """The stderr of ``script_text`` run as a user's script, with the CPU as a TPU v5e."""
    site = work / "site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE)
    script = work / "repro.py"
    script.write_text(script_text)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JAX_", "PYTHONPATH"))}
    env |= {"PYTHONPATH": str(site), "JAX_PLATFORMS": "cpu"}
    completed = subprocess.run(
        [str(python), str(script)], cwd=work, env=env, capture_output=True, text=True
    )
    if completed.returncode == 0:
        raise RuntimeError(f"{script_text}\nlowered cleanly; it cannot give a traceback")
    return completed.stderr


def paste_path(name: str, release: str | None = None) -> Path:
    return PASTES / (f"tpu-{name}.txt" if release is None else f"tpu-{name}-{release}.txt")


def captured(name: str, work: Path, release: str | None = None) -> str:
    """The paste of case ``name``, its header first, lowered with this JAX or ``release``."""
    description, script_text, error_class = CASES[name]
    python = Path(sys.executable) if release is None else release_python(release)
    text = run_case(script_text, work, python)
    if f"{error_class}: " not in text:
        raise RuntimeError(f"{name}: no {error_class} in the traceback:\n{text}")
    return header(description, release or jax.__version__) + neutral_paths(text, str(work))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help=f"of {', '.join(CASES)} (default: all)")
    parser.add_argument("--release", help="a JAX release to capture with, in a venv of its own")
    arguments = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as work:
        for name in arguments.names or CASES:
            path = paste_path(name, arguments.release)
            path.write_text(captured(name, Path(os.path.realpath(work)), arguments.release))
            print(path.relative_to(REPO_ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
