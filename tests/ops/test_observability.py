"""Metrics, request ids and JSON logs of a real server, and what its log never holds."""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import httpx

from app.config import load_settings
from app.main import create_app
from tests.api.test_records_api import assert_problem, new_record
from tests.conftest import ADMIN_TOKEN, LiveServer
from tests.ops.conftest import (
    access_records,
    log_records,
    metric,
    metric_samples,
    run_on_a_loop_of_its_own,
    scrape,
)

SEED_ID = "225d0e9c2ee22311"
SEED_PASTE = "ValueError: Can only transfer integer bytes (shape=[7], dtype=i4)"


def test_latency_is_labelled_by_route_template_never_by_raw_path(client: httpx.Client) -> None:
    unknown = f"zz{uuid.uuid4().hex[:14]}"
    assert client.get(f"/api/errors/{SEED_ID}").status_code == 200
    assert client.get(f"/api/errors/{unknown}").status_code == 404
    assert client.get(f"/no/such/{unknown}").status_code == 404
    text = scrape(client)
    routes = {
        labels["route"]
        for labels, _ in metric_samples(text, "errata_http_request_duration_seconds_count")
    }
    assert "/api/errors/{record_id}" in routes
    assert "<unmatched>" in routes
    assert SEED_ID not in text and unknown not in text
    found = metric(
        text, "errata_http_request_duration_seconds_count", route="/api/errors/{record_id}"
    )
    assert found >= 2
    # A body refused before routing still counts under the route it was sent to.
    too_big = b"x" * (5 * 1024 * 1024)
    assert client.post("/api/match", content=too_big).status_code == 413
    assert metric(scrape(client), "errata_http_request_duration_seconds_count", status="413") >= 1
    assert (
        metric(
            scrape(client),
            "errata_http_request_duration_seconds_count",
            route="/api/match",
            status="413",
        )
        >= 1
    )


def test_routes_outside_the_openapi_document_count_too(client: httpx.Client) -> None:
    """The web pages and /metrics are not in the OpenAPI document; they are still routes."""
    refused = client.put("/")
    assert refused.status_code == 405
    assert refused.headers["allow"] == "GET, POST"
    assert client.put("/metrics").headers["allow"] == "GET"
    too_big = b"x" * (5 * 1024 * 1024)
    assert client.post("/", content=too_big).status_code == 413
    assert client.get("/static/errata.css").status_code == 200
    name = "errata_http_request_duration_seconds_count"
    wanted = [
        {"method": "POST", "route": "/", "status": "413"},
        {"method": "PUT", "route": "/", "status": "405"},
        {"method": "GET", "route": "/static/{path}", "status": "200"},
    ]
    # A request is measured just after its answer is sent: wait a little for the last ones.
    deadline = time.monotonic() + 5
    while True:
        text = scrape(client)
        missing = [labels for labels in wanted if metric(text, name, **labels) < 1]
        if not missing or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert missing == []


def test_match_hits_and_misses_are_counted(client: httpx.Client) -> None:
    before = scrape(client)
    assert client.post("/api/match", json={"text": SEED_PASTE}).json()["matches"]
    assert not client.post("/api/match", json={"text": "KeyError: 'nothing known'"}).json()[
        "matches"
    ]
    after = scrape(client)
    for outcome in ("hit", "miss"):
        name = "errata_match_requests_total"
        assert metric(after, name, outcome=outcome) == metric(before, name, outcome=outcome) + 1


def test_an_index_rebuild_is_measured(client: httpx.Client, curator: httpx.Client) -> None:
    client.post("/api/match", json={"text": SEED_PASTE})
    before = scrape(client)
    record = new_record()
    assert curator.put(f"/api/errors/{record['id']}", json={"record": record}).status_code == 201
    client.post("/api/match", json={"text": SEED_PASTE})
    after = scrape(client)
    builds = "errata_match_index_builds_total"
    assert metric(after, builds) == metric(before, builds) + 1
    live = client.get("/api/errors", params={"limit": 1}).json()["total"]
    assert metric(after, "errata_match_index_records") == live
    assert metric(after, "errata_match_index_patterns") >= live
    assert metric(after, "errata_match_index_build_seconds") > 0


def test_request_ids_are_echoed_and_on_every_log_line(live_server: LiveServer) -> None:
    with live_server.client() as http:
        given = f"ops-{uuid.uuid4().hex}"
        answered = http.get(f"/api/errors/{SEED_ID}", headers={"X-Request-ID": given})
        made = http.get("/api/errors", params={"q": "bytes"})
        forged = http.get("/api/errors", headers={"X-Request-ID": 'bad id" injected'})
    assert answered.headers["x-request-id"] == given
    assert len(made.headers["x-request-id"]) == 32
    assert forged.headers["x-request-id"] not in ('bad id" injected', "")
    ids = [given, made.headers["x-request-id"], forged.headers["x-request-id"]]
    lines = access_records(live_server.log_path, ids)
    assert set(lines) == set(ids)
    line = lines[given]
    assert (line["method"], line["route"], line["status"]) == (
        "GET",
        "/api/errors/{record_id}",
        200,
    )
    assert line["path"] == f"/api/errors/{SEED_ID}" and line["level"] == "info"
    assert "q=" not in str(lines[made.headers["x-request-id"]])  # no query strings
    # One JSON format for every logger, uvicorn's own included.
    loggers = {record.get("logger") for record in log_records(live_server.log_path)}
    assert {"uvicorn.error", "errata.access"} <= loggers


def test_pastes_tokens_and_secrets_never_reach_the_log(live_server: LiveServer) -> None:
    secret = f"AKIA{uuid.uuid4().hex[:16].upper()}"
    password = f"hunter2-{uuid.uuid4().hex}"
    wrong_token = f"not-a-curator-{uuid.uuid4().hex}"
    paste = (
        "Traceback (most recent call last):\n"
        f'  File "train.py", line 3, in <module>\n    key = "{secret}"\n'
        f"ValueError: could not log in with password={password}\n"
    )
    record = new_record(documentation=f"Seen with {secret} in the environment.")
    with live_server.client() as http:
        ids = [
            http.post("/api/match", json={"text": paste}),
            http.post("/api/match", content=paste, headers={"Content-Type": "text/plain"}),
            http.post("/api/match", params={"jaxVersion": password}, content=paste),
            http.post("/api/compute", json={"shape": secret, "dtype": password}),
            http.put(
                f"/api/errors/{record['id']}",
                json={"record": record},
                headers={"Authorization": f"Bearer {ADMIN_TOKEN}"},
            ),
            http.put(
                f"/api/errors/{record['id']}",
                json={"record": record},
                headers={"Authorization": f"Bearer {wrong_token}"},
            ),
            http.post(
                "/api/import",
                content=f'{{"record": {{"id": "{secret}"',
                headers={"Authorization": f"Bearer {ADMIN_TOKEN}"},
            ),
        ]
    statuses = [response.status_code for response in ids]
    assert statuses[0] == statuses[1] == 200 and statuses[4] == 201 and statuses[5] == 403
    # Wait until each request's own line is written, then read the whole log.
    access_records(live_server.log_path, [response.headers["x-request-id"] for response in ids])
    log = live_server.log_path.read_text(errors="replace")
    for leaked in (secret, password, wrong_token, ADMIN_TOKEN, "could not log in"):
        assert leaked not in log


def test_every_response_says_nosniff(client: httpx.Client) -> None:
    responses = [
        client.get("/healthz"),
        client.get("/metrics"),
        client.get(f"/api/errors/{SEED_ID}"),
        client.get("/api/errors/nope-nope"),
        client.post("/api/match", content=b"x" * (5 * 1024 * 1024)),
        client.delete("/api/errors"),
    ]
    assert [r.headers.get("x-content-type-options") for r in responses] == ["nosniff"] * 6
    assert responses[-1].status_code == 405 and responses[-1].headers["allow"] == "GET"


def test_an_unexpected_error_is_a_500_problem_with_the_usual_headers(tmp_path: Path) -> None:
    """A 500 is sent from outside every middleware; it still says nosniff and its request id."""
    app = create_app(load_settings(data_dir=tmp_path, prepare_database=False))

    @app.get("/boom")
    def boom() -> None:
        raise RuntimeError("kaput")

    async def call() -> httpx.Response:
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://errata") as http:
            return await http.get("/boom", headers={"X-Request-ID": "boom-1"})

    response = run_on_a_loop_of_its_own(call())
    body = assert_problem(response, 500)
    assert "kaput" not in body["detail"]
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["x-request-id"] == "boom-1"
