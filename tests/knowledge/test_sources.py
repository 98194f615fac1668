"""A release's source from a git repository, or from the wheel the package index serves."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from app.jaxref.releases import newest_release, release_commits
from app.knowledge.python_source import mine_python
from app.knowledge.sources import (
    DEFAULT_WHEELS,
    ReleaseSourceError,
    release_sources,
    wheel_commit,
)

MODULE = "jax/_src/pallas/core.py"


@pytest.fixture(scope="module")
def repository(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A git repository whose one commit has a JAX-shaped tree with C++ beside it."""
    root = tmp_path_factory.mktemp("repository")
    for path, text in {
        MODULE: "def f(x):\n    if x:\n        raise ValueError(f'bad {x}')\n",
        "jaxlib/mosaic/gpu/a.cc": "// C++\n",
    }.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    for command in (
        ["init", "-q"],
        ["add", "."],
        ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "source"],
    ):
        subprocess.run(["git", "-C", str(root), *command], check=True)
    head = subprocess.run(
        ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    return root, head


def test_a_release_the_repository_lacks_is_read_from_its_real_wheel(
    repository: tuple[Path, str], tmp_path: Path
) -> None:
    """The newest release is read from the wheel pip downloads (JAX's real source), pinned
    to the commit it was built from; the repository's own commit from the repository."""
    git_dir, head = repository
    newest = newest_release()
    sources = release_sources(
        git_dir, {"0.1.0": head, newest: release_commits()[newest]}, DEFAULT_WHEELS
    )
    from_git, from_wheel = sources["0.1.0"], sources[newest]
    assert (from_git.git_dir, from_wheel.git_dir) == (git_dir, None)
    assert from_wheel.wheel is not None and wheel_commit(from_wheel.wheel) == from_wheel.commit
    assert list(from_git.files("jax")) == [MODULE]
    assert "raise ValueError" in from_git.read(MODULE)

    pallas = from_wheel.files("jax/_src/pallas/mosaic_gpu")
    assert "jax/_src/pallas/mosaic_gpu/lowering.py" in pallas
    tree = from_wheel.extract(["jax/_src/pallas/mosaic_gpu", "jaxlib/mosaic"], tmp_path / "w")
    assert sorted(p.relative_to(tree).as_posix() for p in tree.rglob("*.py")) == sorted(pallas)
    assert not (tree / "jaxlib").exists()
    mined = mine_python(tree)
    assert len(mined) > 300
    assert {site.file_path for site in mined} <= set(pallas)

    tree = from_git.extract(["jax/_src/pallas", "jaxlib/mosaic", "jax/_src/lax"], tmp_path / "g")
    assert (tree / "jaxlib/mosaic/gpu/a.cc").is_file()
    [site] = mine_python(tree)
    assert (site.file_path, site.template) == (MODULE, "bad {x}")


def test_a_wheel_of_another_commit_than_the_table_says_is_refused(
    repository: tuple[Path, str],
) -> None:
    git_dir, _ = repository
    newest = newest_release()
    with pytest.raises(
        ReleaseSourceError, match=re.escape(f"jax-{newest}-py3-none-any.whl was built from")
    ):
        release_sources(git_dir, {newest: "0" * 40}, DEFAULT_WHEELS)


def test_a_release_neither_has_is_named(repository: tuple[Path, str], tmp_path: Path) -> None:
    git_dir, _ = repository
    with pytest.raises(ReleaseSourceError, match=r"JAX 0\.0\.99 is not in the git mirror"):
        release_sources(git_dir, {"0.0.99": "1" * 40}, tmp_path)
