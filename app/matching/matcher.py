"""Paste in, known errors out: the pipeline over the reader's stages.

The paste is normalized and its exceptions read (``tracebacks``); with a ``FrameIndex``
the JAX release is read from its frames. ``candidates`` then finds every place a record's
pattern fits: the exceptions' messages first, then the rest of the paste for lone messages
(a chat line, a pytest summary, a message pasted without its class, inside a log line, a
table cell or inline code), skipping traceback furniture such as the source line
``raise ValueError("...")``, then messages broken over two lines; an exception whose
message matches nothing in full is tried as a message cut off part-way, which scores lower.
With a frame index, an exception no message matches is named by the JAX frame that raised
it, and a ``raise`` of JAX's quoted outside a traceback (an issue's code block) by the site
it is.

``ranking`` reports one match per distinct error: each exception (or lone line) yields its
best record, the other records that also fit are listed as alternatives, and an error seen
in several places (JAX prints it twice; a pytest summary repeats it) is reported once. Root
causes come first. The matches then date the release further, and the sites no match
explains are reported after them.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cache

from app.matching.candidates import (
    at_their_callers,
    called_from_the_raising_frame,
    in_cut_messages,
    in_loose_lines,
    in_messages,
    message_texts,
    quotes_known_source,
    staged,
)
from app.matching.compilers import backends_wrapping
from app.matching.frames import FrameIndex
from app.matching.index import AnyIndex
from app.matching.normalize import NormalizedPaste, normalize
from app.matching.raise_points import (
    RaisePoint,
    cut_points,
    quoted_points,
    quoted_sites,
    raise_points,
)
from app.matching.ranking import (
    PasteContext,
    best_per_error,
    nowhere_told,
    unknown_rank,
    version_tuple,
    worded,
)
from app.matching.release import ReleaseReading, date_by_wording, read_release
from app.matching.report import Candidate, FoundException, Match, MatchReport
from app.matching.tracebacks import ExceptionRecord, Reading, read_exceptions

# Exceptions read of one paste, the last ones: a log of the same failure printed thousands of
# times would otherwise cost time and an answer that grow with it (75,000 one-line errors in
# a 1 MiB paste took 6 s). The failure that ended a run is printed last.
MAX_EXCEPTIONS_READ = 256


@dataclass(frozen=True)
class _Read:
    """A paste as the stages after its reading take it."""

    paste: NormalizedPaste
    reading: Reading
    records: Sequence[ExceptionRecord]  # the exceptions read: the last MAX_EXCEPTIONS_READ
    index: AnyIndex
    frames: FrameIndex | None


def match_paste(
    text: str | bytes,
    index: AnyIndex,
    jax_version: str | None = None,
    frames: FrameIndex | None = None,
) -> MatchReport:
    """Find the known errors in ``text``. Raises ``PasteTooLarge`` or ``UnreadablePaste``.

    With ``frames``, the JAX release is read from the paste too, and the wordings of that
    release win where the user names none (``jax_version`` wins over the paste).
    """
    paste = normalize(text)
    reading = read_exceptions(paste.lines)
    release = None
    if frames is not None:
        release = read_release(frames, paste.lines, reading.structure, jax_version, paste.origins)
        jax_version = release.used
    read = _Read(paste, reading, reading.exceptions[-MAX_EXCEPTIONS_READ:], index, frames)
    candidates, shown = _candidates(read)
    points = _raise_points(read, release)
    matches = best_per_error(candidates, _ranking_context(read, release, jax_version, points))
    if frames is not None and release is not None:
        dating = [w for m in matches if (w := worded(m, index)) is not None]
        release = date_by_wording(frames, release, dating)
    found = tuple(_found(record, paste) for record in read.records)
    matched = {c.error for c in candidates}
    unmatched = tuple(f for n, f in enumerate(found) if ("exception", n) not in matched)
    unexplained = [point for error, at in points.items() if error not in matched for point in at]
    located = _sites_left(read, release, unexplained, matches, shown)
    skipped = len(reading.exceptions) - len(read.records)
    return MatchReport(matches, found, unmatched, release, located, skipped)


def _candidates(read: _Read) -> tuple[list[Candidate], list[RaisePoint]]:
    """Every fit of a record's pattern in the paste, and the statements of JAX's that its
    lines outside the exceptions quote (an issue's code block), read once."""
    paste, reading, records = read.paste, read.reading, read.records
    index, frames = read.index, read.frames
    # Every line of every printing of a message belongs to its exception, not to the loose
    # lines; the loose lines therefore do not depend on what the messages match.
    claimed = {n for r in reading.exceptions for n in (*r.message_line_numbers, *r.repeated_lines)}
    unread = set(range(len(paste.lines))).difference(claimed, reading.structure)
    loose = [n for n in sorted(unread) if paste.lines[n].strip()]
    joined = [" ".join(part.strip() for part in record.message_lines) for record in records]
    texts, owners = message_texts(records, joined, paste.lines)
    # One search over the messages and the loose lines; hits come ordered by text.
    hits = index.search([*texts, *(paste.lines[n] for n in loose)])
    split = bisect.bisect_left(hits, len(texts), key=lambda hit: hit.text)
    candidates = in_messages(records, texts, owners, hits[:split])
    explained = {c.error for c in candidates if c.explains_all}
    candidates += in_cut_messages(records, joined, index, explained)
    loose_text = "\n".join([paste.lines[n] for n in loose])
    in_lines = in_loose_lines(paste, loose, loose_text, hits[split:], len(texts), index, joined)
    shown: list[RaisePoint] = []
    if frames is not None and ("raise" in loose_text or "assert" in loose_text):
        shown = quoted_points(frames, paste.lines, loose)
    starts = None if frames is None else {point.paste_line for point in shown}
    candidates += [c for c in in_lines if not quotes_known_source(paste.lines, c, starts)]
    candidates = at_their_callers(
        candidates, index, frames, paste.lines, reading.structure, records
    )
    if frames is not None:
        candidates = called_from_the_raising_frame(
            candidates, index, frames, paste.lines, reading.structure, records
        )
    return candidates, shown


def _raise_points(
    read: _Read, release: ReleaseReading | None
) -> dict[tuple[str, int], list[RaisePoint]]:
    """By exception, the sites of JAX's its raising frame points at, surest first: none
    where JAX printed it after its staging wrapper, or without a frame index."""
    points: dict[tuple[str, int], list[RaisePoint]] = {}
    if read.frames is None:
        return points
    lines = read.paste.lines
    for number, record in enumerate(read.records):
        if staged(record, lines):
            continue
        at = raise_points(
            read.frames,
            lines,
            read.reading.structure,
            record.first_line,
            record.short_class,
            record.raised_at,
            release.releases if release is not None else (),
        )
        if at:
            points[("exception", number)] = at
    return points


def _ranking_context(
    read: _Read,
    release: ReleaseReading | None,
    jax_version: str | None,
    points: dict[tuple[str, int], list[RaisePoint]],
) -> PasteContext:
    """What ranking reads of the paste: the releases it follows, the records whose sites
    raised its exceptions (``points``), and what tells apart records printing the same
    words, the costlier of which is computed only when first asked."""
    paste, frames = read.paste, read.frames
    raised = {
        error: {p.record_id for p in at if p.record_id is not None} for error, at in points.items()
    }
    quoted = cache(lambda: quoted_sites(frames, paste.lines) if frames else frozenset())

    # Pallas's core, the backends the frames show and those whose compilers' wrappers the
    # paste shows; with neither a frame index nor a wrapper, nothing known.
    wrapping = cache(lambda: backends_wrapping(paste.lines))

    def backends_shown() -> frozenset[str]:
        if frames is None and not wrapping():
            return frozenset()
        framed = frames.backends_shown(paste.lines, read.reading.structure) if frames else set()
        return frozenset({"core", *framed, *wrapping()})

    newest = frames.newest_rank if frames is not None else unknown_rank
    # A site that none of the paste's releases (the user's, if given) can raise.
    outside: Callable[[str], bool] = nowhere_told
    if frames is not None and release is not None:
        releases = release.releases if release.given is None else (release.given,)
        outside = frames.raised_outside(releases)
    # The earliest release the paste can come from: a wording older than it is not its.
    earliest = jax_version
    if release is not None and release.given is None and release.releases:
        earliest = release.releases[0]
    return PasteContext(
        read.index,
        paste,
        version_tuple(jax_version),
        version_tuple(earliest),
        raised,
        quoted,
        cache(backends_shown),
        wrapping,
        newest,
        outside,
    )


def _sites_left(
    read: _Read,
    release: ReleaseReading | None,
    unexplained: list[RaisePoint],
    matches: Sequence[Match],
    shown: Sequence[RaisePoint],
) -> tuple[RaisePoint, ...]:
    """The sites of the exceptions no message matched (``unexplained``), then the sites a
    traceback cut before its message ends at, and those the paste quotes (``shown``), where
    nothing before names them; with line numbers as the user sees them."""
    cut: list[RaisePoint] = []
    if read.frames is not None:
        possible = release.releases if release is not None else ()
        for end in read.reading.unfinished:
            cut += cut_points(read.frames, read.paste.lines, read.reading.structure, end, possible)
    if cut or shown:
        named = {p.record_id for p in unexplained}
        named.update(r for m in matches for r in (m.record_id, *m.alternatives))
        for point in (*cut, *shown):
            if point.record_id not in named:
                unexplained.append(point)
                named.add(point.record_id)
    return tuple(
        replace(point, paste_line=read.paste.original_line_number(point.paste_line))
        for point in unexplained
    )


def _found(record: ExceptionRecord, paste: NormalizedPaste) -> FoundException:
    return FoundException(
        qualified_class=record.qualified_class,
        short_class=record.short_class,
        message=record.message,
        line_number=paste.original_line_number(record.line),
        chain=record.chain,
        chain_position=record.chain_position,
        wrapped_by=record.wrapped_by,
        repeated_at=tuple(paste.original_line_number(n) for n in record.repeats),
        in_traceback=record.in_traceback,
        truncated=record.truncated,
        is_wrapper=record.is_wrapper,
    )
