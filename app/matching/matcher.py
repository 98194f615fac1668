"""Paste in, known errors out: normalize, read the exceptions, match, type the values.

Exception messages are matched first; the rest of the paste is then scanned for lone
messages (a chat line, a pytest summary, a message pasted without its class, inside a log
line, a table cell or inline code), skipping traceback furniture such as the source line
``raise ValueError("...")``; then for messages broken over two lines. An exception whose
message matches nothing in full is tried as a message cut off part-way, which scores
lower. A wrapper's words before a message (``INTERNAL: Mosaic failed to compile TPU
kernel: ValueError: ...``) are not held against it, and the class it names is the one
compared with the record's. With a ``FrameIndex`` the JAX release is read from the frames,
an exception no message matches is named by the JAX frame that raised it, and a ``raise`` of
JAX's quoted outside a traceback (an issue's code block) by the site it is.

One match is reported per distinct error: each exception (or lone line) yields its best
record, the other records that also fit are listed as alternatives, and an error seen in
several places (JAX prints it twice; a pytest summary repeats it) is reported once.
Root causes come first.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from dataclasses import replace
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
from app.matching.frames import FrameIndex, RaisePoint
from app.matching.index import AnyIndex
from app.matching.normalize import NormalizedPaste, normalize
from app.matching.ranking import best_per_error, nowhere_told, unknown_rank, version_tuple, worded
from app.matching.report import FoundException, MatchReport
from app.matching.tracebacks import ExceptionRecord, read_exceptions

# Exceptions read of one paste, the last ones: a log of the same failure printed thousands of
# times would otherwise cost time and an answer that grow with it (75,000 one-line errors in
# a 1 MiB paste took 6 s). The failure that ended a run is printed last.
MAX_EXCEPTIONS_READ = 256


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
        release = frames.read(paste.lines, reading.structure, jax_version, paste.origins)
        jax_version = release.used
    # Every line of every printing of a message belongs to its exception, not to the loose
    # lines; the loose lines therefore do not depend on what the messages match.
    claimed = {n for r in reading.exceptions for n in (*r.message_line_numbers, *r.repeated_lines)}
    records = reading.exceptions[-MAX_EXCEPTIONS_READ:]
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
    # The statements of JAX's that the loose lines quote (an issue's code block), read once.
    shown: list[RaisePoint] = []
    if frames is not None and ("raise" in loose_text or "assert" in loose_text):
        shown = frames.quoted_points(paste.lines, loose)
    starts = None if frames is None else {point.paste_line for point in shown}
    candidates += [c for c in in_lines if not quotes_known_source(paste.lines, c, starts)]
    candidates = at_their_callers(
        candidates, index, frames, paste.lines, reading.structure, records
    )
    if frames is not None:
        candidates = called_from_the_raising_frame(
            candidates, index, frames, paste.lines, reading.structure, records
        )

    points: dict[tuple[str, int], list[RaisePoint]] = {}
    if frames is not None:
        for number, record in enumerate(records):
            if staged(record, paste.lines):
                continue
            at = frames.raise_points(
                paste.lines,
                reading.structure,
                record.first_line,
                record.short_class,
                record.raised_at,
                release.releases if release is not None else (),
            )
            if at:
                points[("exception", number)] = at
    raised = {
        error: {p.record_id for p in at if p.record_id is not None} for error, at in points.items()
    }
    quoted = cache(lambda: frames.quoted_sites(paste.lines) if frames else frozenset())

    # Pallas's core, the backends the frames show and those whose compilers' wrappers the
    # paste shows; with neither a frame index nor a wrapper, nothing known.
    wrapping = cache(lambda: backends_wrapping(paste.lines))

    def backends_shown() -> frozenset[str]:
        if frames is None and not wrapping():
            return frozenset()
        framed = frames.backends_shown(paste.lines, reading.structure) if frames else set()
        return frozenset({"core", *framed, *wrapping()})

    backends = cache(backends_shown)
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
    matches = best_per_error(
        candidates,
        index,
        paste,
        (version_tuple(jax_version), version_tuple(earliest)),
        raised,
        quoted,
        backends,
        wrapping,
        newest,
        outside,
    )
    if frames is not None and release is not None:
        dating = [w for m in matches if (w := worded(m, index)) is not None]
        release = frames.dated(release, dating)
    found = tuple(_found(record, paste) for record in records)
    matched = {c.error for c in candidates}
    unmatched = tuple(f for n, f in enumerate(found) if ("exception", n) not in matched)
    unexplained = [point for error, at in points.items() if error not in matched for point in at]
    # Then the sites a traceback cut before its message ends at, and those the paste quotes,
    # where nothing before names them.
    cut: list[RaisePoint] = []
    if frames is not None:
        possible = release.releases if release is not None else ()
        for end in reading.unfinished:
            cut += frames.cut_points(paste.lines, reading.structure, end, possible)
    if cut or shown:
        named = {p.record_id for p in unexplained}
        named.update(r for m in matches for r in (m.record_id, *m.alternatives))
        for point in (*cut, *shown):
            if point.record_id not in named:
                unexplained.append(point)
                named.add(point.record_id)
    located = tuple(
        replace(point, paste_line=paste.original_line_number(point.paste_line))
        for point in unexplained
    )
    skipped = len(reading.exceptions) - len(records)
    return MatchReport(matches, found, unmatched, release, located, skipped)


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
