import json
from pathlib import Path

import pytest

from app.records.slugs import derive_slug

SEEDS = Path(__file__).resolve().parents[2] / "data" / "seeds"


@pytest.mark.parametrize("name", ["000_3bebb9c19a64106a.txt", "001_08f723cb3bf58b12.txt"])
def test_derive_slug_reproduces_seed_slugs(name: str) -> None:
    record = json.loads((SEEDS / name).read_text())["record"]
    assert derive_slug(record["errorMessage"]) == record["slug"]


def test_derive_slug_truncates_before_slugifying() -> None:
    message = "Can only transfer integer bytes (shape={dst_ty.shape}, dtype={dst_ty.element_type})"
    assert derive_slug(message) == "can-only-transfer-integer-bytes-shape-dst-ty-sha"


def test_derive_slug_of_short_message_is_whole_message() -> None:
    assert derive_slug("Only byte-aligned bitcasts are supported.") == (
        "only-byte-aligned-bitcasts-are-supported"
    )
