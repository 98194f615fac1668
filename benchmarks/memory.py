"""Resident memory of a process, for the benchmarks' reports (Linux counts in KB)."""

from __future__ import annotations

import resource
from pathlib import Path


def peak_mb() -> float:
    """This process's peak resident memory so far, in MB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def rss_mb(pid: int | str = "self") -> float:
    """Resident memory now, in MB (Linux's /proc), of this process or of process ``pid``;
    without a VmRSS line, this process's peak, or 0 for an exited ``pid``."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return peak_mb() if pid == "self" else 0.0
