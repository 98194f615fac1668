"""Errors that carry their HTTP status, raised by services and rendered as RFC 9457 problems."""

from __future__ import annotations

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


class ServiceUnavailable(ProblemError):
    status = 503
    title = "Service unavailable"


def invalid_field(field: str, message: str) -> InvalidInput:
    """A 422 naming the request field at fault."""
    return InvalidInput(f"{field}: {message}", errors=[{"field": field, "message": message}])
