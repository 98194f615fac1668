"""Remember recent answers so a delivery Slack repeats is answered once, the same way."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

REPLAY_WINDOW = 5 * 60
"""Slack's signature window: an older repeat fails verification before it gets here."""
MAX_ENTRIES = 512


class ReplayCache:
    """A small in-memory map from delivery to answer, bounded in size and age.

    One per process: with several workers a repeat may reach another one, which answers it
    afresh, with the same answer, since answers depend only on the command and the records.
    """

    def __init__(
        self,
        ttl: float = REPLAY_WINDOW,
        max_entries: int = MAX_ENTRIES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._ttl = ttl
        self._max_entries = max_entries
        self._clock = clock
        self._lock = threading.Lock()
        self._entries: OrderedDict[Hashable, tuple[float, Any]] = OrderedDict()

    def get(self, key: Hashable) -> Any | None:
        with self._lock:
            self._expire()
            entry = self._entries.get(key)
            return entry[1] if entry else None

    def put(self, key: Hashable, answer: Any) -> None:
        with self._lock:
            self._expire()
            self._entries[key] = (self._clock() + self._ttl, answer)
            self._entries.move_to_end(key)
            while len(self._entries) > self._max_entries:
                self._entries.popitem(last=False)

    def _expire(self) -> None:
        now = self._clock()
        while self._entries:
            key, (expires, _) = next(iter(self._entries.items()))
            if expires > now:
                return
            del self._entries[key]
