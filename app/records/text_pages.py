"""Rebuilding records from their rendered text pages.

Some records survive only as rendered pages: a header line ``repo · severity · ErrorClass``,
a title, sections under fixed headings separated by blank lines, and a footer naming the
record id. ``parse_page`` turns such a page back into a record in the dataset's schema (plus
the page's ``relatedErrors``). Fields a page does not show are left empty, never guessed.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from app.records.slugs import derive_slug

SCHEMA_VERSION = 2

CONTEXT_LINES = 18
"""The dataset's source windows run from ``lineNumber - 18`` to ``lineNumber + 18``."""

MIN_LITERAL_MATCH = 20
"""How many leading characters of the message a raise's literals must reproduce to be its raise."""

TITLE = ""
SOURCE = "Source"
DEFENSIVE_PATTERNS = "Defensive patterns"
VALIDATE = "Validate before calling"
TYPE_GUARD = "Type guard"
HEADINGS = frozenset(
    {
        "Error message",
        "What it means",
        SOURCE,
        "Solutions",
        "Example fix",
        DEFENSIVE_PATTERNS,
        VALIDATE,
        TYPE_GUARD,
        "Prevention",
        "When it happens",
        "Related errors",
    }
)

HEADER_RE = re.compile(r"(?P<repo>[^\s·]+)\s*·\s*(?P<severity>[^\s·]+)\s*·\s*(?P<cls>[^\s·]+)")
FOOTER_ID_RE = re.compile(r"Data as JSON: /api/errors/(?P<id>[A-Za-z0-9_-]+)")
FOOTER_ANALYSIS_RE = re.compile(r"analysis of \S+?@(?P<sha>[0-9a-fA-F]+) \((?P<date>[^)]*)\)")
THROWN_AT_RE = re.compile(r"Thrown at (?P<path>\S.*):(?P<line>[1-9][0-9]{0,8})")
PINNED_RE = re.compile(r"View on GitHub \(pinned to (?P<sha>[0-9a-fA-F]+)\)")
RAISE_RE = re.compile(r"\braise\s")
STRING_LITERAL_RE = re.compile(r'"((?:[^"\\]|\\.)*)"|\'((?:[^\'\\]|\\.)*)\'')
LIST_MARKER_RE = re.compile(r"[0-9]+\.\s+|•\s*")
AFTER_MARKER_RE = re.compile(r"^\s*# after\b", re.MULTILINE)


class PageParseError(ValueError):
    """The page lacks something every record needs: its header, error message or id."""

    def __init__(self, reason: str, *, field: str, line: int | None) -> None:
        where = f"line {line}" if line is not None else "no line"
        super().__init__(f"{field}: {reason} ({where})")
        self.reason = reason
        self.field = field
        self.line = line


@dataclass
class _Section:
    """Lines under one heading; ``body[k]`` is page line ``heading_line + 1 + k``."""

    heading_line: int
    body: list[str]

    def text(self) -> str | None:
        return "\n".join(self.body).strip("\n") or None

    def paragraphs(self) -> list[str]:
        return [p.strip("\n") for p in "\n".join(self.body).split("\n\n") if p.strip()]

    def items(self) -> list[str]:
        """Non-blank lines without their ``1. `` numbering or ``•`` bullet."""
        return [LIST_MARKER_RE.sub("", line.strip(), count=1) for line in self.body if line]

    def labelled(self, label: str) -> str | None:
        """Text of the paragraph that starts with ``label:``, without the label."""
        prefix = f"{label}:"
        for paragraph in self.paragraphs():
            if paragraph.startswith(prefix):
                return paragraph.removeprefix(prefix).strip() or None
        return None


@dataclass(frozen=True)
class _Source:
    file_path: str | None = None
    line_number: int | None = None
    code: str | None = None
    start: int | None = None
    end: int | None = None
    pinned_sha: str | None = None


def parse_page(
    text: str, *, resolve_sha: Callable[[str], str | None] | None = None
) -> dict[str, Any]:
    """Parse a rendered error page into a record dict, keys in the dataset's order.

    ``resolve_sha`` expands the page's abbreviated commit to the full sha; without it (or
    when it returns None) the abbreviated sha is kept. Raises ``PageParseError`` when the
    header, the error message or the footer's record id is missing.
    """
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    header_at, header = _header(lines)
    footer_at, footer_id = _footer(lines, header_at)
    analysis = FOOTER_ANALYSIS_RE.search(lines[footer_at])

    sections = _split_sections(lines, header_at, footer_at)
    message = _error_message(sections)
    source = _parse_source(sections.get(SOURCE), message)

    short_sha = source.pinned_sha or (analysis["sha"] if analysis else None)
    sha = (resolve_sha(short_sha) if resolve_sha and short_sha else None) or short_sha

    example_fix, validation_code, type_guard = _fix_code(sections)
    defensive = sections.get(DEFENSIVE_PATTERNS)
    when = sections.get("When it happens")

    return {
        "id": footer_id["id"],
        "repo": header["repo"],
        "slug": derive_slug(message),
        "errorCode": None,
        "errorMessage": message,
        "messagePattern": None,
        "errorType": "exception",
        "errorClass": header["cls"],
        "httpStatus": None,
        "severity": header["severity"],
        "filePath": source.file_path,
        "lineNumber": source.line_number,
        "sourceCode": source.code,
        "sourceCodeStart": source.start,
        "sourceCodeEnd": source.end,
        "githubUrl": _github_url(header["repo"], sha, source),
        "documentation": _text_of(sections, "What it means"),
        "triggerScenarios": when.labelled("Trigger") if when else None,
        "commonSituations": when.labelled("Common situations") if when else None,
        "solutions": _items_of(sections, "Solutions"),
        "exampleFix": example_fix,
        "handlingStrategy": defensive.labelled("Strategy") if defensive else None,
        "validationCode": validation_code,
        "typeGuard": type_guard,
        "tryCatchPattern": None,
        "preventionTips": _items_of(sections, "Prevention"),
        "tags": [],
        "backgroundTag": None,
        "analyzedSha": sha,
        "analyzedAt": analysis["date"] if analysis else None,
        "schemaVersion": SCHEMA_VERSION,
        "relatedErrors": _items_of(sections, "Related errors"),
    }


def _header(lines: list[str]) -> tuple[int, re.Match[str]]:
    """The header line's index and its ``repo · severity · ErrorClass`` match."""
    header_at = next((i for i, line in enumerate(lines) if line), None)
    if header_at is None:
        raise PageParseError("the page is empty", field="repo", line=None)
    header = HEADER_RE.fullmatch(lines[header_at].strip())
    if header is None:
        raise PageParseError(
            "expected the header 'repo · severity · ErrorClass'", field="repo", line=header_at + 1
        )
    return header_at, header


def _footer(lines: list[str], header_at: int) -> tuple[int, re.Match[str]]:
    """The last line below the header that names the record id, and that match."""
    footer = next(
        (
            (i, found)
            for i in range(len(lines) - 1, header_at, -1)
            if (found := FOOTER_ID_RE.search(lines[i]))
        ),
        None,
    )
    if footer is None:
        raise PageParseError(
            "no footer with 'Data as JSON: /api/errors/<id>'", field="id", line=None
        )
    return footer


def _github_url(repo: str, sha: str | None, source: _Source) -> str | None:
    """The source lines' permalink, when the page gives a commit and a located source."""
    if sha and source.file_path and source.start is not None:
        return (
            f"https://github.com/{repo}/blob/{sha}/{source.file_path}#L{source.start}-L{source.end}"
        )
    return None


def _fix_code(sections: dict[str, _Section]) -> tuple[str | None, str | None, str | None]:
    """The example fix, validation code and type guard: from their own sections when the
    page has the defensive ones, else split out of the example fix."""
    if not any(heading in sections for heading in (DEFENSIVE_PATTERNS, VALIDATE, TYPE_GUARD)):
        return _split_example_fix(sections.get("Example fix"))
    return (
        _text_of(sections, "Example fix"),
        _text_of(sections, VALIDATE),
        _text_of(sections, TYPE_GUARD),
    )


def _text_of(sections: dict[str, _Section], heading: str) -> str | None:
    section = sections.get(heading)
    return section.text() if section else None


def _items_of(sections: dict[str, _Section], heading: str) -> list[str]:
    section = sections.get(heading)
    return section.items() if section else []


def _split_sections(lines: list[str], header_at: int, footer_at: int) -> dict[str, _Section]:
    """Group the lines between header and footer under the heading above them.

    A heading is a known heading alone on its line, at the top or after a blank line; the
    lines before the first heading are the title (key ``TITLE``). Blank lines alone do not
    end a section, since code blocks contain them. The source block could even contain a
    heading-like line, so the Source section runs to its "View on GitHub" line when it has
    one. Of a repeated heading, the first occurrence counts.
    """
    current = _Section(header_at + 1, [])
    sections = {TITLE: current}
    i = header_at + 1
    while i < footer_at:
        heading = lines[i].strip()
        if heading in HEADINGS and (i == header_at + 1 or not lines[i - 1]):
            current = _Section(i + 1, [])
            sections.setdefault(heading, current)
            if heading == SOURCE:
                pinned = next(
                    (j for j in range(i + 1, footer_at) if PINNED_RE.fullmatch(lines[j].strip())),
                    None,
                )
                if pinned is not None:
                    current.body.extend(lines[i + 1 : pinned + 1])
                    i = pinned + 1
                    continue
        else:
            current.body.append(lines[i])
        i += 1
    return sections


def _error_message(sections: dict[str, _Section]) -> str:
    """The full error message, checked against the (possibly truncated) title."""
    section = sections.get("Error message")
    if section is None:
        raise PageParseError("no 'Error message' section", field="errorMessage", line=None)
    message = section.text()
    if message is None:
        raise PageParseError(
            "the 'Error message' section is empty", field="errorMessage", line=section.heading_line
        )
    title = sections[TITLE]
    title_at = next((k for k, line in enumerate(title.body) if line), None)
    if title_at is not None:
        shown = _squash(title.body[title_at]).rstrip(" .…")
        if not _squash(message).startswith(shown):
            raise PageParseError(
                "the title is not the start of the error message",
                field="errorMessage",
                line=title.heading_line + 1 + title_at,
            )
    return message


def _parse_source(section: _Section | None, message: str) -> _Source:
    """Location, code window and pinned commit from the Source section.

    Without its "Thrown at path:line" line a code block cannot be placed, so it is dropped.
    """
    if section is None:
        return _Source()
    body = section.body
    pinned = next(
        ((k, found) for k, line in enumerate(body) if (found := PINNED_RE.fullmatch(line.strip()))),
        None,
    )
    if pinned:
        body = body[: pinned[0]]
    pinned_sha = pinned[1]["sha"] if pinned else None

    thrown_at = next((k for k, line in enumerate(body) if line), None)
    location = THROWN_AT_RE.fullmatch(body[thrown_at].strip()) if thrown_at is not None else None
    if thrown_at is None or location is None:
        return _Source(pinned_sha=pinned_sha)
    line_number = int(location["line"])

    code = _strip_separators(body[thrown_at + 1 :])
    if not code:
        return _Source(file_path=location["path"], line_number=line_number, pinned_sha=pinned_sha)
    start = line_number - _raise_index(code, line_number, message)
    return _Source(
        file_path=location["path"],
        line_number=line_number,
        code="\n".join(code),
        start=start,
        end=start + len(code) - 1,
        pinned_sha=pinned_sha,
    )


def _strip_separators(code: list[str]) -> list[str]:
    """Drop the single blank line the page puts on each side of the code block.

    Any further blank line belongs to the window, which can start or end on a blank source
    line; the dataset keeps those as empty lines (so such a window starts or ends with "\\n").
    """
    if code and not code[0]:
        code = code[1:]
    if code and not code[-1]:
        code = code[:-1]
    return code


def _raise_index(code: list[str], line_number: int, message: str) -> int:
    """Index in ``code`` of the raise statement that throws ``message``.

    A window often holds several raises, so each is scored by how far its string literals,
    concatenated, agree with the start of the message; the best wins, ties going to the
    usual centre of the window. When no raise qualifies the window is taken to follow the
    dataset's convention of ``CONTEXT_LINES`` lines before ``lineNumber``.
    """
    wanted = _squash(message)
    usual = min(CONTEXT_LINES, line_number - 1)
    # A raise at index k can only be line ``line_number`` when k < line_number.
    candidates = [
        (_shared_prefix(_raise_literal(code, k), wanted), -abs(k - usual), k)
        for k in range(min(len(code), line_number))
        if RAISE_RE.search(code[k])
    ]
    qualifying = [c for c in candidates if c[0] >= min(len(wanted), MIN_LITERAL_MATCH)]
    return max(qualifying)[2] if qualifying else usual


def _raise_literal(code: list[str], at: int) -> str:
    """Concatenated string literals of the raise statement starting at ``code[at]``.

    The statement is its first line plus the more deeply indented lines that follow (the
    continued arguments), which is where the message literals are.
    """
    indent = _indent(code[at])
    statement = [code[at]]
    for line in code[at + 1 :]:
        if not line or _indent(line) <= indent:
            break
        statement.append(line)
    literals = (
        m[1] if m[1] is not None else m[2]
        for line in statement
        for m in STRING_LITERAL_RE.finditer(line)
    )
    return _squash("".join(literals))


def _split_example_fix(
    section: _Section | None,
) -> tuple[str | None, str | None, str | None]:
    """Split an "Example fix" section into (exampleFix, validationCode, typeGuard).

    Used for pages without "Defensive patterns": those append the validation snippet and
    the type guard to the example fix as further blank-line-separated paragraphs. The fix is
    the leading paragraphs through the one holding ``# after``; after it, a block starting
    with ``def `` is the type guard and any other block is validation code. An indented
    paragraph continues the block before it (a blank line inside a function body). Without
    a ``# after`` marker the whole section is the fix.
    """
    if section is None:
        return None, None, None
    paragraphs = section.paragraphs()
    after = next((k for k, p in enumerate(paragraphs) if AFTER_MARKER_RE.search(p)), None)
    if after is None:
        return section.text(), None, None

    blocks: list[str] = []
    for paragraph in paragraphs[after + 1 :]:
        if blocks and paragraph[:1].isspace():
            blocks[-1] += "\n\n" + paragraph
        else:
            blocks.append(paragraph)
    guards = [b for b in blocks if b.startswith("def ")]
    checks = [b for b in blocks if not b.startswith("def ")]
    return (
        "\n\n".join(paragraphs[: after + 1]),
        "\n\n".join(checks) or None,
        "\n\n".join(guards) or None,
    )


def _shared_prefix(a: str, b: str) -> int:
    """Length of the longest common prefix of ``a`` and ``b``."""
    pairs = zip(a, b, strict=False)
    return next((k for k, (x, y) in enumerate(pairs) if x != y), min(len(a), len(b)))


def _squash(text: str) -> str:
    """Whitespace collapsed, so line wrapping never decides a comparison."""
    return " ".join(text.split())


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())
