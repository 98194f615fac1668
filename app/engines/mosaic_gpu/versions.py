"""JAX release versions, compared as integer tuples.

The engine models each check as JAX 0.10.2 runs it (the default); other releases differ
in wording, in a few conditions and in their default lowering semantics (see
``catalog_rules.py``, ``observed_rules.py`` and ``operations.py``), which were read from
each release's own source on PyPI, so no release date is guessed. Releases 0.7.0 to
0.12.0.1 are modelled; ``tests/oracle/test_releases.py`` lowers the oracle's grid with
each of them, under each lowering semantics, to confirm them. Older ones are refused
rather than answered wrongly: lowered with each release, 0.5.3 raises an MLIRError for
complex types, 0.6.0 an UnboundLocalError for 2-D bool and int2 copies and has a smaller
TMA float table, 0.6.1 fails MLIR verification for 2-D int8 RefUnions; and 0.4.x stores
sub-byte integers as whole bytes, has no ``float4_e2m1fn``, counts ``bool`` apart and
takes another path for the quickstart's copies.

Versions newer than 0.12.0.1, and ``"main"``, are answered as 0.12.0.1.
"""

from __future__ import annotations

import re

from app.jaxref.inputs import InputValueError

Version = tuple[int, ...]

DEFAULT_JAX_VERSION = "0.10.2"
# The oldest release the engine models.
OLDEST_MODELLED: Version = (0, 7, 0)
# Stands for unreleased ``main``: newer than every release.
MAIN: Version = (1_000_000,)

MODELLED = "errata models JAX 0.7.0 to 0.12.0.1 (later releases are answered as 0.12.0.1)"
_VERSION = re.compile(r"^(?:jax(?:lib)?[\s=-]*)?v?(\d+(?:\.\d+){1,3})$")


def parse_version(text: str | None, field: str = "jax_version") -> Version:
    """``"0.10.2"``, ``"v0.8.1"``, ``"jax 0.9.0.1"`` or ``"main"``; ``None`` means the default.
    A version it cannot read, or older than the engine models, raises naming ``field``."""
    if text is None:
        text = DEFAULT_JAX_VERSION
    version = read_version(text, field)
    if version < OLDEST_MODELLED:
        raise InputValueError(field, f"JAX {text} is not modelled; {MODELLED}")
    return version


def read_version(text: str, field: str = "jax_version") -> Version:
    """The version ``text`` names, whether the engine models it or not (a paste of 0.4.34 is
    still read and dated); text that names none raises naming ``field``."""
    cleaned = text.strip().lower()
    if cleaned in ("main", "head"):
        return MAIN
    match = _VERSION.match(cleaned)
    if match is None:
        raise InputValueError(
            field, f"cannot read JAX version {text!r}; expected e.g. '0.10.2' or 'main'"
        )
    return tuple(int(part) for part in match.group(1).split("."))


def render_version(version: Version) -> str:
    return "main" if version == MAIN else ".".join(map(str, version))
