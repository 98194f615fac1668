"""The OpenAPI document names the problems each operation can answer with, as they are sent:
``application/problem+json`` bodies, in place of FastAPI's default 422 schema."""

from __future__ import annotations

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
_RETRY_AFTER = {"description": "Seconds to wait.", "schema": {"type": "integer"}}
_DESCRIPTIONS = {
    401: "No bearer token",
    403: "A bearer token that may not write",
    404: "No such record, rule or route",
    413: "Body or paste over the size limit",
    422: "Invalid input: the detail names the field",
    429: "Too many expensive requests from this client",
    503: "The database is unreachable",
}
# Routes that check a signature or token of their own rather than a declared bearer scheme.
SIGNED_PREFIXES = ("/chatops/",)
# FastAPI's own validation-error schemas, unused once every 422 is a problem.
_FASTAPI_422_SCHEMAS = ("HTTPValidationError", "ValidationError")


def problems_for(method: str, path: str, operation: dict[str, Any]) -> list[int]:
    """The problem statuses an operation can answer with, from what it takes and where it is."""
    statuses = []
    if operation.get("security") or path.startswith(SIGNED_PREFIXES):
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


def _problem(status: int) -> dict[str, Any]:
    response: dict[str, Any] = {
        "description": _DESCRIPTIONS[status],
        "content": {PROBLEM_JSON: {"schema": {"$ref": "#/components/schemas/Problem"}}},
    }
    if status == 429:
        response["headers"] = {"Retry-After": {**_RETRY_AFTER, "required": True}}
    elif status == 503:
        response["headers"] = {"Retry-After": _RETRY_AFTER}
    return response


def add_problems(document: dict[str, Any]) -> dict[str, Any]:
    for path, item in document.get("paths", {}).items():
        for method, operation in item.items():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            for status in problems_for(method, path, operation):
                operation["responses"][str(status)] = _problem(status)
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
