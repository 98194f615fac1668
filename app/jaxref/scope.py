"""Which files of a JAX source tree are mined, and which backend each belongs to."""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterator
from pathlib import Path

# Repo-relative roots of the Pallas and Mosaic code that raises the errors errata knows,
# with the JAX a kernel's body is traced through: the state primitives every ``x_ref[...]``
# read and write goes through, and the lax and ``jax.numpy`` operations (with their
# shared helpers) whose shape and dtype checks a kernel's arithmetic meets first; and the
# kernels JAX ships (``pallas/ops``: flash, splash, paged and ragged paged attention,
# megablox), whose checks of block sizes and shapes their callers meet.
PYTHON_SCOPE = (
    "jax/_src/pallas",
    "jax/experimental/pallas/ops",
    "jax/_src/state",
    "jax/_src/lax",
    "jax/_src/numpy",
    "jax/_src/util.py",
    "jax/experimental/mosaic/gpu",
    "jax/_src/tpu_custom_call.py",
    # Mosaic TPU's passes as Python ran them while Pallas lowered a kernel, up to 0.4.23
    # (from 0.4.21 beside the C++ passes that replaced them, the default).
    "jaxlib/mosaic/python/apply_vector_layout.py",
    "jaxlib/mosaic/python/infer_memref_layout.py",
)
# JAX's own machinery that a kernel's traceback passes through on its way in (``jax.jit``,
# ``.lower()``, tracing, lowering to MLIR): no error errata answers is raised there, but its
# frames date a paste whose only JAX frames are these, so their functions' lines are kept.
FRAME_SCOPE = (
    "jax/_src/api.py",
    "jax/_src/api_util.py",
    "jax/_src/core.py",
    "jax/_src/dispatch.py",
    "jax/_src/interpreters",
    "jax/_src/linear_util.py",
    "jax/_src/pjit.py",
    "jax/_src/profiler.py",
    "jax/_src/stages.py",
)
CPP_SCOPE = "jaxlib/mosaic"
# Test helpers and examples are not JAX's errors: users meet them only in JAX's own tests.
_NOT_JAX = re.compile(r"(?:^|/)(?:\w*test_util\.py|examples/|example_\w*\.py)")

_BACKENDS = (
    ("jax/_src/pallas/mosaic_gpu/", "mosaic_gpu"),
    ("jax/experimental/mosaic/gpu/", "mosaic_gpu"),
    ("jaxlib/mosaic/gpu/", "mosaic_gpu"),
    ("jaxlib/mosaic/dialect/gpu/", "mosaic_gpu"),
    ("jax/_src/pallas/triton/", "triton"),
    ("jax/_src/pallas/mosaic/", "tpu"),
    ("jax/experimental/pallas/ops/tpu/", "tpu"),
    ("jax/_src/tpu_custom_call.py", "tpu"),
    ("jaxlib/mosaic/python/", "tpu"),
    ("jaxlib/mosaic/dialect/tpu/", "tpu"),
)

# The kernels JAX ships. Other than TPU's, in ``ops/gpu/`` (in ``ops/`` itself up to 0.4.2x).
SHIPPED_KERNELS = "jax/experimental/pallas/ops/"


class SourceTreeError(ValueError):
    """The path given is not a JAX source tree."""


def repo_root(source: Path) -> Path:
    """The folder that holds ``jax/``: a checkout's root, or an installed package's parent.

    ``…/site-packages/jax`` and a checkout of jax-ml/jax both work; paths of the records are
    then the same repo-relative ones (``jax/_src/pallas/…``) either way.
    """
    source = source.resolve()
    if (source / "_src").is_dir() and source.name == "jax":
        return source.parent
    if (source / "jax" / "_src").is_dir():
        return source
    raise SourceTreeError(f"{source} is neither a checkout of jax-ml/jax nor an installed jax")


def parse_python(relative: str, path: Path) -> ast.Module:
    """A mined file's syntax tree. A file this interpreter cannot parse is an error, not a
    file without sites: JAX 0.11 and later are written for Python 3.12 (``def f[T](…)``),
    and skipping what Python 3.11 cannot read would drop most of Pallas's sites."""
    try:
        return ast.parse(path.read_bytes(), filename=relative)
    except (SyntaxError, ValueError) as exc:
        python = ".".join(map(str, sys.version_info[:2]))
        raise SourceTreeError(
            f"{relative}: Python {python} cannot parse it ({exc}); mine with a Python that the"
            " release supports"
        ) from None


def only_for_type_checkers(test: ast.expr) -> bool:
    """An ``if``'s test that is false whenever JAX runs: ``TYPE_CHECKING`` or
    ``typing.TYPE_CHECKING``. What stands under it is never run, and raises nothing."""
    name = test.attr if isinstance(test, ast.Attribute) else getattr(test, "id", None)
    return name == "TYPE_CHECKING"


def python_files(root: Path, scope: tuple[str, ...] = PYTHON_SCOPE) -> Iterator[tuple[str, Path]]:
    """``(repo-relative path, file)`` of every Python file in ``scope``, in a stable order."""
    for relative in scope:
        path = root / relative
        if path.is_file():
            yield relative, path
        elif path.is_dir():
            for file in sorted(path.rglob("*.py")):
                relative = file.relative_to(root).as_posix()
                if not _NOT_JAX.search(relative):
                    yield relative, file


def backend_of(file_path: str) -> str:
    """``mosaic_gpu``, ``triton``, ``tpu`` or ``core`` (Pallas itself, and the JAX a kernel's
    body is traced through, shared by all)."""
    for prefix, backend in _BACKENDS:
        if file_path.startswith(prefix):
            return backend
    if file_path.startswith(SHIPPED_KERNELS):  # GPU kernels: Mosaic GPU's named so, else Triton's
        return "mosaic_gpu" if file_path.endswith("_mgpu.py") else "triton"
    return "core"


def part_of_jax(file_path: str) -> str:
    """``jaxlib``, ``kernels`` (those JAX ships) or ``jax`` (the rest): code apart, whose
    sites do not move from one to another."""
    return "kernels" if file_path.startswith(SHIPPED_KERNELS) else file_path.split("/", 1)[0]
