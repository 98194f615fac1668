"""Production shape on PostgreSQL: two workers behind one port, and the database going away.

Which worker answered is read from the server's JSON log (every line carries its ``pid``),
matched to the request by the ``X-Request-ID`` the test sent.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from app.config import DEFAULT_MAX_AGE_S
from tests.api.test_records_api import assert_problem, new_record
from tests.conftest import ADMIN_TOKEN, POSTGRES_ADMIN_URL, LiveServer
from tests.ops.conftest import access_records, metric, scrape

# Bounds on the loops that wait for both workers to answer (not timings under test).
MAX_REQUESTS = 200
BATCH = 10


def ask(server: LiveServer, method: str, path: str, tag: str, **kwargs: object) -> httpx.Response:
    """One request on a connection of its own, so that either worker may accept it."""
    request_id = f"{tag}-{uuid.uuid4().hex[:12]}"
    headers = {"X-Request-ID": request_id, **kwargs.pop("headers", {})}  # type: ignore[dict-item]
    response = httpx.request(
        method,
        f"{server.base_url}{path}",
        headers=headers,
        timeout=30,
        **kwargs,  # type: ignore[arg-type]
    )
    assert response.headers["x-request-id"] == request_id
    return response


def until_both_workers_answered(server: LiveServer, send: Callable[[], str]) -> dict[str, int]:
    """Call ``send()`` (returning a request id) until two processes answered; id -> pid."""
    answered: dict[str, int] = {}
    for _ in range(MAX_REQUESTS // BATCH):
        sent = [send() for _ in range(BATCH)]
        found = access_records(server.log_path, sent)
        answered.update({request_id: record["pid"] for request_id, record in found.items()})
        if len(set(answered.values())) >= 2:
            return answered
    pytest.fail(f"only one worker answered {len(answered)} requests: {set(answered.values())}")


def test_a_record_written_through_one_worker_is_matched_by_the_other(
    two_workers: LiveServer, metrics_folder: Path
) -> None:
    record = new_record()
    paste = "ValueError: " + record["errorMessage"].replace("{n}", "16")
    curator = {"Authorization": f"Bearer {ADMIN_TOKEN}"}

    answers: dict[str, bool] = {}  # request id -> matched the new record

    def match() -> str:
        response = ask(two_workers, "POST", "/api/match", "match", json={"text": paste})
        assert response.status_code == 200, response.text
        found = [item["errorId"] for item in response.json()["matches"]]
        assert found in ([], [record["id"]]), found
        answers[response.headers["x-request-id"]] = bool(found)
        return response.headers["x-request-id"]

    # Both workers build their index before the write...
    before = until_both_workers_answered(two_workers, match)
    assert not any(answers.values())
    put = ask(
        two_workers,
        "PUT",
        f"/api/errors/{record['id']}",
        "put",
        json={"record": record},
        headers=curator,
    )
    assert put.status_code == 201, put.text
    writer = access_records(two_workers.log_path, [put.headers["x-request-id"]])
    writer_pid = next(iter(writer.values()))["pid"]
    # ...the writer matches the record at once (its reading was dropped at its commit), and
    # the other once its reading has aged and one catch-up run has applied the write (it
    # answers from the index it holds meanwhile, never waiting for the database).
    time.sleep(DEFAULT_MAX_AGE_S)
    after: dict[str, int] = {}
    for _ in range(MAX_REQUESTS // BATCH):
        sent = [match() for _ in range(BATCH)]
        found = access_records(two_workers.log_path, sent)
        after.update({request_id: line["pid"] for request_id, line in found.items()})
        if {pid for request_id, pid in after.items() if answers[request_id]} == set(
            before.values()
        ):
            break
    hits = {pid for request_id, pid in after.items() if answers[request_id]}
    assert hits == set(before.values()), "a worker never matched the new record"
    assert all(answers[request_id] for request_id, pid in after.items() if pid == writer_pid)

    # One scrape shows what every worker counted: the folder is shared, and was emptied of
    # the earlier run's file before the workers started (else the scrape would fail).
    text = scrape(two_workers.client())
    assert not (metrics_folder / "counter_1.db").exists()
    hit_count = sum(answers[request_id] for request_id in after)
    assert metric(text, "errata_match_requests_total", outcome="miss") == len(answers) - hit_count
    assert metric(text, "errata_match_requests_total", outcome="hit") == hit_count
    assert metric(
        text, "errata_http_request_duration_seconds_count", route="/api/match", status="200"
    ) == len(before) + len(after)
    # Each worker built an index for the old version and brought it to the new one.
    assert metric(text, "errata_match_index_builds_total") >= 4
    total = two_workers.client().get("/api/errors", params={"limit": 1}).json()["total"]
    assert metric(text, "errata_match_index_records") == total


# -- PostgreSQL going away ------------------------------------------------------------------


def _cluster(config: pytest.Config) -> list[str]:
    """``pg_ctlcluster VERSION main`` for the local server, or a skip (a failure under CI).

    Stopping the machine's server disturbs whatever else uses it, so outside CI this runs
    only when asked for: ``pytest -m outage``.
    """
    if not os.environ.get("CI") and "outage" not in (config.option.markexpr or ""):
        pytest.skip("stops the machine's PostgreSQL server: runs under CI, or with -m outage")
    problem = None
    versions = sorted(os.listdir("/etc/postgresql")) if os.path.isdir("/etc/postgresql") else []
    if shutil.which("pg_ctlcluster") is None or not versions:
        problem = "no local PostgreSQL cluster (pg_ctlcluster) to stop and start"
    elif os.geteuid() != 0:
        problem = "stopping the local PostgreSQL server needs root"
    elif "127.0.0.1" not in POSTGRES_ADMIN_URL and "localhost" not in POSTGRES_ADMIN_URL:
        problem = "the test database is not the local server"
    if problem:
        if os.environ.get("CI"):
            pytest.fail(problem)
        pytest.skip(problem)
    return ["pg_ctlcluster", "--skip-systemctl-redirect", versions[-1], "main"]


def _postgres_accepts() -> bool:
    return subprocess.run(["pg_isready", "-h", "127.0.0.1", "-p", "5432", "-q"]).returncode == 0


@contextmanager
def postgres_stopped(cluster: list[str]) -> Iterator[None]:
    """The local PostgreSQL server, stopped, and always started again (and accepting) after."""
    subprocess.run([*cluster, "stop"], check=True, capture_output=True)
    try:
        yield
    finally:
        subprocess.run([*cluster, "start"], capture_output=True)
        deadline = time.monotonic() + 60
        while not _postgres_accepts() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _postgres_accepts(), "PostgreSQL did not come back"


@pytest.mark.outage
def test_postgresql_going_away_is_a_503_and_the_service_recovers_by_itself(
    request: pytest.FixtureRequest,
) -> None:
    cluster = _cluster(request.config)
    two_workers: LiveServer = request.getfixturevalue("two_workers")
    paths = ["/api/errors", "/api/match"]  # successful probes are not access-logged

    def send(expected: int) -> Callable[[], str]:
        turn = iter(range(MAX_REQUESTS))

        def one() -> str:
            path = paths[next(turn) % len(paths)]
            if path == "/api/match":
                response = ask(two_workers, "POST", path, "pg", json={"text": "ValueError: x"})
            else:
                response = ask(two_workers, "GET", path, "pg")
            if expected == 503 and path == "/api/match":
                # answered from the catalog in memory (tests/ops/test_outage: and marked)
                assert response.status_code == 200, response.text
            elif expected == 503:
                assert_problem(response, 503, "database")
            else:
                assert response.status_code == expected, (path, response.text)
            return response.headers["x-request-id"]

        return one

    until_both_workers_answered(two_workers, send(200))
    with postgres_stopped(cluster):
        # Once what each worker last read of the store is too old to trust, every worker
        # answers what needs the database with a 503 problem rather than a 500 or a hang,
        # and a match from the catalog in memory, saying it may be stale...
        time.sleep(DEFAULT_MAX_AGE_S)
        until_both_workers_answered(two_workers, send(503))
        assert_problem(ask(two_workers, "GET", "/readyz", "pg"), 503, "database", "catalog")
        assert ask(two_workers, "GET", "/healthz", "pg").status_code == 200  # alive, not ready
    # ...and once PostgreSQL is back, every worker is ready again without being restarted.
    deadline = time.monotonic() + 60
    while ask(two_workers, "GET", "/readyz", "pg").status_code != 200:
        assert time.monotonic() < deadline, "errata did not become ready again"
        time.sleep(0.2)
    until_both_workers_answered(two_workers, send(200))
