"""Where each release's source is read from: its commit in a git mirror of jax-ml/jax, or
the wheel the package index serves for it.

The mirror holds every file, the C++ of ``jaxlib/mosaic`` among them, but only the commits
it was cloned with: releases tagged after its snapshot are not there. Every JAX release is
also a pure-Python wheel (``jax-0.12.0-py3-none-any.whl``) whose ``jax/`` tree is what users
run, and whose ``jax/version.py`` names the commit it was built from (``_git_hash``). Such a
release is read from its wheel, pinned to that commit; its C++ is compiled into jaxlib and
libtpu, so none of it is read.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

DEFAULT_WHEELS = Path.home() / ".cache" / "errata" / "jax-wheels"


class ReleaseSourceError(ValueError):
    """A release's source cannot be had, or is not the commit the table pins it to."""


@dataclass(frozen=True)
class ReleaseSource:
    """One release's files, by repo-relative path (``jax/_src/pallas/core.py``)."""

    release: str
    commit: str
    git_dir: Path | None = None  # read from this mirror's commit, else from ``wheel``
    wheel: Path | None = None

    def files(self, prefix: str) -> dict[str, str]:
        """Every file under ``prefix`` (a folder, or one file), sorted by path, each with a
        key that changes only with its content (a git blob id; a wheel's CRC and size), so
        that what is parsed of one release serves the next."""
        if self.git_dir is not None:
            listing = _git(self.git_dir, "ls-tree", "-r", self.commit, prefix)
            return dict(
                sorted(
                    (path, meta.split()[2])
                    for meta, path in (line.split("\t", 1) for line in listing.splitlines())
                )
            )
        assert self.wheel is not None
        with zipfile.ZipFile(self.wheel) as wheel:
            return {
                info.filename: f"{info.CRC:08x}:{info.file_size}"
                for info in sorted(wheel.infolist(), key=lambda info: info.filename)
                if _under(info.filename, (prefix,))
            }

    def read(self, path: str) -> str:
        if self.git_dir is not None:
            return _git(self.git_dir, "show", f"{self.commit}:{path}")
        assert self.wheel is not None
        with zipfile.ZipFile(self.wheel) as wheel:
            return wheel.read(path).decode("utf-8")

    def extract(self, paths: Iterable[str], target: Path) -> Path:
        """The files under ``paths`` that the release has, written under ``target``."""
        target.mkdir(parents=True, exist_ok=True)
        wanted = tuple(paths)
        if self.git_dir is None:
            assert self.wheel is not None
            with zipfile.ZipFile(self.wheel) as wheel:
                wheel.extractall(target, [n for n in wheel.namelist() if _under(n, wanted)])
            return target
        present = [path for path in wanted if self.files(path)]
        archive = subprocess.run(
            ["git", "-C", str(self.git_dir), "archive", "--format=tar", self.commit, *present],
            capture_output=True,
            check=True,
        )
        with tempfile.TemporaryFile() as buffer:
            buffer.write(archive.stdout)
            buffer.seek(0)
            with tarfile.open(fileobj=buffer) as tar:
                tar.extractall(target, filter="data")
        return target


def _under(name: str, paths: Iterable[str]) -> bool:
    """Whether a file's path is one of ``paths`` or inside one of those folders."""
    return any(name == path or name.startswith(path.rstrip("/") + "/") for path in paths)


def release_sources(
    git_dir: Path | None, commits: dict[str, str], wheels: Path = DEFAULT_WHEELS
) -> dict[str, ReleaseSource]:
    """Each release of ``commits`` from the mirror where it has the commit, else (or with
    no mirror) from its wheel in ``wheels`` (downloaded there with pip when missing), which
    must have been built from that commit."""
    sources = {}
    for release, commit in commits.items():
        if git_dir is not None and _has_commit(git_dir, commit):
            sources[release] = ReleaseSource(release, commit, git_dir=git_dir)
            continue
        wheel = _wheel(release, wheels)
        built_from = wheel_commit(wheel)
        if built_from != commit:
            raise ReleaseSourceError(
                f"{wheel.name} was built from {built_from}, not {commit} as"
                " data/jax-releases.json says"
            )
        sources[release] = ReleaseSource(release, commit, wheel=wheel)
    return sources


def wheel_commit(wheel: Path) -> str | None:
    """The commit a JAX wheel was built from: ``_git_hash`` of its ``jax/version.py``."""
    with zipfile.ZipFile(wheel) as archive:
        tree = ast.parse(archive.read("jax/version.py"))
    for node in tree.body:
        if (
            isinstance(node, ast.AnnAssign | ast.Assign)
            and "_git_hash" in {t.id for t in _targets(node) if isinstance(t, ast.Name)}
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            return node.value.value
    return None


def _targets(node: ast.AnnAssign | ast.Assign) -> list[ast.expr]:
    return [node.target] if isinstance(node, ast.AnnAssign) else node.targets


def _wheel(release: str, wheels: Path) -> Path:
    """The release's wheel in ``wheels``; pip downloads it there first if it is not. Its
    ``Requires-Python`` is ignored: only its source is read, never imported."""
    wanted = wheels / f"jax-{release}-py3-none-any.whl"
    if wanted.exists():
        return wanted
    wheels.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [
            *(sys.executable, "-m", "pip", "download", "--quiet", "--no-deps"),
            *("--only-binary=:all:", "--ignore-requires-python", f"jax=={release}"),
            *("--dest", str(wheels)),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0 or not wanted.exists():
        raise ReleaseSourceError(
            f"JAX {release} is not in the git mirror, and pip could not download its wheel:"
            f" {done.stderr.strip().splitlines()[-1:] or 'no wheel'}"
        )
    return wanted


def _has_commit(git_dir: Path, commit: str) -> bool:
    done = subprocess.run(
        ["git", "-C", str(git_dir), "cat-file", "-e", f"{commit}^{{commit}}"],
        capture_output=True,
        check=False,
    )
    return done.returncode == 0


def _git(git_dir: Path, *arguments: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(git_dir), *arguments], capture_output=True, check=True, text=True
    )
    return done.stdout
