"""Capture JAX's real tracebacks, one failing case per reachable rule, as test fixtures.

    python -m tests.oracle.capture_tracebacks

For each case this writes, under ``tests/fixtures/tracebacks/``:

* ``<name>.txt``: a tiny script that lowers the kernel, run in a subprocess; its
  uncaught error exactly as Python prints it, with JAX's traceback filtering (the
  ``JaxStackTraceBeforeTransformation`` block, or the JAX_TRACEBACK_FILTERING footer);
* ``<name>-verbose.txt``: the same with ``JAX_PALLAS_VERBOSE_ERRORS=1``, where JAX
  wraps the error in a ``LoweringError`` that dumps the equation and its context;
* ``<name>-formatted.txt``: ``traceback.format_exception`` of the error caught in
  process, as a logging handler or notebook would render it;
* ``<name>-pytest.txt`` and ``<name>-pytest-short.txt``: pytest's report of a test that
  lowers the kernel, as pytest prints it by default (``--tb=auto``: the first and last
  frames with their whole source) and with ``--tb=short``.

Machine paths are replaced by neutral ones, so the fixtures read like a user's paste.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import tempfile
import traceback
from pathlib import Path

from .jax_kernels import jax_verdict, lower

REPO_ROOT = Path(__file__).resolve().parents[2]
FIXTURES = REPO_ROOT / "tests" / "fixtures" / "tracebacks"

# name: (operation, shape, dtype, target_dtype). Catalog rules first, then JAX errors
# outside the catalog that the same kernels run into.
CASES: dict[str, tuple[str, tuple[int, ...], str, str | None]] = {
    "MGPU-COPY-INTEGER-BYTES": ("copy_gmem_to_smem", (7,), "int4", None),
    "MGPU-COPY-WARPGROUP-BYTES": ("pallas_call", (8,), "float32", None),
    "MGPU-WGSTRIDED-ELEMENT-MULTIPLE": ("pallas_call", (32,), "float32", None),
    "MGPU-REFUNION-BYTE-ALIGNED-SHAPES": ("ref_union", (7,), "int4", None),
    "MGPU-ALIAS-BYTE-ALIGNED-BITCAST": ("smem_alias", (7,), "int4", None),
    "MGPU-DTYPE-BITCAST-REGION": ("smem_bitcast", (3,), "uint8", "int16"),
    "MGPU-TMA-GMEM-STRIDES-16B": ("copy_gmem_to_smem", (32, 1), "float32", None),
    "MGPU-TMA-LASTDIM-128BITS": ("copy_smem_to_gmem", (3,), "float32", None),
    "MGPU-TMA-BOX-256": ("copy_gmem_to_smem", (512,), "float32", None),
    "pallas_call-128-int8": ("pallas_call", (128,), "int8", None),
    "copy_gmem_to_smem-8x128-bool": ("copy_gmem_to_smem", (8, 128), "bool", None),
    "copy_gmem_to_smem-256x256-float32": ("copy_gmem_to_smem", (256, 256), "float32", None),
    "ref_union-8-bool": ("ref_union", (8,), "bool", None),
}

SCRIPT = """\
from tests.oracle.jax_kernels import lower

lower({operation!r}, {shape!r}, {dtype!r}, {target_dtype!r})
"""


def neutral_paths(text: str, script_dir: str) -> str:
    """Replace this machine's paths with the ones a plain system install would show."""
    replacements = {
        sysconfig.get_paths()["purelib"]: "/usr/lib/python3.11/site-packages",
        sysconfig.get_paths()["stdlib"]: "/usr/lib/python3.11",
        str(REPO_ROOT): "/home/user/project",
        script_dir: "/home/user",
    }
    for path, neutral in sorted(replacements.items(), key=lambda item: -len(item[0])):
        text = text.replace(path, neutral)
    return text


def run_script(case: tuple, script_dir: str, verbose: bool) -> str:
    """The stderr of a script that lowers ``case`` and lets the error escape."""
    operation, shape, dtype, target_dtype = case
    script = Path(script_dir) / "repro.py"
    script.write_text(SCRIPT.format(**locals()))
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("JAX_PALLAS_VERBOSE_ERRORS", "JAX_TRACEBACK_FILTERING"))
    }
    env |= {"PYTHONPATH": str(REPO_ROOT), "JAX_PLATFORMS": "cpu"}
    if verbose:
        env["JAX_PALLAS_VERBOSE_ERRORS"] = "1"
    completed = subprocess.run(
        [sys.executable, str(script)], cwd=script_dir, env=env, capture_output=True, text=True
    )
    if completed.returncode == 0:
        raise RuntimeError(f"{case} lowered cleanly; it cannot give a traceback")
    return completed.stderr


PYTEST_SCRIPT = """\
from tests.oracle.jax_kernels import lower


def test_{operation}():
    lower({operation!r}, {shape!r}, {dtype!r}, {target_dtype!r})
"""


def run_pytest(case: tuple, script_dir: str, style: str) -> str:
    """pytest's report of a test that lowers ``case``, its traceback in ``style``."""
    operation, shape, dtype, target_dtype = case
    script = Path(script_dir) / "test_repro.py"
    script.write_text(PYTEST_SCRIPT.format(**locals()))
    env = {key: value for key, value in os.environ.items() if not key.startswith("JAX_")}
    env |= {"PYTHONPATH": str(REPO_ROOT), "JAX_PLATFORMS": "cpu"}
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", f"--tb={style}"]
    completed = subprocess.run(
        [*command, script.name], cwd=script_dir, env=env, capture_output=True, text=True
    )
    if completed.returncode != 1:
        raise RuntimeError(f"{case}: pytest did not report one failure:\n{completed.stdout}")
    return completed.stdout


def format_in_process(case: tuple) -> str:
    try:
        lower(*case)
    except Exception as error:
        return "".join(traceback.format_exception(error))
    raise RuntimeError(f"{case} lowered cleanly; it cannot give a traceback")


def capture(name: str, case: tuple, script_dir: str) -> list[Path]:
    verdict = jax_verdict(*case)
    texts = {
        f"{name}.txt": run_script(case, script_dir, verbose=False),
        f"{name}-verbose.txt": run_script(case, script_dir, verbose=True),
        f"{name}-formatted.txt": format_in_process(case),
        f"{name}-pytest.txt": run_pytest(case, script_dir, "auto"),
        f"{name}-pytest-short.txt": run_pytest(case, script_dir, "short"),
    }
    written = []
    for filename, text in texts.items():
        if f"{verdict.error_class}: {verdict.message}" not in text:
            raise RuntimeError(f"{filename}: JAX's error is not in the traceback:\n{text}")
        path = FIXTURES / filename
        path.write_text(neutral_paths(text, script_dir))
        written.append(path)
    return written


def main() -> int:
    FIXTURES.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as script_dir:
        for name, case in CASES.items():
            for path in capture(name, case, os.path.realpath(script_dir)):
                print(path.relative_to(REPO_ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
