"""Hostile and concurrent input against a real server, on SQLite and on PostgreSQL.

Assertions are on behaviour (answers, counts, what is stored), never on timings.
"""

from __future__ import annotations

import json
import socket
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from tests.api.test_records_api import assert_problem, new_record
from tests.conftest import ADMIN_TOKEN, LiveServer
from tests.ops.conftest import access_records, log_records

SEED_ID = "225d0e9c2ee22311"
SEED_PASTE = "ValueError: Can only transfer integer bytes (shape=[7], dtype=i4)"


class _AnyText(str):
    def __eq__(self, other: object) -> bool:
        return isinstance(other, str) and bool(other)

    __hash__ = str.__hash__


ANY_TEXT = _AnyText()


def matched(client: httpx.Client, text: str) -> list[str]:
    response = client.post("/api/match", json={"text": text})
    assert response.status_code == 200, response.text[:500]
    return [item["errorId"] for item in response.json()["matches"]]


def test_a_client_leaving_mid_body_is_logged_as_gone_not_as_an_error(
    live_server: LiveServer,
) -> None:
    request_id = f"gone-{uuid.uuid4().hex[:12]}"
    address = urlsplit(live_server.base_url)
    head = (
        "POST /api/match HTTP/1.1\r\nHost: errata\r\nContent-Type: application/json\r\n"
        f"Content-Length: 1000\r\nX-Request-ID: {request_id}\r\n\r\n"
    )
    with socket.create_connection((address.hostname, address.port)) as connection:
        connection.sendall(head.encode() + b'{"text": "ValueError: Can only')
    line = access_records(live_server.log_path, [request_id])[request_id]
    assert (line["status"], line["level"], line["route"]) == (499, "info", "/api/match")
    errors = [
        record
        for record in log_records(live_server.log_path)
        if record.get("request_id") == request_id and record["level"] != "info"
    ]
    assert errors == []


def test_a_catastrophic_backtracking_pattern_cannot_slow_matching(
    client: httpx.Client, curator: httpx.Client
) -> None:
    record = new_record(
        errorMessage="A run of as",
        messagePattern="(?P<run>(a+)+)$",  # exponential for a backtracking engine
        olderWordings=[{"text": "as, then the end", "pattern": "(a+)+$"}],
    )
    imported = curator.post("/api/import", json=[{"record": record}])
    assert imported.status_code == 200, imported.text
    assert imported.json()["added"] == 1
    assert record["id"] in matched(client, "aaaaaaaa")  # the pattern is live in the index
    # A backtracking engine would not return from these in any useful time; RE2 is linear.
    for paste in ("a" * 100_000 + "!", "ValueError: " + "a" * 100_000 + "!"):
        assert record["id"] not in matched(client, paste)
    assert matched(client, SEED_PASTE)[0] == SEED_ID
    retired = curator.put(
        f"/api/errors/{record['id']}", json={"record": {**record, "retired": True}}
    )
    assert retired.status_code == 200


def test_a_megabyte_message_is_refused_and_writes_nothing(
    client: httpx.Client, curator: httpx.Client
) -> None:
    huge = new_record(errorMessage="Widget " + "w" * 1_000_000, messagePattern="Widget (?P<w>w+)")
    good = new_record()
    total = client.get("/api/errors", params={"limit": 1}).json()["total"]
    assert_problem(
        curator.put(f"/api/errors/{huge['id']}", json={"record": huge}), 422, "errorMessage"
    )
    assert_problem(
        curator.post("/api/import", json=[{"record": good}, {"record": huge}]),
        422,
        "errorMessage",
    )
    assert client.get("/api/errors", params={"limit": 1}).json()["total"] == total
    assert client.get(f"/api/errors/{good['id']}").status_code == 404
    assert matched(client, SEED_PASTE)[0] == SEED_ID


WRITERS, IMPORTS_EACH, RECORDS_EACH = 4, 3, 5
SAME_BATCH_WRITERS = 3
READERS, READS_EACH = 3, 12


def test_concurrent_imports_and_reads_lose_and_duplicate_nothing(
    live_server: LiveServer, client: httpx.Client
) -> None:
    tag = uuid.uuid4().hex[:8]
    batches = [
        [new_record(tags=[f"load-{tag}"]) for _ in range(RECORDS_EACH)]
        for _ in range(WRITERS * IMPORTS_EACH)
    ]
    shared = [new_record(tags=[f"load-{tag}"]) for _ in range(RECORDS_EACH)]
    before = client.get("/api/errors", params={"limit": 1}).json()["total"]
    headers = {"Authorization": f"Bearer {ADMIN_TOKEN}"}

    def write(chunk: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
        with live_server.client(headers=headers) as http:
            results = []
            for batch in chunk:
                response = http.post("/api/import", json=[{"record": r} for r in batch])
                assert response.status_code == 200, response.text
                results.append(response.json())
            return results

    def read(_: int) -> int:
        with live_server.client() as http:
            for turn in range(READS_EACH):
                listed = http.get("/api/errors", params={"limit": 200, "tag": f"load-{tag}"})
                assert listed.status_code == 200, listed.text
                ids = [item["id"] for item in listed.json()["items"]]
                assert len(ids) == len(set(ids))
                if turn % 3 == 0:
                    assert http.post("/api/match", json={"text": SEED_PASTE}).status_code == 200
            return READS_EACH

    chunks = [batches[i::WRITERS] for i in range(WRITERS)]
    with ThreadPoolExecutor(WRITERS + SAME_BATCH_WRITERS + READERS) as pool:
        writes = [pool.submit(write, chunk) for chunk in chunks]
        races = [pool.submit(write, [shared]) for _ in range(SAME_BATCH_WRITERS)]
        reads = [pool.submit(read, n) for n in range(READERS)]
        written = [result for future in writes for result in future.result()]
        raced = [result for future in races for result in future.result()]
        assert sum(future.result() for future in reads) == READERS * READS_EACH

    assert all(result["added"] == RECORDS_EACH and not result["failed"] for result in written)
    # The same five records, sent three times at once: added once, then found unchanged.
    assert sum(result["added"] for result in raced) == RECORDS_EACH
    assert sum(result["unchanged"] for result in raced) == RECORDS_EACH * (SAME_BATCH_WRITERS - 1)

    expected = {r["id"] for batch in [*batches, shared] for r in batch}
    listed = client.get("/api/errors", params={"limit": 200, "tag": f"load-{tag}"}).json()
    assert sorted(item["id"] for item in listed["items"]) == sorted(expected)
    assert client.get("/api/errors", params={"limit": 1}).json()["total"] == before + len(expected)
    last = batches[-1][-1]
    assert last["id"] in matched(client, "ValueError: " + last["errorMessage"].replace("{n}", "8"))


@pytest.mark.parametrize("name", ["q", "repo", "errorClass", "tag", "severity"])
def test_text_no_database_holds_is_refused_naming_the_parameter(
    client: httpx.Client, name: str
) -> None:
    body = assert_problem(client.get("/api/errors", params={name: "a\x00b"}), 422, name, "NUL")
    assert body["errors"] == [{"field": name, "message": ANY_TEXT}]
    assert client.get("/api/errors/by-slug/a%00b").status_code == 404
    page = client.get("/search", params={"q": "a\x00b"}, headers={"Accept": "text/html"})
    assert page.status_code == 422 and page.headers["content-type"].startswith("text/html")


@pytest.mark.parametrize(
    ("record", "field", "words"),
    [
        ({"notes": "a\x00b"}, "record.notes", ["NUL"]),
        ({"errorMessage": "Widget \x00 misaligned"}, "record.errorMessage", ["NUL"]),
        ({"nested": {"deep": ["ok", "\ud800"]}}, "record.nested.deep.1", ["surrogate"]),
        ({"a\x00": 1}, "record.'a\\x00'", ["field name", "NUL"]),
        ({"repo": "r" * 201}, "record.repo", ["200"]),
        ({"lineNumber": 30.5}, "record.lineNumber", ["integer"]),
        ({"lineNumber": 10**30}, "record.lineNumber", ["10000000"]),
        ({"sourceCodeEnd": 10**7 + 1}, "record.sourceCodeEnd", ["10000000"]),
    ],
)
def test_a_record_no_database_could_hold_is_refused_naming_the_field(
    curator: httpx.Client,
    client: httpx.Client,
    record: dict[str, Any],
    field: str,
    words: list[str],
) -> None:
    item = new_record(**record)
    response = curator.put(  # escaped as JSON sends them: "\u0000", "\ud800"
        f"/api/errors/{item['id']}",
        content=json.dumps({"record": item}),
        headers={"Content-Type": "application/json"},
    )
    body = assert_problem(response, 422, field, *words)
    assert body["errors"][0]["field"] == field
    assert client.get(f"/api/errors/{item['id']}").status_code == 404
    assert matched(client, SEED_PASTE) == [SEED_ID]  # the catalog still builds


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("PUT", "/api/errors/deeply-nested"),
        ("POST", "/api/compute"),
        ("POST", "/api/compute/batch"),
        ("POST", "/api/compute/sweep"),
        ("POST", "/api/compute/smem-budget"),
        ("POST", "/api/match"),
    ],
)
def test_json_nested_deeper_than_any_parser_goes_is_invalid_input_everywhere(
    curator: httpx.Client, client: httpx.Client, method: str, path: str
) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    for nested in (deep, '{"record": ' + deep + "}"):
        response = curator.request(
            method, path, content=nested, headers={"Content-Type": "application/json"}
        )
        body = assert_problem(response, 422, "Malformed JSON body")
        assert "nested too deeply" in body["detail"] or "recursion limit" in body["detail"]
    assert client.get("/api/errors/deeply-nested").status_code == 404


def test_non_finite_numbers_deep_nesting_and_bad_versions_are_refused_by_the_importer(
    curator: httpx.Client, client: httpx.Client
) -> None:
    item = new_record()
    cases = [
        (json.dumps(item).replace('"tags"', '"weight": NaN, "tags"'), "weight", "nan"),
        (json.dumps(item).replace('"tags"', '"weight": [1e999], "tags"'), "weight.0", "inf"),
        (json.dumps({**item, "x": json.loads("[" * 40 + "]" * 40)}), "x" + ".0" * 31, "deeper"),
        ("[" * 100_000 + "]" * 100_000, None, "nested too deeply"),
        (json.dumps({"record": item, "datasetVersion": "2026\x00"}), "datasetVersion", "NUL"),
        (json.dumps({"record": item, "datasetVersion": "v" * 65}), "datasetVersion", "64"),
    ]
    for document, field, words in cases:
        response = curator.post(
            "/api/import", content=document, headers={"Content-Type": "application/json"}
        )
        body = assert_problem(response, 422, words)
        assert body["errors"][0]["field"] == field
    assert client.get(f"/api/errors/{item['id']}").status_code == 404
    # 30.0 is the integer 30 in JSON, as the document's "integer" says.
    whole = new_record(lineNumber=30.0)
    assert curator.put(f"/api/errors/{whole['id']}", json={"record": whole}).status_code == 201
