"""Links to a matched paste's result that store nothing on the server.

The paste itself travels in the link, compressed (zlib, then URL-safe base64): a 10 KB
traceback becomes about 2,300 characters, and opening the link matches it again, so the
answer follows the records as they are then. A paste too long for a link is cut to its last
lines, where a traceback keeps its error.
"""

from __future__ import annotations

import base64
import binascii
import zlib

from app.errors import InvalidInput
from app.matching import MAX_PASTE_BYTES

# Longer links are cut by proxies and chat clients (8 KB is a common request-line limit).
MAX_LINK_CHARS = 6000


def encode_paste(text: str) -> tuple[str | None, bool]:
    """The paste as a link parameter, and whether it had to be cut to its last lines; None
    when not even its last line fits in a link."""
    encoded = _encode(text)
    if len(encoded) <= MAX_LINK_CHARS:
        return encoded, False
    lines = text.split("\n")
    fits, too_many = 0, len(lines)
    while too_many - fits > 1:  # the most trailing lines whose encoding fits
        middle = (fits + too_many) // 2
        if len(_encode("\n".join(lines[-middle:]))) <= MAX_LINK_CHARS:
            fits = middle
        else:
            too_many = middle
    return (_encode("\n".join(lines[-fits:])) if fits else None), True


def decode_paste(value: str) -> str:
    """The paste a link carries; InvalidInput when the link is damaged or unreasonably large."""
    try:
        data = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
        inflater = zlib.decompressobj()
        raw = inflater.decompress(data, MAX_PASTE_BYTES + 1)
        if len(raw) > MAX_PASTE_BYTES or inflater.unconsumed_tail:
            raise InvalidInput("paste: the link holds more than a paste may be")
        return raw.decode("utf-8")
    except (binascii.Error, zlib.error, UnicodeDecodeError, ValueError):
        raise InvalidInput("paste: this link is damaged; paste the traceback again") from None


def _encode(text: str) -> str:
    return base64.urlsafe_b64encode(zlib.compress(text.encode("utf-8"), 9)).decode().rstrip("=")
