"""A result's link carries its paste: compressed, cut to its last lines when too long."""

from __future__ import annotations

import base64
import hashlib
import zlib

import pytest

from app.errors import InvalidInput
from app.matching import MAX_PASTE_BYTES
from app.web.permalinks import MAX_LINK_CHARS, decode_paste, encode_paste
from tests.chatops.chat import traceback

ERROR_LINE = "ValueError: Can only transfer integer bytes (shape=[7], dtype=i4)"


def _scrambled(number: int) -> str:
    """64 hex digits that compress poorly, like the noise of a long log."""
    return hashlib.sha256(str(number).encode()).hexdigest()


def test_a_traceback_travels_whole_and_comes_back_the_same() -> None:
    paste = traceback("MGPU-COPY-INTEGER-BYTES")
    encoded, cut = encode_paste(paste)
    assert encoded is not None and not cut
    assert len(encoded) <= MAX_LINK_CHARS
    assert decode_paste(encoded) == paste


def test_a_paste_too_long_for_a_link_keeps_its_last_lines() -> None:
    noise = "\n".join(_scrambled(number) for number in range(2000))
    paste = f"{noise}\n{ERROR_LINE}"
    encoded, cut = encode_paste(paste)
    assert encoded is not None and cut and len(encoded) <= MAX_LINK_CHARS
    kept = decode_paste(encoded)
    assert kept.endswith(ERROR_LINE) and paste.endswith(kept)


def test_a_last_line_too_long_for_any_link_gives_no_link() -> None:
    line = "".join(_scrambled(number) for number in range(500))
    assert encode_paste(f"{ERROR_LINE}\n{line}") == (None, True)


@pytest.mark.parametrize(
    "value",
    [
        "not base64 at all!",
        base64.urlsafe_b64encode(b"plain bytes, not zlib").decode(),
        base64.urlsafe_b64encode(zlib.compress(b"\xff\xfe not utf-8")).decode(),
        base64.urlsafe_b64encode(zlib.compress(b"x" * (MAX_PASTE_BYTES + 10), 9)).decode(),
    ],
    ids=["not-base64", "not-zlib", "not-utf8", "too-large"],
)
def test_a_damaged_or_swollen_link_is_refused(value: str) -> None:
    with pytest.raises(InvalidInput):
        decode_paste(value)
