"""The C allocator's arenas, capped for a server's threads.

glibc gives threads that allocate at once arenas of their own, up to eight per core, and
keeps what is freed in each for that arena: under fifty clients a server's resident memory
grew to 1.78x what it held after start, and to 1.28x with two arenas (with SQLite's smaller
page cache; ``benchmarks/load.py``). ``MALLOC_ARENA_MAX`` in the environment, read by glibc
as the process starts, wins over this.
"""

from __future__ import annotations

import ctypes
import os
import sys

MALLOC_ARENAS = 2
_M_ARENA_MAX = -8  # mallopt's parameter number in glibc's malloc.h


def cap_malloc_arenas(arenas: int = MALLOC_ARENAS) -> bool:
    """Cap glibc's arenas before the server's threads start; False where the C library is
    not glibc (musl, macOS) or the environment set its own cap."""
    if not sys.platform.startswith("linux") or "MALLOC_ARENA_MAX" in os.environ:
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    return bool(mallopt(_M_ARENA_MAX, arenas))
