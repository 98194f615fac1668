"""Resident memory of this process, for the benchmarks' reports (Linux counts in KB)."""

from __future__ import annotations

import resource
from pathlib import Path


def peak_mb() -> float:
    """The process's peak resident memory so far, in MB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def rss_mb() -> float:
    """The process's resident memory now, in MB (Linux's /proc); the peak if it has no VmRSS."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return peak_mb()
