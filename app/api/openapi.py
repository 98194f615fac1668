"""The OpenAPI document names the problems each operation can answer with, as they are sent:
``application/problem+json`` bodies, in place of FastAPI's default 422 schema."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from app.api.limits import is_expensive
from app.api.problems import PROBLEM_JSON

PROBLEM_SCHEMA: dict[str, Any] = {
    "title": "Problem",
    "description": "RFC 9457 problem details.",
    "type": "object",
    "required": ["type", "title", "status", "detail"],
    "properties": {
        "type": {"type": "string"},
        "title": {"type": "string"},
        "status": {"type": "integer"},
        "detail": {"type": "string"},
        "instance": {"type": "string"},
        "errors": {
            "type": "array",
            "items": {"type": "object"},
            "description": "One entry per offending field or document.",
        },
    },
}
PROBLEM_REF = {"$ref": "#/components/schemas/Problem"}
_RETRY_AFTER = {"description": "Seconds to wait.", "schema": {"type": "integer"}}
# The Retry-After each problem status carries: always (True) or sometimes (False).
_RETRY_AFTER_SENT = {409: False, 429: True, 503: False}
_DESCRIPTIONS = {
    401: "No bearer token",
    403: "A bearer token that may not write",
    404: "No such record, rule or route",
    413: "Body or paste over the size limit",
    422: "Invalid input: the detail names the field",
    429: "Too many expensive requests from this client",
    503: "The database is unreachable, or every connection to it is in use (Retry-After)",
}
# FastAPI's own validation-error schemas, unused once every 422 is a problem.
_FASTAPI_422_SCHEMAS = ("HTTPValidationError", "ValidationError")


def problems_for(method: str, path: str, operation: dict[str, Any]) -> list[int]:
    """The problem statuses an operation can answer with, from what it takes and where it is."""
    statuses = []
    if operation.get("security"):
        statuses += [401, 403]
    if "{" in path or path.startswith("/api/compute"):
        statuses.append(404)
    if "requestBody" in operation:
        statuses.append(413)
    if operation.get("parameters") or "requestBody" in operation:
        statuses.append(422)
    if is_expensive(method.upper(), path):
        statuses.append(429)
    if path != "/healthz":
        statuses.append(503)
    return statuses


def problem_responses(descriptions: Mapping[int, str]) -> dict[int | str, dict[str, Any]]:
    """A route's ``responses`` for the problems it answers with beyond those every route of
    its kind does (``problems_for``), or that it answers with for a reason of its own: each
    status with what it means there. The document describes them as problem+json bodies,
    with their headers, as it does every problem."""
    return {
        status: {"description": text, "content": {PROBLEM_JSON: {"schema": PROBLEM_REF}}}
        for status, text in descriptions.items()
    }


def _problem(status: int, description: str) -> dict[str, Any]:
    response: dict[str, Any] = {
        "description": description,
        "content": {PROBLEM_JSON: {"schema": PROBLEM_REF}},
    }
    if status in _RETRY_AFTER_SENT:
        required = {"required": True} if _RETRY_AFTER_SENT[status] else {}
        response["headers"] = {"Retry-After": {**_RETRY_AFTER, **required}}
    return response


def _declared_problem(response: Any) -> bool:
    return isinstance(response, dict) and PROBLEM_JSON in response.get("content", {})


def _add_operation_problems(method: str, path: str, operation: dict[str, Any]) -> None:
    """The problems every route of its kind answers with, and those it declares itself (whose
    descriptions it keeps), as problem+json."""
    responses: dict[str, Any] = operation["responses"]
    declared = {code for code, response in responses.items() if _declared_problem(response)}
    general = {str(status) for status in problems_for(method, path, operation)}
    for code in sorted(declared | general):
        text = responses[code]["description"] if code in declared else _DESCRIPTIONS[int(code)]
        responses[code] = _problem(int(code), text)


def _hoist_definitions(document: dict[str, Any]) -> None:
    """Move the ``$defs`` of schemas written into operations (bodies an endpoint reads itself)
    into the document's components, where their ``#/$defs/...`` references are resolved
    from: ``#`` is the document, not the schema that holds them."""
    schemas = document.setdefault("components", {}).setdefault("schemas", {})

    def hoist(node: Any) -> Any:
        if isinstance(node, list):
            return [hoist(item) for item in node]
        if not isinstance(node, dict):
            return node
        for name, schema in node.pop("$defs", {}).items():
            schema = hoist(schema)
            if schemas.setdefault(name, schema) != schema:
                raise ValueError(f"Two schemas named {name!r} in the OpenAPI document")
        reference = node.get("$ref")
        if isinstance(reference, str) and reference.startswith("#/$defs/"):
            node["$ref"] = "#/components/schemas/" + reference.removeprefix("#/$defs/")
        return {key: hoist(value) for key, value in node.items()}

    document["paths"] = hoist(document.get("paths", {}))


def add_problems(document: dict[str, Any]) -> dict[str, Any]:
    _hoist_definitions(document)
    for path, item in document.get("paths", {}).items():
        for method, operation in item.items():
            if isinstance(operation, dict) and "responses" in operation:
                _add_operation_problems(method, path, operation)
    schemas = document.setdefault("components", {}).setdefault("schemas", {})
    schemas["Problem"] = PROBLEM_SCHEMA
    text = repr(document["paths"])
    for name in _FASTAPI_422_SCHEMAS:
        if f"#/components/schemas/{name}'" not in text:
            schemas.pop(name, None)
    return document


def document_problems(app: FastAPI) -> None:
    """Make ``app.openapi()`` describe the problems; built once, on first use."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = add_problems(
                get_openapi(
                    title=app.title,
                    version=app.version,
                    openapi_version=app.openapi_version,
                    summary=app.summary,
                    description=app.description,
                    routes=app.routes,
                    tags=app.openapi_tags,
                    servers=app.servers,
                )
            )
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
