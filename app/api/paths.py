"""Which documented path template a raw path belongs to, and the methods it answers.

Read from the OpenAPI document rather than the router's internals, so it holds whatever
shape the framework gives its route tree; built once per app, on first use.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from fastapi import FastAPI
from starlette.routing import compile_path

HTTP_METHODS = frozenset({"get", "put", "post", "delete", "options", "head", "patch", "trace"})


@dataclass(frozen=True)
class PathTemplate:
    regex: re.Pattern[str]
    template: str
    methods: frozenset[str]


def path_templates(app: FastAPI) -> list[PathTemplate]:
    templates: list[PathTemplate] | None = getattr(app.state, "path_templates", None)
    if templates is None:
        templates = [
            PathTemplate(
                compile_path(template)[0],
                template,
                frozenset(method.upper() for method in item if method in HTTP_METHODS),
            )
            for template, item in app.openapi().get("paths", {}).items()
        ]
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
