"""Signatures read from source with ``ast``, against Python's own reading of the same code:
the installed JAX's public functions, and small modules written here, imported for real."""

from __future__ import annotations

import importlib
import inspect
import subprocess
import sys
import textwrap
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jax
import pytest

from app.knowledge.public_names import exported_names, module_name
from app.knowledge.signatures import (
    Parameter,
    Signature,
    SourceTree,
    docstring_parameters,
)
from app.knowledge.sources import ReleaseSource

SITE = Path(jax.__file__).parent.parent
KINDS = {
    inspect.Parameter.POSITIONAL_ONLY: "positional-only",
    inspect.Parameter.POSITIONAL_OR_KEYWORD: "positional",
    inspect.Parameter.KEYWORD_ONLY: "keyword-only",
}


def call_signature(callable_: Any) -> inspect.Signature:
    """The parameters a call binds to. An instance (an enum's member) is called through its
    class's ``__call__``; since Python 3.12 ``inspect.signature`` of an enum's member gives
    ``Enum``'s own ``(*values)`` instead."""
    if not inspect.isclass(callable_) and not inspect.isfunction(callable_):
        callable_ = type(callable_).__call__.__get__(callable_)
    return inspect.signature(callable_)


def as_python_reads_it(callable_: Any) -> tuple[Any, ...]:
    """What ``inspect`` says of a callable, in the terms of ``Signature``."""
    parameters = call_signature(callable_).parameters.values()
    return (
        tuple(
            Parameter(p.name, KINDS[p.kind], p.default is inspect.Parameter.empty)
            for p in parameters
            if p.kind in KINDS
        ),
        next((p.name for p in parameters if p.kind == p.VAR_POSITIONAL), None),
        next((p.name for p in parameters if p.kind == p.VAR_KEYWORD), None),
    )


def as_read(signature: Signature) -> tuple[Any, ...]:
    return signature.parameters, signature.var_positional, signature.var_keyword


def python_qualname(callable_: Any) -> str:
    """The name Python's call errors give: a class is called through its ``__init__``, an
    instance (an enum's member) through its class's ``__call__``."""
    if inspect.isclass(callable_):
        return str(callable_.__init__.__qualname__)
    if inspect.isfunction(callable_):
        return str(callable_.__qualname__)
    return str(type(callable_).__call__.__qualname__)


def installed_public_names() -> Iterator[tuple[str, str]]:
    for path in sorted((SITE / "jax" / "experimental" / "pallas").glob("*.py")):
        module = module_name(path.relative_to(SITE).as_posix())
        for name in exported_names(path.read_text(encoding="utf-8")):
            yield module, name


def public(module: str, name: str) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return getattr(importlib.import_module(module), name, None)


def test_every_public_callable_read_from_the_installed_jax_is_called_as_python_calls_it() -> None:
    tree = SourceTree.installed(SITE)
    read = 0
    for module, name in installed_public_names():
        signature = tree.signature(module, name)
        if signature is None:
            continue
        real = public(module, name)
        assert as_read(signature) == as_python_reads_it(real), f"{module}.{name}"
        assert signature.qualname == python_qualname(real), f"{module}.{name}"
        read += 1
    assert read > 0


def test_every_plain_public_function_and_class_of_the_installed_jax_is_read() -> None:
    """What is left unread is what a call cannot be known for from source: a function a
    decorator wrapped (``__wrapped__``) or built at run time (``<locals>``), a protocol, an
    enum, an exception, a type implemented in C."""
    tree = SourceTree.installed(SITE)
    unread = []
    for module, name in installed_public_names():
        real = public(module, name)
        plain_function = (
            inspect.isfunction(real)
            and "<locals>" not in real.__qualname__
            and not hasattr(real, "__wrapped__")
        )
        plain_class = (
            inspect.isclass(real)
            and "__init__" in vars(real)
            and not issubclass(real, BaseException)
            and not getattr(real, "_is_protocol", False)
        )
        if (plain_function or plain_class) and tree.signature(module, name) is None:
            unread.append(f"{module}.{name}")
    assert unread == []


MODULES = {
    "pkg/__init__.py": """
        from pkg._impl import helpers as _helpers
        from pkg._impl.helpers import copy as copy, Config as Config, Options
        from ._impl.helpers import Inherited
        from pkg._impl.helpers import jitted, wrapped, Kind, Derived, Plain

        renamed = _helpers.copy_v2
        from pkg._impl.helpers import Space, Holder
        SMEM = Space.SMEM
        HELD = Holder.SMEM
        from pkg._impl.helpers import old as _deprecated_old
        _deprecations = {"old": ("pkg.old is deprecated", _deprecated_old)}

        def __getattr__(name):
            if name in _deprecations:
                return _deprecations[name][1]
            raise AttributeError(name)
    """,
    "pkg/_impl/__init__.py": "",
    "pkg/_impl/helpers.py": '''
        import dataclasses
        import enum
        import functools
        from typing import ClassVar

        def api_boundary(f):
            @functools.wraps(f)
            def wrapper(*args, **kwargs):
                return f(*args, **kwargs)
            return wrapper

        def jit(f, **options):
            return lambda *args: f(*args)

        def copy(src, dst, /, barrier, *, collective=None, **options):
            """Copies.

            Args:
              src: The source.
              dst: The destination,
                spelled over two lines.
              barrier (Barrier): What the copy arrives on.
            """

        @functools.partial(api_boundary)
        def copy_v2(src, dst, *rest, priority=0):
            pass

        @functools.partial(jit, static_argnames=("n",))
        def jitted(x, n):
            pass

        @api_boundary
        def wrapped(a, b=1):
            pass

        def old(x, dec=1):
            pass

        @dataclasses.dataclass(frozen=True)
        class Base:
            block_shape: tuple | None = None
            index_map: object = None

        @dataclasses.dataclass(frozen=True)
        class Config(Base):
            """A config.

            Attributes:
              tiling: How it tiles.
            """
            limit: ClassVar[int] = 3
            tiling: int = dataclasses.field(default=8)
            _: dataclasses.KW_ONLY
            memory_space: object = None
            cache: dict = dataclasses.field(default_factory=dict, init=False)

        @dataclasses.dataclass(kw_only=True)
        class Options:
            order: int
            fast: bool = False

        class Plain:
            def __init__(self, shape, dtype=None):
                pass

        class Derived(Plain):
            pass

        class Inherited(Config):
            pass

        class Kind(enum.Enum):
            A = 1

        class Space(enum.Enum):
            """Where a buffer lives."""
            SMEM = "smem"
            LIMIT = 2

            def __call__(self, shape, dtype=None, *, transforms=()):
                """Allocates.

                Args:
                  shape: The buffer's shape.
                """

        class Holder:
            SMEM = Space.SMEM

            def __call__(self, anything):
                pass
    ''',
}


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The modules above as files, importable, and committed to a git repository."""
    root = tmp_path_factory.mktemp("source")
    for path, text in MODULES.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(textwrap.dedent(text), encoding="utf-8")
    sys.path.insert(0, str(root))
    yield root
    sys.path.remove(str(root))
    for name in [m for m in sys.modules if m == "pkg" or m.startswith("pkg.")]:
        del sys.modules[name]


def tree_of(root: Path) -> SourceTree:
    files = {p.relative_to(root).as_posix(): str(p) for p in root.glob("pkg/**/*.py")}
    return SourceTree(files, lambda path: (root / path).read_text(encoding="utf-8"), {})


READ = [
    "copy", "renamed", "wrapped", "old", "Config", "Options", "Plain", "Derived", "Inherited",
    "SMEM",
]  # fmt: skip


@pytest.mark.parametrize("name", READ)
def test_a_name_read_through_imports_aliases_and_decorators_is_called_as_python_calls_it(
    written: Path, name: str
) -> None:
    real = getattr(importlib.import_module("pkg"), name)
    signature = tree_of(written).signature("pkg", name)
    assert signature is not None
    assert as_read(signature) == as_python_reads_it(real)
    assert signature.qualname == python_qualname(real)


@pytest.mark.parametrize("name", ["jitted", "Kind", "missing", "HELD"])
def test_what_a_call_cannot_be_known_for_is_not_read(written: Path, name: str) -> None:
    assert tree_of(written).signature("pkg", name) is None


def test_a_docstring_says_what_each_parameter_is(written: Path) -> None:
    tree = tree_of(written)
    copy = tree.signature("pkg", "copy")
    assert copy is not None and copy.documented == {
        "src": "The source.",
        "dst": "The destination, spelled over two lines.",
        "barrier": "What the copy arrives on.",
    }
    config = tree.signature("pkg", "Config")
    assert config is not None and config.documented == {"tiling": "How it tiles."}
    assert copy.shown() == "copy(src, dst, /, barrier, *, collective=…, **options)"


def test_a_commit_of_a_git_repository_reads_as_its_files_do(written: Path, tmp_path: Path) -> None:
    """The same modules as a package ``jax`` (a commit is read under ``jax/``)."""
    repository = tmp_path / "repository"
    for path, text in MODULES.items():
        target = repository / path.replace("pkg", "jax")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text).replace("pkg", "jax"), encoding="utf-8")
    for command in (
        ["init", "-q"],
        ["add", "."],
        ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "source"],
    ):
        subprocess.run(["git", "-C", str(repository), *command], check=True)
    at_commit = SourceTree.of(ReleaseSource("0.1.0", "HEAD", git_dir=repository), {})
    files = tree_of(written)
    for name in READ:
        from_git, from_files = at_commit.signature("jax", name), files.signature("pkg", name)
        assert from_git is not None and from_files is not None
        assert as_read(from_git) == as_read(from_files)


def test_a_docstring_section_ends_where_its_indentation_does() -> None:
    docstring = textwrap.dedent(
        """\
        Does things.

        Args:
          x: The input,
            continued.
          y (int): The count.

        Returns:
          z: Not a parameter.
        """
    )
    assert docstring_parameters(docstring) == {"x": "The input, continued.", "y": "The count."}
