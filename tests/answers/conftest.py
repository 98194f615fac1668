"""What the answer tests share."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from app.answers.catalog import Catalog
from tests.conftest import Backend


@pytest.fixture(scope="module")
def catalog(backend: Backend) -> Iterator[Catalog]:
    """The curated records alone, on each backend; a module that needs mined sites too
    asks for them with a ``catalog`` of its own."""
    with backend.curated_catalog(()) as catalog:
        yield catalog
