"""Errors that carry their HTTP status, raised by services and rendered as RFC 9457 problems."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


class ProblemError(Exception):
    """Base for every error a client caused or should know about."""

    status = 400
    title = "Bad request"

    def __init__(
        self,
        detail: str,
        *,
        errors: list[dict[str, Any]] | None = None,
        retry_after: int | None = None,
    ) -> None:
        super().__init__(detail)
        self.detail = detail
        self.errors = errors or []
        self.retry_after = retry_after  # seconds, sent as Retry-After


class NotFound(ProblemError):
    status = 404
    title = "Not found"


class InvalidInput(ProblemError):
    status = 422
    title = "Invalid input"


class PayloadTooLarge(ProblemError):
    status = 413
    title = "Payload too large"


class Unauthorized(ProblemError):
    status = 401
    title = "Unauthorized"


class Forbidden(ProblemError):
    status = 403
    title = "Forbidden"


class WritesBusy(ProblemError):
    """Another write held the store too long: the client may retry, the database is fine."""

    status = 409
    title = "Conflict"


class SharedSlug(ProblemError):
    """Several live records have the slug asked for: the dataset's slug is a message's first
    50 characters, and messages alike share one; each record is asked for by its id."""

    status = 409
    title = "Conflict"

    def __init__(self, slug: str, records: int) -> None:
        super().__init__(
            f"{records} records share the slug {slug!r}: ask for one by its id, or list them"
            f" (GET /api/errors?slug={slug})."
        )


class ServiceUnavailable(ProblemError):
    status = 503
    title = "Service unavailable"


def invalid_field(field: str, message: str) -> InvalidInput:
    """A 422 naming the request field at fault."""
    return InvalidInput(f"{field}: {message}", errors=[{"field": field, "message": message}])


# Where FastAPI says a value came from: not part of the field's name for the client.
_REQUEST_PARTS = frozenset({"body", "query", "path", "header"})


def field_errors(errors: Iterable[Mapping[str, Any]], prefix: str = "") -> list[dict[str, str]]:
    """Pydantic's errors as ``{"field", "message"}``: the field dotted (after ``prefix``,
    such as ``cases.3.``), the message without pydantic's ``Value error, ``."""
    fields = []
    for error in errors:
        parts = [str(part) for part in error["loc"]]
        if parts and parts[0] in _REQUEST_PARTS:
            parts = parts[1:] or parts
        field = (prefix + ".".join(parts)).rstrip(".")
        fields.append({"field": field, "message": error["msg"].removeprefix("Value error, ")})
    return fields


def fields_detail(fields: list[dict[str, str]], most: int | None = 5) -> str:
    """The field errors (the first ``most``) as one line: ``shape: Field required; …``."""
    return "; ".join(
        f"{item['field']}: {item['message']}" if item["field"] else item["message"]
        for item in fields[:most]
    )
