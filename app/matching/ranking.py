"""Of the records one error's message fits, which is reported, and in what order errors go.

The stage of ``matcher.match_paste`` after ``candidates``: each candidate's score is
weighed against the record's exception class and releases, the records fitting one error
are ordered best first, the first is reported with the others as its alternatives, and the
errors are ordered root causes first. Choosing is kept apart from finding, so that every
preference between records that print the same words is stated in one place.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from functools import cache

from app.jaxref.scope import backend_of
from app.matching.candidates import lead_in_classes
from app.matching.frames import Worded
from app.matching.index import AnyIndex, PatternEntry, wording_until
from app.matching.normalize import NormalizedPaste
from app.matching.report import CLASS_MISMATCH, VERSION_MISMATCH, Candidate, Match
from app.matching.values import (
    UserFrame,
    ValueSource,
    adopt_written_dtype,
    find_value_sources,
    infer_missing,
    needs_context,
    type_values,
    user_frame,
)

# libtpu's code and name of an error, right before its message: "E2003:
# CompileTimeMosaicUnprovenMemoryAccessAlignment: cannot statically prove that …"
_LIBTPU_ERROR_CODE = re.compile(r"\bE\d{4}:\s*[A-Z]\w+:\s*\Z")


def best_per_error(
    candidates: Sequence[Candidate],
    index: AnyIndex,
    paste: NormalizedPaste,
    versions: tuple[tuple[int, ...] | None, tuple[int, ...] | None],
    raised: Mapping[tuple[str, int], set[str]],
    quoted: Callable[[], frozenset[str]],
    backends: Callable[[], frozenset[str]],
    wrapping: Callable[[], frozenset[str]],
    newest: Callable[[str], int],
    outside: Callable[[str], bool],
) -> tuple[Match, ...]:
    """One match per error, in ``_rank``'s order, each error reported once. Of the records a
    message fits, the one whose site the exception's last frame is on comes first, then one
    whose ``raise`` the paste shows as source, then one raised in the module whose exception
    class the paste names, then the surest, then the one whose pattern holds the most
    literal text, then one whose site a release the paste can come from has (``outside``:
    the user's 0.4.34 raised the C++ pass's ``Can't change bitwidth during a relayout`` of
    0.4.16-0.7.1, not that of 0.7.2-0.8.1). Of records alike in all that (one message raised
    at several sites), one with curated advice comes before those known only from JAX's
    source, whose patterns, derived from the message's template, differ from a curated one
    only in how they capture its values; then one of Pallas's core, or of a backend the
    paste's frames show, before a backend's own site the paste gives no sign of (Mosaic
    GPU's ``atomic_store`` words its dtype check as the ``x_ref[...] = y`` of every backend
    does); then, of Python's errors at JAX's calls of user code, the call made furthest out,
    whose record names the calls within as its wrappers (``plgpu.kernel`` calls its body
    through ``pl.run_scoped``); then today's wording before an older one that prints the
    same text (``{np.shape(a)}`` until 0.4.31, ``{arr.shape}`` since); then the fewest
    wildcards; then the site of the newest release (``newest``: a site JAX renamed the class
    of is two records, and a paste without frames is dated by the newer).

    ``versions`` are the release the answer follows and the earliest the paste can come
    from: a record's wording last printed before that one is less sure. A record of another
    backend than the one whose compiler's wrapper the paste shows (``wrapping``) is no
    alternative: the message is that compiler's."""
    version, earliest = versions
    by_error: dict[tuple[str, int], list[tuple[float, Candidate]]] = {}
    for candidate in candidates:
        entry = index.entries[candidate.hit.entry]
        score = candidate.score * _agreement(entry.metadata, candidate.exception_class, version)
        if (
            earliest is not None
            and entry.variant != "current"
            and _worded_before(entry.variant, earliest)
        ):
            score *= VERSION_MISMATCH
        by_error.setdefault(candidate.error, []).append((round(score, 3), candidate))
    best = []
    for error, group in by_error.items():
        here = raised.get(error, set())
        several = len({index.entries[c.hit.entry].record_id for _, c in group}) > 1
        if several:
            shown, defined = quoted(), _modules_named([c for _, c in group])
            backends_shown = backends()
        else:
            shown, defined, backends_shown = frozenset(), frozenset(), frozenset()
        group.sort(
            key=lambda pair: _preference(
                index,
                pair[1],
                pair[0],
                here,
                shown,
                defined,
                _printed_class(pair[1]) if several else None,
                backends_shown,
                newest if several else unknown_rank,
                outside if several else nowhere_told,
            )
        )
        score, chosen = group[0]
        record_id = index.entries[chosen.hit.entry].record_id
        others: dict[str, None] = {}
        alike: dict[str, None] = {}
        if several:
            wrapped = wrapping()
            kept = [
                c.hit.entry
                for _, c in group[1:]
                if not wrapped or _backend(index.entries[c.hit.entry]) in wrapped | {"core"}
            ]
            others = dict.fromkeys(index.entries[entry].record_id for entry in kept)
            others.pop(record_id, None)
            # Those that read as much of the message as the chosen one, and raise the class
            # it is printed with if it raises that: as likely its source.
            literal = index.specificity(chosen.hit.entry)[0]
            printed = _printed_class(chosen)
            if index.entries[chosen.hit.entry].metadata.get("exception_class") != printed:
                printed = None
            alike = dict.fromkeys(
                index.entries[entry].record_id
                for entry in kept
                if index.specificity(entry)[0] >= literal
                and printed in (None, index.entries[entry].metadata.get("exception_class"))
            )
            alike.pop(record_id, None)
        variants = tuple(
            dict.fromkeys(
                entry.variant
                for _, c in group
                if (entry := index.entries[c.hit.entry]).record_id == record_id
            )
        )
        best.append((score, chosen, tuple(others), tuple(alike), variants))
    best.sort(key=lambda item: _rank(item[1], item[0]))

    sources = cache(lambda: find_value_sources(paste.lines))
    frame = user_frame(paste.lines) if best else None
    reported: set[tuple[str, tuple[tuple[str, str], ...]]] = set()
    matches = []
    for score, chosen, alternatives, alike_records, variants in best:
        key = (
            index.entries[chosen.hit.entry].record_id,
            tuple(sorted(chosen.hit.captures.items())),
        )
        if key not in reported:
            reported.add(key)
            matches.append(
                _match(
                    chosen,
                    score,
                    alternatives,
                    alike_records,
                    variants,
                    index,
                    paste,
                    sources,
                    frame,
                )
            )
    return tuple(matches)


def _preference(
    index: AnyIndex,
    candidate: Candidate,
    score: float,
    raised_here: set[str],
    quoted: frozenset[str],
    defined: frozenset[str],
    printed: str | None,
    backends_shown: frozenset[str],
    newest: Callable[[str], int],
    outside: Callable[[str], bool],
) -> tuple[bool, bool, bool, bool, float, int, bool, bool, bool, int, bool, int, int]:
    """How ``best_per_error`` orders the records one message fits, best first:
    ``raised_here`` holds those whose site the paste's raising frame is on, ``quoted``
    those whose statement it shows (a frame's source line shows the same ``raise`` of two
    sites alike, ``Barrier`` and ``ClusterBarrier``: the frame's line tells them apart),
    ``defined`` the files of the modules its exception classes name,
    ``printed`` the class the message is printed with, ``backends_shown`` the backends of
    the paste's JAX frames and ``core`` (empty: no record is told apart by its backend)."""
    entry = candidate.hit.entry
    literal, shorter = index.specificity(entry)  # more literal text, then a shorter pattern
    record = index.entries[entry]
    known_only_from_source = record.metadata.get("curated") == "false"
    file = record.metadata.get("file")
    elsewhere = file not in defined
    unshown_backend = bool(backends_shown) and _backend(record) not in backends_shown
    return (
        record.record_id not in raised_here,
        record.record_id not in quoted,
        elsewhere,
        printed is not None and record.metadata.get("exception_class") != printed,
        -score,
        -literal,
        outside(record.record_id),
        known_only_from_source,
        unshown_backend,
        -1 if candidate.caller is None else candidate.caller.paste_line,
        record.variant != "current",
        -shorter,
        -newest(record.record_id),
    )


def unknown_rank(record_id: str) -> int:
    """Every record's newest release alike: no frame index to tell, or one record only."""
    return 0


def nowhere_told(record_id: str) -> bool:
    """No release to hold a record's site against: none known, or one record only."""
    return False


def _backend(entry: PatternEntry) -> str:
    """The backend of the record's file; a record without one is Pallas's core's."""
    file = entry.metadata.get("file")
    return backend_of(file) if file else "core"


def _printed_class(candidate: Candidate) -> str | None:
    """The class the message is printed with, by its own name: the last one standing right
    before it, else its exception's. A wrapper's class counts here, unlike in ``_agreement``:
    Pallas's lowerings each raise "Exception while lowering eqn:" with a class of their own
    (``TritonLoweringException``, Mosaic's ``LoweringException``), which tells them apart
    where the module printed is no longer JAX's (``jax_triton.pallas.triton_lowering``)."""
    inner = lead_in_classes(candidate.text, candidate.hit.start)
    if inner:
        return inner[-1].rsplit(".", 1)[-1]
    return candidate.record.short_class if candidate.record is not None else None


def _modules_named(candidates: Sequence[Candidate]) -> frozenset[str]:
    """The files of the JAX modules whose exception classes stand right before an error's
    message (``jax._src.pallas.triton.lowering.TritonLoweringException: Exception while
    lowering eqn:`` → ``jax/_src/pallas/triton/lowering.py``): one message raised in
    several lowerings is told apart by the module its class is defined in, the one raising
    it. A wrapper's class further before (``LoweringException: ValueError: …``) names the
    module that caught the error, not the one that raised it, and is not counted."""
    files: set[str] = set()
    for candidate in candidates:
        inner = lead_in_classes(candidate.text, candidate.hit.start)
        if inner:
            named = inner[-1]
        elif candidate.record is not None:
            named = candidate.record.qualified_class
        else:
            continue
        module, _, _ = named.rpartition(".")
        if module.startswith(("jax.", "jaxlib.")):
            path = module.replace(".", "/")
            files.update((f"{path}.py", f"{path}/__init__.py"))
    return frozenset(files)


def _match(
    candidate: Candidate,
    score: float,
    alternatives: tuple[str, ...],
    alike: tuple[str, ...],
    variants: tuple[str, ...],
    index: AnyIndex,
    paste: NormalizedPaste,
    sources: Callable[[], Sequence[ValueSource]],
    frame: UserFrame | None,
) -> Match:
    entry = index.entries[candidate.hit.entry]
    record = candidate.record
    hit = candidate.hit
    values = type_values(hit.captures)
    if needs_context(values):
        infer_missing(values, sources(), candidate.line)
        adopt_written_dtype(values, frame)
    unread = tuple(name for name in index.group_names(hit.entry) if name not in hit.captures)
    return Match(
        record_id=entry.record_id,
        variant=entry.variant,
        score=score,
        matched_line=paste.original_line(candidate.line),
        line_number=paste.original_line_number(candidate.line),
        chain_position=record.chain_position if record else None,
        exception_class=record.qualified_class if record else candidate.exception_class,
        captures=candidate.hit.captures,
        values=values,
        pattern_id=candidate.hit.entry,
        pattern=index.pattern(candidate.hit.entry),
        normalized_line=candidate.text,
        truncated=hit.truncated,
        metadata=entry.metadata,
        alternatives=alternatives,
        alike=alike,
        variants=variants,
        user_frame=frame,
        found_in=candidate.found_in,
        literal=max(index.literals(hit.entry), key=len, default=""),
        stripped=candidate.text[: hit.start].strip(),
        unread=unread if hit.truncated else (),
        called_from=candidate.caller,
    )


def worded(match: Match, index: AnyIndex) -> Worded | None:
    """What the match tells of the paste's release; ``None`` where a wording that reads it
    is not dated, where the message is cut short and today's wording may open so (its
    opening, all it shows, is often every wording's, and a wording whose pattern takes any
    text for a value reads the cut and its marker where today's, which types its values,
    does not), or where libtpu's error code stands before it: libtpu prints Mosaic's words
    that JAX's source held until its passes left it, under a code (``E2003:
    CompileTimeMosaic…:``) no release of JAX's printed."""
    if _LIBTPU_ERROR_CODE.search(match.stripped):
        return None
    shown = match.literal
    if match.truncated:
        opening = _opening_of_older_wordings_only(match, index)
        if opening is None:
            return None
        shown = opening
    untils = []
    for variant in match.variants:
        until = None if variant == "current" else wording_until(variant)
        if until is None and variant != "current":
            return None
        untils.append(until)
    records = (match.record_id, *match.alike)
    return Worded(match.line_number, shown, records, tuple(untils))


def _opening_of_older_wordings_only(match: Match, index: AnyIndex) -> str | None:
    """The opening a message cut short shows whole, where it is that of each older wording
    of the record that reads it and not today's: ``Unimplemented primitive in Pallas GPU
    lowering:`` cut before its "Please file an issue", where today's says ``Pallas Triton
    lowering``. None for a cut that today's wording may continue: it dates nothing."""
    if "current" in match.variants:
        return None
    openings = {
        index.entries[entry].variant: index.opening(entry)
        for entry in index.entries_of(match.record_id)
    }
    today = openings.get("current")
    if not today:
        return None
    shown = None
    for variant in match.variants:
        opening = openings.get(variant, "")
        start = match.normalized_line.find(opening) if opening else -1
        cut = match.normalized_line[start:]
        if start < 0 or cut.startswith(today) or today.startswith(cut):
            return None
        shown = opening
    return shown


def _rank(candidate: Candidate, score: float) -> tuple[bool, bool, float, int]:
    """What failed before what was caught on the way ("During handling of the above
    exception…": JAX tried one thing, caught its error and raised its own), then root
    causes first ("The above exception was the direct cause…"), then the surest, then in
    paste order."""
    record = candidate.record
    if record is None:
        return False, False, -score, candidate.line
    # Raised from another of its chain, as its direct cause (``raise … from …``).
    caused = record.chain_position != 0 and record.link != "context"
    return record.handled, caused, -score, candidate.line


def _agreement(
    metadata: Mapping[str, str], raised_as: str | None, version: tuple[int, ...] | None
) -> float:
    """Lower the score where the record disagrees with the paste or with the user."""
    factor = 1.0
    expected = metadata.get("exception_class")
    if expected and raised_as is not None and raised_as != expected:
        factor *= CLASS_MISMATCH
    versions = metadata.get("jax_versions")
    if versions and version is not None and not _version_in(version, versions):
        factor *= VERSION_MISMATCH
    return factor


def _worded_before(variant: str, release: tuple[int, ...]) -> bool:
    """Whether a record's wording was last printed before ``release``."""
    until = version_tuple(wording_until(variant))
    return until is not None and until < release


def version_tuple(text: str | None) -> tuple[int, ...] | None:
    if text is None:
        return None
    if text.strip().lower() in ("main", "head"):
        return (1_000_000,)
    parts = re.findall(r"\d+", text)
    return tuple(int(part) for part in parts[:4]) or None


_SPECIFIER = re.compile(r"\s*(<=|>=|==|!=|<|>)\s*([\w.]+)\s*")


def _version_in(version: tuple[int, ...], specifiers: str) -> bool:
    """``(0, 7, 1)`` against ``">=0.4.36,<0.8"``; parts it cannot read accept everything."""
    for part in specifiers.split(","):
        found = _SPECIFIER.fullmatch(part)
        bound = version_tuple(found[2]) if found else None
        if found is None or bound is None:
            continue
        head = version[: len(bound)]
        holds = {
            "<": version < bound,
            "<=": version <= bound,
            ">": version > bound,
            ">=": version >= bound,
            "==": head == bound,
            "!=": head != bound,
        }[found[1]]
        if not holds:
            return False
    return True
