"""One error site across releases: linking each release's sites to the sites already known.

A site is the same site in the next release (or the one before) when its file, enclosing
function, error class and kind persist and its message is the same or reworded (the three
wordings of the warpgroup-bytes error are one site). Ids are given once, when a site is first
seen, and kept: linking a new release never changes an id, and a site that disappears keeps
its record with its last release. Releases join at either end: one older than every release
linked so far is linked backward, to the sites of the oldest, so mining older releases
changes no id either.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from rapidfuzz import fuzz

from app.jaxref.releases import release_key
from app.jaxref.scope import part_of_jax
from app.knowledge.sites import Site

# Two wordings of one site share most of their text; below this similarity (0–100) a
# changed message in the same function is a new site, not a rewording, unless the site
# still checks the same condition (then its message was rewritten, not replaced).
REWORDING_SIMILARITY = 60.0
WINDOW = 18  # source lines each side of the site, as the dataset's records have


@dataclass
class Wording:
    """One message of a site, and the releases that printed it."""

    template: str
    pattern: str
    first: str
    last: str


@dataclass
class Appearance:
    """Where a site stands in one release: a site that moved stood elsewhere before."""

    release: str
    line: int
    commit: str | None
    file_path: str
    function: str | None
    # an assert's condition then: a quoted assert is told by its condition (``frames``)
    condition: str | None = None


@dataclass
class Track:
    """A site followed through releases; the newest release's facts describe it."""

    id: str
    site: Site  # as found in the newest release it is in
    wordings: list[Wording]
    appearances: list[Appearance]
    source: str | None = None  # the 37-line window around the newest line
    source_start: int | None = None
    source_end: int | None = None
    curated: bool = False  # the id is a curated record's: mined facts join it as an annotation
    # As found in the oldest release it is in. None for a site read back from a dataset
    # file, which keeps the newest release's facts only: such sites are linked forward only.
    first_site: Site | None = None

    @property
    def releases(self) -> list[str]:
        return [appearance.release for appearance in self.appearances]


@dataclass(frozen=True)
class _End:
    """The end of the linked releases that a release joins: after the newest, or before the
    oldest (``backward``). Each track is compared at that end: its site, line and release
    there."""

    backward: bool

    def site(self, track: Track) -> Site:
        if not self.backward:
            return track.site
        if track.first_site is None:
            raise ValueError(
                f"site {track.id} was read from a dataset file, which keeps only its newest "
                "release's facts: link older releases from the sources "
                "(errata admin mine-releases)"
            )
        return track.first_site

    def appearance(self, track: Track) -> Appearance:
        return track.appearances[0 if self.backward else -1]


@dataclass(frozen=True)
class Found:
    """A site of the release being linked, with its source window."""

    site: Site
    source: str
    source_start: int
    source_end: int


def _key(site: Site) -> tuple[str, str | None, str, str]:
    return (site.file_path, site.function, site.error_class, site.kind)


def comparable_text(site: Site) -> str:
    """What tells two sites of one function apart: the message, or a bare assert's test."""
    return site.template or f"assert {site.condition or ''}"


def link_release(
    tracks: dict[str, Track],
    release: str,
    commit: str | None,
    found: Iterable[Found],
) -> None:
    """Add ``release``'s sites to ``tracks`` (by id), in place.

    ``release`` is newer than every release linked so far, or older than every one: its
    sites are then compared with the sites of the neighbouring release, the newest or the
    oldest. Sites are paired within their file and function first; a site left over is then
    taken as moved (to another file or function: ``LaunchContext.async_copy`` became
    ``_prepare_tma`` and back) when a site of the neighbouring release that did not continue
    raised the same class with the same message and condition.
    """
    neighbour, end = _neighbour(tracks, release)
    by_key: dict[tuple[str, str | None, str, str], list[Track]] = defaultdict(list)
    for track in tracks.values():
        by_key[_key(end.site(track))].append(track)
    incoming: dict[tuple[str, str | None, str, str], list[Found]] = defaultdict(list)
    for item in found:
        incoming[_key(item.site)].append(item)
    # A message the other release prints in the same function under another class was
    # not reworded: its class changed (tcgen05's ValueError "MMA with block scaling is not
    # supported for M=64" became a NotImplementedError in 0.7.1; the ValueError of another
    # message under the same guard had been taken for its rewording).
    found_classes = _classes(item.site for items in incoming.values() for item in items)
    known_classes = _classes(
        end.site(track) for track in tracks.values() if end.appearance(track).release == neighbour
    )

    def class_changed(site: Site, other_side: dict[_Printed, set[str]]) -> bool:
        return bool(other_side.get(_printed(site), set()) - {site.error_class})

    def may_reword(item: Found, track: Track) -> bool:
        """Neither message is still printed, under another class, by the other release."""
        return not class_changed(item.site, known_classes) and not class_changed(
            end.site(track), found_classes
        )

    pairs: dict[int, Track] = {}
    for key, items in incoming.items():
        items.sort(key=lambda item: item.site.line)
        pairs |= _pair(items, by_key.get(key, []), neighbour, end, may_reword)
    continued = {id(track) for track in pairs.values()}
    orphans = [
        track
        for track in tracks.values()
        if end.appearance(track).release == neighbour and id(track) not in continued
    ]
    leftovers = [item for items in incoming.values() for item in items if id(item) not in pairs]
    pairs |= _moved(leftovers, orphans, end)
    for items in incoming.values():
        for item in items:
            track = pairs.get(id(item)) or _new_track(tracks, item, release)
            tracks[track.id] = track
            _appear(track, item, release, commit, end)


# A site's class, kind, message, condition and, for a site with neither, its function; and
# the part of JAX it stands in.
_MovedKey = tuple[str, str, str, str | None, str | None, str]


def _moved(items: list[Found], orphans: list[Track], end: _End) -> dict[int, Track]:
    """Sites that moved: the same class, kind, message and condition, somewhere else. Those
    alike are taken in line order on both sides, as ``_pair`` keeps them: a function renamed
    with two identical asserts in it (``_checkify_lowering_rule`` → ``_check_lowering_rule``)
    keeps each where it stood."""
    waiting: dict[_MovedKey, list[Track]] = defaultdict(list)
    for track in sorted(orphans, key=lambda track: end.appearance(track).line):
        waiting[_moved_key(end.site(track))].append(track)
    pairs: dict[int, Track] = {}
    for item in sorted(items, key=lambda item: (item.site.file_path, item.site.line)):
        site = item.site
        candidates = waiting.get(_moved_key(site))
        if not candidates:
            continue
        chosen = min(
            candidates,
            key=lambda t: (
                end.site(t).function != site.function,
                end.site(t).file_path != site.file_path,
            ),
        )
        candidates.remove(chosen)
        pairs[id(item)] = chosen
    return pairs


def _moved_key(site: Site) -> _MovedKey:
    """What a moved site keeps: its class, kind, message and condition, and the part of JAX
    it stands in (jaxlib, the kernels JAX ships, the rest of jax). A site with neither
    message nor condition (a bare ``raise NotImplementedError``, an ``assert False``) keeps
    only its function's name, without which any two such sites, one gone and one new, would
    pair; and a short check alike in two parts is two checks (``assert rem == 0`` of the
    Python pass jaxlib dropped in 0.4.24 is not splash attention's, new in 0.4.24)."""
    # ``assert False`` holds nowhere: its condition tells it from no other, as a bare
    # ``raise``'s missing one does.
    anonymous = not site.template and site.condition in (None, "", "False")
    return (
        site.error_class,
        site.kind,
        comparable_text(site),
        site.condition,
        site.function if anonymous else None,
        part_of_jax(site.file_path),
    )


# A message as one function prints it: file, function, message.
_Printed = tuple[str, str | None, str]


def _printed(site: Site) -> _Printed:
    return (site.file_path, site.function, comparable_text(site))


def _classes(sites: Iterable[Site]) -> dict[_Printed, set[str]]:
    """The classes each function prints each message with."""
    classes: dict[_Printed, set[str]] = defaultdict(set)
    for site in sites:
        classes[_printed(site)].add(site.error_class)
    return classes


def _neighbour(tracks: dict[str, Track], release: str) -> tuple[str | None, _End]:
    """The linked release next to ``release`` (None for the first), and the end it joins."""
    known = {r for track in tracks.values() for r in track.releases}
    if not known:
        return None, _End(backward=False)
    newest = max(known, key=release_key)
    if release_key(release) > release_key(newest):
        return newest, _End(backward=False)
    oldest = min(known, key=release_key)
    if release_key(release) < release_key(oldest):
        return oldest, _End(backward=True)
    raise ValueError(
        f"release {release} is within {oldest}–{newest}, already linked: "
        "a release joins after the newest or before the oldest"
    )


def _pair(
    items: list[Found],
    candidates: list[Track],
    neighbour: str | None,
    end: _End,
    may_reword: Callable[[Found, Track], bool],
) -> dict[int, Track]:
    """Each found site to the known site it continues, if any: the same message and
    condition first, then the same message, then the most similar rewording that
    ``may_reword`` allows.

    Sites with the same message are paired in their order in the function (see
    ``_in_order``): pairing each with the nearest line instead swaps two of them as soon as
    code is added above one (``GetCudaComputeCapability``'s three ``CUDAErrorString`` sites
    traded places from release to release)."""
    free = list(candidates)
    pairs: dict[int, Track] = {}

    def cost(track: Track, item: Found) -> tuple[bool, int]:
        there = end.appearance(track)
        return (there.release != neighbour, abs(there.line - item.site.line))

    for same in (
        lambda site: (comparable_text(site), site.condition),
        lambda site: (comparable_text(site), None),
    ):
        waiting: dict[object, list[Found]] = defaultdict(list)
        for item in items:
            if id(item) not in pairs:
                waiting[same(item.site)].append(item)
        for key, group in waiting.items():
            tracks = [t for t in free if same(end.site(t)) == key]
            tracks.sort(key=lambda track: end.appearance(track).line)
            for item, track in _in_order(group, tracks, cost):
                pairs[id(item)] = track
                free.remove(track)
    scored = sorted(
        (
            (_similarity(end.site(t), item.site), t, item)
            for item in items
            if id(item) not in pairs
            for t in free
            if end.appearance(t).release == neighbour and may_reword(item, t)
        ),
        # among rewordings alike, the sites in their order (reworded together, as a
        # message's field renamed in three raises of one function, they keep it)
        key=lambda entry: (-entry[0], entry[2].site.line, end.appearance(entry[1]).line),
    )
    for score, track, item in scored:
        if score < REWORDING_SIMILARITY:
            break
        if id(item) in pairs or track not in free:
            continue
        pairs[id(item)] = track
        free.remove(track)
    return pairs


# Pairs made, their summed cost (sites no longer in the neighbouring release, lines moved),
# and the pairs as (item, track) positions.
_Pairing = tuple[int, tuple[int, int], tuple[tuple[int, int], ...]]


def _in_order(
    items: list[Found],
    tracks: list[Track],
    cost: Callable[[Track, Found], tuple[bool, int]],
) -> list[tuple[Found, Track]]:
    """As many pairs of ``items`` and ``tracks`` (each in line order) as can be made without
    two pairs crossing, and of those the cheapest set: order kept, lines moved the least.

    A dynamic programme over both lists; a group is one function's sites of one message,
    a few, some tens in Mosaic TPU's layout inference (``missing vector layout``)."""
    # best[i][j]: (pairs, summed cost, the pairs) for items[:i] and tracks[:j]
    nothing: _Pairing = (0, (0, 0), ())
    best = [[nothing] * (len(tracks) + 1) for _ in range(len(items) + 1)]
    for i, item in enumerate(items, start=1):
        for j, track in enumerate(tracks, start=1):
            stale, moved = cost(track, item)
            count, (stales, lines), chosen = best[i - 1][j - 1]
            paired = (count + 1, (stales + stale, lines + moved), (*chosen, (i - 1, j - 1)))
            best[i][j] = min(paired, best[i - 1][j], best[i][j - 1], key=_pairing_rank)
    return [(items[i], tracks[j]) for i, j in best[-1][-1][2]]


def _pairing_rank(pairing: _Pairing) -> tuple[int, tuple[int, int]]:
    """Most pairs first, then the least cost."""
    return (-pairing[0], pairing[1])


def _similarity(known: Site, found: Site) -> float:
    if known.kind == "raise" and bool(known.template) != bool(found.template):
        # A ``raise X`` beside ``raise X("…")`` under the same guard is another site, not
        # the message dropped or added: each keeps its own record.
        return 0.0
    score = fuzz.ratio(comparable_text(known), comparable_text(found))
    if known.condition and known.condition == found.condition:
        return max(score, REWORDING_SIMILARITY)
    return score


def _new_track(tracks: dict[str, Track], item: Found, release: str) -> Track:
    site = item.site
    wording = Wording(site.template, site.pattern, release, release)
    return Track(
        site_id(site, tracks),
        site,
        [wording],
        [],
        source=item.source,
        source_start=item.source_start,
        source_end=item.source_end,
        first_site=site,
    )


def site_id(site: Site, taken: dict[str, Track]) -> str:
    """16 hex digits from what identifies the site when first seen; never reused."""
    seed = "\n".join(
        [site.file_path, site.function or "", site.error_class, site.kind, comparable_text(site)]
    )
    for ordinal in range(len(taken) + 1):
        digest = hashlib.sha256(f"{seed}\n{ordinal}".encode()).hexdigest()[:16]
        if digest not in taken:
            return digest
    raise AssertionError("unreachable: more ordinals than ids")


def _appear(track: Track, item: Found, release: str, commit: str | None, end: _End) -> None:
    site = item.site
    condition = site.condition if site.kind == "assert" else None
    appearance = Appearance(release, site.line, commit, site.file_path, site.function, condition)
    if end.backward:  # the newest release's facts still describe the site
        oldest = track.wordings[0]
        if site.template != oldest.template:
            track.wordings.insert(0, Wording(site.template, site.pattern, release, release))
        else:
            oldest.first = release
        track.appearances.insert(0, appearance)
        track.first_site = site
        return
    current = track.wordings[-1]
    if site.template != current.template:
        track.wordings.append(Wording(site.template, site.pattern, release, release))
    else:
        current.last = release
    track.appearances.append(appearance)
    track.site = site
    track.source, track.source_start, track.source_end = (
        item.source,
        item.source_start,
        item.source_end,
    )


def source_window(lines: list[str], line: int) -> tuple[str, int, int]:
    """The lines ``line ± WINDOW`` (1-based, clipped to the file), each ending in a newline."""
    start = max(1, line - WINDOW)
    end = min(len(lines), line + WINDOW)
    text = "".join(f"{text}\n" for text in lines[start - 1 : end])
    return text, start, end
