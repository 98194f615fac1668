"""Links into the web pages: absolute ones for answers read outside this service (chat,
bots), relative ones (``RELATIVE``) for the pages themselves."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote, urlencode


@dataclass(frozen=True)
class Links:
    base: str

    @classmethod
    def choose(cls, configured: str | None, request_root: str) -> Links:
        """The configured public URL wins: behind a proxy the request's own URL is internal."""
        return cls((configured or request_root).rstrip("/"))

    def record(self, key: str) -> str:
        return f"{self.base}/errors/{quote(key, safe='')}"

    def compute(self, **fields: object) -> str:
        """The compute page's verdict for these values, which lists every fix."""
        given = {name: value for name, value in fields.items() if value is not None}
        return f"{self.base}/compute?{urlencode(given)}#verdict"

    def search(self, **fields: object) -> str:
        """The records page for these filters (``q``, ``slug``)."""
        return f"{self.base}/search?{urlencode(fields)}"

    def match(self, **fields: object) -> str:
        """A paste's result, matched again from the fields (the web pages' ``paste=``)."""
        given = {name: value for name, value in fields.items() if value is not None}
        return f"{self.base}/match?{urlencode(given)}#match"


RELATIVE = Links("")
"""Links from one of this service's pages to another: no scheme or host."""
