"""Which JAX release a paste comes from, read from its frames and the versions it names.

Each release puts its error sites and its functions at known lines (the mined dataset, and
``data/jax-functions.json``), so a traceback's JAX frames narrow down the releases it can
come from: a frame on a site's line names the releases with that site at that line, any
other frame the releases whose function of its name spans its line. Versions the paste
spells out (``jax==0.9.2``, ``jaxlib 0.10.0.dev20260101``, ``site-packages/jax-0.7.2``) are
read too, and a version the user gives wins over all of it.

The index is derived from ``data/mined/jax-sites.jsonl`` (and the releases raising each
error of Pallas's public API: ``data/mined/jax-api.jsonl``, ``jax-calls.jsonl``) and
committed as ``data/frame-index.json`` (rebuilt by ``knowledge.frame_index``), so a process
loads it in a fraction of a second rather than parsing 20 MB of records.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import cache, cached_property, lru_cache
from pathlib import Path
from typing import Any, Literal, NamedTuple

import orjson

from app.jaxref.files import FRAME_INDEX_FILE, FUNCTIONS_FILE
from app.jaxref.releases import release_commits, runs, source_url, union
from app.jaxref.scope import FRAME_SCOPE, backend_of
from app.knowledge.python_source import mine_file, spelled_as_class
from app.matching.tracebacks import IPYTHON_SOURCE_LINE

# "File "/x/site-packages/jax/_src/pallas/core.py", line 770, in check_invariants",
# IPython's "File ~/x/jax/_src/pallas/core.py:770, in check_invariants(self)", and pytest's
# "/x/jax/_src/pallas/core.py:770: in check_invariants" or, after the source and E lines of
# the frame that raised, "/x/jax/_src/pallas/core.py:770: ValueError" (no function).
_INDENTED_FRAME = re.compile(
    r'\s*(?:File (?:"(?P<path>[^"\n]+)", line (?P<line>\d+), in (?P<function>[\w<>.]+)'
    r"|(?P<ipath>[^\s,]+):(?P<iline>\d+), in (?P<ifunction>[\w<>.]+))"
    r"|(?P<ppath>\S+?\.py):(?P<pline>\d+):(?: in (?P<pfunction>[\w<>.]+)| [\w.]+)?\s*$)"
)
# Lines between a frame and its exception: the source line, carets, JAX's separators.
MAX_FRAME_TAIL = 6
# Paths and frame lines as printed, and sets of releases, each remembered with what it reads as.
MAX_REMEMBERED = 4096
# A printed source line must show this much of an assert's condition to be taken for it.
MIN_CONDITION = 8
# A ``raise`` or ``assert`` shown as source: in a traceback, a diff (``-``, ``+``), pytest's
# failing line (``>``) or a quote (``> ``).
STATEMENT = re.compile(r"[\s>+-]*(?=raise\s+[\w.]+\s*\(|assert\s)")
# Lines a statement shown as source may span (a message built over several lines), and the
# most characters it is read in: JAX's longest ``raise`` is far shorter, and a paste is
# anybody's text.
MAX_STATEMENT_LINES = 8
MAX_STATEMENT_CHARS = 4000
# A quoted statement outside a traceback names JAX's site only when its message (or an
# assert's condition) is this long: ``raise ValueError("bad shape")`` may be anybody's.
MIN_QUOTED = 20
# The class a frame's source line raises, guarded on the same line or not
# (``if num_extensive: raise NotImplementedError``, ``raise ValueError(f"…")``).
_RAISED = re.compile(r"(?:if\s+(?P<guard>.+?):\s*)?raise\s+(?P<cls>[\w.]+)")
# Why Python raised on a line of JAX's that raises nothing, where the message's first lines
# tell more than its class: what they say, and what it means ({caller}: the frame's function).
_WHY_RAISED = (
    # pybind11's words for a function of a compiled module called with arguments it does not
    # take, and the signatures it takes: one of jaxlib's, called by a jax of another build.
    (
        re.compile(
            r"(?P<function>\w+)\(\): incompatible function arguments\. The following argument "
            r"types are supported:\s+1\. \(self: jaxlib\."
        ),
        "jaxlib's compiled {function} takes other arguments than JAX's {caller} passes it (the "
        "signatures listed are jaxlib's): the jax and jaxlib installed are of different builds "
        "(jax-ml/jax#17311: jax 0.4.15 with a jaxlib nightly). Install both at one release, "
        "pip install -U jax jaxlib (with the extra of your accelerator, such as 'jax[cuda12]')",
    ),
    # MLIR's verifier on the kernel's body, the error located at a jaxpr equation
    # (``error: "/swap[tree=…]"(callsite(…``), its diagnostic after the location.
    (
        re.compile(r"Verification failed:\s*error: \"/(?P<primitive>\w+)"),
        "MLIR's verifier rejected the IR that JAX's {caller} built for the kernel's {primitive} "
        "equation; the diagnostic after the location names the op and what it refused. In TPU "
        "kernels it is most often a scalar where a vector belongs: pl.program_id(0) or a value "
        "read from SMEM stored into a VMEM ref (jax-ml/jax#22817), or math on such a scalar "
        "(jax-ml/jax#20046). Keep scalars in SMEM refs (pltpu.SMEM), or compute and store "
        "vectors: jnp.full(o_ref.shape, x, o_ref.dtype)",
    ),
)
MAX_SAID_LINES = 3  # lines of a message read for what it tells (pybind11's signatures)
# What Python's parser and ``ast.unparse`` raise for an expression nested deeper than they
# go (``assert ------…1``): in a paste, that is no statement of JAX's.
_TOO_DEEP = (RecursionError, MemoryError)


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


@dataclass(frozen=True)
class RaisePoint:
    """A mined site the exception's last frame points at, or the paste quotes, with why; or
    the frame's own line, where no release has a site (Python's own error inside JAX)."""

    record_id: str | None  # None: the frame's line, on no site
    file: str
    function: str
    line: int  # the frame's line in JAX's source (a quote's: the newest quoting release's)
    releases: tuple[str, ...]  # those with this site on that line (none: an unmined release)
    paste_line: int  # the frame's (or the quoted statement's) line among the lines read
    reason: str
    # "quote": the paste shows the statement; "cut": the traceback ends at the frame, before
    # its exception line
    via: Literal["frame", "quote", "cut"] = "frame"


class Calling(NamedTuple):
    """What a traceback shows of a call of user code: JAX's frames after the user's last,
    innermost first, and the source line printed under that frame of the user's."""

    frames: tuple[Frame, ...]
    user_source: str | None


class SourceSite(NamedTuple):
    """A record's site as one release shipped it, and the link pinned to that commit."""

    file: str
    line: int
    release: str
    url: str


def _nearest(releases: int, wanted: int) -> int:
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


class SourceLine(NamedTuple):
    """A frame's source line, as far as it tells which site's statement raised."""

    raised_class: str | None  # ``raise ValueError(…)``'s; None for a helper's or no raise
    guard: str | None  # ``if num_extensive: raise …``'s, as the miner unparses conditions
    asserted: str | None  # an ``assert``'s condition, as the miner unparses conditions
    asserted_start: str | None  # what a multi-line assert's first line shows, spaces out

    @classmethod
    def read(cls, text: str) -> SourceLine:
        raised = _RAISED.match(text)
        raised_class = raised["cls"].rsplit(".", 1)[-1] if raised else None
        if raised_class is not None and not spelled_as_class(raised_class):
            raised_class = None  # a helper building the exception (``raise _unsupported(x)``)
        guard = _unparsed(raised["guard"]) if raised and raised["guard"] else None
        return cls(raised_class, guard, *_assertion(text))

    def shows(self, site: Site) -> str | None:
        """Why the line is ``site``'s statement, if it is."""
        if site.kind == "assert" and self._asserts(site.condition):
            return "the frame's source line is this assert's condition"
        if site.kind == "raise" and self.guard is not None and site.condition == self.guard:
            return f"the frame's source line is this raise, under `if {self.guard}:`"
        return None

    def _asserts(self, condition: str) -> bool:
        if self.asserted is not None:
            return condition == self.asserted
        start = self.asserted_start
        return start is not None and re.sub(r"\s+", "", condition).startswith(start)

    def raises_other_than(self, site: Site) -> bool:
        """Whether the line raises another class than ``site`` does: then it is not the
        site's line in the release that printed it, whatever line the site has in others."""
        return self.raised_class is not None and self.raised_class != site.error_class


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
# A path into JAX's internals, which no user's code is in.
_JAX_INTERNAL = re.compile(r"(?<![^/\\])(?:jax[/\\]_src|jaxlib)[/\\]")

_UNREAD = PlacedFrame("", 0, "", "", "", 0)  # a line not yet read, in ``FrameIndex._placed``
# Mosaic TPU's compiler in JAX's source; its passes left for libtpu after 0.8.1.
LIBTPU_COMPILER = "jaxlib/mosaic/dialect/tpu/"


class FrameIndex:
    """(file, line) → the sites there, per release; (file, function) → its lines, per release."""

    def __init__(self, data: dict[str, Any], functions: dict[str, Any] | None = None) -> None:
        self.releases: tuple[str, ...] = tuple(data["releases"])
        self._bits = {release: 1 << n for n, release in enumerate(self.releases)}
        self.sites = [Site(*row) for row in data["sites"]]
        # C++ diagnostics' sites, with their (line, releases): no frame stands on them.
        self._compiled = [(Site(*row[:-1]), row[-1]) for row in data["compiled"]]
        # Tracebacks print a function's own name: "check_invariants", not its class's.
        self._short_names = [site.function.rsplit(".", 1)[-1] for site in self.sites]
        self._lines: dict[str, dict[str, list[list[int]]]] = data["lines"]
        # File → function → [first line, last line, releases] (``knowledge.functions``).
        self._spans: dict[str, dict[str, list[list[int]]]] = {}
        if functions is not None:
            if tuple(functions["releases"]) != self.releases:
                raise ValueError("the function spans count other releases than the sites")
            self._spans = functions["files"]
        self.files = frozenset(self._lines).union(self._spans)
        # Record id → (the last release printing it, releases) of each wording, oldest first,
        # for the sites whose message changed.
        self._wordings: dict[str, list[list[Any]]] = data["wordings"]
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
        chosen = _nearest(shipped, self.mask(release) if release else 0)
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
        spanning = self._spanning(frame)
        raising = 0
        for _site, site_mask in self.sites_at(frame):
            raising |= site_mask
        mask = spanning & ~raising or spanning
        mask = mask & self.mask_of(possible) or mask
        if not mask:
            return None
        chosen = _nearest(mask, self.mask(release) if release else 0)
        return _source_site(frame.file, frame.line, self.names(chosen)[0])

    def backends_shown(self, lines: Sequence[str], numbers: Collection[int]) -> frozenset[str]:
        """The backends (``mosaic_gpu``, ``triton``, ``tpu``, ``core``) whose mined files the
        frames among ``lines[numbers]`` stand in."""
        return frozenset(backend_of(frame.file) for _, frame in self.placed_frames(lines, numbers))

    def quoted_sites(self, lines: Sequence[str]) -> frozenset[str]:
        """The records whose ``raise`` or ``assert`` the paste shows as source (a frame's
        source line, a diff, a code block), read as the miner reads JAX's: one message
        raised at several sites is told apart by the statement the paste quotes."""
        return frozenset(
            self.sites[row].record_id
            for _, key in self._statements(lines, range(len(lines)))
            for row in self._sites_by_statement.get(key, ())
        )

    def quoted_points(self, lines: Sequence[str], numbers: Iterable[int]) -> list[RaisePoint]:
        """The sites whose ``raise`` or ``assert`` lines ``numbers`` show as source, outside
        any traceback (a code block of an issue, a diff): a paste may ask about a statement
        of JAX's rather than show its error. Each is placed where the newest release with
        that statement has it (an assert rewritten since, as the releases asserting what the
        paste quotes had it). A statement of fewer than ``MIN_QUOTED`` characters (its
        message, or an assert's condition) could as well be the user's own code."""
        points = []
        for number, key in self._statements(lines, numbers):
            if len(key[1]) < MIN_QUOTED:
                continue
            places: dict[str, list[tuple[Site, str, int, int]]] = {}
            for row in self._sites_by_statement.get(key, ()):
                site = self.sites[row]
                at = places.setdefault(site.record_id, [])
                at.extend((site, file, line, mask) for file, line, mask in self._row_lines[row])
            for record_id, at in places.items():
                releases = union(mask for *_, mask in at)
                releases &= self.wording_releases(record_id, None)
                if not releases:
                    continue
                newest = _nearest(releases, 0)
                site, file, line, _ = next(place for place in at if place[3] & newest)
                names = self.names(releases)
                kind = "assert" if site.kind == "assert" else "raise"
                reason = f"JAX {runs(names)} has this {kind}"
                points.append(
                    RaisePoint(record_id, file, site.function, line, names, number, reason, "quote")
                )
        return points

    def _statements(
        self, lines: Sequence[str], numbers: Iterable[int]
    ) -> Iterator[tuple[int, tuple[str, str]]]:
        """Each ``raise`` or ``assert`` starting on lines ``numbers``, read over the lines
        it spans, as what tells its sites apart (``_statement_keys``)."""
        for number in numbers:
            text = lines[number]
            start = STATEMENT.match(text)
            if start is None:
                continue
            statement = text[start.end() :]
            for following in lines[number + 1 : number + MAX_STATEMENT_LINES]:
                if _statement_keys(statement) or len(statement) > MAX_STATEMENT_CHARS:
                    break
                marked = following[:1] in ("+", "-", ">")  # a diff's or pytest's mark
                statement += "\n" + following[marked:]
            for key in _statement_keys(statement):
                yield number, key

    @cached_property
    def _sites_by_statement(self) -> dict[tuple[str, str], list[int]]:
        """("assert", condition) or (class, message template) → the rows of such sites."""
        table: dict[tuple[str, str], list[int]] = {}
        for row, site in enumerate(self.sites):
            key = _site_key(site.kind, site.error_class, site.condition, site.message)
            table.setdefault(key, []).append(row)
        return table

    @cached_property
    def _row_lines(self) -> dict[int, list[tuple[str, int, int]]]:
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

    @cached_property
    def _sites_by_record(self) -> dict[str, Site]:
        return {site.record_id: site for site in (*self.sites, *(s for s, _ in self._compiled))}

    @cached_property
    def _site_lines(self) -> dict[str, list[tuple[str, int, int]]]:
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
                    unnamed = _INDENTED_FRAME.match(text)
                    if unnamed is not None and unnamed["ppath"] and not unnamed["pfunction"]:
                        function = _function_above(lines, number)
                        location = f"{unnamed['ppath']}:{unnamed['pline']}"
                        text = f"{location}: in {function}" if function else text
                elif (listed := _ipython_frame(lines, number)) is not None:
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
        match = _INDENTED_FRAME.match(text)
        frame = None if match is None else self._frame(match, 0)
        placed = None
        if frame is not None:
            mask = 0
            for _site, site_mask in self.sites_at(frame):
                mask |= site_mask
            kind = "frame" if mask else "function"
            mask = mask or self._spanning(frame)
            shown = f"{frame.file}:{frame.line} {frame.function}".rstrip()
            machinery = frame.file.startswith(FRAME_SCOPE)
            placed = PlacedFrame(
                frame.file, frame.line, frame.function, shown, kind, mask, machinery
            )
        if len(self._placed) >= MAX_REMEMBERED:
            self._placed.clear()
        self._placed[text] = placed
        return placed

    def _spanning(self, frame: Frame) -> int:
        """The releases whose function of the frame's name spans the frame's line."""
        mask = 0
        for first, last, releases in self._spans.get(frame.file, {}).get(frame.function, ()):
            if first <= frame.line <= last:
                mask |= releases
        return mask

    def _frame(self, match: re.Match[str], number: int) -> Frame | None:
        """The frame a line matching ``_INDENTED_FRAME`` shows, if its file is one mined."""
        path = match["path"] or match["ipath"] or match["ppath"]
        file = self._file(path.replace("\\", "/"))
        if file is None:
            return None
        line = int(match["line"] or match["iline"] or match["pline"])
        function = match["function"] or match["ifunction"] or match["pfunction"] or ""
        return Frame(file, line, function.rsplit(".", 1)[-1], number)

    def raise_points(
        self,
        lines: Sequence[str],
        structure: frozenset[int],
        exception_line: int,
        short_class: str,
        raised_at: int | None = None,
        possible: Iterable[str] = (),
    ) -> list[RaisePoint]:
        """The sites the frame that raised an exception points at, surest first: a site on
        the frame's line, an assert whose condition is the frame's source line (or a raise
        whose guard it shows: ``if num_extensive: raise NotImplementedError``), else the
        function's sites raising that class (a message built at run time, an unmined
        release). The frame is the one right above the exception line, or the one pytest
        printed after the message, on line ``raised_at``. A site of another function, or
        raising another class than the source line shows, is not on the frame's line in
        the paste's release, whatever line it has in others; nor is a site on that line
        only in releases other than ``possible``, those the paste reads, where the frame's
        function spans the line in one of them (0.10.1 raised the integer-bytes error on
        the line where 0.10.2 reads ``dst.type``).
        """
        found = self.raising_frame(lines, structure, exception_line, raised_at)
        if found is None:
            return []
        frame, source = found
        chosen, spanning = self._pointed_sites(frame, source, short_class, possible)
        if not chosen:
            said = "\n".join(lines[exception_line : exception_line + MAX_SAID_LINES])
            return self._frame_point(frame, short_class, said, spanning)
        return [
            self._raise_point(number, frame, mask, shown, short_class)
            for _, number, mask, shown in chosen
        ]

    def cut_points(
        self,
        lines: Sequence[str],
        structure: frozenset[int],
        end_line: int,
        possible: Iterable[str] = (),
    ) -> list[RaisePoint]:
        """The sites a traceback cut before its exception line ends at (a paste stopped at
        the last frame, a page that hid the rest): those on its last frame's line in the
        paste's releases, or whose statement its source line shows. ``end_line`` is where
        the exception line would have been. Not knowing the class, the function's other
        sites are no answer, nor is a line with no site: JAX may have raised deeper."""
        found = self.raising_frame(lines, structure, end_line, None)
        if found is None:
            return []
        frame, source = found
        # With no class to go by, only the sites the frame's line or source shows are chosen.
        chosen, _ = self._pointed_sites(frame, source, "", possible)
        cut = "the traceback ends at this frame, before its message"
        points = [self._raise_point(n, frame, mask, shown, "") for _, n, mask, shown in chosen]
        return [replace(point, via="cut", reason=f"{cut}; {point.reason}") for point in points]

    def _pointed_sites(
        self, frame: Frame, source: str, short_class: str, possible: Iterable[str]
    ) -> tuple[list[tuple[int, int, int, str | None]], int]:
        """The sites ``frame`` (showing ``source``) points at, surest first, as (rank, site,
        the releases with it on the frame's line, what the source line shows); and the
        releases whose function spans the frame's line (the paste's, where some are)."""
        on_line: dict[int, int] = {}  # site → the releases with it on the frame's line
        # The releases the paste reads, where the frame's function spans its line in one:
        # a frame of another release than the rest (a paste put together) keeps its own.
        spanning = self._spanning(frame)
        read = self.mask_of(possible)
        if not spanning & read:
            read = 0
        for number, mask in self._lines.get(frame.file, {}).get(str(frame.line), ()):
            on_line[number] = on_line.get(number, 0) | (mask & read if read else mask)
        ranked: list[tuple[int, int, int, str | None]] = []
        fallback: list[tuple[int, int, int, str | None]] = []
        statement = SourceLine.read(source)
        # A frame whose function is not printed is known by the sites on its line.
        if frame.function:
            candidates = self._function_sites.get((frame.file, frame.function), [])
        else:
            candidates = list(on_line)
        for number in candidates:
            site = self.sites[number]
            same_class = site.error_class == short_class
            shown = statement.shows(site)
            mask = on_line.get(number, 0)
            if statement.raises_other_than(site):
                mask = 0  # the frame is of another release than those of the site's line
            rank = 2 * bool(mask) + 2 * bool(shown) + same_class
            if mask or shown:
                ranked.append((rank, number, mask, shown))
            elif same_class:
                fallback.append((rank, number, mask, shown))
        chosen = ranked or fallback
        chosen.sort(key=lambda item: -item[0])
        return chosen, spanning & read or spanning

    def _frame_point(
        self, frame: Frame, short_class: str, said: str, releases: int
    ) -> list[RaisePoint]:
        """The raising frame itself, where no site is: a line of a JAX function that
        raised no ``raise`` of its own (``barrier.wait(…)`` on what is no barrier raises
        Python's ``AttributeError``), named with ``releases``, those whose function spans
        it (the paste's, where some are). ``said``, the message's first lines, may tell why."""
        if not releases:
            return []
        reason = (
            f"Python raised {short_class} inside JAX's {frame.function}, on a line that "
            "raises nothing itself: most often a value of another kind than it takes was "
            "passed in"
        )
        for words, why in _WHY_RAISED:
            if told := words.search(said):
                reason = why.format(caller=frame.function, **told.groupdict())
                break
        names = self.names(releases)
        return [
            RaisePoint(
                None, frame.file, frame.function, frame.line, names, frame.paste_line, reason
            )
        ]

    def _raise_point(
        self, number: int, frame: Frame, mask: int, shown: str | None, short_class: str
    ) -> RaisePoint:
        """Site ``number`` as the frame points at it, saying why."""
        reasons = []
        if mask:
            reasons.append(f"the frame is on this site's line in {runs(self.names(mask))}")
        if shown:
            reasons.append(shown)
        return RaisePoint(
            self.sites[number].record_id,
            frame.file,
            frame.function,
            frame.line,
            self.names(mask),
            frame.paste_line,
            "; ".join(reasons) or f"this function raises {short_class} here",
        )

    @cached_property
    def _function_sites(self) -> dict[tuple[str, str], list[int]]:
        """(file, function) → its sites' numbers, in order."""
        table: dict[tuple[str, str], list[int]] = {}
        for number, site in enumerate(self.sites):
            key = (site.file, site.function.rsplit(".", 1)[-1])
            table.setdefault(key, []).append(number)
        return table

    def raising_frame(
        self,
        lines: Sequence[str],
        structure: frozenset[int],
        exception_line: int,
        raised_at: int | None,
    ) -> tuple[Frame, str] | None:
        """The JAX frame that raised the exception at ``exception_line`` and its source line,
        if any: the one pytest printed on line ``raised_at``, else the frame right above."""
        if raised_at is not None:
            match = _INDENTED_FRAME.match(lines[raised_at])
            frame = None if match is None else self._frame(match, raised_at)
            if frame is None:
                return None  # the frame that raised is not JAX's
            if not frame.function:
                frame = frame._replace(function=_function_above(lines, exception_line))
            # pytest prints the frame's source up to the failing line, then the E lines.
            return frame, lines[exception_line - 1].strip() if exception_line else ""
        number, tail = exception_line - 1, 1
        while number >= 0 and number in structure and tail <= MAX_FRAME_TAIL:
            text = lines[number]
            match = _INDENTED_FRAME.match(text)
            if match is not None:
                frame = self._frame(match, number)
                if frame is None:
                    return None  # the last frame is not JAX's
                return frame, lines[number + 1].strip() if number + 1 < exception_line else ""
            if ".py" in text and (listed := _ipython_frame(lines, number)) is not None:
                located = _INDENTED_FRAME.match(listed[0])
                frame = None if located is None else self._frame(located, number)
                return None if frame is None else (frame, listed[1])
            # IPython lists a frame's source around its line: those lines are the frame's
            if not (text.lstrip()[:1] in _IPYTHON_SOURCE_START and _IPYTHON_SOURCE.match(text)):
                tail += 1
            number -= 1
        return None

    def calling_frames(
        self,
        lines: Sequence[str],
        structure: frozenset[int],
        exception_line: int,
        raised_at: int | None = None,
    ) -> Calling:
        """JAX's frames between the user's last frame and the exception at
        ``exception_line``, innermost first: where Python raised its own error at JAX's call
        of user code (``kernel() takes 2 positional arguments but 3 were given``), the
        functions that made the call. Frames of JAX's machinery (``linear_util.py``, which
        filtering hides, ``scope.FRAME_SCOPE``) are passed over; any other file's frame is the
        user's and ends them, so an error raised inside the user's function has none. With
        them, the source line printed under the user's frame, which shows the call of JAX's
        that led there."""
        number = exception_line - 1 if raised_at is None else raised_at
        found: list[Frame] = []
        while number >= 0 and (number in structure or number == raised_at):
            text = lines[number]
            match = _INDENTED_FRAME.match(text) if ".py" in text else None
            if match is not None:
                frame = self._frame(match, number)
                if frame is not None and not frame.file.startswith(FRAME_SCOPE):
                    found.append(frame)
                elif frame is None and not _JAX_INTERNAL.search(
                    match["path"] or match["ipath"] or match["ppath"]
                ):
                    below = lines[number + 1] if number + 1 < exception_line else ""
                    shown = not _INDENTED_FRAME.match(below) and below.strip("^~ \t")
                    return Calling(tuple(found), below.strip() if shown else None)
            elif text.startswith("Traceback (most recent call last)"):
                break
            number -= 1
        return Calling(tuple(found), None)

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


@lru_cache(maxsize=MAX_REMEMBERED)
def _statement_keys(statement: str) -> tuple[tuple[str, str], ...]:
    """What tells the sites of a ``raise`` or ``assert`` statement apart, as the miner
    reads it; none while the statement does not parse (its first lines only), or is too
    long or too deep to read."""
    if len(statement) > MAX_STATEMENT_CHARS:
        return ()
    try:
        sites = mine_file("", statement.strip())
    except _TOO_DEEP:
        return ()
    return tuple(
        _site_key(site.kind, site.error_class, site.condition or "", site.template)
        for site in sites
    )


def _site_key(kind: str, error_class: str, condition: str, message: str) -> tuple[str, str]:
    """An assert is known by its condition, a raise by its class and message template."""
    return ("assert", condition) if kind == "assert" else (error_class, message)


_DEF = re.compile(r"\s*(?:async\s+)?def\s+(\w+)\s*\(")
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
_IPYTHON_SOURCE = re.compile(IPYTHON_SOURCE_LINE)
_IPYTHON_SOURCE_START = frozenset("-0123456789")
MAX_IPYTHON_SOURCE = 12  # lines IPython lists of a frame's source, its context and more


def _ipython_frame(lines: Sequence[str], number: int) -> tuple[str, str] | None:
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


def _function_above(lines: Sequence[str], below: int) -> str:
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


def _assertion(source: str) -> tuple[str | None, str | None]:
    """What ``source`` (``assert <condition>[, message]``) asserts: its condition as the
    miner unparses it (``all((x for x in y))``), or, of a multi-line assert cut after its
    first line, what that line shows of it, without spaces; neither where it asserts
    nothing."""
    if not source.startswith("assert") or len(source) > MAX_STATEMENT_CHARS:
        return None, None
    try:
        statement = ast.parse(source).body[0]
        if isinstance(statement, ast.Assert):
            return ast.unparse(statement.test), None
    except SyntaxError:  # a multi-line assert, cut after its first line
        pass
    except _TOO_DEEP:
        return None, None
    printed = re.sub(r"\s+", "", source.removeprefix("assert")).rstrip("(,\\")
    return None, printed if len(printed) >= MIN_CONDITION else None


def _unparsed(expression: str) -> str | None:
    """A guard as a frame's source line prints it (``if num_extensive: raise …``), as the
    miner unparses conditions; ``None`` where it does not parse."""
    if len(expression) > MAX_STATEMENT_CHARS:
        return None
    try:
        return ast.unparse(ast.parse(expression, mode="eval").body)
    except (SyntaxError, *_TOO_DEEP):
        return None


@cache
def _load(path: Path, functions: Path) -> FrameIndex:
    return FrameIndex(orjson.loads(path.read_bytes()), orjson.loads(functions.read_bytes()))
