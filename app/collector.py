"""Python's cyclic garbage collector, kept from walking what a long step builds.

Every full collection walks every object the process holds. A step that builds hundreds of
thousands of objects set off collections that each walked them all again, longer each time:
a third of an import of 100,000 records; five of 86 to 230 ms while a worker built its
catalog of as many. They found nothing: records, patterns and their indexes hold
no reference cycles.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_pauses = 0  # steps under way, which the collector waits for
_was_enabled = True
_lock = threading.Lock()


@contextmanager
def paused() -> Iterator[None]:
    """No collection while the step runs; the collector runs again once the last
    concurrent step is over."""
    global _pauses, _was_enabled
    with _lock:
        if _pauses == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _pauses += 1
    try:
        yield
    finally:
        with _lock:
            _pauses -= 1
            if _pauses == 0 and _was_enabled:
                gc.enable()
