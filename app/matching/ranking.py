"""Of the records one error's message fits, which is reported, and in what order errors go.

The stage of ``matcher.match_paste`` after ``candidates``: each candidate's score is
weighed against its record's exception class and releases, the records fitting one error
are ordered by ``RANKING``, the first is reported with the others as its alternatives, and
the errors are ordered root causes first. Choosing is kept apart from finding so that every
preference between records printing the same words is stated in one place, each as a named
``Criterion`` with its reason, and the one that decided between two records can be told.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache
from typing import NamedTuple

from app.jaxref.scope import backend_of
from app.matching.candidates import lead_in_classes
from app.matching.index import AnyIndex, PatternEntry, wording_until
from app.matching.normalize import NormalizedPaste
from app.matching.release import Worded
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


def unknown_rank(record_id: str) -> int:
    """Every record's newest release alike: no frame index to tell, or one record only."""
    return 0


def nowhere_told(record_id: str) -> bool:
    """No release to hold a record's site against: none known, or one record only."""
    return False


@dataclass(frozen=True)
class RankingContext:
    """What the criteria read of the paste to order the candidates of one error. Where its
    message fits one record only, what serves only to tell records apart is left empty
    (every candidate alike in it), and is not worked out."""

    index: AnyIndex
    raised_here: Collection[str] = frozenset()  # records whose site the raising frame is on
    several: bool = False  # whether the error's candidates are of more than one record
    quoted: frozenset[str] = frozenset()  # records whose statement the paste shows
    defined: frozenset[str] = frozenset()  # files of the modules its exception classes name
    # The backends of the paste's JAX frames and compilers' wrappers, and ``core``; empty:
    # no record is told apart by its backend.
    backends: frozenset[str] = frozenset()
    newest: Callable[[str], int] = unknown_rank  # the rank of a record's newest release
    # Whether no release the paste can come from (the user's, if given) has a record's site.
    outside: Callable[[str], bool] = nowhere_told


@dataclass(frozen=True)
class PasteContext:
    """What ranking reads of the whole paste, gathered once by the pipeline. What only tells
    records apart is computed on first use: most messages fit one record, and need none."""

    index: AnyIndex
    paste: NormalizedPaste
    version: tuple[int, ...] | None  # the release the answer follows
    earliest: tuple[int, ...] | None  # the earliest release the paste can come from
    raised: Mapping[tuple[str, int], set[str]]  # by error, records whose site raised it
    quoted: Callable[[], frozenset[str]]  # records whose statement the paste shows
    backends: Callable[[], frozenset[str]]  # as ``RankingContext.backends``
    wrapping: Callable[[], frozenset[str]]  # backends whose compiler's wrapper it shows
    newest: Callable[[str], int] = unknown_rank
    outside: Callable[[str], bool] = nowhere_told

    def rivals(self, error: tuple[str, int], group: Sequence[Candidate]) -> RankingContext:
        """What the criteria read to order ``group``, the candidates of ``error``."""
        here = self.raised.get(error, set())
        if len({self.index.entries[c.hit.entry].record_id for c in group}) < 2:
            return RankingContext(self.index, here)
        return RankingContext(
            self.index,
            here,
            several=True,
            quoted=self.quoted(),
            defined=modules_named(group),
            backends=self.backends(),
            newest=self.newest,
            outside=self.outside,
        )


Key = Callable[[Candidate, "RankingContext"], float]


@dataclass(frozen=True)
class Criterion:
    """One reason to report a record rather than another that fits the same message: of two
    candidates, the one whose ``key`` is lower comes first."""

    name: str  # a short kebab-case id
    key: Key

    @property
    def why(self) -> str:
        """The first paragraph of the key's docstring, on one line."""
        return " ".join((self.key.__doc__ or "").split("\n\n")[0].split())


def _entry(candidate: Candidate, context: RankingContext) -> PatternEntry:
    return context.index.entries[candidate.hit.entry]


# The order in which the records one message fits are reported, each criterion deciding
# only between candidates alike in all those before it: the criteria below, in the order
# they are defined.
_CRITERIA: list[Criterion] = []


def criterion(name: str) -> Callable[[Key], Key]:
    """Adds ``key`` to the ranking, after those defined before it; its docstring says why."""

    def register(key: Key) -> Key:
        _CRITERIA.append(Criterion(name, key))
        return key

    return register


@criterion("raising-frame")
def _raising_frame(candidate: Candidate, context: RankingContext) -> float:
    """The record whose site is on the exception's last JAX frame is the one that raised it."""
    return _entry(candidate, context).record_id not in context.raised_here


@criterion("quoted-statement")
def _quoted_statement(candidate: Candidate, context: RankingContext) -> float:
    """A record whose `raise` the paste shows as source is the one it quotes: a frame's source
    line tells apart sites that raise the same words, such as `Barrier`'s and
    `ClusterBarrier`'s."""
    return _entry(candidate, context).record_id not in context.quoted


@criterion("class-module")
def _class_module(candidate: Candidate, context: RankingContext) -> float:
    """A record raised in the module that defines the exception class printed right before the
    message is the one raising it, as one message raised in several lowerings is told apart by
    `jax._src.pallas.triton.lowering.TritonLoweringException`, while a wrapper's class further
    out names the module that caught the error and is not counted."""
    return _entry(candidate, context).metadata.get("file") not in context.defined


@criterion("printed-class")
def _printed_otherwise(candidate: Candidate, context: RankingContext) -> bool:
    """A record raising the class the message is printed with comes first, a wrapper's class
    included, since Pallas's lowerings each raise `Exception while lowering eqn:` with a class
    of their own (`TritonLoweringException`, Mosaic's `LoweringException`) which tells them
    apart where the module printed is no longer JAX's.

    Whether the record expects another class than the message is printed with."""
    printed = _printed_class(candidate) if context.several else None
    return (
        printed is not None
        and _entry(candidate, context).metadata.get("exception_class") != printed
    )


@criterion("surest")
def _surest(candidate: Candidate, context: RankingContext) -> float:
    """The surer match comes first, its score weighing where the message was found, how much of it
    the pattern explains, and whether the record's class and releases agree with the paste and
    the user."""
    return -candidate.score


@criterion("most-literal")
def _most_literal(candidate: Candidate, context: RankingContext) -> float:
    """A pattern holding more literal text of the message says more of it than one with wildcards
    in its place."""
    return -context.index.specificity(candidate.hit.entry)[0]


@criterion("paste-release")
def _paste_release(candidate: Candidate, context: RankingContext) -> float:
    """A site that a release the paste can come from has comes before one that none has: the
    user's 0.4.34 raised the C++ pass's `Can't change bitwidth during a relayout` of
    0.4.16-0.7.1, not that of 0.7.2-0.8.1."""
    return context.outside(_entry(candidate, context).record_id)


@criterion("curated")
def _curated(candidate: Candidate, context: RankingContext) -> float:
    """Of sites printing the same words, one with curated advice comes before those known only
    from JAX's source, whose patterns, derived from the message's template, differ from a
    curated one only in how they capture its values."""
    return _entry(candidate, context).metadata.get("curated") == "false"


@criterion("shown-backend")
def _unshown_backend(candidate: Candidate, context: RankingContext) -> bool:
    """A site of Pallas's core, or of a backend the paste's frames or compiler wrappers show,
    comes before a backend's own site the paste gives no sign of, as Mosaic GPU's
    `atomic_store` words its dtype check as the `x_ref[...] = y` of every backend does.

    Whether the record is of a backend the paste gives no sign of."""
    return bool(context.backends) and _backend(_entry(candidate, context)) not in context.backends


@criterion("outermost-call")
def _call_further_in(candidate: Candidate, context: RankingContext) -> int:
    """Of Python's errors at JAX's calls of user code, the call made furthest out comes first, its
    record naming the calls within as its wrappers (`plgpu.kernel` calls its body through
    `pl.run_scoped`).

    The line of JAX's frame that called user code (lower: further out); a candidate not bound
    to a call (``-1``) before any that is."""
    return -1 if candidate.caller is None else candidate.caller.paste_line


@criterion("current-wording")
def _current_wording(candidate: Candidate, context: RankingContext) -> float:
    """Today's wording comes before an older one that prints the same text (`{np.shape(a)}` until
    0.4.31, `{arr.shape}` since)."""
    return _entry(candidate, context).variant != "current"


@criterion("shortest-pattern")
def _shortest_pattern(candidate: Candidate, context: RankingContext) -> float:
    """Of patterns holding as much literal text, the shorter has the fewer wildcards."""
    return -context.index.specificity(candidate.hit.entry)[1]


@criterion("newest-release")
def _newest_release(candidate: Candidate, context: RankingContext) -> float:
    """The site of the newest release comes first, since a site whose class JAX renamed is two
    records and a paste without frames is dated by the newer."""
    return -context.newest(_entry(candidate, context).record_id)


RANKING: tuple[Criterion, ...] = tuple(_CRITERIA)


def preference(candidate: Candidate, context: RankingContext) -> tuple[float, ...]:
    """Where ``candidate`` stands among its error's: lower comes first."""
    return tuple(criterion.key(candidate, context) for criterion in RANKING)


def deciding_criterion(
    winner: Candidate, runner_up: Candidate, context: RankingContext
) -> Criterion | None:
    """The first criterion of ``RANKING`` that tells ``winner`` from ``runner_up``, the first
    two of one error's candidates as ranked (``best_per_error`` weighs their scores first);
    ``None`` where the two are alike in all, and kept in the order found."""
    for criterion in RANKING:
        if criterion.key(winner, context) != criterion.key(runner_up, context):
            return criterion
    return None


class _Chosen(NamedTuple):
    """The candidate reported for one error, and what else the ranking tells of it."""

    candidate: Candidate
    alternatives: tuple[str, ...]  # other records that fit the same error
    alike: tuple[str, ...]  # those of them as likely its source
    variants: tuple[str, ...]  # the wordings of its record that read the message
    ranked_by: str | None  # the criterion that put it before another record's candidate


def best_per_error(candidates: Sequence[Candidate], context: PasteContext) -> tuple[Match, ...]:
    """One match per error, in ``_rank``'s order, each error reported once: of the records
    an error's message fits, the first by ``RANKING``, the others as its alternatives. A
    record of another backend than the one whose compiler's wrapper the paste shows
    (``context.wrapping``) is no alternative: the message is that compiler's."""
    by_error: dict[tuple[str, int], list[Candidate]] = {}
    for candidate in candidates:
        by_error.setdefault(candidate.error, []).append(_agreed(candidate, context))
    best = [
        _chosen(group, context.rivals(error, group), context) for error, group in by_error.items()
    ]
    best.sort(key=lambda chosen: _rank(chosen.candidate))
    return _reported(best, context)


def _agreed(candidate: Candidate, context: PasteContext) -> Candidate:
    """The candidate, its score lowered where its record disagrees with the paste or with
    the user (``_agreement``), and where the record's wording was last printed before the
    earliest release the paste can come from: it is less sure."""
    entry = context.index.entries[candidate.hit.entry]
    score = candidate.score * _agreement(entry.metadata, candidate.exception_class, context.version)
    earliest = context.earliest
    if (
        earliest is not None
        and entry.variant != "current"
        and _worded_before(entry.variant, earliest)
    ):
        score *= VERSION_MISMATCH
    return replace(candidate, score=round(score, 3))


def _chosen(group: list[Candidate], rivals: RankingContext, context: PasteContext) -> _Chosen:
    """The first of one error's candidates by ``RANKING``; ``group`` is left so ordered."""
    group.sort(key=lambda candidate: preference(candidate, rivals))
    chosen = group[0]
    index = context.index
    record_id = index.entries[chosen.hit.entry].record_id
    others: tuple[str, ...] = ()
    alike: tuple[str, ...] = ()
    ranked_by = None
    if rivals.several:
        others, alike = _alternatives(chosen, group[1:], context)
        runner_up = next(
            (c for c in group[1:] if index.entries[c.hit.entry].record_id != record_id), None
        )
        decided = deciding_criterion(chosen, runner_up, rivals) if runner_up else None
        ranked_by = decided.name if decided else None
    variants = tuple(
        dict.fromkeys(
            entry.variant
            for c in group
            if (entry := index.entries[c.hit.entry]).record_id == record_id
        )
    )
    return _Chosen(chosen, others, alike, variants, ranked_by)


def _alternatives(
    chosen: Candidate, rest: Sequence[Candidate], context: PasteContext
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The other records that fit the error ``chosen`` was chosen for, of a backend whose
    compiler's wrapper the paste shows if it shows any, and those of them that read as much
    of the message as the chosen one, and raise the class it is printed with if it raises
    that: as likely its source."""
    index = context.index
    record_id = index.entries[chosen.hit.entry].record_id
    wrapped = context.wrapping()
    kept = [
        c.hit.entry
        for c in rest
        if not wrapped or _backend(index.entries[c.hit.entry]) in wrapped | {"core"}
    ]
    others = dict.fromkeys(index.entries[entry].record_id for entry in kept)
    others.pop(record_id, None)
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
    return tuple(others), tuple(alike)


def _reported(best: Sequence[_Chosen], context: PasteContext) -> tuple[Match, ...]:
    """The matches of the chosen candidates, in their order, a record found with the same
    values at several errors (JAX prints it twice; a pytest summary repeats it) once."""
    index, paste = context.index, context.paste
    sources = cache(lambda: find_value_sources(paste.lines))
    frame = user_frame(paste.lines) if best else None
    reported: set[tuple[str, tuple[tuple[str, str], ...]]] = set()
    matches = []
    for chosen in best:
        hit = chosen.candidate.hit
        key = (index.entries[hit.entry].record_id, tuple(sorted(hit.captures.items())))
        if key not in reported:
            reported.add(key)
            matches.append(_match(chosen, index, paste, sources, frame))
    return tuple(matches)


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


def modules_named(candidates: Sequence[Candidate]) -> frozenset[str]:
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
    chosen: _Chosen,
    index: AnyIndex,
    paste: NormalizedPaste,
    sources: Callable[[], Sequence[ValueSource]],
    frame: UserFrame | None,
) -> Match:
    candidate = chosen.candidate
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
        score=candidate.score,
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
        alternatives=chosen.alternatives,
        alike=chosen.alike,
        variants=chosen.variants,
        user_frame=frame,
        found_in=candidate.found_in,
        literal=max(index.literals(hit.entry), key=len, default=""),
        stripped=candidate.text[: hit.start].strip(),
        unread=unread if hit.truncated else (),
        called_from=candidate.caller,
        ranked_by=chosen.ranked_by,
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


def _rank(candidate: Candidate) -> tuple[bool, bool, float, int]:
    """What failed before what was caught on the way ("During handling of the above
    exception…": JAX tried one thing, caught its error and raised its own), then root
    causes first ("The above exception was the direct cause…"), then the surest, then in
    paste order."""
    record = candidate.record
    if record is None:
        return False, False, -candidate.score, candidate.line
    # Raised from another of its chain, as its direct cause (``raise … from …``).
    caused = record.chain_position != 0 and record.link != "context"
    return record.handled, caused, -candidate.score, candidate.line


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
