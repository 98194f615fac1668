"""What a slash command's text asks for: help, a record, a computation, or a paste to match.

``/errata [share] help | <record id or slug> | pad shape=[7] dtype=int4 op=copy_gmem_to_smem |
<paste>``. The same grammar serves Slack and Mattermost.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from app.records.schema import RECORD_ID_PATTERN

DEFAULT_SLASH = "/errata"
COMPUTE_VERBS = frozenset({"pad", "fix", "compute"})
MAX_PASTE_CHARS = 40_000
"""Slack's own message limit; tracebacks end with their error, so a longer paste keeps its end."""

# Names people type → the compute request's fields.
COMPUTE_KEYS = {
    "shape": "shape",
    "dtype": "dtype",
    "op": "operation",
    "operation": "operation",
    "target": "targetDtype",
    "targetdtype": "targetDtype",
    "jax": "jaxVersion",
    "jaxversion": "jaxVersion",
    "also": "alsoJaxVersions",
    "alsojaxversions": "alsoJaxVersions",
    "semantics": "loweringSemantics",
    "loweringsemantics": "loweringSemantics",
    "rule": "rule",
    "id": "errorId",
    "errorid": "errorId",
}
_SETTING = re.compile(r"(?P<key>[A-Za-z_]\w*)=(?P<value>\[[^\]]*\]|\([^)]*\)|\S+)")
_RECORD_KEY = re.compile(RECORD_ID_PATTERN)


@dataclass(frozen=True)
class Help:
    pass


@dataclass(frozen=True)
class Lookup:
    key: str


@dataclass(frozen=True)
class Compute:
    fields: dict[str, str] = field(default_factory=dict)
    unknown: tuple[str, ...] = ()


@dataclass(frozen=True)
class Paste:
    text: str
    clipped: bool = False


Command = Help | Lookup | Compute | Paste


@dataclass(frozen=True)
class Parsed:
    command: Command
    share: bool


def parse_command(text: str) -> Parsed:
    """Read the command; a leading ``share`` asks for an answer the whole channel sees."""
    first, rest = _first_word(text.strip())
    share = first.lower() == "share"
    return Parsed(_command(rest if share else text.strip()), share)


def _command(text: str) -> Command:
    words = text.split()
    if not words or (len(words) == 1 and words[0].lower() in {"help", "?"}):
        return Help()
    if len(words) == 1 and _RECORD_KEY.fullmatch(words[0]):
        return Lookup(words[0])
    verb, settings = _first_word(text)
    if verb.lower() in COMPUTE_VERBS and _SETTING.match(settings):
        return _compute(settings)
    if len(text) > MAX_PASTE_CHARS:
        tail = text[-MAX_PASTE_CHARS:]
        return Paste(tail[tail.find("\n") + 1 :], clipped=True)
    return Paste(text)


def _first_word(text: str) -> tuple[str, str]:
    """The first word and the rest, split at any whitespace: a paste may follow on a new line."""
    words = text.split(None, 1)
    if not words:
        return "", ""
    return words[0], words[1].strip() if len(words) > 1 else ""


def _compute(settings: str) -> Compute:
    fields: dict[str, str] = {}
    unknown: list[str] = []
    consumed = 0
    for found in _SETTING.finditer(settings):
        unknown += settings[consumed : found.start()].split()
        consumed = found.end()
        name = COMPUTE_KEYS.get(found["key"].lower())
        if name is None:
            unknown.append(found.group())
        else:
            fields[name] = found["value"]
    unknown += settings[consumed:].split()
    return Compute(fields, tuple(unknown))
