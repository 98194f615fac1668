"""The records API, over HTTP against a real server on SQLite and on PostgreSQL."""

from __future__ import annotations

import json
import uuid
from typing import Any

import httpx
import pytest

from tests.conftest import SEED_DIR

SEED_000 = json.loads((SEED_DIR / "000_3bebb9c19a64106a.txt").read_text())
SEED_001 = json.loads((SEED_DIR / "001_08f723cb3bf58b12.txt").read_text())
PROBLEM = "application/problem+json"


def new_record(**fields: Any) -> dict[str, Any]:
    record = {
        "id": f"t{uuid.uuid4().hex[:15]}",
        "repo": "example/repo",
        "errorMessage": f"Widget {uuid.uuid4().hex} must be aligned to {{n}} bytes",
        "errorClass": "ValueError",
        "severity": "warning",
        "tags": ["widgets"],
    }
    record.update(fields)
    return record


def unlike_record(**fields: Any) -> dict[str, Any]:
    """A new record whose message says no word any other record says, nor has its tag: it
    is related to another only by ``fields``."""
    return new_record(errorMessage=f"E{uuid.uuid4().hex}: {{n}}", tags=[], **fields)


def snapshot(client: httpx.Client) -> list[dict[str, Any]]:
    """Everything the store holds, retired records included, for before/after comparisons."""
    items, cursor = [], None
    while True:
        params: dict[str, Any] = {"limit": 200, "includeRetired": True}
        if cursor:
            params["cursor"] = cursor
        page = client.get("/api/errors", params=params).json()
        items += [client.get(f"/api/errors/{item['id']}").json() for item in page["items"]]
        cursor = page["nextCursor"]
        if not cursor:
            return items


def assert_problem(response: httpx.Response, status: int, *words: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith(PROBLEM)
    body = response.json()
    assert body["status"] == status
    for word in words:
        assert word in body["detail"], body
    return body


@pytest.mark.parametrize("seed", [SEED_000, SEED_001], ids=["seed000", "seed001"])
def test_json_seed_is_served_exactly_as_shipped(client: httpx.Client, seed: dict[str, Any]) -> None:
    response = client.get(f"/api/errors/{seed['record']['id']}")
    assert response.status_code == 200
    assert response.json() == seed
    assert list(response.json()["record"]) == list(seed["record"])


def test_text_page_seed_comes_back_whole(client: httpx.Client) -> None:
    record = client.get("/api/errors/19b6a360721eb407").json()["record"]
    assert record["errorMessage"] == (
        "Can not bitcast memory region of size {shape_bitwidth} bits "
        "to dtype with {target_bitwidth} bits."
    )
    assert record["filePath"] == "jax/_src/pallas/mosaic_gpu/lowering.py"
    assert record["lineNumber"] == 1501
    assert len(record["solutions"]) == 3
    lines = record["sourceCode"].split("\n")
    raise_line = lines[record["lineNumber"] - record["sourceCodeStart"]]
    assert raise_line.strip() == "raise ValueError("
    assert (
        "Can not bitcast memory region"
        in lines[record["lineNumber"] - record["sourceCodeStart"] + 1]
    )
    assert record["analyzedSha"] == SEED_000["record"]["analyzedSha"]
    assert record["githubUrl"].endswith(
        f"lowering.py#L{record['sourceCodeStart']}-L{record['sourceCodeEnd']}"
    )
    assert record["messagePattern"]


def test_list_filters_and_pages_in_a_stable_order(
    client: httpx.Client, curator: httpx.Client
) -> None:
    repo = f"example/{uuid.uuid4().hex[:8]}"
    ids = sorted(
        curator.put(f"/api/errors/{r['id']}", json={"record": r}).json()["record"]["id"]
        for r in (new_record(repo=repo) for _ in range(5))
    )
    first = client.get("/api/errors", params={"repo": repo, "limit": 2}).json()
    assert first["total"] == 5
    seen = [item["id"] for item in first["items"]]
    cursor = first["nextCursor"]
    while cursor:
        page = client.get("/api/errors", params={"repo": repo, "limit": 2, "cursor": cursor}).json()
        seen += [item["id"] for item in page["items"]]
        cursor = page["nextCursor"]
    assert seen == ids


def test_search_filters(client: httpx.Client, curator: httpx.Client) -> None:
    repo = f"example/{uuid.uuid4().hex[:8]}"
    made = {
        "a": new_record(repo=repo, errorClass="NotImplementedError", tags=["copy", "tma"]),
        "b": new_record(repo=repo, severity="error", documentation="Pad the WARPGROUP block."),
        "c": new_record(repo=repo, solutions=["Use int8 storage and unpack"], tags=["tma"]),
        "d": new_record(repo=repo, errorMessage="50% of 100_000 rows"),
    }
    for item in made.values():
        curator.put(f"/api/errors/{item['id']}", json={"record": item})

    def found(**params: str) -> set[str]:
        body = client.get("/api/errors", params={"repo": repo, **params}).json()
        assert body["total"] == len(body["items"])
        return {key for key, item in made.items() if item["id"] in {i["id"] for i in body["items"]}}

    assert found() == {"a", "b", "c", "d"}
    assert found(errorClass="NotImplementedError") == {"a"}
    assert found(tag="tma") == {"a", "c"}
    assert found(severity="error") == {"b"}
    assert found(q="warpgroup PAD") == {"b"}
    assert found(q="int8 storage") == {"c"}
    assert found(q="50%") == {"d"}  # LIKE wildcards are literal
    assert found(q="100_000") == {"d"}
    assert found(q="no-such-word-anywhere") == set()
    seeds = client.get("/api/errors", params={"q": "warpgroup", "repo": "jax-ml/jax"}).json()
    assert "ffb598de9e3ff51b" in {item["id"] for item in seeds["items"]}


def test_a_search_lists_the_most_relevant_first_with_its_words_marked(
    client: httpx.Client,
) -> None:
    found = client.get("/api/errors", params={"q": "warpgroup"}).json()
    first = found["items"][0]
    assert first["id"] == SEED_001["record"]["id"]  # bytes divisible by the warpgroup size
    assert first["snippet"]["field"] == "errorMessage"
    assert "".join(part["text"] for part in first["snippet"]["parts"]) == first["errorMessage"]
    assert [part["text"] for part in first["snippet"]["parts"] if part["match"]] == [
        "warpgroup",
        "warpgroup",
        "WARPGROUP",
    ]
    listed = client.get("/api/errors", params={"limit": 1}).json()["items"][0]
    assert listed["snippet"] is None  # no words, no snippet


def test_a_search_pages_in_its_order_without_gaps_or_repeats(client: httpx.Client) -> None:
    whole = client.get("/api/errors", params={"q": "warpgroup", "limit": 200}).json()
    assert whole["nextCursor"] is None and whole["total"] > 10
    walked, cursor = [], None
    while True:
        params: dict[str, Any] = {"q": "warpgroup", "limit": 4}
        if cursor:
            params["cursor"] = cursor
        body = client.get("/api/errors", params=params).json()
        assert body["total"] == whole["total"]
        walked += [item["id"] for item in body["items"]]
        cursor = body["nextCursor"]
        if not cursor:
            break
    assert walked == [item["id"] for item in whole["items"]]


@pytest.mark.parametrize(
    "q",
    [
        '"',
        "*",
        "NEAR(a b)",
        "a OR NOT b",
        "{search_body}: x",
        "'; DROP TABLE records; --",
        "x & y | !z <-> w:*",
        "!!!",
        "ß 🚀",
        "w" * 500,
        "w " * 250,
        "a\x00b",
        "w" * 501,
    ],
    ids=range(13),
)
def test_a_hostile_search_is_a_page_or_a_problem_naming_q(client: httpx.Client, q: str) -> None:
    response = client.get("/api/errors", params={"q": q})
    if response.status_code == 200:
        assert response.json()["total"] == len(response.json()["items"])
    else:
        assert_problem(response, 422, "q")


def test_by_slug_and_related(client: httpx.Client) -> None:
    record = client.get("/api/errors/by-slug/can-only-transfer-integer-bytes-shape-dst-ty-sha")
    assert record.json() == SEED_000
    related = client.get("/api/errors/b6ff9cfce0e99931/related").json()
    by_id = {item["id"]: item["reasons"] for item in related["items"]}
    assert "filePath" in by_id["19b6a360721eb407"]
    assert "listed" in by_id["19b6a360721eb407"]
    assert "Only workgroup memory is supported but got {ref}." in related["unresolved"]
    seed_related = client.get("/api/errors/225d0e9c2ee22311/related").json()
    assert {"filePath", "tag:alignment"} <= set(
        {item["id"]: item["reasons"] for item in seed_related["items"]}["ffb598de9e3ff51b"]
    )


def records_sharing_a_slug(curator: httpx.Client, count: int) -> tuple[str, list[str]]:
    """Records whose messages share their first 50 characters, so their slug: the dataset
    derives a slug from those alone (105 of JAX's records read "module
    'jax.experimental.pallas.tpu' has no attribute …")."""
    start = f"Widget {uuid.uuid4().hex} has no attribute "  # 57 characters
    made = [new_record(errorMessage=f"{start}'{name}'") for name in "abcdefgh"[:count]]
    slugs = {
        curator.put(f"/api/errors/{r['id']}", json={"record": r}).json()["record"]["slug"]
        for r in made
    }
    [slug] = slugs
    return slug, [r["id"] for r in made]


def test_a_slug_several_records_share_names_none_of_them(
    client: httpx.Client, curator: httpx.Client
) -> None:
    slug, ids = records_sharing_a_slug(curator, 3)
    assert_problem(client.get(f"/api/errors/by-slug/{slug}"), 409, "3 records share the slug")
    listed = client.get("/api/errors", params={"slug": slug}).json()
    assert sorted(item["id"] for item in listed["items"]) == sorted(ids)
    assert listed["total"] == 3
    # Once the others are retired, the slug names the live record again.
    for record_id in ids[1:]:
        retired = {**client.get(f"/api/errors/{record_id}").json()["record"], "retired": True}
        assert curator.put(f"/api/errors/{record_id}", json={"record": retired}).is_success
    assert client.get(f"/api/errors/by-slug/{slug}").json()["record"]["id"] == ids[0]


def test_unknown_ids_and_routes_are_named_problems(client: httpx.Client) -> None:
    assert_problem(client.get("/api/errors/0000000000000000"), 404, "0000000000000000")
    assert_problem(client.get("/api/errors/by-slug/nothing-here"), 404, "nothing-here")
    assert_problem(client.get("/api/nowhere"), 404, "/api/nowhere")
    assert_problem(client.get("/api/errors", params={"limit": 500}), 422, "limit")
    assert_problem(client.get("/api/errors", params={"cursor": "%%%"}), 422, "cursor")


def test_writes_need_a_valid_bearer_token(client: httpx.Client) -> None:
    record = new_record()
    url = f"/api/errors/{record['id']}"
    assert_problem(client.put(url, json={"record": record}), 401, "Bearer")
    wrong = client.put(url, json={"record": record}, headers={"Authorization": "Bearer nope"})
    assert_problem(wrong, 403)
    assert_problem(client.post("/api/import", content=json.dumps(record)), 401)
    assert client.get(url).status_code == 404


def test_put_creates_updates_and_retires(curator: httpx.Client, client: httpx.Client) -> None:
    repo = f"example/{uuid.uuid4().hex}"  # this record's alone, so the listing is exact
    record = new_record(futureField={"kept": [1, 2.5, None]}, repo=repo)
    url = f"/api/errors/{record['id']}"
    created = curator.put(url, json={"record": record, "datasetVersion": "2026-09-01T00:00:00Z"})
    assert created.status_code == 201
    served = client.get(url).json()
    assert served["record"]["futureField"] == {"kept": [1, 2.5, None]}
    assert served["datasetVersion"] == "2026-09-01T00:00:00Z"
    assert served["record"]["messagePattern"]  # derived from the message template

    retired = curator.put(url, json={"record": {**served["record"], "retired": True}})
    assert retired.status_code == 200
    assert client.get(url).json()["record"]["retired"] is True
    listed = client.get("/api/errors", params={"repo": repo}).json()
    assert listed["items"] == [] and listed["total"] == 0
    everything = client.get("/api/errors", params={"repo": repo, "includeRetired": True}).json()
    assert [item["id"] for item in everything["items"]] == [record["id"]]


def test_put_rejects_a_mismatched_id_and_wrong_types(curator: httpx.Client) -> None:
    record = new_record()
    mismatch = curator.put("/api/errors/other-id", json={"record": record})
    assert_problem(mismatch, 422, "record.id")
    wrong = curator.put(
        f"/api/errors/{record['id']}", json={"record": {**record, "lineNumber": "9"}}
    )
    assert_problem(wrong, 422, "lineNumber")


def test_import_endpoint_accepts_every_format(curator: httpx.Client, client: httpx.Client) -> None:
    a, b, c = new_record(), new_record(), new_record()
    lines = "\n".join(json.dumps({"record": r, "datasetVersion": "2026-09-01"}) for r in (a, b))
    summary = curator.post(
        "/api/import", content=lines, headers={"Content-Type": "application/x-ndjson"}
    )
    assert summary.json() == {"added": 2, "updated": 0, "unchanged": 0, "failed": 0, "errors": []}
    again = curator.post("/api/import", json=[a, {"record": b}, c]).json()
    # a and b are stored with a datasetVersion; an unversioned copy does not displace them
    assert (again["added"], again["updated"], again["unchanged"]) == (1, 0, 2)
    assert client.get(f"/api/errors/{c['id']}").status_code == 200
    page = (SEED_DIR / "004_8cdedc0b03030c8e.txt").read_text()
    reimport = curator.post("/api/import", content=page, headers={"Content-Type": "text/plain"})
    assert reimport.json()["unchanged"] == 1


@pytest.mark.parametrize(
    ("body", "content_type", "words"),
    [
        (b'{"record": {"id": "x", ', "application/json", ["line 1"]),
        (b"\x00\x01\x02\xff binary junk", "application/octet-stream", ["binary"]),
        (b"\xff\xfe\xfa not utf-8", "text/plain", ["UTF-8"]),
        (
            b'[{"id": "ok-one", "errorMessage": "fine"}, {"id": "bad"}]',
            "application/json",
            ["record 2", "errorMessage"],
        ),
        (
            b'{"id": "hostile", "errorMessage": "m", "messagePattern": "(a+)+\\\\1"}',
            "application/json",
            ["messagePattern"],
        ),
        (
            b'{"id": "x", "errorMessage": "m"}\n{"id": 5, "errorMessage": "m"}\n',
            "application/x-ndjson",
            ["line 2", "id"],
        ),
        (b"just some words, not a page", "text/plain", ["line"]),
    ],
    ids=[
        "truncated-json",
        "binary",
        "not-utf8",
        "missing-field",
        "hostile-regex",
        "jsonl-type",
        "not-a-page",
    ],
)
def test_bad_imports_are_named_and_write_nothing(
    curator: httpx.Client, client: httpx.Client, body: bytes, content_type: str, words: list[str]
) -> None:
    before = snapshot(client)
    response = curator.post("/api/import", content=body, headers={"Content-Type": content_type})
    assert_problem(response, 422, *words)
    assert snapshot(client) == before


def test_malformed_and_oversized_bodies(curator: httpx.Client, client: httpx.Client) -> None:
    before = snapshot(client)
    record = new_record()
    url = f"/api/errors/{record['id']}"
    malformed = curator.put(
        url, content=b'{"record": ', headers={"Content-Type": "application/json"}
    )
    assert_problem(malformed, 422, "JSON")
    huge = {"record": {**record, "documentation": "x" * 10_000_000}}
    assert_problem(curator.put(url, json=huge), 413, "limit")
    chunks = (b"x" * 65536 for _ in range(200))  # streamed, no Content-Length
    assert_problem(curator.post("/api/import", content=chunks), 413)
    assert snapshot(client) == before


def test_health_and_openapi(client: httpx.Client) -> None:
    assert client.get("/healthz").json() == {"status": "ok"}
    assert client.get("/readyz").json()["status"] == "ready"
    paths = client.get("/openapi.json").json()["paths"]
    assert {
        "/api/errors",
        "/api/errors/{record_id}",
        "/api/errors/by-slug/{slug}",
        "/api/errors/{record_id}/related",
        "/api/import",
        "/healthz",
        "/readyz",
    } <= set(paths)
    assert client.get("/docs").status_code == 200


def test_annotations_are_served_only_when_asked(
    curator: httpx.Client, client: httpx.Client
) -> None:
    record = new_record()
    curator.put(f"/api/errors/{record['id']}", json={"record": record})
    url = f"/api/errors/{record['id']}"
    assert_problem(client.get(f"{url}/annotation"), 404, "no annotation")
    note = {"annotation": {"recordId": record["id"], "notes": ["checked against JAX"]}}
    assert curator.post("/api/import", json=note).json()["added"] == 1
    assert "annotation" not in client.get(url).json()
    assert client.get(url, params={"annotated": True}).json()["annotation"] == note["annotation"]
    assert client.get(f"{url}/annotation").json() == note["annotation"]


def test_related_walks_the_sequence_users_hit(client: httpx.Client) -> None:
    """warpgroup bytes → element multiple → TMA box, through the listed relatives."""

    def listed(record_id: str) -> dict[str, str]:
        items = client.get(f"/api/errors/{record_id}/related").json()["items"]
        return {item["id"]: item["errorMessage"] for item in items if "listed" in item["reasons"]}

    after_warpgroup = listed("ffb598de9e3ff51b")
    multiple = next(i for i, m in after_warpgroup.items() if "multiple of {WARPGROUP_SIZE}" in m)
    assert any(
        m.startswith("Async copies only support copying <=256") for m in listed(multiple).values()
    )


# --- the records of compilers' messages -------------------------------------------------------

COMPILER_RECORD = json.loads(
    (SEED_DIR.parent / "records" / "compiler-libtpu-comparison-not-supported.json").read_text()
)


def test_a_compilers_message_is_a_record_served_as_shipped(client: httpx.Client) -> None:
    record = COMPILER_RECORD["record"]
    assert client.get(f"/api/errors/{record['id']}").json() == COMPILER_RECORD
    assert client.get(f"/api/errors/by-slug/{record['slug']}").json() == COMPILER_RECORD


@pytest.mark.parametrize(
    "params",
    [
        {"q": "jax-ml/jax#30104"},  # the documentation's words
        {"q": "compare in float32"},  # a solution's
        {"q": "target does not support"},  # the message's
        {"tag": "compiler-message", "limit": 100},
        {"tag": "libtpu", "limit": 100},
    ],
    ids=["documentation", "solution", "message", "family-tag", "compiler-tag"],
)
def test_a_compilers_message_is_found_by_search(
    client: httpx.Client, params: dict[str, Any]
) -> None:
    found = client.get("/api/errors", params=params).json()
    assert COMPILER_RECORD["record"]["id"] in [item["id"] for item in found["items"]]


def test_every_compilers_message_is_listed_under_the_family_tag(client: httpx.Client) -> None:
    found = client.get("/api/errors", params={"tag": "compiler-message", "limit": 100}).json()
    assert found["total"] == 32  # the curated files (XLA's catalogue is not loaded here)
    assert all(item["repo"] is None for item in found["items"])


def test_a_compilers_record_is_no_match_and_its_advice_is_the_compilers_message(
    client: httpx.Client,
) -> None:
    """The pattern alone matches nothing: the reading of compilers' messages names it, with
    the record's documentation and solutions."""
    record = COMPILER_RECORD["record"]
    paste = (
        "XlaRuntimeError: INTERNAL: Mosaic failed to compile TPU kernel: Target does not "
        "support this comparison\n"
    )
    body = client.post("/api/match", json={"text": paste}).json()
    assert record["id"] not in [found["errorId"] for found in body["matches"]]
    [said] = body["compilerMessages"]
    assert said["why"].endswith(" ".join([record["documentation"], *record["solutions"]]))


def test_a_compilers_record_with_a_bad_saidby_is_refused(curator: httpx.Client) -> None:
    record = {**COMPILER_RECORD["record"], "id": f"t{uuid.uuid4().hex[:15]}"}
    record["saidBy"] = {**record["saidBy"], "reading": "whole"}
    response = curator.put(f"/api/errors/{record['id']}", json={"record": record})
    assert_problem(response, 422, "needs words")


def test_related_pages_strongest_first(curator: httpx.Client, client: httpx.Client) -> None:
    """limit, cursor, nextCursor and total, as GET /api/errors pages; the rarest features
    shared first: a file two records carry and its folder, then a tag two carry beside one
    six carry, then a background tag two carry, then the tag six carry alone; then the id."""
    own, other = f"rel-{uuid.uuid4().hex[:8]}", f"rel-{uuid.uuid4().hex[:8]}"
    where = f"jax/_src/{own}/{own}.py"
    target = unlike_record(filePath=where, backgroundTag=own, errorClass=own)
    target["tags"] = [own, other]
    relatives = {
        "file": unlike_record(filePath=where),
        "kind": unlike_record(backgroundTag=own),
        "two": {**unlike_record(), "tags": [other, own]},
        **{f"one{n}": {**unlike_record(), "tags": [own]} for n in range(4)},
    }
    for record in [target, *relatives.values()]:
        assert curator.put(f"/api/errors/{record['id']}", json={"record": record}).is_success
    ones = sorted(relatives[f"one{n}"]["id"] for n in range(4))
    expected = [relatives[key]["id"] for key in ("file", "two", "kind")] + ones
    url = f"/api/errors/{target['id']}/related"

    seen, cursor = [], None
    while True:
        params: dict[str, Any] = {"limit": 3} | ({"cursor": cursor} if cursor else {})
        page = client.get(url, params=params).json()
        assert len(page["items"]) <= 3 and page["total"] == len(expected)
        assert page["unresolved"] == []
        seen += [item["id"] for item in page["items"]]
        cursor = page["nextCursor"]
        if cursor is None:
            break
    assert seen == expected
    first = client.get(url, params={"limit": 1}).json()["items"][0]
    assert first == {
        "id": relatives["file"]["id"],
        "slug": first["slug"],
        "errorMessage": relatives["file"]["errorMessage"],
        "reasons": ["filePath", "module"],
    }
    assert_problem(client.get(url, params={"limit": 201}), 422, "limit")
    assert_problem(client.get(url, params={"cursor": "not-a-cursor"}), 422, "cursor")
    # Any cursor of the documented form is a position, as for GET /api/errors: one naming no
    # score ("after:x") stands after every related record.
    past = client.get(url, params={"cursor": "YWZ0ZXI6eA"}).json()
    assert (past["items"], past["total"], past["nextCursor"]) == ([], len(expected), None)


def test_related_paging_is_documented(client: httpx.Client) -> None:
    operation = client.get("/openapi.json").json()["paths"]["/api/errors/{record_id}/related"]
    parameters = {p["name"]: p for p in operation["get"]["parameters"]}
    assert parameters["limit"]["schema"]["maximum"] == 200
    assert parameters["cursor"]["description"]
    answer = operation["get"]["responses"]["200"]["content"]["application/json"]["schema"]
    assert answer["$ref"].endswith("/RelatedRecords")
    schema = client.get("/openapi.json").json()["components"]["schemas"]["RelatedRecords"]
    assert {"items", "total", "nextCursor", "unresolved"} <= set(schema["properties"])
