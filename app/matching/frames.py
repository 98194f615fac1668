"""Where each JAX release put its error sites and functions, and the frames a paste shows.

``FrameIndex`` answers lookups by file and line: the mined sites on a frame's line in each
release (the mined dataset), and the releases whose function of a frame's name spans its
line (``data/jax-functions.json``). It parses the frames a traceback prints (Python's,
IPython's and pytest's forms), places each against those tables, and links a record's site
or a frame's line to the source one release shipped. What the frames say is weighed
elsewhere: the release a paste comes from in ``release``, the site that raised in
``raise_points``.

The index is derived from ``data/mined/jax-sites.jsonl`` (and the releases raising each
error of Pallas's public API: ``data/mined/jax-api.jsonl``, ``jax-calls.jsonl``) and
committed as ``data/frame-index.json`` (rebuilt by ``knowledge.frame_index``), so a process
loads it in a fraction of a second rather than parsing 20 MB of records.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from app.jaxref.files import FRAME_INDEX_FILE, FUNCTIONS_FILE
from app.jaxref.releases import release_commits, source_url, union
from app.jaxref.scope import FRAME_SCOPE, backend_of
from app.packed import PackedMapping, PackedSequence

# "File "/x/site-packages/jax/_src/pallas/core.py", line 770, in check_invariants",
# IPython's "File ~/x/jax/_src/pallas/core.py:770, in check_invariants(self)", and pytest's
# "/x/jax/_src/pallas/core.py:770: in check_invariants" or, after the source and E lines of
# the frame that raised, "/x/jax/_src/pallas/core.py:770: ValueError" (no function).
INDENTED_FRAME = re.compile(
    r'\s*(?:File (?:"(?P<path>[^"\n]+)", line (?P<line>\d+), in (?P<function>[\w<>.]+)'
    r"|(?P<ipath>[^\s,]+):(?P<iline>\d+), in (?P<ifunction>[\w<>.]+))"
    r"|(?P<ppath>\S+?\.py):(?P<pline>\d+):(?: in (?P<pfunction>[\w<>.]+)| [\w.]+)?\s*$)"
)
# Paths and frame lines as printed, and sets of releases, each remembered with what it reads as.
MAX_REMEMBERED = 4096


@dataclass(frozen=True)
class Site:
    """An error site of the mined dataset, as a frame on its line names it."""

    record_id: str
    file: str
    function: str
    kind: str  # "raise" or "assert"; a C++ site's "diagnostic"
    error_class: str
    condition: str
    message: str


class SourceSite(NamedTuple):
    """A record's site as one release shipped it, and the link pinned to that commit."""

    file: str
    line: int
    release: str
    url: str


def nearest(releases: int, wanted: int) -> int:
    """The release of the mask ``releases`` nearest to ``wanted`` (a one-release mask):
    itself, else the newest older one, else the oldest newer one; the newest for none."""
    if releases & wanted:
        return wanted
    older = releases & (wanted - 1) if wanted else releases
    if older:
        return 1 << (older.bit_length() - 1)
    return releases & -releases


def _source_site(file: str, line: int, release: str) -> SourceSite:
    return SourceSite(file, line, release, source_url(release_commits()[release], file, line, line))


class Frame(NamedTuple):  # a tuple: a long traceback makes hundreds
    file: str  # from ``jax/`` or ``jaxlib/`` on
    line: int
    function: str
    paste_line: int


class PlacedFrame(NamedTuple):
    """A frame's line as the index reads it: the frame, and the releases it names."""

    file: str
    line: int
    function: str
    text: str  # "jax/_src/pallas/core.py:770 check_invariants"
    kind: str  # "frame" (on a site's line) or "function" (elsewhere in its function)
    mask: int  # the releases it names; none: no release has the function on that line
    machinery: bool = False  # of JAX's machinery (``scope.FRAME_SCOPE``), which has no sites


# Where a path's ``jax/`` or ``jaxlib/`` may start: at its start or after a slash, which
# the match leaves unread, so that a checkout's ``jax/jax/_src/...`` is tried at both.
_PACKAGE_DIRECTORY = re.compile(r"(?<![^/])jax(?:lib)?/")

_UNREAD = PlacedFrame("", 0, "", "", "", 0)  # a line not yet read, in ``FrameIndex._placed``
# Mosaic TPU's compiler in JAX's source; its passes left for libtpu after 0.8.1.
LIBTPU_COMPILER = "jaxlib/mosaic/dialect/tpu/"


class FrameIndex:
    """(file, line) → the sites there, per release; (file, function) → its lines, per release."""

    def __init__(self, data: dict[str, Any], functions: dict[str, Any] | None = None) -> None:
        self.releases: tuple[str, ...] = tuple(data["releases"])
        self._bits = {release: 1 << n for n, release in enumerate(self.releases)}
        self.sites: Sequence[Site] = [Site(*row) for row in data["sites"]]
        # C++ diagnostics' sites, with their (line, releases): no frame stands on them.
        self._compiled: Sequence[tuple[Site, list[list[int]]]] = [
            (Site(*row[:-1]), row[-1]) for row in data["compiled"]
        ]
        # Tracebacks print a function's own name: "check_invariants", not its class's.
        self._short_names = [site.function.rsplit(".", 1)[-1] for site in self.sites]
        self._lines: Mapping[str, dict[str, list[list[int]]]] = data["lines"]
        # File → function → [first line, last line, releases] (``knowledge.functions``).
        self._spans: Mapping[str, dict[str, list[list[int]]]] = {}
        if functions is not None:
            if tuple(functions["releases"]) != self.releases:
                raise ValueError("the function spans count other releases than the sites")
            self._spans = functions["files"]
        self.files = frozenset(self._lines).union(self._spans)
        # Record id → (the last release printing it, releases) of each wording, oldest first,
        # for the sites whose message changed.
        self._wordings: Mapping[str, list[list[Any]]] = data["wordings"]
        # Record id → the releases of its older wordings that its pattern of today reads too
        # (``Exception while lowering eqn:`` opens both of Pallas TPU's): the current
        # wording dates a paste to those as well.
        self._read_alike: dict[str, int] = data.get("readAlike", {})
        # Record id → the releases that can raise it, for a record without a site: Python's
        # error reading a public name of Pallas that those releases do not have.
        self._raised_in: dict[str, int] = data.get("raisedIn", {})
        # The releases whose C++ was not read (mined from wheels, which ship it compiled),
        # and the newest release whose C++ was: a diagnostic standing there may be printed
        # by those after it too.
        self._cpp_unread = union(self._bits[r] for r in data.get("cppUnread", ()))
        self._cpp_newest_read = self._cpp_unread and (self._cpp_unread & -self._cpp_unread) >> 1
        self._names: dict[int, tuple[str, ...]] = {}
        self._paths: dict[str, str | None] = {}  # a path as printed → its file in JAX
        self._placed: dict[str, PlacedFrame | None] = {}  # a frame's line as printed

    @classmethod
    def load(cls, path: Path = FRAME_INDEX_FILE, functions: Path = FUNCTIONS_FILE) -> FrameIndex:
        return _load(path, functions)

    def packed(self) -> FrameIndex:
        """A copy with every table worked out, the large ones packed (``app.packed``), to be
        pickled: unpickled, it reads only the lines, functions and records a paste names."""
        for name in _WORKED_OUT:
            getattr(self, name)
        copied = copy.copy(self)
        tables = copied.__dict__
        for name in _PACKED_TABLES:
            tables[name] = PackedMapping.pack(tables[name])
        copied.sites = PackedSequence.pack(self.sites)
        copied._compiled = PackedSequence.pack(self._compiled)
        copied._names, copied._paths, copied._placed = {}, {}, {}
        return copied

    def names(self, mask: int) -> tuple[str, ...]:
        names = self._names.get(mask)
        if names is None:
            names = tuple(r for bit, r in enumerate(self.releases) if mask >> bit & 1)
            if len(self._names) >= MAX_REMEMBERED:  # the versions a paste names are its own
                self._names.clear()
            self._names[mask] = names
        return names

    def mask(self, release: str) -> int:
        return self._bits.get(release, 0)

    def sites_at(self, frame: Frame) -> list[tuple[Site, int]]:
        """The sites on the frame's line, in the frame's function, with their releases."""
        placed = self._lines.get(frame.file, {}).get(str(frame.line), ())
        names = self._short_names
        return [(self.sites[n], mask) for n, mask in placed if names[n] == frame.function]

    def source_site(self, record_id: str, release: str | None) -> SourceSite | None:
        """The record's site as ``release`` shipped it, else as the release nearest to it
        with the site (the newest, with no release): the link names the release it shows."""
        placed = self._site_lines.get(record_id, ())
        shipped = self._site_mask(record_id)
        if not shipped:
            return None
        chosen = nearest(shipped, self.mask(release) if release else 0)
        file, line, _ = next(entry for entry in placed if entry[2] & chosen)
        return _source_site(file, line, self.names(chosen)[0])

    def call_site(
        self, frame: Frame, release: str | None, possible: Iterable[str] = ()
    ) -> SourceSite | None:
        """The line of a frame that called on (user code, a function further in), pinned to
        ``release``, else to the release nearest to it among those the paste can come from
        (``possible``; a frame's line is its own release's) whose function of the frame's
        name spans the line and holds no ``raise`` or ``assert`` there, from which no call
        goes on; ``None`` where no release's function spans it."""
        spanning = self.spanning(frame)
        raising = 0
        for _site, site_mask in self.sites_at(frame):
            raising |= site_mask
        mask = spanning & ~raising or spanning
        mask = mask & self.mask_of(possible) or mask
        if not mask:
            return None
        chosen = nearest(mask, self.mask(release) if release else 0)
        return _source_site(frame.file, frame.line, self.names(chosen)[0])

    def backends_shown(self, lines: Sequence[str], numbers: Collection[int]) -> frozenset[str]:
        """The backends (``mosaic_gpu``, ``triton``, ``tpu``, ``core``) whose mined files the
        frames among ``lines[numbers]`` stand in."""
        return frozenset(backend_of(frame.file) for _, frame in self.placed_frames(lines, numbers))

    @cached_property
    def _sites_by_statement(self) -> Mapping[tuple[str, str], list[int]]:
        """("assert", condition) or (class, message template) → the rows of such sites."""
        table: dict[tuple[str, str], list[int]] = {}
        for row, site in enumerate(self.sites):
            key = site_key(site.kind, site.error_class, site.condition, site.message)
            table.setdefault(key, []).append(row)
        return table

    @cached_property
    def _row_lines(self) -> Mapping[int, list[tuple[str, int, int]]]:
        """A site's row → (file, line, releases) of each line it stands on there."""
        table: dict[int, list[tuple[str, int, int]]] = {}
        for file, by_line in self._lines.items():
            for line, placed in by_line.items():
                for row, mask in placed:
                    table.setdefault(row, []).append((file, int(line), mask))
        return table

    def site_of(self, record_id: str) -> Site | None:
        return self._sites_by_record.get(record_id)

    def releases_of(self, record_id: str) -> tuple[str, ...]:
        """Every release with the record's site, on whichever line."""
        return self.names(self._site_mask(record_id))

    def changed_in(self, record_id: str) -> tuple[str, str] | None:
        """The last release with the record's site and the first mined release after it,
        which lacks it: the release that removed or rewrote the check. None where the newest
        release has the site, or where the same check stands in a later release elsewhere (it
        moved). jaxlib's are none of them: its Mosaic passes went from Python to C++ and then
        into libtpu, where their checks go on, so a release without one fixed nothing."""
        site = self.site_of(record_id)
        mask = self._site_mask(record_id)
        if site is None or not mask or site.file.startswith("jaxlib/"):
            return None
        last = 1 << (mask.bit_length() - 1)
        later = ((1 << len(self.releases)) - 1) & ~(2 * last - 1)
        if not later or self._statement_masks.get(_statement(site), 0) & later:
            return None  # none after it, or the same check stands elsewhere (it moved)
        return self.names(last)[0], self.names(later & -later)[0]

    @cached_property
    def _statement_masks(self) -> dict[str, int]:
        """A check (an assert's condition, a raise's message) → every release with a site
        of it, in whichever file and of whichever class."""
        masks: dict[str, int] = {}
        for site in self.sites:
            key = _statement(site)
            masks[key] = masks.get(key, 0) | self._site_mask(site.record_id)
        return masks

    def raised_outside(self, releases: Iterable[str]) -> Callable[[str], bool]:
        """A test of a record: whether none of ``releases`` has a site of it, nor prints it
        as a later release may print a C++ diagnostic; ``False`` where nothing tells (a
        record without a site, no mined release among them)."""
        asked = self.mask_of(releases)

        def outside(record_id: str) -> bool:
            may = self._site_mask(record_id) | self.wording_releases(record_id, None)
            return bool(asked and may) and not may & asked

        return outside

    def newest_rank(self, record_id: str) -> int:
        """How new the newest release with the record's site is (0: no release has it)."""
        return self._site_mask(record_id).bit_length()

    def _site_mask(self, record_id: str) -> int:
        return self._site_masks.get(record_id, 0)

    @cached_property
    def _site_masks(self) -> dict[str, int]:
        """Record id → every release with its site: built on first use."""
        return {
            record_id: union(releases for _, _, releases in places)
            for record_id, places in self._site_lines.items()
        }

    def wording_releases(self, record_id: str, until: str | None) -> int:
        """The releases whose site of the record printed the wording that ``until`` names
        (the last release printing it; ``None``: the current wording); 0 for no site."""
        if record_id in self._raised_in:
            return self._raised_in[record_id]
        wordings = self._wordings.get(record_id)
        if wordings:
            if until is None:
                return self._with_later_printings(record_id, int(wordings[-1][1]))
            for last, mask in wordings:
                if last == until:
                    return int(mask)
        shipped = self._site_mask(record_id)
        if until is None or not self.mask(until):
            return self._with_later_printings(record_id, shipped)
        return shipped & ((self.mask(until) << 1) - 1)  # a curated wording: up to ``until``

    def _with_later_printings(self, record_id: str, printing: int) -> int:
        """``printing``, and the releases after it that may print a C++ diagnostic too: those
        whose C++ was not read, for one printed by the newest release whose C++ was; every
        release after its file left JAX's source, for one of Mosaic TPU's compiler printed
        until then (libtpu, installed beside them, runs those passes still)."""
        if record_id not in self._compiled_ids:
            return printing
        if printing & self._cpp_newest_read:
            printing |= self._cpp_unread
        last, later = self._left_for_libtpu.get(record_id, (0, 0))
        return printing | later if printing & last else printing

    @cached_property
    def _left_for_libtpu(self) -> dict[str, tuple[int, int]]:
        """Record id → (the last release of its file's diagnostics, the releases after it),
        for each diagnostic of Mosaic TPU's compiler whose file has none in the newest
        releases whose C++ was read, printed until its file's last: the passes that left for
        libtpu after 0.8.1 (``infer_vector_layout.cc``, ``apply_vector_layout.cc``), and
        ``vreg_util.cc`` after 0.10.2. A message may name such a release no longer; what
        libtpu prints is not in JAX's source."""
        masks = {
            site.record_id: (site.file, union(mask for _, mask in compiled_lines))
            for site, compiled_lines in self._compiled
            if site.file.startswith(LIBTPU_COMPILER)
        }
        last: dict[str, int] = {}
        for file, mask in masks.values():
            last[file] = max(last.get(file, 0), 1 << (mask.bit_length() - 1))
        if not last:
            return {}
        newest_read = self._cpp_newest_read or 1 << (len(self.releases) - 1)
        every = (1 << len(self.releases)) - 1
        return {
            record_id: (last[file], every & ~(2 * last[file] - 1))
            for record_id, (file, mask) in masks.items()
            if last[file] < newest_read and mask & last[file]
        }

    @cached_property
    def _compiled_ids(self) -> frozenset[str]:
        return frozenset(site.record_id for site, _ in self._compiled)

    def mask_of(self, releases: Iterable[str]) -> int:
        return union(self.mask(release) for release in releases)

    def rows_at(self, file: str, line: int) -> Sequence[list[int]]:
        """The sites on a line of ``file``, of whichever function, as [site number,
        releases with it there]."""
        return self._lines.get(file, {}).get(str(line), ())

    def read_alike(self, record_id: str) -> int:
        """The releases of the record's older wordings that its current pattern reads too."""
        return self._read_alike.get(record_id, 0)

    def function_sites(self, file: str, function: str) -> Sequence[int]:
        """The numbers of the sites in ``file``'s functions of that name (a method's own
        name, as a frame prints it), in order."""
        return self._function_sites.get((file, function), [])

    def sites_stating(self, key: tuple[str, str]) -> Sequence[int]:
        """The numbers of the sites whose statement ``site_key`` reads as ``key``."""
        return self._sites_by_statement.get(key, ())

    def row_lines(self, row: int) -> list[tuple[str, int, int]]:
        """(file, line, releases) of each line that site number ``row`` stands on."""
        return self._row_lines[row]

    @cached_property
    def _sites_by_record(self) -> Mapping[str, Site]:
        return {site.record_id: site for site in (*self.sites, *(s for s, _ in self._compiled))}

    @cached_property
    def _site_lines(self) -> Mapping[str, list[tuple[str, int, int]]]:
        """Record id → (file, line, releases) of its site: built on first use."""
        table: dict[str, list[tuple[str, int, int]]] = {}
        for row, placed in self._row_lines.items():
            table.setdefault(self.sites[row].record_id, []).extend(placed)
        for site, compiled_lines in self._compiled:
            places = table.setdefault(site.record_id, [])
            places.extend((site.file, line, mask) for line, mask in compiled_lines)
        return table

    def frames(self, lines: Sequence[str], numbers: Collection[int]) -> list[Frame]:
        """The frames among ``lines[numbers]`` whose file is one with mined sites."""
        return [
            Frame(placed.file, placed.line, placed.function, number)
            for number, placed in self.placed_frames(lines, numbers)
        ]

    def placed_frames(
        self, lines: Sequence[str], numbers: Collection[int]
    ) -> list[tuple[int, PlacedFrame]]:
        """``frames``, each with what the index says of it, in paste order."""
        placed = self._placed
        found = []
        for number, text in enumerate(lines):
            if number not in numbers:
                continue
            if "File " not in text:
                if ".py" not in text:
                    continue
                if ".py:" in text:
                    # pytest's location of a frame whose source it printed above, without the
                    # function's name: placed as if it named the function that source begins.
                    unnamed = INDENTED_FRAME.match(text)
                    if unnamed is not None and unnamed["ppath"] and not unnamed["pfunction"]:
                        function = function_above(lines, number)
                        location = f"{unnamed['ppath']}:{unnamed['pline']}"
                        text = f"{location}: in {function}" if function else text
                elif (listed := ipython_frame(lines, number)) is not None:
                    text = listed[0]  # placed as pytest's location of the same frame
                else:
                    continue
            frame = placed.get(text, _UNREAD)
            if frame is _UNREAD:
                frame = self._place(text)
            if frame is not None:
                found.append((number, frame))
        return found

    def _place(self, text: str) -> PlacedFrame | None:
        """The frame a line shows if its file is one mined, with the releases it names;
        remembered by the line's text, since tracebacks repeat frames and pastes share JAX's."""
        match = INDENTED_FRAME.match(text)
        frame = None if match is None else self.frame_of(match, 0)
        placed = None
        if frame is not None:
            mask = 0
            for _site, site_mask in self.sites_at(frame):
                mask |= site_mask
            kind = "frame" if mask else "function"
            mask = mask or self.spanning(frame)
            shown = f"{frame.file}:{frame.line} {frame.function}".rstrip()
            machinery = frame.file.startswith(FRAME_SCOPE)
            placed = PlacedFrame(
                frame.file, frame.line, frame.function, shown, kind, mask, machinery
            )
        if len(self._placed) >= MAX_REMEMBERED:
            self._placed.clear()
        self._placed[text] = placed
        return placed

    def spanning(self, frame: Frame) -> int:
        """The releases whose function of the frame's name spans the frame's line."""
        mask = 0
        for first, last, releases in self._spans.get(frame.file, {}).get(frame.function, ()):
            if first <= frame.line <= last:
                mask |= releases
        return mask

    def frame_of(self, match: re.Match[str], number: int) -> Frame | None:
        """The frame a line matching ``INDENTED_FRAME`` shows, if its file is one mined."""
        path = match["path"] or match["ipath"] or match["ppath"]
        file = self._file(path.replace("\\", "/"))
        if file is None:
            return None
        line = int(match["line"] or match["iline"] or match["pline"])
        function = match["function"] or match["ifunction"] or match["pfunction"] or ""
        return Frame(file, line, function.rsplit(".", 1)[-1], number)

    @cached_property
    def _function_sites(self) -> Mapping[tuple[str, str], list[int]]:
        """(file, function) → its sites' numbers, in order."""
        table: dict[tuple[str, str], list[int]] = {}
        for number, site in enumerate(self.sites):
            key = (site.file, site.function.rsplit(".", 1)[-1])
            table.setdefault(key, []).append(number)
        return table

    def _file(self, path: str) -> str | None:
        """The path from its ``jax/`` (or ``jaxlib/``) on, from the first such folder after
        which it is a file with sites (``~/src/jax/jax/_src/...``: the second)."""
        if path in self._paths:
            return self._paths[path]
        self._paths[path] = None
        if len(self._paths) > MAX_REMEMBERED:
            self._paths.clear()
        for start in (m.start() for m in _PACKAGE_DIRECTORY.finditer(path)):
            if path[start:] in self.files:
                self._paths[path] = path[start:]
                return path[start:]
        return None


# The tables worked out on first use, and those a packed index holds entry by entry: the
# large ones, looked up a key at a time.
_WORKED_OUT = tuple(
    name for name, value in vars(FrameIndex).items() if isinstance(value, cached_property)
)
_PACKED_TABLES = (
    "_lines",
    "_spans",
    "_wordings",
    "_sites_by_statement",
    "_row_lines",
    "_sites_by_record",
    "_site_lines",
    "_function_sites",
)


def _statement(site: Site) -> str:
    """A check as it reads wherever it moves: an assert's condition, a raise's message with
    its fields erased (``{buffer.shape}`` and ``{array.shape}`` alike)."""
    return site.condition if site.kind == "assert" else _FIELDS.sub("{}", site.message)


def site_key(kind: str, error_class: str, condition: str, message: str) -> tuple[str, str]:
    """An assert is known by its condition, a raise by its class and message template."""
    return ("assert", condition) if kind == "assert" else (error_class, message)


_DEF = re.compile(r"\s*(?:async\s+)?def\s+(\w+)\s*\(")
_FIELDS = re.compile(r"\{[^{}]*\}")
# Where the source pytest printed for a frame begins: the line between two frames, the
# test's header, or the location of the frame before.
_PYTEST_ENTRY_START = re.compile(r"\s*(?:(?:_ ){3,}|_{3,} |\S+?\.py:\d+:)")
# Lines of a frame's source that pytest prints, looked through for the function's ``def``.
MAX_SOURCE_LISTED = 500
# IPython 7's frame of a library file, its path a link in a copy of Colab's rendered output
# ("[/x/jax/…/lowering.py](https://…) in lower_jaxpr_to_func(ctx, …)"), then the source
# around the frame's line, that line marked by an arrow: "--> 682     body.func_op.verify()".
_IPYTHON_FRAME = re.compile(
    r"\[?(?P<path>[^\s\[\]]+\.py)(?:\]\([^)\s]*\))? in (?P<function>[\w<>.]+)\("
)
_IPYTHON_ARROW = re.compile(r"\s*-+>\s*(?P<line>\d+)\s")
MAX_IPYTHON_SOURCE = 12  # lines IPython lists of a frame's source, its context and more


def ipython_frame(lines: Sequence[str], number: int) -> tuple[str, str] | None:
    """IPython 7's frame of a library file on line ``number`` as pytest prints a frame's
    location (``path.py:682: in function``), its line read from the arrow of the source
    IPython lists under it, and the source on that line; ``None`` for no such frame, or
    none with its arrow."""
    frame = _IPYTHON_FRAME.match(lines[number])
    if frame is None:
        return None
    for text in lines[number + 1 : number + 1 + MAX_IPYTHON_SOURCE]:
        arrow = _IPYTHON_ARROW.match(text)
        if arrow is not None:
            location = f"{frame['path']}:{arrow['line']}: in {frame['function']}"
            return location, text[arrow.end() :].strip()
        if not text.strip():
            return None  # the frame's listing ended without an arrow
    return None


def function_above(lines: Sequence[str], below: int) -> str:
    """The function whose source pytest printed above line ``below`` (the frame's E lines
    or its location), or ``""``: the first ``def`` of that source, as the ones after it are
    functions defined inside."""
    function = ""
    for number in range(below - 1, max(-1, below - 1 - MAX_SOURCE_LISTED), -1):
        text = lines[number]
        if _PYTEST_ENTRY_START.match(text):
            break
        found = _DEF.match(text)
        if found is not None:
            function = found[1]
    return function


@cache
def _load(path: Path, functions: Path) -> FrameIndex:
    return FrameIndex(orjson.loads(path.read_bytes()), orjson.loads(functions.read_bytes()))
