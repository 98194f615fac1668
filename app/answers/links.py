"""Links into the web pages: absolute ones for answers read outside this service (chat,
bots), relative ones (``RELATIVE``) for the pages themselves, and the commands that show
the same in a terminal (``COMMANDS``), for answers made without a server."""

from __future__ import annotations

import shlex
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


# The compute request's fields, as ``errata compute`` names its options.
_COMPUTE_OPTIONS = {
    "operation": "operation",
    "shape": "shape",
    "dtype": "dtype",
    "targetDtype": "target-dtype",
    "jaxVersion": "jax-version",
    "alsoJaxVersions": "also-in",
    "loweringSemantics": "lowering-semantics",
}


class _Commands(Links):
    """Where a card's links lead without a server, as the commands that print the same: a
    record's page is ``errata show``, the compute page's verdict (every fix) is
    ``errata compute`` with the same values; a link out of errata (JAX's source) stays."""

    def record(self, key: str) -> str:
        return f"errata show {shlex.quote(key)}"

    def compute(self, **fields: object) -> str:
        options = [
            f"--{_COMPUTE_OPTIONS[name]} {shlex.quote(str(value))}"
            for name, value in fields.items()
            if value is not None
        ]
        return " ".join(["errata compute", *options])


COMMANDS = _Commands(base="")
