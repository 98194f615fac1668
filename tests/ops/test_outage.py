"""The database going away under a running server (through a relay the test cuts): match
and compute go on answering from the catalog in memory and say it may be stale; what needs
the database answers 503; /readyz tells which; all recover by themselves."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from app.config import DEFAULT_MAX_AGE_S
from tests.api.test_records_api import assert_problem
from tests.conftest import ADMIN_TOKEN, Backend, LiveServer, start_server, stop_server
from tests.ops.relay import Relay

SEED_PASTE = "ValueError: Can only transfer integer bytes (shape=[7], dtype=i4)"
SEED_ID = "225d0e9c2ee22311"
COMPUTE = {"operation": "copy_gmem_to_smem", "shape": [7], "dtype": "int4"}
# Bound on the loops that wait for the server to notice (not a timing under test).
MAX_POLLS = 300


@pytest.fixture
def relayed(postgres: Backend, tmp_path: Path) -> Iterator[tuple[LiveServer, Relay]]:
    url = make_url(postgres.new_database())
    relay = Relay((url.host or "127.0.0.1", url.port or 5432))
    server = start_server(
        {
            "ERRATA_DATABASE_URL": url.set(port=relay.port).render_as_string(False),
            "ERRATA_ADMIN_TOKENS": ADMIN_TOKEN,
        },
        tmp_path / "server.log",
    )
    yield server, relay
    stop_server(server)
    relay.close()


def _poll(check: object) -> None:
    for _ in range(MAX_POLLS):
        if check():  # type: ignore[operator]
            return
        time.sleep(0.1)
    pytest.fail("the server never reached the expected state")


def test_match_and_compute_answer_through_an_outage_and_say_so(
    relayed: tuple[LiveServer, Relay],
) -> None:
    server, relay = relayed
    with server.client() as client:

        def stale() -> bool:
            answer = client.post("/api/match", json={"text": "x"})
            assert answer.status_code == 200, answer.text
            return "x-catalog-stale" in answer.headers

        assert client.get("/readyz").json()["catalogVersion"] >= 1
        fresh = client.post("/api/match", json={"text": SEED_PASTE})
        assert [m["errorId"] for m in fresh.json()["matches"]] == [SEED_ID]
        assert "x-catalog-stale" not in fresh.headers

        relay.cut()
        time.sleep(DEFAULT_MAX_AGE_S)
        # The first request past the reading's age starts a run that finds the database
        # gone; until then answers carry no mark, then they do.
        _poll(stale)
        matched = client.post("/api/match", json={"text": SEED_PASTE})
        assert matched.status_code == 200
        assert [m["errorId"] for m in matched.json()["matches"]] == [SEED_ID]
        assert "database unreachable" in matched.headers["x-catalog-stale"]
        computed = client.post("/api/compute", json=COMPUTE)
        assert computed.status_code == 200 and computed.json()["ok"] is False
        assert "x-catalog-stale" in computed.headers

        assert_problem(client.get("/api/errors"), 503, "database")
        written = client.put(
            f"/api/errors/{SEED_ID}",
            json={"record": {"errorMessage": "x"}},
            headers={"Authorization": f"Bearer {ADMIN_TOKEN}"},
        )
        assert_problem(written, 503, "database")
        ready = assert_problem(client.get("/readyz"), 503, "database", "match and compute")
        assert ready["catalogVersion"] >= 1
        assert client.get("/healthz").status_code == 200

        relay.restore()
        _poll(lambda: client.get("/readyz").status_code == 200)
        _poll(lambda: not stale())
        assert client.get("/api/errors", params={"limit": 1}).status_code == 200
