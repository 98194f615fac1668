"""Which route template a raw path belongs to, and the methods it answers.

Read from the router's own routes, so that routes left out of the OpenAPI document (the web
pages, ``/metrics``, the static files) count too; built once per app, on first use.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import fastapi.routing
from fastapi import FastAPI
from starlette.routing import Mount


@dataclass(frozen=True)
class PathTemplate:
    regex: re.Pattern[str]
    template: str
    methods: frozenset[str]


def every_route(app: FastAPI) -> Iterable[Any]:
    """Every route the router tries, in its order. FastAPI releases that keep included
    routers whole walk them with ``iter_route_contexts``; older ones list them flat."""
    walk = getattr(fastapi.routing, "iter_route_contexts", None)
    return walk(app.routes) if walk is not None else app.routes


def _template(route: Any) -> PathTemplate | None:
    regex = getattr(route, "path_regex", None)
    path = getattr(route, "path", None)
    if not (isinstance(regex, re.Pattern) and isinstance(path, str)):
        return None
    if isinstance(getattr(route, "original_route", route), Mount):
        # a mount answers every path under it, whatever the method: "/static/{path}"
        return PathTemplate(regex, getattr(route, "path_format", path), frozenset())
    methods = getattr(route, "methods", None) or ()
    return PathTemplate(regex, path, frozenset(method.upper() for method in methods))


def path_templates(app: FastAPI) -> list[PathTemplate]:
    templates: list[PathTemplate] | None = getattr(app.state, "path_templates", None)
    if templates is None:
        templates = [found for route in every_route(app) if (found := _template(route)) is not None]
        app.state.path_templates = templates
    return templates


def template_for(app: FastAPI, path: str) -> str | None:
    for candidate in path_templates(app):
        if candidate.regex.match(path):
            return candidate.template
    return None


def methods_for(app: FastAPI, path: str) -> list[str]:
    methods: set[str] = set()
    for candidate in path_templates(app):
        if candidate.regex.match(path):
            methods |= candidate.methods
    return sorted(methods)
