"""JAX release versions, compared as integer tuples.

The engine models each check as JAX 0.10.2 runs it (the default); older releases
differ in wording and in a few conditions (see ``rules.py``), which were read
from each release's own source on PyPI, so no release date is guessed. For
orientation, the CHANGELOG dates of the releases that matter most: 0.4.36
(2024-12-05, first alignment check in the copy lowering), 0.5.0 (2025-01-17),
0.5.1 (2025-02-24), 0.6.0 (2025-04-16), 0.6.1 (2025-05-21); 0.7.1, 0.8.2,
0.9.1 and 0.10.x followed in the second half of 2025 and in 2026.

Versions newer than 0.10.2 behave like JAX ``main`` at the catalog commit
(cec06d1, 2026-08-08), which is also what ``"main"`` selects.
"""

from __future__ import annotations

import re

from .errors import AlignmentInputError

Version = tuple[int, ...]

DEFAULT_JAX_VERSION = "0.10.2"
# Anything from here on behaves like main at the catalog commit.
FIRST_UNRELEASED: Version = (0, 10, 3)
# The first release whose Mosaic GPU copy lowering checks alignment at all.
OLDEST_SUPPORTED: Version = (0, 4, 36)
# Stands for unreleased ``main``: newer than every release.
MAIN: Version = (1_000_000,)

_VERSION = re.compile(r"^(?:jax(?:lib)?[\s=-]*)?v?(\d+(?:\.\d+){1,3})$")


def parse_version(text: str | None) -> Version:
    """``"0.10.2"``, ``"v0.8.1"``, ``"jax 0.9.0.1"`` or ``"main"``; ``None`` means the default."""
    if text is None:
        text = DEFAULT_JAX_VERSION
    cleaned = text.strip().lower()
    if cleaned in ("main", "head"):
        return MAIN
    match = _VERSION.match(cleaned)
    if match is None:
        raise AlignmentInputError(
            "jax_version", f"cannot read JAX version {text!r}; expected e.g. '0.10.2' or 'main'"
        )
    version = tuple(int(part) for part in match.group(1).split("."))
    if version < OLDEST_SUPPORTED:
        raise AlignmentInputError(
            "jax_version",
            f"JAX {text} predates the Mosaic GPU alignment checks; "
            f"the oldest supported release is {render_version(OLDEST_SUPPORTED)}",
        )
    return version


def render_version(version: Version) -> str:
    return "main" if version == MAIN else ".".join(map(str, version))
