"""Content negotiation: the API's JSON or its Markdown; a problem as JSON or as a page."""

from __future__ import annotations

_JSON_RANGES = ("application/json", "application/*", "*/*")


def prefers_markdown(accept: str | None) -> bool:
    """True when Accept names text/markdown at least as highly as JSON.

    A bare ``*/*`` (curl, most clients) keeps JSON: Markdown is for callers that ask for it.
    """
    if not accept or "markdown" not in accept.lower():  # the usual case, and it is asked often
        return False
    weights = _weights(accept)
    markdown = weights.get("text/markdown", 0.0)
    return markdown > 0 and markdown >= max(weights.get(kind, 0.0) for kind in _JSON_RANGES)


def prefers_html(accept: str | None) -> bool:
    """True when Accept names text/html above JSON: a browser's, not curl's ``*/*``."""
    if not accept or "html" not in accept.lower():
        return False
    weights = _weights(accept)
    html = weights.get("text/html", 0.0)
    return html > 0 and html > max(weights.get(kind, 0.0) for kind in _JSON_RANGES)


def _weights(accept: str) -> dict[str, float]:
    weights: dict[str, float] = {}
    for item in accept.split(","):
        media, *params = (part.strip() for part in item.split(";"))
        quality = 1.0
        for param in params:
            name, _, value = param.partition("=")
            if name.strip().lower() == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        if media:
            weights[media.lower()] = max(weights.get(media.lower(), 0.0), quality)
    return weights
