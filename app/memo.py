"""A bounded map of remembered answers, safe to share between threads.

``lru-dict``'s ``LRU`` is in C (a hit costs less than half of a ``cachetools.LRUCache``
hit) but not thread-safe: every use goes through one lock here.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable

from lru import LRU


class LockedLRU[K: Hashable, V]:
    """Up to ``maxsize`` answers; the least recently used goes first."""

    def __init__(self, maxsize: int) -> None:
        self._answers: LRU[K, V] = LRU(maxsize)
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            return self._answers.get(key)

    def put(self, key: K, answer: V) -> None:
        with self._lock:
            self._answers[key] = answer
