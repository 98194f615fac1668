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
from typing import NamedTuple

from app.matching.scan import line_starts, lines_holding

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

_HTML_TAG_NAMES = "|".join(
    (
        *("a", "b", "i", "u", "em", "strong", "span", "div", "p", "pre", "code", "br", "hr"),
        *("li", "ul", "ol", "table", "tbody", "thead", "tr", "td", "th", "html", "body"),
        *("head", "font", "small", "tt", "kbd", "samp", "blockquote", "h[1-6]", "section"),
        *("article", "details", "summary", "label", "img", "meta", "link", "title"),
    )
)
_HTML_TAG = re.compile(rf"</?(?:{_HTML_TAG_NAMES})\b[^<>]*>", re.IGNORECASE)
# Characters searched for HTML at one go (see ``_holds_html``), and where a tag must end.
HTML_SEARCH_PIECE = 1 << 16
_TAG_END = re.compile("[<>]")
_HTML_LINE_BREAK = re.compile(
    r"<br\s*/?>|</(?:p|div|pre|li|tr|h[1-6]|blockquote|table)\s*>", re.IGNORECASE
)
_HTML_DROPPED = re.compile(r"<(script|style)\b.*?</\1\s*>", re.IGNORECASE)
_ENTITY = re.compile(r"&(?:[a-zA-Z]{2,8}|#\d{1,7}|#[xX][0-9a-fA-F]{1,6});")
_SLACK_LINK = re.compile(r"<((?:https?|mailto|ftp|file)://?[^|<>\s]*)(?:\|([^<>]*))?>")
# Slack ``*bold*`` and Markdown ``**bold**``, opened where a word may start, but not
# ``a * b``, ``x**2`` or C++'s ``!*(it - 1) || !*(it - 2)`` in an assert's message.
_BOLD = re.compile(r"(?<![^\s(\[{\"'>|~])(\*\*?)(?=\S)([^*\n]*?\S)\1(?![\w*])")
# Where every _BOLD match ends; a quick test that lets most code lines skip _BOLD.
_BOLD_CLOSING = re.compile(r"\*(?![\w*])")

_LEVELS = "TRACE|DEBUG|INFO|NOTICE|WARNING|WARN|ERROR|CRITICAL|FATAL"
# Prefixes that loggers and tools put before each line; stripped repeatedly, in any order.
_PREFIXES = (
    # ISO timestamps, optionally bracketed, with an optional level: "2026-08-27T09:53:25.647Z"
    re.compile(
        r"^\[?\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?\]?"
        rf"(?:\s+\[?(?:{_LEVELS})\]?)?"
        r"(?:\s*[:|-]\s|\s+|$)"
    ),
    # glog / absl: "E0827 09:53:25.647000 12345 file.cc:42] "
    re.compile(r"^[IWEF]\d{4} \d{2}:\d{2}:\d{2}\.\d+\s+\d+ [\w./-]+:\d+\] "),
    # vLLM's logger, after Ray's prefix in its engine's processes:
    # "(EngineCore_DP0 pid=439628) ERROR 11-20 23:44:40 [core.py:843] "
    re.compile(
        r"^(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)?"
        r" \[[\w./-]+:\d+\](?: |$)"
    ),
    # Python logging's default format: "ERROR:root:"
    re.compile(r"^(?:DEBUG|INFO|WARNING|ERROR|CRITICAL):[\w.]*:"),
    re.compile(r"^\[(?:stderr|stdout)\]\s?", re.IGNORECASE),
    re.compile(r"^(?:stderr|stdout)\s*[:|]\s?", re.IGNORECASE),
    # Ray workers: "(pid=1234) " and "(MyActor pid=1234, ip=10.0.0.1) "
    re.compile(r"^\((?:[\w.-]+ )?pid=\d+(?:, ip=[\d.]+)?\)\s"),
    # pytest's failure lines, indented as the source line above them: "E       ValueError: x"
    re.compile(r"^E(?: {3,}|\t)"),
    re.compile(r"^E$"),
    # Markdown and e-mail quotes, but not the Python prompt ">>> "
    re.compile(r"^\s*>(?!>>)\s?"),
)
# Every prefix at once, nested up to eight deep ("> [stderr] E   ..."): at each step the
# first of ``_PREFIXES`` that matches, as stripping them one by one would (none matches
# empty text, and nothing follows the repetition to make it backtrack).
_NESTED_PREFIXES = re.compile(
    "(?:"
    + "|".join(
        f"(?{'i' if p.flags & re.IGNORECASE else ''}:{p.pattern.removeprefix('^')})"
        for p in _PREFIXES
    )
    + "){1,8}"
)
# Where a line can begin, in printable ASCII without tabs, for a _PREFIXES pattern to match
# it: the first character each can start with (after spaces, for a quote). A superset.
_MAY_START = r"(?:[\[\dIWEFDCsS(>]| +>)"
_MAY_START_A_PREFIX = re.compile(_MAY_START)
_MAY_START_A_PREFIX_AFTER_BREAK = re.compile(r"\n" + _MAY_START)  # a literal first: fast
# Text without either of these has no ANSI code anywhere (each ``_ANSI`` branch needs one).
_ANSI_BRACKET = re.compile(r"\[\d{1,3}[;m]")
# The characters some markup needs, but the star of bold text: ``_clean_line`` does nothing
# more to a plain line without one of them or a star ``_BOLD_CLOSING`` finds.
_MARKUP_CHARACTERS_BUT_STAR = "<`&~"
_CONTROL_BYTES = bytes([*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F])
_UNPRINTABLE_BYTES = _CONTROL_BYTES + b"\t"  # line breaks aside
_FENCE = re.compile(r"^\s*(?:```|~~~)[\w+.-]*\s*$|^\s*``\s*$")  # and a fence typed short
_INLINE_FENCE = re.compile(r"^(\s*)```|```\s*$")
_INLINE_CODE = re.compile(r"^`([^`]+)`$")


def normalize(paste: str | bytes) -> NormalizedPaste:
    """Clean a paste for the grammar. Raises ``PasteTooLarge`` or ``UnreadablePaste``."""
    text, ansi, plain = _decode(paste)
    original = tuple(_split_lines(text))
    if ansi:  # a line shown back to the user is shown as the terminal showed it
        original = tuple(_ANSI.sub("", line) for line in original)
    is_html = _holds_html(text)
    # Dropping <script> blocks can join text into a code, so HTML is checked line by line.
    ansi = is_html or ansi
    lines: list[str] = []
    origins: list[int] = []
    if is_html or ansi:
        for number, raw in enumerate(original, start=1):
            for piece in _html_lines(raw) if is_html else (raw,):
                lines.append(_clean_line(piece, is_html, ansi))
                origins.append(number)
        return NormalizedPaste(tuple(lines), tuple(origins), original)
    if plain and "\r" not in text:
        return _normalize_plain(text, original)
    cleaned = tuple(_clean_line(raw, False, False) for raw in original)
    return NormalizedPaste(cleaned, tuple(range(1, len(cleaned) + 1)), original)


def _holds_html(text: str) -> bool:
    """Whether ``text`` holds an HTML tag, searched a piece at a time: one search of a whole
    paste would hold the interpreter's lock for as long as it runs (88 ms over a MiB of
    unclosed brackets). A tag ends at the first ``>`` after its ``<``, before any other ``<``:
    each piece is read on to there, so that no tag begun in it is cut."""
    start = 0
    while start < len(text):
        end = start + HTML_SEARCH_PIECE
        found = _TAG_END.search(text, end)
        stop = len(text) if found is None else found.end()
        if _HTML_TAG.search(text, start, stop) is not None:
            return True
        start = end
    return False


def paste_text(data: bytes) -> str:
    """A paste's bytes as text, as every surface takes them (a request's body, a file or
    standard input): UTF-8 without NUL bytes. ``UnreadablePaste`` says what they are not."""
    if b"\x00" in data:
        raise UnreadablePaste("binary data, not a paste")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        found = data[exc.start]
        raise UnreadablePaste(f"not UTF-8 text (byte {exc.start} is 0x{found:02x})") from None


def paste_end(text: str, max_bytes: int = MAX_PASTE_BYTES) -> str | None:
    """The whole lines that end a paste and fit in ``max_bytes`` of UTF-8, or None when all
    of it fits: a traceback ends with its error, so a paste too long is read from its end."""
    encoded = text.encode("utf-8", "replace")
    if len(encoded) <= max_bytes:
        return None
    tail = encoded[-max_bytes:].decode("utf-8", "ignore")
    return tail[tail.find("\n") + 1 :]


def _normalize_plain(text: str, original: tuple[str, ...]) -> NormalizedPaste:
    """``normalize`` for printable ASCII split at ``\n`` only, the usual paste.

    Most lines need nothing but trailing spaces stripped. Two scans of the whole text find
    the few that may need more, a logger prefix or markup, and only those are cleaned one
    by one.
    """
    cleaned = [raw.rstrip() for raw in original]
    for number in _may_start_a_prefix(text):
        cleaned[number] = _strip_prefixes(original[number].rstrip())
    starts = line_starts(original)
    # Code's ``*args`` and ``**kwargs`` are common and never bold: a line whose only markup
    # is a star is cleaned only when some star may close a bold span.
    starred = lines_holding("*", text, starts)
    bold = [number for number in starred if _BOLD_CLOSING.search(original[number])]
    for number in {*lines_holding(_MARKUP_CHARACTERS_BUT_STAR, text, starts), *bold}:
        cleaned[number] = _clean_line(original[number], False, False)
    return NormalizedPaste(tuple(cleaned), tuple(range(1, len(cleaned) + 1)), original)


def _may_start_a_prefix(text: str) -> list[int]:
    """The 0-based numbers of the ``\n``-separated lines that may start with a prefix."""
    numbers = [0] if _MAY_START_A_PREFIX.match(text) else []
    line = previous = 0
    for found in _MAY_START_A_PREFIX_AFTER_BREAK.finditer(text):
        line += text.count("\n", previous, found.end())
        previous = found.end()
        numbers.append(line)
    return numbers


class _Decoded(NamedTuple):
    text: str  # valid UTF-8, lone surrogates replaced
    ansi: bool  # may hold an ANSI code (``False``: certainly none)
    plain: bool  # printable ASCII without tabs, line breaks aside (``False`` may be wrong)


def _decode(paste: str | bytes) -> _Decoded:
    """Check size and readability, and tell what cleaning the text may need."""
    text = None
    if isinstance(paste, str):
        text = paste
        try:
            paste = text.encode("utf-8")
        except UnicodeEncodeError:  # only lone surrogates fail to encode
            paste = _SURROGATE.sub("\ufffd", text).encode("utf-8")
            text = None
    if len(paste) > MAX_PASTE_BYTES:
        raise PasteTooLarge(f"paste is {len(paste)} bytes; the limit is {MAX_PASTE_BYTES}")
    if b"\x00" in paste:
        raise UnreadablePaste("paste contains NUL bytes; it looks like binary data")
    if text is None:
        text = paste.decode("utf-8", "replace")
    ansi = _has_ansi(text)
    visible = _ANSI.sub("", text) if ansi else text
    if not visible or visible.isspace():
        raise UnreadablePaste("paste is empty")
    plain = False
    if not ansi and paste.isascii():
        unprintable = len(paste) - len(paste.translate(None, _UNPRINTABLE_BYTES))
        controls = unprintable - paste.count(b"\t") if unprintable else 0
        plain = unprintable == 0
    else:
        controls = len(_CONTROL.findall(visible))
    if controls > MAX_CONTROL_SHARE * len(visible):
        raise UnreadablePaste("paste is mostly non-printable characters; it looks binary")
    return _Decoded(text, ansi, plain)


def _split_lines(text: str) -> list[str]:
    """``_LINE_BREAK.split``, with a fast path for text whose only line break is ``\\n``."""
    if "\r" in text or "\u2028" in text or "\u2029" in text:
        return _LINE_BREAK.split(text)
    return text.split("\n")


def _has_ansi(text: str) -> bool:
    """Whether ``text`` may hold an ANSI code; ``False`` means certainly none."""
    return "\x1b" in text or _ANSI_BRACKET.search(text) is not None


def _html_lines(raw: str) -> list[str]:
    """Split one pasted line of HTML at the tags that render as line breaks."""
    return _HTML_LINE_BREAK.split(_HTML_DROPPED.sub("", raw))


def _clean_line(line: str, is_html: bool, ansi: bool = True) -> str:
    """One cleaned line; a code fence's line is left blank, as it ends what stands before
    it (a message is not continued by the chat that follows its block).

    Each step runs only when the line holds the character its pattern needs, which keeps
    a long plain traceback cheap; ``ansi=False`` says the paste has no ANSI code at all.
    """
    if ansi:
        line = _ANSI.sub("", line)
    if is_html:
        line = _HTML_TAG.sub("", line)
    if "<" in line:
        line = _SLACK_LINK.sub(lambda m: m[2] or m[1], line)
    if "&" in line and _ENTITY.search(line):
        line = html.unescape(line)
    if not line.isprintable():  # every _INVISIBLE character is unprintable, as is U+00A0
        line = _INVISIBLE.sub("", line.replace("\u00a0", " ")).expandtabs(4)
    line = _strip_prefixes(line.rstrip())
    if "``" in line or "~~~" in line:
        if _FENCE.match(line):
            return ""
        line = _INLINE_FENCE.sub(r"\1", line)
    if line.startswith("`"):
        line = _INLINE_CODE.sub(r"\1", line)
    if "*" in line and _BOLD_CLOSING.search(line):  # not in code's *args and **kwargs
        line = _BOLD.sub(r"\2", line)
    return line.rstrip()


def _strip_prefixes(line: str) -> str:
    """Strip logger and tool prefixes, the first listed first, as often as they nest."""
    found = _NESTED_PREFIXES.match(line)
    return line if found is None else line[found.end() :]
