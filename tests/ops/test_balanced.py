"""Two ``errata serve`` processes, as two containers would be, behind HAProxy on loopback,
sharing one PostgreSQL: a write through one is matched through the other, and one killed
mid-load loses no request the balancer could retry."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.api.test_records_api import new_record
from tests.conftest import ADMIN_TOKEN, Backend, LiveServer, free_port, start_server, stop_server

# Bounds on loops that wait for something to happen (not timings under test).
MAX_POLLS = 200
POLL_S = 0.05
CLIENTS = 4
REQUESTS_EACH = 60
HAPROXY_CONFIG = Path(__file__).resolve().parents[2] / "deploy" / "haproxy.cfg"


@dataclass
class Balanced:
    base_url: str
    servers: list[LiveServer]
    log: Path


def _haproxy() -> str:
    found = shutil.which("haproxy") or shutil.which("haproxy", path="/usr/sbin:/sbin")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("HAProxy is required under CI (.ci/run installs it)")
        pytest.skip("HAProxy is not installed (apt-get install haproxy)")
    return found


@pytest.fixture
def balanced(postgres: Backend, tmp_path: Path) -> Iterator[Balanced]:
    haproxy = _haproxy()
    env = {
        "ERRATA_DATABASE_URL": postgres.new_database(),
        "ERRATA_ADMIN_TOKENS": ADMIN_TOKEN,
        "ERRATA_RATE_LIMIT_PER_SECOND": "0",  # every request comes from the balancer
    }
    # One after the other: the first migrates and seeds, as a one-shot migration would.
    servers = [start_server(env, tmp_path / f"server-{name}.log") for name in "ab"]
    port = free_port()
    addresses = {
        f"ERRATA_SERVER_{name}": server.base_url.removeprefix("http://")
        for name, server in zip("AB", servers, strict=True)
    }
    balancer = subprocess.Popen(
        [haproxy, "-db", "-f", str(HAPROXY_CONFIG)],
        env={**os.environ, **addresses, "ERRATA_LISTEN": f"127.0.0.1:{port}"},
        stdout=(tmp_path / "haproxy.log").open("wb"),  # its own messages, not requests
        stderr=subprocess.STDOUT,
    )
    base_url = f"http://127.0.0.1:{port}"
    try:
        _until(lambda: _answers(base_url))
        yield Balanced(base_url, servers, tmp_path / "haproxy.log")
    finally:
        balancer.terminate()
        balancer.wait(timeout=15)
        for server in servers:
            stop_server(server)


def _answers(base_url: str) -> bool:
    try:
        return httpx.get(f"{base_url}/readyz", timeout=1).status_code == 200
    except httpx.TransportError:
        return False


def _until(check: object) -> None:
    for _ in range(MAX_POLLS):
        if check():  # type: ignore[operator]
            return
        time.sleep(POLL_S)
    pytest.fail("never happened")


def _matched(base_url: str, paste: str) -> list[str]:
    response = httpx.post(f"{base_url}/api/match", json={"text": paste}, timeout=30)
    assert response.status_code == 200, response.text
    return [item["errorId"] for item in response.json()["matches"]]


def test_a_write_through_one_process_is_matched_through_the_other(balanced: Balanced) -> None:
    first, second = balanced.servers
    record = new_record()
    paste = "ValueError: " + record["errorMessage"].replace("{n}", "16")
    assert _matched(second.base_url, paste) == []
    put = httpx.put(
        f"{first.base_url}/api/errors/{record['id']}",
        json={"record": record},
        headers={"Authorization": f"Bearer {ADMIN_TOKEN}"},
    )
    assert put.status_code == 201, put.text
    assert _matched(first.base_url, paste) == [record["id"]]  # the writer: at once
    _until(lambda: _matched(second.base_url, paste) == [record["id"]])
    _until(lambda: _matched(balanced.base_url, paste) == [record["id"]])


def test_a_process_killed_mid_load_loses_no_request(balanced: Balanced) -> None:
    """The balancer retries what never reached a process or never got an answer's first byte.
    A reply cut after its headers had gone out cannot be retried by any balancer: the client
    retries it (matching is idempotent), and there can be no more of those than requests in
    flight when the process died, one per client."""
    paste = "ValueError: Can only transfer integer bytes (shape=[7], dtype=i4)"
    statuses: list[int] = []
    cut_replies: list[str] = []
    answered = threading.Semaphore(0)
    lock = threading.Lock()

    def post(http: httpx.Client) -> int:
        try:
            return http.post("/api/match", json={"text": paste}).status_code
        except httpx.RemoteProtocolError as cut:
            with lock:
                cut_replies.append(str(cut))
            return http.post("/api/match", json={"text": paste}).status_code

    def client() -> None:
        with httpx.Client(base_url=balanced.base_url, timeout=30) as http:
            for _ in range(REQUESTS_EACH):
                status = post(http)
                with lock:
                    statuses.append(status)
                answered.release()

    threads = [threading.Thread(target=client) for _ in range(CLIENTS)]
    for thread in threads:
        thread.start()
    for _ in range(CLIENTS * REQUESTS_EACH // 4):  # a quarter answered: kill one process
        answered.acquire()
    victim = balanced.servers[0].process
    os.kill(victim.pid, signal.SIGKILL)
    victim.wait()
    for thread in threads:
        thread.join()
    assert len(statuses) == CLIENTS * REQUESTS_EACH
    assert set(statuses) == {200}, {status: statuses.count(status) for status in set(statuses)} | {
        "haproxy": balanced.log.read_text()[-2000:]
    }
    assert len(cut_replies) <= CLIENTS, cut_replies
