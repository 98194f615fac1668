"""Which JAX release a paste comes from, read from its frames and the versions it names.

Each release puts its error sites and its functions at known lines (the mined dataset, and
``data/jax-functions.json``), so a traceback's JAX frames narrow down the releases it can
come from: a frame on a site's line names the releases with that site at that line, any
other frame the releases whose function of its name spans its line. Versions the paste
spells out (``jax==0.9.2``, ``jaxlib 0.10.0.dev20260101``, ``site-packages/jax-0.7.2``) are
read too, and a version the user gives wins over all of it. Once messages are matched,
``date_by_wording`` narrows the reading to the releases that printed their wordings.

The frames are read through ``FrameIndex`` (``app.matching.frames``), which knows where
each release put its sites and functions; this module weighs what they say.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from typing import NamedTuple

from app.jaxref.releases import release_key, runs
from app.matching.frames import FrameIndex, PlacedFrame
from app.matching.raise_points import SourceLine

# "jax==0.9.2", "jax 0.9.2", "jax version 0.9.2", "jax: 0.9.2", "jaxlib-0.10.0.dev20260101",
# "jax-0.7.2.dist-info", "jax_version='0.8.1'", pip's "jax[cuda12]==0.4.31", "jax (0.4.31)",
# and in prose "JAX 0.4.30", "JAX version: 0.4.26", "Jax 0.4.33".
# It starts with its literal, so that ``re`` looks for "jax" and nothing else between, then
# looks at one character: in a path ("jax/_src") or a module ("jax._src") it is soon passed.
# A pattern for any case of "jax" has no literal to look for: over a 20 KB traceback it took
# 0.30 ms, against 0.02-0.04 ms. The capitalized names are tried where ``str.find`` finds a
# "J", rare in a traceback: ``re``'s own search for it took as long as the whole pattern's.
_VERSION_FORM = (
    r"(?P<package>{name}(?=[lL _vV=:\s\[(-]|\.__version__)(?:lib|LIB)?)"
    r"(?:\[[\w,.-]{{1,64}}\])?"  # pip's extras
    r"(?:[ _-]?(?:version|Version|VERSION)|\.__version__\)?)?"
    r"(?:\s*(?:==|=|:|\s|\()\s*|-)['\"]?v?"
    r"(?P<version>\d{{1,6}}\.\d{{1,6}}\.\d{{1,6}}(?:\.\d{{1,6}})?"
    r"(?:\.?dev\w{{0,32}}|rc\d{{1,6}})?)(?!\d)"
)
_VERSION = re.compile(_VERSION_FORM.format(name="jax"))
_CAPITALIZED_VERSION = re.compile(_VERSION_FORM.format(name="J(?:ax|AX)"))
# The "J"s tried one by one before ``re`` searches the rest of the paste for the capitalized.
MAX_CAPITALS_FOUND = 64
_RELEASE_PART = re.compile(r"\d+(?:\.\d+){2,3}")


class Evidence(NamedTuple):  # a tuple: a long traceback gives one per distinct JAX frame
    """One line of the paste that says which releases it comes from."""

    # "frame" (a frame on a site's line), "function" (a frame elsewhere in its function),
    # "version", or "wording" (a matched message as only some releases' sites printed it)
    kind: str
    line: int  # the pasted line's number with ``origins``, else the index into the lines read
    text: str  # what was read: "jax/_src/pallas/core.py:770 check_invariants", "jax==0.9.2"
    releases: tuple[str, ...]


@dataclass(frozen=True)
class ReleaseReading:
    """The releases the paste can come from, and why; ``used`` is the one matching follows."""

    releases: tuple[str, ...]  # oldest first; empty when nothing in the paste tells
    span: str  # "0.8.0–0.8.1", "0.4.31, 0.5.0–0.5.2"
    frames: int  # JAX frames that agree with ``releases``
    evidence: tuple[Evidence, ...]
    given: str | None  # the user's jaxVersion
    used: str | None  # the user's, else the newest release the paste allows
    contradiction: str | None  # the user's version against the paste's, or the paste's own
    # A version the paste names that is no mined release (a nightly newer than the newest),
    # and the release followed in its place.
    outside: str | None = None


class Worded(NamedTuple):
    """A message matched in the paste, as ``date_by_wording`` reads its releases from it."""

    line: int  # the pasted line's number
    text: str  # the wording's words that matched: the pattern's longest literal
    record_ids: tuple[str, ...]  # the record matched, then the others the message fits
    # Of each wording of the record that reads the message, the last release printing it;
    # None: today's
    untils: tuple[str | None, ...]


def read_release(
    index: FrameIndex,
    lines: Sequence[str],
    frame_lines: Collection[int],
    given: str | None,
    origins: Sequence[int] | None = None,
) -> ReleaseReading:
    """The releases the paste can come from, by its JAX frames and the versions it
    names; ``given`` (the user's) wins, and disagreeing with the paste is reported.
    Evidence points at ``origins[n]`` for line ``n`` (the pasted line), if given."""
    evidence: list[Evidence] = []
    masks: list[int] = []
    seen: set[str] = set()
    # JAX's machinery (jit, lowering) dates a paste only where nothing else of JAX's does:
    # the frames of Pallas a traceback holds already do, and are read for less.
    placed = index.placed_frames(lines, frame_lines)
    read = [(n, frame) for n, frame in placed if frame.mask and not frame.machinery]
    for number, frame in read or [(n, frame) for n, frame in placed if frame.mask]:
        if frame.text in seen:  # a frame printed again (recursion) tells nothing new
            continue
        seen.add(frame.text)
        mask = frame.mask
        if frame.kind == "frame" and number + 1 < len(lines):
            mask = _as_its_source_shows(index, frame, lines[number + 1].strip())
        masks.append(mask)
        line = origins[number] if origins else number
        evidence.append(Evidence(frame.kind, line, frame.text, index.names(mask)))
    everything = (1 << len(index.releases)) - 1
    best, agreeing = _most_agreed(masks, everything)
    stated, unmined = _stated(index, lines, evidence, origins)
    contradiction = None
    if stated:
        if masks and not stated & best:
            contradiction = (
                f"the paste names {runs(index.names(stated))} but its frames read "
                f"{runs(index.names(best))}"
            )
        best = stated
    releases = index.names(best) if (masks or stated) else ()
    used = given
    if given is None and releases:
        used = releases[-1]
    elif given is not None and releases and _release_of(given) not in releases:
        contradiction = f"jaxVersion {given} but the paste reads {runs(releases)}"
    outside = None
    if unmined:
        version, release = unmined[0]
        used = used or _stand_in(index, release)
        outside = f"the paste names jax {version}, {_placing(index, release)}; "
        outside += f"the answer follows {used}"
    return ReleaseReading(
        releases,
        runs(releases),
        agreeing,
        tuple(evidence),
        given,
        used,
        contradiction,
        outside,
    )


def date_by_wording(
    index: FrameIndex, reading: ReleaseReading, worded: Sequence[Worded]
) -> ReleaseReading:
    """``reading`` narrowed by the messages matched: a site's wording was printed by some
    releases only, and a site stands in some releases only. A message that fits a record
    without a site (curated knowledge alone) tells nothing; one that leaves no release
    the frames and versions read is reported, and they are kept."""
    if reading.outside is not None:  # the paste names a release errata has not mined
        return reading
    everything = (1 << len(index.releases)) - 1
    allowed = read = index.mask_of(reading.releases) or everything
    evidence = list(reading.evidence)
    contradiction = reading.contradiction
    for message in worded:
        mask = _printing(index, message)
        if not mask:
            continue
        if not allowed & mask:
            contradiction = contradiction or (
                f"the paste reads {runs(index.names(allowed))} but its message's wording "
                f"was printed in {runs(index.names(mask))}"
            )
        elif allowed & mask != allowed:
            allowed &= mask
            evidence.append(Evidence("wording", message.line, message.text, index.names(mask)))
    if allowed == read:
        if contradiction == reading.contradiction:
            return reading
        return replace(reading, contradiction=contradiction)
    releases = index.names(allowed)
    given = reading.given
    if given is not None and _release_of(given) not in releases:
        contradiction = f"jaxVersion {given} but the paste reads {runs(releases)}"
    return replace(
        reading,
        releases=releases,
        span=runs(releases),
        evidence=tuple(evidence),
        used=given or releases[-1],
        contradiction=contradiction,
    )


def _stated(
    index: FrameIndex, lines: Sequence[str], evidence: list[Evidence], origins: Sequence[int] | None
) -> tuple[int, list[tuple[str, str]]]:
    """The releases the paste spells out (``jax==0.9.2``), a development version read
    as the release it numbers; and, in paste order, the versions it names that are no
    mined release (``jax 0.11.1.dev20260814``, newer than any)."""
    mask = 0
    unmined: list[tuple[str, str]] = []  # (the version as named, its release)
    text = "\n".join(lines)
    line = position = 0
    for found in _versions_named(text):
        if found.start() and (
            text[found.start() - 1].isalnum() or text[found.start() - 1] in "_.-"
        ):
            continue  # part of a longer name: "myjax==1.0.0", "pjax-0.1.0"
        line += text.count("\n", position, found.start())
        position = found.start()
        release = _release_of(found["version"])
        if release is None:
            continue
        bit = index.mask(release)
        mask |= bit
        if not bit:
            unmined.append((found["version"], release))
        shown = f"{found['package'].lower()} {found['version']}"
        shown_at = origins[line] if origins else line
        evidence.append(Evidence("version", shown_at, shown, (release,) if bit else ()))
    return mask, unmined


def _versions_named(text: str) -> list[re.Match[str]]:
    """Every version ``text`` names, in the order it names them."""
    named = list(_VERSION.finditer(text))
    in_lower_case = len(named)
    at = text.find("J")
    for _ in range(MAX_CAPITALS_FOUND):
        if at == -1:
            break
        if (found := _CAPITALIZED_VERSION.match(text, at)) is not None:
            named.append(found)
        at = text.find("J", at + 1)
    else:  # a paste full of capitals: ``re`` searches the rest in one call
        named.extend(_CAPITALIZED_VERSION.finditer(text, at))
    return named if len(named) == in_lower_case else sorted(named, key=re.Match.start)


def _release_of(version: str) -> str | None:
    """The release a version numbers, its development suffix dropped: ``0.12.0.2.dev…``
    is 0.12.0.2, a release after 0.12.0.1, not the 0.12.0 its first three parts name."""
    found = _RELEASE_PART.match(version)
    return None if found is None else found[0]


def _as_its_source_shows(index: FrameIndex, frame: PlacedFrame, source: str) -> int:
    """The releases of a frame on a site's line in which that line holds the statement
    the frame's source line shows, where several sites stood there in turn (an assert
    in some releases, the one above it in others); all of them where it tells none."""
    here = index.rows_at(frame.file, frame.line)
    if len(here) < 2:  # one site's line in every release that has one there
        return frame.mask
    statement = SourceLine.read(source)
    shown = 0
    for number, mask in here:
        site = index.sites[number]
        if statement.shows(site) or statement.raised_class == site.error_class:
            shown |= mask
    return shown & frame.mask or frame.mask


def _most_agreed(masks: Sequence[int], everything: int) -> tuple[int, int]:
    """The releases most frames agree with, and how many frames agree with them.

    Each release's count is kept in binary across bit planes (plane ``k`` holds bit ``k``
    of every release's count), so a frame's mask is added with a carry through a few
    planes instead of a step per release.
    """
    if not masks:
        return everything, 0
    planes: list[int] = []
    named = 0  # releases some frame names
    for mask in masks:
        named |= mask
        carry = mask
        for k, plane in enumerate(planes):
            planes[k], carry = plane ^ carry, plane & carry
            if not carry:
                break
        if carry:
            planes.append(carry)
    best, top = named, 0
    for k in reversed(range(len(planes))):  # the highest count, its bits from the top down
        if best & planes[k]:
            best &= planes[k]
            top |= 1 << k
    return best, top


def _printing(index: FrameIndex, message: Worded) -> int:
    """The releases that may have printed the message; none where a record it fits has
    no site, since that record may come from any release."""
    mask = 0
    for record_id in message.record_ids:
        printed = 0
        for until in message.untils:
            printed |= index.wording_releases(record_id, until)
            if until is None:
                printed |= index.read_alike(record_id)
        if not printed:
            return 0
        mask |= printed
    return mask


def _stand_in(index: FrameIndex, release: str) -> str:
    """The mined release closest below an unmined ``release``, whose wordings and lines
    are the likeliest to be its own; the oldest mined for an older one."""
    below = [r for r in index.releases if release_key(r) <= release_key(release)]
    return below[-1] if below else index.releases[0]


def _placing(index: FrameIndex, release: str) -> str:
    """Where an unmined ``release`` stands against the mined ones."""
    if release_key(release) > release_key(index.releases[-1]):
        return f"newer than {index.releases[-1]}, the newest release mined"
    if release_key(release) < release_key(index.releases[0]):
        return f"older than {index.releases[0]}, the oldest release mined"
    return "not a release mined"
