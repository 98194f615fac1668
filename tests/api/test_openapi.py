"""The OpenAPI document, as a server sends it, says what the routes do: every reference in it
resolves, every status a route answers with is documented, and the chat commands' bodies
and refusals are described as they are."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.chatops.chat import FORM
from tests.conftest import MATTERMOST_TOKENS

# What each operation answers with, from its code: problems raised by its route, its
# dependencies and its services (404 an unknown id, 409 a slug shared or a write kept
# waiting, 503 a chat's commands off or the database down), and the app's middleware
# (413 a body over the limit, 429 the rate limit on expensive paths).
ROUTE_STATUSES: dict[tuple[str, str], set[int]] = {
    ("GET", "/healthz"): {200},
    ("GET", "/readyz"): {200, 503},
    ("POST", "/api/compute"): {200, 404, 413, 422, 429, 503},
    ("POST", "/api/compute/batch"): {200, 413, 422, 429, 503},
    ("POST", "/api/compute/smem-budget"): {200, 413, 422, 429, 503},
    ("POST", "/api/compute/sweep"): {200, 413, 422, 429, 503},
    ("POST", "/api/match"): {200, 413, 422, 429, 503},
    ("GET", "/api/errors"): {200, 422, 503},
    ("GET", "/api/errors/by-slug/{slug}"): {200, 404, 409, 422, 503},
    ("GET", "/api/errors/{record_id}"): {200, 404, 422, 503},
    ("PUT", "/api/errors/{record_id}"): {200, 201, 401, 403, 409, 413, 422, 503},
    ("GET", "/api/errors/{record_id}/annotation"): {200, 404, 422, 503},
    ("GET", "/api/errors/{record_id}/related"): {200, 404, 422, 503},
    ("POST", "/api/import"): {200, 401, 403, 409, 413, 422, 429, 503},
    ("POST", "/chatops/slack"): {200, 401, 413, 422, 429, 503},
    ("POST", "/chatops/mattermost"): {200, 401, 403, 413, 422, 429, 503},
}
HTTP_METHODS = {"get", "put", "post", "delete", "patch", "head", "options", "trace"}


@pytest.fixture
def document(client: httpx.Client) -> dict[str, Any]:
    response = client.get("/openapi.json")
    assert response.status_code == 200
    return dict(response.json())


def operations(document: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if method in HTTP_METHODS:
                yield method.upper(), path, operation


def references(node: Any, where: str = "#") -> Iterator[tuple[str, str]]:
    """Every ``$ref`` in ``node``, with where it stands."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield where, value
            else:
                yield from references(value, f"{where}/{key}")
    elif isinstance(node, list):
        for index, item in enumerate(node):
            yield from references(item, f"{where}/{index}")


def resolve(document: dict[str, Any], reference: str) -> Any:
    """The node a local reference (a JSON Pointer from the document's root) names."""
    assert reference.startswith("#/"), f"not a reference within the document: {reference}"
    node: Any = document
    for token in reference.removeprefix("#/").split("/"):
        token = token.replace("~1", "/").replace("~0", "~")
        node = node[int(token)] if isinstance(node, list) else node[token]
    return node


def body_schema(document: dict[str, Any], path: str, media_type: str) -> dict[str, Any]:
    schema = document["paths"][path]["post"]["requestBody"]["content"][media_type]["schema"]
    resolved = resolve(document, schema["$ref"]) if "$ref" in schema else schema
    return dict(resolved)


def test_every_reference_in_the_document_resolves(document: dict[str, Any]) -> None:
    found = list(references(document))
    assert len(found) > 50  # the walk reaches into the operations and the components
    unresolved = []
    for where, reference in found:
        try:
            resolve(document, reference)
        except (AssertionError, KeyError, IndexError, ValueError):
            unresolved.append(f"{where}: {reference}")
    assert unresolved == []


def test_a_batchs_cases_are_the_documented_compute_request(document: dict[str, Any]) -> None:
    cases = body_schema(document, "/api/compute/batch", "application/json")["properties"]["cases"]
    case = resolve(document, cases["items"]["$ref"])
    single = body_schema(document, "/api/compute", "application/json")
    assert case["properties"] == single["properties"]
    assert {"operation", "errorId", "rule"} <= set(case["properties"])


def test_every_status_each_route_answers_with_is_documented(document: dict[str, Any]) -> None:
    documented = {
        (method, path): {int(status) for status in operation["responses"]}
        for method, path, operation in operations(document)
    }
    assert set(documented) == set(ROUTE_STATUSES)  # a new route needs its row here
    missing = {
        operation: sorted(statuses - documented[operation])
        for operation, statuses in ROUTE_STATUSES.items()
        if statuses - documented[operation]
    }
    assert missing == {}


def test_a_slug_shared_by_several_records_is_a_documented_conflict(
    document: dict[str, Any],
) -> None:
    conflict = document["paths"]["/api/errors/by-slug/{slug}"]["get"]["responses"]["409"]
    assert "share the slug" in conflict["description"]
    schema = conflict["content"]["application/problem+json"]["schema"]
    assert resolve(document, schema["$ref"])["title"] == "Problem"


def test_the_chat_commands_document_their_forms_and_what_they_check(
    document: dict[str, Any], client: httpx.Client
) -> None:
    slack = document["paths"]["/chatops/slack"]["post"]
    mattermost = document["paths"]["/chatops/mattermost"]["post"]
    for operation in (slack, mattermost):
        assert list(operation["requestBody"]["content"]) == [FORM]
        assert "bearer" not in repr(operation["responses"]).lower()
    slack_form = body_schema(document, "/chatops/slack", FORM)
    assert {"text", "command"} <= set(slack_form["properties"])
    headers = {p["name"] for p in slack["parameters"] if p["in"] == "header" and p["required"]}
    assert headers == {"X-Slack-Request-Timestamp", "X-Slack-Signature"}
    assert "Slack signature" in slack["responses"]["401"]["description"]
    assert "403" not in slack["responses"]  # a signature is valid or it is not
    form = body_schema(document, "/chatops/mattermost", FORM)
    assert {"token", "text", "command"} <= set(form["properties"])
    assert form["required"] == ["token"]
    assert "token" in mattermost["responses"]["401"]["description"]
    assert "token" in mattermost["responses"]["403"]["description"]
    # The documented fields are the ones read: a form of just those is answered.
    fields = {"token": MATTERMOST_TOKENS[0], "text": "help", "command": "/errata"}
    assert set(fields) <= set(form["properties"])
    assert client.post("/chatops/mattermost", data=fields).status_code == 200
    refused = client.post("/chatops/mattermost", data={**fields, "token": "nope"})
    assert str(refused.status_code) in mattermost["responses"]


def test_every_list_a_route_reads_from_the_store_comes_a_page_at_a_time(
    document: dict[str, Any],
) -> None:
    """A list whose length grows with the catalog is asked for with ``limit`` and ``cursor``,
    and its answer says where the next page starts."""
    lists = []
    for method, path, operation in operations(document):
        schema = operation["responses"]["200"].get("content", {}).get("application/json", {})
        answer = (
            resolve(document, schema["schema"]["$ref"])
            if "$ref" in schema.get("schema", {})
            else {}
        )
        if method != "GET" or not any(
            field.get("type") == "array" for field in answer.get("properties", {}).values()
        ):
            continue
        lists.append(path)
        asked = {parameter["name"] for parameter in operation.get("parameters", [])}
        assert {"limit", "cursor"} <= asked, path
        assert "nextCursor" in answer["properties"], path
    assert {"/api/errors", "/api/errors/{record_id}/related"} <= set(lists)


def _keywords(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            yield key
            if key != "properties":  # its keys are field names, not keywords
                yield from _keywords(value)
            else:
                for field in value.values():
                    yield from _keywords(field)
    elif isinstance(node, list):
        for item in node:
            yield from _keywords(item)


def test_the_schemas_bound_numbers_in_json_schemas_own_words(document: dict[str, Any]) -> None:
    """pydantic's ``le`` and ``ge`` mean nothing to a JSON Schema reader: a bound written
    so is no bound, and a tool generating bodies sends numbers the server refuses."""
    found = set(_keywords(document["components"]["schemas"]))
    assert "maximum" in found
    assert not found & {"le", "ge", "lt", "gt"}
