"""The shared folder of ``prometheus_client``'s multiprocess mode, prepared before workers start.

Kept free of ``prometheus_client`` imports on purpose: the library decides once, when it is
first imported, whether it runs in multiprocess mode, so the variable must be set first.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ENV = "PROMETHEUS_MULTIPROC_DIR"


@contextmanager
def metrics_dir(workers: int) -> Iterator[Path | None]:
    """Set (if unset and needed) and empty the multiprocess folder; None in one-process mode.

    A folder named by the environment is always used; otherwise several workers get a fresh
    temporary one, removed again on exit. Files left by an earlier run would be summed into
    this run's values, so every ``*.db`` file in it is removed before any worker starts.
    """
    configured = os.environ.get(ENV) or os.environ.get(ENV.lower())
    created = False
    if not configured:
        if workers < 2:
            yield None
            return
        configured, created = tempfile.mkdtemp(prefix="errata-metrics-"), True
    directory = Path(configured)
    directory.mkdir(parents=True, exist_ok=True)
    for stale in directory.glob("*.db"):
        stale.unlink(missing_ok=True)
    os.environ[ENV] = str(directory)
    try:
        yield directory
    finally:
        if created:
            shutil.rmtree(directory, ignore_errors=True)


def multiprocess_enabled() -> bool:
    return bool(os.environ.get(ENV) or os.environ.get(ENV.lower()))


def forget_process(pid: int | None = None) -> None:
    """Drop a finished worker's live gauges, so they no longer count."""
    if not multiprocess_enabled():
        return
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(pid if pid is not None else os.getpid())
