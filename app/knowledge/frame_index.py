"""The frame index's builder: the compact table of where each mined site stands, per release.

Matching reads a paste's JAX frames against every release's error sites (``FrameIndex`` in
``app.matching.frames``). Parsing the 20 MB of mined records for that at start-up would take
seconds, so the miners derive the table once, from ``data/mined/jax-sites.jsonl`` and the
records of Pallas's public API (``data/mined/jax-api.jsonl``, ``jax-calls.jsonl``), and it is
committed as ``data/frame-index.json``. It lives with the miners: a request never builds it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from app.jaxref.files import FRAME_INDEX_FILE
from app.jaxref.releases import release_commits, release_key, union
from app.jaxref.templates import compile_pattern


def build_frame_index(items: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """The compact index of a mined dataset's items (records and annotations' mined parts).

    A site has a row for each place (file, function) it stood in: a site that moved is
    found by the frames of the releases before the move too. An assert has one for each
    condition it asserted there too: a quoted statement is found by its condition, as the
    release that raised it wrote it. The site's newest place comes last, so that it is the
    one ``FrameIndex.site_of`` gives.
    """
    releases = list(release_commits())
    bit = {release: 1 << n for n, release in enumerate(releases)}
    sites: list[list[str]] = []
    lines: dict[str, dict[str, list[list[Any]]]] = {}
    compiled: list[list[Any]] = []
    wordings: dict[str, list[list[Any]]] = {}
    read_alike: dict[str, int] = {}
    raised_in: dict[str, int] = {}
    for item in items:
        record = item.get("record", {})
        # A public name some releases lack, or a call some releases' signatures refuse.
        raising = record.get("raisedIn", record.get("missingIn"))
        if raising is not None:
            raised_in[record["id"]] = union(bit[r] for r in raising if r in bit)
            continue
        if "record" in item:
            record_id, facts = item["record"]["id"], item["record"]
        else:
            record_id, facts = item["annotation"]["recordId"], item["annotation"]["mined"]
        site = facts["site"]
        history = facts.get("messageHistory") or []
        if len(history) > 1:
            wordings[record_id], alike = _wordings(history, facts, bit)
            if alike:
                read_alike[record_id] = alike
        for (file, function, condition), lines_there in _places(facts, bit):
            row = [
                record_id,
                file,
                function or "<module>",
                site["kind"],
                facts["errorClass"],
                condition,
                facts["errorMessage"],
            ]
            if site.get("language", "python") != "python":
                # C++ lines are not frames of a Python traceback: kept for source links.
                compiled.append([*row, [[n, mask] for n, mask in sorted(lines_there.items())]])
                continue
            number = len(sites)
            sites.append(row)
            for line, mask in sorted(lines_there.items()):
                lines.setdefault(file, {}).setdefault(str(line), []).append([number, mask])
    cpp_read = union(mask for row in compiled for _, mask in row[-1])
    return {
        "releases": releases,
        "sites": sites,
        "lines": lines,
        "compiled": compiled,
        "wordings": wordings,
        "readAlike": read_alike,
        "raisedIn": raised_in,
        # Releases after the newest whose C++ was read: mined from their wheels.
        "cppUnread": releases[cpp_read.bit_length() :] if cpp_read else [],
    }


def _wordings(
    history: list[dict[str, str]], facts: dict[str, Any], bit: dict[str, int]
) -> tuple[list[list[Any]], int]:
    """Each wording of a reworded site's message, as [the last release printing it, the
    releases that printed it]; and the releases of its older wordings that its pattern of
    today reads too."""
    printing: list[list[Any]] = [
        [wording["until"], _releases_printing(wording, facts["releases"], bit)]
        for wording in history
    ]
    pattern = facts.get("matchPattern")
    if not pattern:
        return printing, 0
    reads = compile_pattern(pattern).search
    alike = union(
        mask
        for wording, (_, mask) in zip(history[:-1], printing, strict=False)
        if reads(wording["errorMessage"])
    )
    return printing, alike


def _places(
    facts: dict[str, Any], bit: dict[str, int]
) -> list[tuple[tuple[str, str | None, str], dict[int, int]]]:
    """Each place a site stood in (its file, function, and an assert's condition there),
    with the releases on each of its lines there; the site's newest place last."""
    site = facts["site"]
    newest = (facts["filePath"], site["function"], site.get("condition") or "")
    places: dict[tuple[str, str | None, str], dict[int, int]] = {}
    for entry in facts["releases"]:
        if entry["release"] in bit:
            place = (
                entry.get("filePath", newest[0]),
                entry.get("function", newest[1]),
                entry.get("condition", newest[2]),
            )
            releases_at = places.setdefault(place, {})
            line = entry["lineNumber"]
            releases_at[line] = releases_at.get(line, 0) | bit[entry["release"]]
    return sorted(places.items(), key=lambda p: p[0] == newest)


def _releases_printing(
    wording: dict[str, str], shipped: Iterable[dict[str, Any]], bit: dict[str, int]
) -> int:
    """The releases from ``wording["from"]`` to its ``until`` that shipped the site."""
    first, last = release_key(wording["from"]), release_key(wording["until"])
    mask = 0
    for entry in shipped:
        if entry["release"] in bit and first <= release_key(entry["release"]) <= last:
            mask |= bit[entry["release"]]
    return mask


def write_frame_index(mined: Iterable[Path], out: Path = FRAME_INDEX_FILE) -> None:
    """Derive the frame index from mined dataset files (JSON Lines) and write it."""
    data = build_frame_index(
        json.loads(line)
        for path in mined
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    )
    out.write_text(json.dumps(data, separators=(",", ":")) + "\n", encoding="utf-8")
