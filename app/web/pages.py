"""Rendering HTML pages: one Jinja environment, escaping everything, and the headers every
page is sent with."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from starlette.responses import HTMLResponse

from app.answers.cards import step_heading
from app.answers.links import RELATIVE
from app.answers.record_text import field_label, readable_message
from app.rendering.text import clip_line

WEB_DIR = Path(__file__).resolve().parent
STATIC_DIR = WEB_DIR / "static"
# Swagger UI's script and stylesheet, as the fastapi-offline package ships them.
SWAGGER_UI_DIR = Path(str(files("fastapi_offline") / "static"))

# No inline script or style anywhere, so the policy can forbid both.
CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",  # Swagger UI's stylesheet draws its icons as data: URLs
        "connect-src 'self'",
        "form-action 'self'",
        "base-uri 'none'",
        "frame-ancestors 'none'",
    )
)
# X-Content-Type-Options is on every response already (app/api/headers.py).
SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
}


@cache
def environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(WEB_DIR / "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["clip_line"] = clip_line
    env.filters["paste_summary"] = paste_summary
    env.filters["added_lines"] = added_lines
    env.filters["record_url"] = RELATIVE.record
    env.filters["readable_message"] = readable_message
    env.globals["step_heading"] = step_heading
    env.filters["field_label"] = field_label
    return env


def added_lines(diff: str) -> str:
    """The code a diff adds, what its copy button copies: the changed lines as they read."""
    return "\n".join(line[1:] for line in diff.splitlines() if line.startswith("+"))


def paste_summary(paste: str) -> str:
    """The paste in one line, for its folded box: its length and its last line of text,
    where a traceback states its error."""
    lines = [line for line in paste.splitlines() if line.strip()]
    last = clip_line(lines[-1], 90) if lines else ""
    return f"{len(lines)} lines, ending {last}" if len(lines) > 1 else last


def page(template: str, status: int = 200, **context: Any) -> HTMLResponse:
    html = environment().get_template(template).render(**context)
    return HTMLResponse(html, status_code=status, headers=SECURITY_HEADERS)


def problem_page(
    status: int, title: str, detail: str, headers: Mapping[str, str] | None = None
) -> HTMLResponse:
    """A problem as a browser shows it: the error page, with the problem's status."""
    response = page("error.html", status, title=title, detail=detail)
    response.headers.update(headers or {})
    return response
