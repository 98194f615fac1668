"""JAX's releases and the commit each one was tagged at (``data/jax-releases.json``).

The table is read from the tags of jax-ml/jax (``jax-v0.10.2`` → commit) and committed, so
every pinned link errata serves names the exact source a release shipped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from functools import cache, lru_cache
from pathlib import Path

from app.jaxref.files import DATA_DIR

RELEASES_FILE = DATA_DIR / "jax-releases.json"
GITHUB = "https://github.com/jax-ml/jax/blob"
COMPARE = "https://github.com/jax-ml/jax/compare"
RELEASE_PATTERN = r"^\d+(?:\.\d+){2,3}$"
_RELEASE = re.compile(RELEASE_PATTERN)


def is_release(text: str) -> bool:
    """Whether ``text`` is a release number (``0.9.0.1``), not a commit or a date."""
    return _RELEASE.fullmatch(text) is not None


def release_key(release: str) -> tuple[int, ...]:
    """Orders releases as JAX numbers them (``0.9.0.1`` after ``0.9.0``, before ``0.9.1``)."""
    if not _RELEASE.fullmatch(release):
        raise ValueError(f"{release!r} is not a JAX release number such as 0.10.2")
    return tuple(int(part) for part in release.split("."))


@cache
def release_commits(path: Path = RELEASES_FILE) -> dict[str, str]:
    """Release → full commit sha, oldest release first."""
    table = json.loads(path.read_text(encoding="utf-8"))["releases"]
    return dict(sorted(table.items(), key=lambda item: release_key(item[0])))


def oldest_release() -> str:
    return next(iter(release_commits()))


def newest_release() -> str:
    return next(reversed(release_commits()))


def linking_order(releases: list[str], path: Path = RELEASES_FILE) -> list[str]:
    """The order in which releases are linked into one history: from the table's
    ``idsFrom`` (the oldest release mined when ids were first given) to the newest, then
    back from it to the oldest. Releases added below it later are linked backward, so the
    ids given before they were mined stay the same."""
    ordered = sorted(releases, key=release_key)
    first = json.loads(path.read_text(encoding="utf-8")).get("idsFrom")
    if first is None:
        return ordered
    later = [release for release in ordered if release_key(release) >= release_key(first)]
    return later + [release for release in reversed(ordered) if release not in later]


@cache
def ids_until(path: Path = RELEASES_FILE) -> str:
    """The newest release mined when the records of Python's call errors were first given
    ids (``idsUntil``): an id names the file its function had in the newest release raising
    the error up to this one, so a function moving in a later release keeps its ids."""
    return str(json.loads(path.read_text(encoding="utf-8"))["idsUntil"])


def commit_of(release: str) -> str | None:
    return release_commits().get(release)


def source_url(commit: str, file_path: str, start: int, end: int) -> str:
    return f"{GITHUB}/{commit}/{file_path}#L{start}-L{end}"


@lru_cache(maxsize=4096)
def runs(releases: tuple[str, ...]) -> str:
    """``0.4.15–0.4.31, 0.7.2–0.10.2``: consecutive releases of the table as one span, runs
    apart comma-separated; remembered, since a traceback's frames name the same few sets."""
    order = list(release_commits())
    found: list[list[str]] = []
    for release in sorted(releases, key=release_key):
        position = order.index(release) if release in order else -2
        if found and order.index(found[-1][-1]) + 1 == position:
            found[-1].append(release)
        else:
            found.append([release])
    return ", ".join(run[0] if len(run) == 1 else f"{run[0]}–{run[-1]}" for run in found)


def union(masks: Iterable[int]) -> int:
    """The releases in any of ``masks``, bit masks over a table of releases (bit ``n`` the
    ``n``-th oldest), as the frame index and the function spans count them."""
    releases = 0
    for mask in masks:
        releases |= mask
    return releases


def span(releases: list[str]) -> str:
    """``0.4.31–0.10.2`` (or one release), for prose."""
    if not releases:
        return ""
    ordered = sorted(releases, key=release_key)
    return ordered[0] if len(ordered) == 1 else f"{ordered[0]}–{ordered[-1]}"
