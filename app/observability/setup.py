"""Wire metrics, request ids and access logs into an app."""

from __future__ import annotations

from functools import partial

from fastapi import FastAPI, Response

from app.observability.metrics import render
from app.observability.middleware import RequestContext
from app.observability.routes import template_for


def install(app: FastAPI) -> None:
    """Add ``GET /metrics`` and the request-context middleware (call it after every other
    ``add_middleware``, so that it is the outermost and sees every answer)."""

    @app.get("/metrics", include_in_schema=False)
    def metrics() -> Response:
        body, content_type = render()
        return Response(body, media_type=content_type)

    app.add_middleware(RequestContext, resolve=partial(template_for, app))
