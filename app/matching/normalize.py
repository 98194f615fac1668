"""Turn a raw paste into plain traceback text, remembering where each line came from.

People paste from terminals (ANSI colours), notebooks, dashboards (HTML), chat (Slack
escapes and links, Markdown quotes and fences) and log collectors (timestamps, ``[stderr]``,
pytest's ``E   ``). The grammar and the patterns only ever see the cleaned lines; every
cleaned line keeps the number of the pasted line it came from, so a match can point back
at what the user actually pasted.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

MAX_PASTE_BYTES = 1 << 20
# Share of control characters above which a paste is treated as binary, not text.
MAX_CONTROL_SHARE = 0.1


class PasteError(ValueError):
    """A paste that cannot be read at all."""


class PasteTooLarge(PasteError):
    """The paste is over ``MAX_PASTE_BYTES`` of UTF-8."""


class UnreadablePaste(PasteError):
    """The paste is empty, or binary rather than text."""


@dataclass(frozen=True)
class NormalizedPaste:
    """Cleaned lines, and for each the 1-based number of the pasted line it came from."""

    lines: tuple[str, ...]
    origins: tuple[int, ...]
    original: tuple[str, ...]

    def original_line_number(self, index: int) -> int:
        return self.origins[index]

    def original_line(self, index: int) -> str:
        return self.original[self.origins[index] - 1]


_LINE_BREAK = re.compile(r"\r\n|[\n\r\u2028\u2029]")
_ANSI = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor movement
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC: titles, hyperlinks
    r"|\x1b[@-_]"  # other two-byte escapes
    r"|(?:\^\[|←)?\[(?:\d{1,3};)*\d{1,3}m"  # colour codes whose ESC was lost in copying
)
_SURROGATE = re.compile("[\ud800-\udfff]")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ufffd]")
_INVISIBLE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u200b-\u200d\u2060\ufeff]")

_HTML_TAG_NAMES = (
    r"a|b|i|u|em|strong|span|div|p|pre|code|br|hr|li|ul|ol|table|tbody|thead|tr|td|th|html"
    r"|body|head|font|small|tt|kbd|samp|blockquote|h[1-6]|section|article|details|summary"
    r"|label|img|meta|link|title"
)
_HTML_TAG = re.compile(rf"</?(?:{_HTML_TAG_NAMES})\b[^<>]*>", re.IGNORECASE)
_HTML_LINE_BREAK = re.compile(
    r"<br\s*/?>|</(?:p|div|pre|li|tr|h[1-6]|blockquote|table)\s*>", re.IGNORECASE
)
_HTML_DROPPED = re.compile(r"<(script|style)\b.*?</\1\s*>", re.IGNORECASE)
_ENTITY = re.compile(r"&(?:[a-zA-Z]{2,8}|#\d{1,7}|#[xX][0-9a-fA-F]{1,6});")
_SLACK_LINK = re.compile(r"<((?:https?|mailto|ftp|file)://?[^|<>\s]*)(?:\|([^<>]*))?>")
# Slack ``*bold*`` and Markdown ``**bold**``, but not ``a * b`` or ``x**2``.
_BOLD = re.compile(r"(?<![\w*])(\*\*?)(?=\S)([^*\n]*?\S)\1(?![\w*])")

# Prefixes that loggers and tools put before each line; stripped repeatedly, in any order.
_PREFIXES = (
    # ISO timestamps, optionally bracketed, with an optional level: "2026-08-27T09:53:25.647Z"
    re.compile(
        r"^\[?\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?\]?"
        r"(?:\s+\[?(?:TRACE|DEBUG|INFO|NOTICE|WARNING|WARN|ERROR|CRITICAL|FATAL)\]?)?"
        r"(?:\s*[:|-]\s|\s+|$)"
    ),
    # glog / absl: "E0827 09:53:25.647000 12345 file.cc:42] "
    re.compile(r"^[IWEF]\d{4} \d{2}:\d{2}:\d{2}\.\d+\s+\d+ [\w./-]+:\d+\] "),
    # Python logging's default format: "ERROR:root:"
    re.compile(r"^(?:DEBUG|INFO|WARNING|ERROR|CRITICAL):[\w.]*:"),
    re.compile(r"^\[(?:stderr|stdout)\]\s?", re.IGNORECASE),
    re.compile(r"^(?:stderr|stdout)\s*[:|]\s?", re.IGNORECASE),
    # Ray workers: "(pid=1234) " and "(MyActor pid=1234, ip=10.0.0.1) "
    re.compile(r"^\((?:[\w.-]+ )?pid=\d+(?:, ip=[\d.]+)?\)\s"),
    # pytest's failure lines
    re.compile(r"^E(?: {3}|\t)"),
    re.compile(r"^E$"),
    # Markdown and e-mail quotes, but not the Python prompt ">>> "
    re.compile(r"^\s*>(?!>>)\s?"),
)
_FENCE = re.compile(r"^\s*(?:```|~~~)[\w+.-]*\s*$")
_INLINE_FENCE = re.compile(r"^(\s*)```|```\s*$")
_INLINE_CODE = re.compile(r"^`([^`]+)`$")


def normalize(paste: str | bytes) -> NormalizedPaste:
    """Clean a paste for the grammar. Raises ``PasteTooLarge`` or ``UnreadablePaste``."""
    text = _decode(paste)
    original = tuple(_LINE_BREAK.split(text))
    is_html = _HTML_TAG.search(text) is not None
    lines: list[str] = []
    origins: list[int] = []
    for number, raw in enumerate(original, start=1):
        for piece in _html_lines(raw) if is_html else (raw,):
            line = _clean_line(piece, is_html)
            if line is not None:
                lines.append(line)
                origins.append(number)
    return NormalizedPaste(tuple(lines), tuple(origins), original)


def _decode(paste: str | bytes) -> str:
    """Check size and readability; return valid UTF-8 text (lone surrogates replaced)."""
    if isinstance(paste, str):
        paste = _SURROGATE.sub("\ufffd", paste).encode("utf-8")
    if len(paste) > MAX_PASTE_BYTES:
        raise PasteTooLarge(f"paste is {len(paste)} bytes; the limit is {MAX_PASTE_BYTES}")
    if b"\x00" in paste:
        raise UnreadablePaste("paste contains NUL bytes; it looks like binary data")
    text = paste.decode("utf-8", "replace")
    visible = _ANSI.sub("", text)
    if not visible.strip():
        raise UnreadablePaste("paste is empty")
    if len(_CONTROL.findall(visible)) > MAX_CONTROL_SHARE * len(visible):
        raise UnreadablePaste("paste is mostly non-printable characters; it looks binary")
    return text


def _html_lines(raw: str) -> list[str]:
    """Split one pasted line of HTML at the tags that render as line breaks."""
    return _HTML_LINE_BREAK.split(_HTML_DROPPED.sub("", raw))


def _clean_line(line: str, is_html: bool) -> str | None:
    """One cleaned line, or ``None`` for a line that is only markup (a code fence)."""
    line = _ANSI.sub("", line)
    if is_html:
        line = _HTML_TAG.sub("", line)
    line = _SLACK_LINK.sub(lambda m: m[2] or m[1], line)
    if _ENTITY.search(line):
        line = html.unescape(line)
    line = _INVISIBLE.sub("", line.replace("\u00a0", " ")).expandtabs(4).rstrip()
    line = _strip_prefixes(line)
    if _FENCE.match(line):
        return None
    line = _INLINE_FENCE.sub(r"\1", line)
    line = _INLINE_CODE.sub(r"\1", line)
    return _BOLD.sub(r"\2", line).rstrip()


def _strip_prefixes(line: str) -> str:
    for _ in range(8):  # prefixes nest ("> [stderr] E   ..."), but never deeply
        for prefix in _PREFIXES:
            stripped = prefix.sub("", line, count=1)
            if stripped != line:
                line = stripped
                break
        else:
            return line
    return line
