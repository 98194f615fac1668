"""Run small user scripts that fail on a TPU, and keep what each printed, as pastes.

    python tpu_pastes.py OUT_DIR          # on a TPU: one tpu-v5e-<name>.txt per script

What only libtpu checks (E1001, E2002, E2003, the matmul types Mosaic refuses) fails only on
a TPU, so a user's paste of it can only be made there. Each script below is what a user
would run: it builds a kernel and calls it. Its output (Python's traceback as printed, and
the runtime's warnings before it) is written behind a header that says where it was made,
with the machine's paths made neutral: the script's as /home/user/repro.py, JAX's as a
plain install's. Needs only JAX (the project is not installed on the TPU machine).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import subprocess
import sys
import tempfile
from pathlib import Path

_IMPORTS = """\
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

"""
_COPY = (
    _IMPORTS
    + """
def copy_kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...]


x = jnp.ones({shape}, jnp.{dtype})
copy = pl.pallas_call(
    copy_kernel,
    out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
    grid={grid},
    in_specs=[pl.BlockSpec({block}, lambda i, j: (i, j))],
    out_specs=pl.BlockSpec({block}, lambda i, j: (i, j)),{params}
)
out = jax.jit(copy)(x)
print(out.sum())
"""
)
_MATMUL = (
    _IMPORTS
    + """
def matmul_kernel(x_ref, w_ref, o_ref):
    o_ref[...] = {product}.astype(o_ref.dtype)


x = jnp.ones((128, 256), jnp.{lhs})
w = jnp.ones((256, 128), jnp.{rhs})
matmul = pl.pallas_call(
    matmul_kernel,
    out_shape=jax.ShapeDtypeStruct((128, 128), jnp.float32),
)
out = jax.jit(matmul)(x, w)
print(out.sum())
"""
)
_OFFSET = (
    _IMPORTS
    + """
def window_kernel(start_ref, x_ref, o_ref):
    start = start_ref[0]
    o_ref[...] = x_ref[:, pl.ds(start, 128)]


x = jnp.ones((8, 512), jnp.float32)
window = pl.pallas_call(
    window_kernel,
    out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32),
    in_specs=[pl.BlockSpec(memory_space=pltpu.SMEM), pl.BlockSpec(memory_space=pltpu.VMEM)],
    out_specs=pl.BlockSpec(memory_space=pltpu.VMEM),
)
out = jax.jit(window)(jnp.array([64], jnp.int32), x)
print(out.sum())
"""
)


def _copy(shape: tuple[int, int], block: tuple[int, int], dtype: str, limit: int = 0) -> str:
    grid = tuple(-(-s // b) for s, b in zip(shape, block, strict=True))
    mib = f"{limit // 2**20} * 1024 * 1024"
    params = f"\n    compiler_params=pltpu.CompilerParams(vmem_limit_bytes={mib})," if limit else ""
    return _COPY.format(shape=shape, block=block, dtype=dtype, grid=grid, params=params)


def _matmul(lhs: str, rhs: str, product: str) -> str:
    return _MATMUL.format(lhs=lhs, rhs=rhs, product=product)


# name: (what the paste shows, the user's script)
CASES = {
    "e1001-default-limit": (
        "float32 blocks (1024, 2048) in and out, double-buffered, at the default limit",
        _copy((4096, 2048), (1024, 2048), "float32"),
    ),
    "e1001-explicit-limit": (
        "float32 blocks (2048, 2048) in and out, double-buffered, at vmem_limit_bytes=32 MiB",
        _copy((4096, 2048), (2048, 2048), "float32", 32 * 2**20),
    ),
    "e2002-int8-rows": (
        "an int8 block of 8 rows, (8, 256), of a (64, 256) array",
        _copy((64, 256), (8, 256), "int8"),
    ),
    "e2002-int4-rows": (
        "an int4 block (32, 256) of a (64, 256) array",
        _copy((64, 256), (32, 256), "int4"),
    ),
    "e2003-dynamic-lane": (
        "a load at a lane offset read from SMEM",
        _OFFSET,
    ),
    "matmul-int8-float-acc": (
        "int8 × int8 asked for a float32 accumulator",
        _matmul(
            "int8", "int8", "jnp.dot(x_ref[...], w_ref[...], preferred_element_type=jnp.float32)"
        ),
    ),
    "matmul-int8-int4": (
        "int8 × int4 into int32",
        _matmul(
            "int8", "int4", "jnp.dot(x_ref[...], w_ref[...], preferred_element_type=jnp.int32)"
        ),
    ),
    "matmul-bf16-highest": (
        "bfloat16 × bfloat16 at precision=HIGHEST",
        _matmul(
            "bfloat16",
            "bfloat16",
            "jnp.dot(x_ref[...], w_ref[...], precision=lax.Precision.HIGHEST, "
            "preferred_element_type=jnp.float32)",
        ),
    ),
}


def header(description: str, device: str) -> str:
    import jax

    libtpu = importlib.metadata.version("libtpu") if _has("libtpu") else "unknown"
    return (
        f"# {description}: what a {device} printed running it (JAX {jax.__version__}, libtpu\n"
        f"# {libtpu}); captured by tools/tpu_pastes.py, paths made neutral.\n"
    )


def device_kind() -> str:
    """Asked of a process of its own: a TPU is held by one process, and each script needs it."""
    ask = "import jax; print(jax.devices()[0].device_kind)"
    done = subprocess.run([sys.executable, "-c", ask], capture_output=True, text=True, check=True)
    return done.stdout.strip().splitlines()[-1]


def _has(package: str) -> bool:
    try:
        importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def neutral(text: str, work: Path) -> str:
    """The machine's paths as a user's plain install shows them."""
    import jax

    site = str(Path(jax.__file__).resolve().parent.parent)
    return text.replace(str(work / "repro.py"), "/home/user/repro.py").replace(
        site, "/usr/lib/python3.11/site-packages"
    )


def capture(script: str, work: Path) -> str:
    (work / "repro.py").write_text(script)
    done = subprocess.run(
        [sys.executable, "repro.py"], cwd=work, capture_output=True, text=True, timeout=300
    )
    if done.returncode == 0:
        raise RuntimeError(f"{script}\nran without an error: no paste")
    return done.stderr


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("names", nargs="*", help=f"of {', '.join(CASES)} (default: all)")
    arguments = parser.parse_args(argv)
    arguments.out_dir.mkdir(parents=True, exist_ok=True)
    device = device_kind()
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(os.path.realpath(scratch))
        for name in arguments.names or CASES:
            description, script = CASES[name]
            try:
                printed = neutral(capture(script, work), work)
            except (RuntimeError, subprocess.TimeoutExpired) as exc:
                print(f"{name}: {exc}", file=sys.stderr)
                continue
            paste = (
                f"{header(description, device)}$ cat repro.py\n{script}$ python repro.py\n{printed}"
            )
            (arguments.out_dir / f"tpu-v5e-{name}.txt").write_text(paste)
            print(name, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
