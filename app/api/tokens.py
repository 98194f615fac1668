"""Whether a presented token is one of the configured ones, compared in constant time."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable

from pydantic import SecretStr


def token_allowed(given: str, allowed: Iterable[SecretStr]) -> bool:
    """Constant-time: every configured token is compared, as digests of equal length, so
    neither where a token differs nor which one matched shows in the time taken."""
    digest = hashlib.sha256(given.encode()).digest()
    found = False
    for token in allowed:
        found |= hmac.compare_digest(
            digest, hashlib.sha256(token.get_secret_value().encode()).digest()
        )
    return found
