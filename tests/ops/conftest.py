"""What the operations tests share: the server's JSON log, its metrics, servers of their own."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Coroutine, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.conftest import (
    ADMIN_TOKEN,
    Backend,
    LiveServer,
    _require_postgres,
    start_server,
    stop_server,
)


def run_on_a_loop_of_its_own[T](
    work: Coroutine[Any, Any, T],
    loop_factory: Callable[[], asyncio.AbstractEventLoop] | None = None,
) -> T:
    """``asyncio.run(work)`` in a thread of its own: another fixture (the browser) may own
    this thread's event loop."""

    def run() -> T:
        with asyncio.Runner(loop_factory=loop_factory) as runner:
            return runner.run(work)

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(run).result()


def log_records(log_path: Path) -> list[dict[str, Any]]:
    """Every JSON line of a server log (anything else, such as a crash, is skipped)."""
    records = []
    for line in log_path.read_text(errors="replace").splitlines():
        if line.startswith("{"):
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return records


def access_records(log_path: Path, request_ids: Iterable[str]) -> dict[str, dict[str, Any]]:
    """The access line of each request id, waiting a little for lines still being written
    (a request is logged just after its answer is sent)."""
    wanted = set(request_ids)
    found: dict[str, dict[str, Any]] = {}
    deadline = time.monotonic() + 10
    while True:
        found = {
            record["request_id"]: record
            for record in log_records(log_path)
            if record.get("logger") == "errata.access" and record.get("request_id") in wanted
        }
        if len(found) == len(wanted) or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def metric_samples(text: str, name: str) -> list[tuple[dict[str, str], float]]:
    """The samples of one metric (its exact sample name) in exposition text."""
    return [
        (dict(sample.labels), sample.value)
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == name
    ]


def metric(text: str, name: str, **labels: str) -> float:
    """The sum of a metric's samples whose labels include ``labels`` (0 when there is none)."""
    return sum(
        value
        for sample_labels, value in metric_samples(text, name)
        if all(sample_labels.get(key) == wanted for key, wanted in labels.items())
    )


def scrape(client: httpx.Client) -> str:
    response = client.get("/metrics")
    assert response.status_code == 200, response.text
    return response.text


@pytest.fixture(scope="module")
def postgres(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    """PostgreSQL databases of this module's own (skipped locally when there is no server)."""
    _require_postgres()
    backend = Backend("postgresql", tmp_path_factory)
    yield backend
    backend.close()


def serve(backend: Backend, log_dir: Path, workers: int = 1, **env: str) -> LiveServer:
    return start_server(
        {
            "ERRATA_DATABASE_URL": backend.new_database(),
            "ERRATA_ADMIN_TOKENS": ADMIN_TOKEN,
            **env,
        },
        log_dir / "server.log",
        workers=workers,
    )


@pytest.fixture(scope="module")
def metrics_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A multiprocess metrics folder holding a stale file from an earlier run."""
    folder = tmp_path_factory.mktemp("metrics")
    (folder / "counter_1.db").write_bytes(b"left over from an earlier run")
    return folder


@pytest.fixture(scope="module")
def two_workers(
    postgres: Backend, metrics_folder: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    """``errata serve --workers 2`` on PostgreSQL, sharing metrics through ``metrics_folder``."""
    server = serve(
        postgres,
        tmp_path_factory.mktemp("two-workers"),
        workers=2,
        PROMETHEUS_MULTIPROC_DIR=str(metrics_folder),
    )
    yield server
    stop_server(server)
