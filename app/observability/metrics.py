"""Prometheus metrics: request latency by route template, match outcomes, the match index.

Metrics are created once per process. Under ``errata serve --workers N`` they live in
``prometheus_client``'s multiprocess mode and ``/metrics`` sums every worker's files; gauges
say how to combine workers (the most recent live value).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sized
from typing import Any, Protocol

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
)

from app.observability.multiprocess import multiprocess_enabled

UNMATCHED_ROUTE = "<unmatched>"

REQUEST_DURATION = Histogram(
    "errata_http_request_duration_seconds",
    "Time to answer an HTTP request, by method, route template and status.",
    ["method", "route", "status"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0),
)
MATCH_OUTCOMES = Counter(
    "errata_match_requests",
    "Answered /api/match requests: hit when at least one known error matched, else miss.",
    ["outcome"],
)
INDEX_BUILDS = Counter(
    "errata_match_index_builds",
    "Times a process (re)built its match index because the store version moved.",
)
INDEX_RECORDS = Gauge(
    "errata_match_index_records",
    "Live records in the most recently built match index.",
    multiprocess_mode="livemostrecent",
)
INDEX_PATTERNS = Gauge(
    "errata_match_index_patterns",
    "Message patterns (current and older wordings) in the most recently built match index.",
    multiprocess_mode="livemostrecent",
)
INDEX_BUILD_SECONDS = Gauge(
    "errata_match_index_build_seconds",
    "How long the most recent match index build took.",
    multiprocess_mode="livemostrecent",
)


def observe_request(method: str, route: str, status: int, seconds: float) -> None:
    REQUEST_DURATION.labels(method, route, str(status)).observe(seconds)


def count_match(hit: bool) -> None:
    MATCH_OUTCOMES.labels("hit" if hit else "miss").inc()


class MatchIndexSize(Protocol):
    @property
    def live_records(self) -> int: ...
    @property
    def patterns(self) -> Sized: ...


def observe_index_build[IndexT: MatchIndexSize](build: Callable[..., IndexT], *args: Any) -> IndexT:
    """Run ``build(*args)`` and record its duration and the size of the index it returns."""
    started = time.perf_counter()
    index = build(*args)
    INDEX_BUILD_SECONDS.set(time.perf_counter() - started)
    INDEX_BUILDS.inc()
    INDEX_RECORDS.set(index.live_records)
    INDEX_PATTERNS.set(len(index.patterns))
    return index


def render() -> tuple[bytes, str]:
    """The exposition text: every worker's values in multiprocess mode, else this process's."""
    if multiprocess_enabled():
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        return generate_latest(registry), CONTENT_TYPE_LATEST
    return generate_latest(REGISTRY), CONTENT_TYPE_LATEST
