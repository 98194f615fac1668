"""A matched message dates the paste: JAX printed each wording of a site's message in some
releases only, and the site stood in some releases only. Read against JAX's mined sites."""

from __future__ import annotations

import json
from dataclasses import replace
from functools import cache
from typing import Any

import pytest

from app.jaxref.files import FRAME_INDEX_FILE
from app.jaxref.releases import release_key, runs
from app.jaxref.templates import compile_pattern
from app.knowledge.mining import MINED_SITES
from app.matching import PatternEntry, PatternIndex
from app.matching.frames import LIBTPU_COMPILER, FrameIndex
from app.matching.release import ReleaseReading, Worded, date_by_wording, read_release


@cache
def changed_sites() -> tuple[dict[str, Any], ...]:
    """The mined facts of every site whose message JAX reworded, with their record's id."""
    found = []
    for line in MINED_SITES.read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        facts = item["record"] if "record" in item else item["annotation"]["mined"]
        if len(facts.get("messageHistory") or ()) > 1:
            record_id = item["record"]["id"] if "record" in item else item["annotation"]["recordId"]
            found.append({**facts, "id": record_id})
    return tuple(found)


@cache
def cpp_unread() -> tuple[list[str], str]:
    """The releases whose C++ was not read, and the newest release whose C++ was."""
    index = json.loads(FRAME_INDEX_FILE.read_text(encoding="utf-8"))
    return index["cppUnread"], index["releases"][-len(index["cppUnread"]) - 1]


@cache
def libtpu_files_left() -> dict[str, str]:
    """Each C++ file of Mosaic TPU's compiler whose diagnostics end before the newest
    release whose C++ was read → the last release they are in (its passes left for libtpu)."""
    last: dict[str, str] = {}
    for line in MINED_SITES.read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        facts = item["record"] if "record" in item else item["annotation"]["mined"]
        if facts["site"]["language"] == "cpp" and facts["filePath"].startswith(LIBTPU_COMPILER):
            newest = facts["releases"][-1]["release"]
            last[facts["filePath"]] = max(
                last.get(facts["filePath"], newest), newest, key=release_key
            )
    _, last_read = cpp_unread()
    return {f: r for f, r in last.items() if release_key(r) < release_key(last_read)}


def printed(site: dict[str, Any], wording: dict[str, str]) -> tuple[str, ...]:
    """The releases that shipped ``site`` and printed ``wording``, oldest first; for a C++
    diagnostic's wording of the newest release whose C++ was read, the releases after it
    too (read from their wheels, without C++: they may print it); for one of Mosaic TPU's
    compiler printed until its file left JAX's source, every release after (libtpu's)."""
    first, last = release_key(wording["from"]), release_key(wording["until"])
    shipped = [e["release"] for e in site["releases"]]
    unread, last_read = cpp_unread()
    current = wording is site["messageHistory"][-1]
    if site["site"]["language"] == "cpp" and current and shipped[-1] == last_read:
        shipped += unread
        last = release_key(shipped[-1])
    left = libtpu_files_left().get(site["filePath"])
    if site["site"]["language"] == "cpp" and current and shipped[-1] == left:
        releases = FrameIndex.load().releases
        shipped += releases[releases.index(left) + 1 :]
        last = release_key(shipped[-1])
    return tuple(
        sorted(
            (r for r in set(shipped) if first <= release_key(r) <= last),
            key=release_key,
        )
    )


def nothing_read() -> ReleaseReading:
    reading = read_release(FrameIndex.load(), ["a paste that tells no release"], [], None)
    assert reading.releases == ()
    return reading


def reading_of(releases: tuple[str, ...], given: str | None = None) -> ReleaseReading:
    """What frames that agree with ``releases`` would have read."""
    used = given or releases[-1]
    return replace(nothing_read(), releases=releases, span=runs(releases), given=given, used=used)


def test_every_wording_of_a_reworded_message_dates_a_paste_that_tells_nothing_else() -> None:
    frames = FrameIndex.load()
    tried = 0
    for site in changed_sites():
        history = site["messageHistory"]
        for number, wording in enumerate(history):
            until = None if number == len(history) - 1 else wording["until"]
            message = Worded(3, wording["errorMessage"], (site["id"],), (until,))
            dated = date_by_wording(frames, nothing_read(), [message])
            expected = printed(site, wording)
            if until is None and site["matchPattern"]:  # and by older wordings it reads
                reads = compile_pattern(site["matchPattern"]).search
                also = [printed(site, w) for w in history[:-1] if reads(w["errorMessage"])]
                expected = tuple(sorted(set(expected).union(*also), key=release_key))
            if expected == frames.releases:
                assert dated.evidence == ()  # a wording every release printed tells nothing
                continue
            tried += 1
            assert dated.releases == expected, (site["id"], wording)
            assert dated.used == expected[-1]
            assert dated.evidence[-1].kind == "wording"
            assert dated.evidence[-1].releases == expected
            assert (dated.evidence[-1].line, dated.evidence[-1].text) == (3, message.text)
            assert dated.contradiction is None
    assert tried > 500


def test_the_frames_and_the_wording_narrow_the_releases_together() -> None:
    site = changed_sites()[0]
    older, newer = site["messageHistory"][:2]
    # Frames that read both wordings' releases; the older wording keeps only its own.
    both = tuple(sorted({*printed(site, older), *printed(site, newer)}, key=release_key))
    message = Worded(1, older["errorMessage"], (site["id"],), (older["until"],))
    dated = date_by_wording(FrameIndex.load(), reading_of(both), [message])
    assert dated.releases == printed(site, older)
    assert dated.used == printed(site, older)[-1]


def test_text_two_wordings_read_is_dated_by_both() -> None:
    """An older wording and today's may read the same text (a value where the words
    changed): either release may have printed it, so neither narrows nor contradicts."""
    site = changed_sites()[0]
    older, newer = site["messageHistory"][:2]
    both = tuple(sorted({*printed(site, older), *printed(site, newer)}, key=release_key))
    message = Worded(1, "", (site["id"],), (older["until"], newer["until"]))
    reading = reading_of(both)
    assert date_by_wording(FrameIndex.load(), reading, [message]) == reading


def test_a_wording_the_frames_rule_out_is_reported_and_the_frames_kept() -> None:
    site = changed_sites()[0]
    older, newer = site["messageHistory"][:2]
    frames_read = printed(site, newer)
    message = Worded(1, older["errorMessage"], (site["id"],), (older["until"],))
    dated = date_by_wording(FrameIndex.load(), reading_of(frames_read), [message])
    assert dated.releases == frames_read
    assert dated.contradiction == (
        f"the paste reads {runs(frames_read)} but its message's wording was printed in "
        f"{runs(printed(site, older))}"
    )


def test_the_users_version_outside_the_wordings_releases_is_reported() -> None:
    site = changed_sites()[0]
    older, newer = site["messageHistory"][:2]
    given = printed(site, newer)[-1]
    reading = replace(nothing_read(), given=given, used=given)
    message = Worded(1, older["errorMessage"], (site["id"],), (older["until"],))
    dated = date_by_wording(FrameIndex.load(), reading, [message])
    assert dated.used == given
    assert dated.releases == printed(site, older)
    assert dated.contradiction == f"jaxVersion {given} but the paste reads {dated.span}"


def test_a_message_several_sites_print_is_dated_by_all_of_them() -> None:
    """The records one message fits: the paste may come from any release of any of them."""
    frames = FrameIndex.load()
    current = {site["id"]: printed(site, site["messageHistory"][-1]) for site in changed_sites()}
    first, second = next(
        (a, b)
        for a in current
        for b in current
        if not set(current[a]) <= set(current[b])
        and not set(current[b]) <= set(current[a])
        and len({*current[a], *current[b]}) < len(frames.releases)
    )
    dated = date_by_wording(frames, nothing_read(), [Worded(1, "", (first, second), (None,))])
    assert dated.releases == tuple(sorted({*current[first], *current[second]}, key=release_key))


@pytest.mark.parametrize(
    "reading",
    [
        nothing_read(),
        # A version the paste names that errata has not mined: that naming wins.
        replace(nothing_read(), outside="the paste names jax 0.11.0, newer than 0.10.2"),
    ],
)
def test_a_record_without_a_site_or_a_version_outside_tells_nothing_more(
    reading: ReleaseReading,
) -> None:
    site = changed_sites()[0]
    older = site["messageHistory"][0]
    curated_only = Worded(1, "", (site["id"], "curated-without-a-site"), (older["until"],))
    assert date_by_wording(FrameIndex.load(), reading, [curated_only]) == reading
    if reading.outside is not None:
        alone = Worded(1, "", (site["id"],), (older["until"],))
        assert date_by_wording(FrameIndex.load(), reading, [alone]) == reading


def test_a_message_of_sites_alike_in_all_else_is_the_newest_releases() -> None:
    """jax PR 38595's message, with no frame: Mosaic GPU's ``TilingImpl`` became ``Tiling``
    in 0.10.1, and its sites became other records. The answer is the site that stands in
    the release the message dates the paste to, not one that release no longer has."""
    from app.matching.matcher import match_paste

    from .catalog import everything

    paste = "ValueError: Tiling ((64, 8), (16, 8), (8, 8), (2,)) does not apply to shape (16, 128)"
    frames = FrameIndex.load()
    report = match_paste(paste, everything(), None, frames)
    [match] = report.matches
    fitting = [match.record_id, *match.alternatives]
    assert len({frames.newest_rank(record) for record in fitting}) > 1  # sites of old releases
    assert frames.newest_rank(match.record_id) == max(map(frames.newest_rank, fitting))
    assert report.release is not None
    assert report.release.used in frames.releases_of(match.record_id)


def test_a_message_is_dated_only_by_the_records_raising_the_class_it_is_printed_with() -> None:
    """Pallas TPU's lowering raised ``LoweringException: Body failed to verify: …`` in
    0.4.24–0.4.31; SparseCore's lowering raises the same words as a ValueError from 0.7.2.
    jax#20046's paste, printed with the former's class, is not of the latter's releases. The
    index is built from the mined sites of those words, the kernel's a curated record's."""
    from app.matching.matcher import match_paste

    from .catalog import mined_sites

    paste = (
        'jax._src.pallas.mosaic.lowering.LoweringException: Body failed to verify: "func.func"'
        '() <{sym_name = "main"}> ({\n  %0 = "math.exp"(%2) : (vector<f32>) -> vector<f32>\n'
        "}) : () -> ().\nThis is an internal error. Please report a bug at: "
        "https://github.com/google/jax/issues/new?assignees=sharadmv.\n"
    )
    sites = [s for s in mined_sites() if s["errorMessage"].startswith("Body failed to verify: ")]
    index = PatternIndex.build(
        [
            PatternEntry(
                s["id"], s["matchPattern"], "current", {"exception_class": s["errorClass"]}
            )
            for s in sites
        ]
    )
    frames = FrameIndex.load()
    report = match_paste(paste, index, None, frames)
    [match] = report.matches
    classes = {s["id"]: s["errorClass"] for s in sites}
    assert classes[match.record_id] == "LoweringException"
    assert {classes[r] for r in match.alternatives} > {"LoweringException"}  # a ValueError too
    raising = [
        r for r in (match.record_id, *match.alternatives) if classes[r] == "LoweringException"
    ]
    assert report.release is not None
    assert set(report.release.releases) == {r for i in raising for r in frames.releases_of(i)}


def test_todays_pattern_reading_an_older_wording_dates_by_both() -> None:
    """jax#21190, cut after ``Exception while lowering eqn:``, which opens Pallas TPU's
    wording of 0.4.17–0.4.26 and of 0.4.27–0.4.33 alike: its frames' 0.4.22–0.4.23 are no
    contradiction, and the message alone reads both wordings' releases."""
    from app.matching.matcher import match_paste

    from .catalog import everything

    frames = FrameIndex.load()
    cut = "jax._src.pallas.mosaic.lowering.LoweringException: Exception while lowering eqn:\n  a"
    report = match_paste(cut, everything(), None, frames)
    [match] = report.matches
    site = next(s for s in changed_sites() if s["id"] == match.record_id)
    history = site["messageHistory"]
    assert len(history) == 2 and match.variants == ("current",)
    both = {*printed(site, history[0]), *printed(site, history[1])}
    assert report.release is not None and report.release.contradiction is None
    assert set(report.release.releases) == both


def _mosaic_tpu_alignment_check() -> tuple[dict[str, Any], PatternIndex]:
    """Mosaic TPU's ``cannot statically prove that index …`` (0.4.24–0.8.1 in JAX's
    source), and an index of its pattern alone."""
    from .catalog import mined_sites

    [site] = [s for s in mined_sites() if "cannot statically prove that" in s["errorMessage"]]
    entry = PatternEntry(site["id"], site["matchPattern"], "current", {"exception_class": ""})
    return site, PatternIndex.build([entry])


ALIGNMENT_WORDS = "cannot statically prove that index in dimension 0 is a multiple of 512"


def test_a_diagnostic_of_the_passes_libtpu_took_over_dates_every_release_after() -> None:
    """Mosaic TPU's passes left JAX's source after 0.8.1; libtpu, installed beside every
    later release, still prints their words (jax-ml/jax#37370, on 0.9.2)."""
    from app.matching.matcher import match_paste

    site, index = _mosaic_tpu_alignment_check()
    frames = FrameIndex.load()
    shipped = [entry["release"] for entry in site["releases"]]
    assert shipped[-1] == "0.8.1"
    report = match_paste(f"MosaicError: INTERNAL: {ALIGNMENT_WORDS}", index, None, frames)
    assert report.release is not None
    after = frames.releases[frames.releases.index("0.8.1") + 1 :]
    assert report.release.releases == (*shipped, *after)


def test_a_message_under_libtpus_error_code_is_not_dated_by_its_wording() -> None:
    """jax#36770 (2026): libtpu prints Mosaic's words under an error code no release of
    JAX's printed; the words alone read 0.4.24 on."""
    from app.matching.matcher import match_paste

    site, index = _mosaic_tpu_alignment_check()
    frames = FrameIndex.load()
    plain = match_paste(f"MosaicError: INTERNAL: {ALIGNMENT_WORDS}", index, None, frames)
    coded = match_paste(
        f"triggers `E2003: CompileTimeMosaicUnprovenMemoryAccessAlignment: {ALIGNMENT_WORDS}`",
        index,
        None,
        frames,
    )
    assert [m.record_id for m in coded.matches] == [m.record_id for m in plain.matches]
    assert [m.record_id for m in plain.matches] == [site["id"]]
    assert plain.release is not None and plain.release.releases
    assert coded.release is not None and coded.release.releases == ()
