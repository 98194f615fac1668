"""Record slugs, derived the way the dataset derives them."""

from __future__ import annotations

from slugify import slugify

SLUG_SOURCE_CHARS = 50
"""The dataset slugifies only the head of the message, so long messages keep short slugs."""


def derive_slug(message: str) -> str:
    """Slug of an error message: slugify of its first 50 characters.

    Truncating before slugifying (not after) is what reproduces the dataset's slugs, e.g.
    ``"Can only transfer integer bytes (shape={dst_ty.shape}, ..."`` →
    ``"can-only-transfer-integer-bytes-shape-dst-ty-sha"``.
    """
    return slugify(message[:SLUG_SOURCE_CHARS])
