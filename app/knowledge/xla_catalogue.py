"""Reading XLA's error catalogue: the codes XLA prints (``E2003:
CompileTimeMosaicUnprovenMemoryAccessAlignment``) and the page each has in its docs.

XLA declares every code once, in ``xla/error/error_codes.h`` (``X("E1001",
CompileTimeScopedVmemOom, absl::StatusCode::kResourceExhausted)``), and prints it as
``E1001: CompileTimeScopedVmemOom:`` then the message and a link to
``https://openxla.org/xla/errors/error_1001``, whose source is ``docs/errors/error_1001.md``.
The pages have changed shape over time (a category, a paragraph, sample messages, an
"Overview", then "Debugging"; or "Why do these happen?" and "Potential fixes"); this reads
each shape into a meaning, sample messages, the backends and a list of advice.
"""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

CODES_FILE = "xla/error/error_codes.h"
DOCS_DIR = "docs/errors"
# A cut of a checkout (tests/fixtures/xla_source) names the commit of each file it holds here.
PINS_FILE = "PINS.json"
DOCS_URL = "https://openxla.org/xla/errors/error_{number}"
# What each piece of advice keeps of a page's paragraph: a page's scenario can run to a
# screenful, an answer's advice is read at a glance.
MAX_ADVICE_CHARS = 480
# The pieces of advice kept of a page, in its order: E1000's runs to some twenty.
MAX_ADVICE_ITEMS = 6

_CODE = re.compile(
    r'X\(\s*"(?P<code>E\d{4})",\s*(?P<name>\w+),\s*absl::StatusCode::k(?P<status>\w+)\s*\)'
)
_TITLE = re.compile(r"^#\s+Error [Cc]ode:\s*E?(?P<number>\d{4})\b")
_FIELD = re.compile(r"^\*\*(?P<key>[\w ]+):\*\*\s*(?P<value>.*)$")
_SECTION = re.compile(r"^##\s+(?P<title>.+)$")
_ITEM = re.compile(r"^(?:#{3,}\s+(?:\d+\.\s*)?|[-*]\s+|\d+\.\s+)(?P<text>.*)$")
_LINK = re.compile(r"\[(?P<text>[^\]]+)\]\((?P<url>[^)\s]+)\)")
_EMPHASIS = re.compile(r"\*\*(?P<text>[^*]+)\*\*|\*(?P<em>[^*\s][^*]*)\*")
_BOLD_LEAD = re.compile(r"\*\*[^*]+\*\*")
_MARKER = re.compile(r"^(?:[-*]|\d+\.)\s+")
# Items that send the reader elsewhere on the page, not advice.
_POINTERS = ("→ Jump to", "Proceed to")
_MEANING_SECTIONS = ("why do these happen", "overview")
# The section of some pages that holds their sample messages.
_SAMPLES_SECTION = "error log example"
_ADVICE_SECTIONS = ("debugging", "fix", "solve")


class XlaSourceError(ValueError):
    """An XLA checkout (or cut) that lacks the catalogue, or a commit it does not have."""


@dataclass(frozen=True)
class XlaCode:
    """One code of ``error_codes.h``."""

    code: str  # "E2003"
    name: str  # "CompileTimeMosaicUnprovenMemoryAccessAlignment"
    status: str  # absl's status code, "InvalidArgument"


@dataclass(frozen=True)
class XlaPage:
    """What a code's page says, and where it was read."""

    path: str  # "docs/errors/error_2003.md"
    commit: str  # the commit that last changed it
    category: str
    meaning: str
    samples: tuple[str, ...]  # the first line of each sample message
    backends: tuple[str, ...]  # ("TPU",), ("TPU", "GPU")
    advice: tuple[str, ...]

    @property
    def url(self) -> str:
        return DOCS_URL.format(number=self.path.rsplit("_", 1)[1].removesuffix(".md"))


@dataclass(frozen=True)
class XlaSource:
    """The catalogue's files as one commit of a checkout has them: the codes' header and
    each page, with the commit that last changed it."""

    header: str
    pages: dict[str, tuple[str, str]]  # path -> (text, commit)


def git_source(git_dir: Path, commit: str = "HEAD") -> XlaSource:
    """The catalogue at ``commit`` of a git repository of openxla/xla, each page pinned to
    the commit that last changed it."""
    try:
        resolved = _git(git_dir, "rev-parse", "--verify", f"{commit}^{{commit}}").strip()
        header = _git(git_dir, "show", f"{resolved}:{CODES_FILE}")
        listing = _git(git_dir, "ls-tree", "--name-only", resolved, f"{DOCS_DIR}/")
    except subprocess.CalledProcessError as exc:
        raise XlaSourceError(f"{git_dir}: no XLA catalogue at {commit}: {exc.stderr}") from exc
    pages = {}
    for path in listing.split():
        if path.endswith(".md"):
            last = _git(git_dir, "log", "-1", "--format=%H", resolved, "--", path).strip()
            pages[path] = (_git(git_dir, "show", f"{resolved}:{path}"), last or resolved)
    return XlaSource(header, pages)


def cut_source(folder: Path) -> XlaSource:
    """A cut of a checkout (files at their paths, and ``PINS.json``: each page's commit)."""
    try:
        pins: dict[str, str] = json.loads((folder / PINS_FILE).read_text(encoding="utf-8"))
        header = (folder / CODES_FILE).read_text(encoding="utf-8")
        pages = {path: ((folder / path).read_text(encoding="utf-8"), c) for path, c in pins.items()}
    except (OSError, ValueError) as exc:
        raise XlaSourceError(f"{folder}: not a cut of XLA's catalogue: {exc}") from exc
    return XlaSource(header, pages)


def error_codes(header: str) -> list[XlaCode]:
    """Every code the header declares, in its order."""
    flat = header.replace("\\\n", " ")
    return [XlaCode(m["code"], m["name"], m["status"]) for m in _CODE.finditer(flat)]


def page_path(code: str) -> str:
    return f"{DOCS_DIR}/error_{code.removeprefix('E')}.md"


def read_page(path: str, text: str, commit: str) -> XlaPage:
    """A page's category, meaning, samples, backends and advice."""
    lines = text.splitlines()
    if not lines or not _TITLE.match(lines[0]):
        raise XlaSourceError(f"{path}: no '# Error code: …' title")
    fields = {
        found["key"].lower(): found["value"].strip()
        for found in map(_FIELD.match, lines)
        if found is not None
    }
    sections = _sections(lines)
    lead = _paragraphs(sections.get("", []))
    meaning = next(
        (
            _paragraphs(body)[0]
            for title, body in sections.items()
            if any(word in title for word in _MEANING_SECTIONS) and _paragraphs(body)
        ),
        "",
    )
    advice = [
        item
        for title, body in sections.items()
        if any(word in title for word in _ADVICE_SECTIONS)
        for item in _items(body)
    ]
    backends = fields.get("xla backends", "")
    return XlaPage(
        path=path,
        commit=commit,
        category=_plain(fields.get("category", "")),
        meaning=lead[0] if lead else meaning,
        samples=tuple(_samples(lines)),
        backends=tuple(b.strip() for b in backends.split(",") if b.strip()),
        advice=tuple(advice[:MAX_ADVICE_ITEMS]),
    )


def _sections(lines: list[str]) -> dict[str, list[str]]:
    """The page's lines by its ``##`` section (lower case), those before the first under
    ""; fenced code is left out, and so are the ``**Key:** value`` fields."""
    sections: dict[str, list[str]] = {"": []}
    current, fenced = "", False
    for line in lines[1:]:
        if line.startswith("```"):
            fenced = not fenced
            continue
        heading = None if fenced else _SECTION.match(line)
        if heading is not None:
            current = heading["title"].strip().lower()
            sections.setdefault(current, [])
        elif not fenced and not _FIELD.match(line):
            sections[current].append(line)
    return sections


def _paragraphs(body: list[str]) -> list[str]:
    """The prose paragraphs of a section (not its lists, with the lines they run on to, nor
    headings or tables), plain; a paragraph that leads into a list loses that sentence."""
    paragraphs: list[str] = []
    current: list[str] = []
    listed = False
    for line in [*body, ""]:
        stripped = line.strip()
        listed = bool(_ITEM.match(stripped)) or (listed and line[:1].isspace())
        if not stripped or listed or stripped.startswith(("|", "#", "---")):
            if current:
                paragraphs.append(_unled(_plain(" ".join(current))))
            current = []
            continue
        current.append(stripped)
    return [p for p in paragraphs if p]


def _unled(paragraph: str) -> str:
    """A paragraph without its last sentence where that sentence leads into a list."""
    if not paragraph.endswith(":"):
        return paragraph
    end = paragraph.rstrip(":").rfind(". ")
    return paragraph[: end + 1] if end > 0 else ""


def _items(body: list[str]) -> list[str]:
    """Each piece of advice of a section: a heading or a list item at the left margin, with
    the lines under it (its nested items among them), plain and cut to a few sentences; a
    section of prose alone is its paragraphs. A heading with nothing under it, an item that
    only leads into a list, and one that only points to another part of the page are none."""
    items: list[list[str]] = []
    for line in body:
        stripped = line.strip()
        if not stripped or stripped.startswith(("|", "---")):
            continue
        top = _ITEM.match(line)
        if top is not None:
            items.append([_headed(line, top["text"])])
        elif items:
            items[-1].append(_MARKER.sub("", stripped))
    if not items:
        return [_cut(p) for p in _paragraphs(body)]
    texts = [_cut(_plain(" ".join(parts))) for parts in items if len(parts) > 1 or _ends(parts[0])]
    return [t for t in texts if not t.endswith(":") and not any(w in t for w in _POINTERS)]


def _headed(line: str, text: str) -> str:
    """An item's first line; a heading, or a lead in bold alone, ends as a heading does."""
    if (line.startswith("#") or _BOLD_LEAD.fullmatch(text)) and not _ends(text):
        return text + ":"
    return text


def _ends(text: str) -> bool:
    return text.rstrip("*").endswith((".", ":", "!", "?"))


def _samples(lines: list[str]) -> list[str]:
    """The first paragraph of each fenced sample message before the page's overview (a
    message wrapped at the page's width is one line again)."""
    blocks: list[list[str]] = []
    fenced = False
    for line in lines[1:]:
        heading = None if fenced else _SECTION.match(line)
        if heading is not None and heading["title"].strip().lower() != _SAMPLES_SECTION:
            break
        if line.startswith("```"):
            fenced = not fenced
            if fenced:
                blocks.append([])
        elif fenced:
            blocks[-1].append(line.strip())
    samples = []
    for block in blocks:
        text = "\n".join(block).strip().split("\n\n", 1)[0]
        if text:
            samples.append(" ".join(text.split()).strip('"'))
    return samples


def _plain(text: str) -> str:
    """Markdown as plain text: a link as its words and address, no emphasis."""
    text = _LINK.sub(
        lambda m: m["text"] if m["url"].startswith("#") else f"{m['text']} ({m['url']})", text
    )
    text = _EMPHASIS.sub(lambda m: m["text"] or m["em"], text)
    return " ".join(text.split())


def _cut(text: str) -> str:
    """At most ``MAX_ADVICE_CHARS``, ending at a sentence's end where one is near."""
    if len(text) <= MAX_ADVICE_CHARS:
        return text
    head = text[:MAX_ADVICE_CHARS]
    end = head.rfind(". ")
    return head[: end + 1] if end > MAX_ADVICE_CHARS // 2 else head.rstrip() + "…"


def _git(git_dir: Path, *arguments: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(git_dir), *arguments], capture_output=True, check=True, text=True
    )
    return done.stdout
