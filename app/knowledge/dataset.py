"""Mined sites as the dataset's documents, and back.

A site no curated record documents becomes a record of its own, in the dataset's schema v2
(shaped like the seeds), with what the code says about it (``site``), every release it is
in (``releases``) and its message history. A site a curated record documents (a seed, an
alignment-family record) does not become a second record: its mined facts join the curated
one as the ``mined`` part of its annotation, so the curated record is still served as it is.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from app.jaxref import messages
from app.jaxref.releases import source_url, span
from app.jaxref.scope import CPP_SCOPE, repo_root
from app.jaxref.templates import MIN_MATCHABLE_LITERAL, derive_pattern, split_template
from app.knowledge.cpp_sites import mine_cpp
from app.knowledge.history import Appearance, Found, Track, Wording, link_release, source_window
from app.knowledge.python_source import mine_python
from app.knowledge.sites import Site
from app.records.schema import MAX_MESSAGE_CHARS
from app.records.slugs import derive_slug

REPO = "jax-ml/jax"
_PLACEHOLDER = re.compile(r"\{[^{}]*\}")
_SELF_DOCUMENTING = re.compile(r"\{\s*([^{}=!:]+?)\s*=\s*(?:[!:][^{}]*)?\}")


def mine_release(source: Path, release: str, commit: str | None) -> list[Found]:
    """Every site of one release's source tree, each with its 37-line source window: the
    Python, and the C++ of ``jaxlib/mosaic`` where the tree has it (a checkout does, an
    installed package does not)."""
    root = repo_root(source)
    sites = mine_python(root)
    if (root / CPP_SCOPE).is_dir():
        sites += mine_cpp(root)
    found: list[Found] = []
    lines: dict[str, list[str]] = {}
    for site in sites:
        if site.file_path not in lines:
            lines[site.file_path] = (root / site.file_path).read_text("utf-8").splitlines()
        text, start, end = source_window(lines[site.file_path], site.line)
        found.append(Found(site, text, start, end))
    return found


def build(
    releases: Iterable[tuple[Path, str, str | None]],
    known: dict[str, Track] | None = None,
    curated: Iterable[dict[str, Any]] = (),
) -> dict[str, Track]:
    """Link each ``(source tree, release, commit)`` in order into ``known`` (or a new set)."""
    tracks = dict(known or {})
    for source, release, commit in releases:
        link_release(tracks, release, commit, mine_release(source, release, commit))
    adopt_curated(tracks, curated)
    return tracks


def adopt_curated(tracks: dict[str, Track], curated: Iterable[dict[str, Any]]) -> None:
    """Make each curated record the record of its site, whose mined facts then join it as
    an annotation. A curated record written for a mined site has that site's id; an older
    one (a seed) gives its id to the site in its file whose message, current or older, is
    the record's, or failing that reads as the record's (``shape={shape}`` as ``{shape=}``),
    the nearest to the record's line first. A record of a bare exception (its message is its
    class: an ``assert`` without one) takes the bare site of that class on the record's line
    in some release, since no wording tells such sites apart."""
    records = [r for r in curated if r.get("filePath") and r.get("errorMessage")]
    for record in records:  # written for a mined site, under the mined record's own id
        if record["id"] in tracks:
            tracks[record["id"]].curated = True
    for same in (lambda a, b: a == b, lambda a, b: message_skeleton(a) == message_skeleton(b)):
        for record in records:
            if record["id"] in tracks:
                continue
            matching = [
                track
                for track in tracks.values()
                if not track.curated
                and track.site.file_path == record["filePath"]
                and any(same(w.template, record["errorMessage"]) for w in track.wordings)
            ]
            if not matching:
                continue
            line = record.get("lineNumber") or 0
            _adopt(tracks, min(matching, key=lambda t: (abs(t.site.line - line), t.id)), record)
    for record in records:
        if record["id"] not in tracks and record["errorMessage"] == record.get("errorClass"):
            bare = [track for track in tracks.values() if _bare_site_of(track, record)]
            if len(bare) == 1:
                _adopt(tracks, bare[0], record)


def _adopt(tracks: dict[str, Track], track: Track, record: dict[str, Any]) -> None:
    del tracks[track.id]
    track.id, track.curated = record["id"], True
    tracks[track.id] = track


def _bare_site_of(track: Track, record: dict[str, Any]) -> bool:
    """Whether ``track`` is a message-less site of the record's class, on its file and line
    in some release."""
    return (
        not track.curated
        and track.site.error_class == record["errorClass"]
        and not any(wording.template for wording in track.wordings)
        and any(
            (place.file_path, place.line) == (record["filePath"], record.get("lineNumber"))
            for place in track.appearances
        )
    )


def message_skeleton(template: str) -> str:
    """What a message prints, placeholders aside: ``shape={shape}`` and ``{shape=}`` agree."""
    text = _SELF_DOCUMENTING.sub(lambda found: f"{found.group(1)}={{}}", template)
    return " ".join(_PLACEHOLDER.sub("{}", text).split())


def documents(tracks: dict[str, Track]) -> Iterator[dict[str, Any]]:
    """The dataset's lines: a record per uncurated site, an annotation per curated one."""
    for track in sorted(tracks.values(), key=lambda t: (t.site.file_path, t.id)):
        facts = mined_facts(track)
        if track.curated:
            yield {"annotation": {"recordId": track.id, "mined": facts}}
        else:
            yield {"record": record_document(track, facts)}


def mined_facts(track: Track) -> dict[str, Any]:
    """What mining says of a site: its newest place and source, every release, its wordings."""
    site = track.site
    newest = track.appearances[-1]
    return {
        "errorMessage": error_message(site),
        "messagePattern": message_pattern(site),
        "matchPattern": match_pattern(site.template),
        "errorClass": site.error_class,
        "filePath": site.file_path,
        "lineNumber": site.line,
        "sourceCode": track.source,
        "sourceCodeStart": track.source_start,
        "sourceCodeEnd": track.source_end,
        "githubUrl": _url(newest, track),
        "analyzedSha": newest.commit,
        "site": {
            "kind": site.kind,
            "language": site.language,
            "backend": site.backend,
            "function": site.function,
            "condition": site.condition,
            "definitions": list(site.definitions),
            "loweringRule": site.lowering_rule,
            **({"details": dict(sorted(site.extra.items()))} if site.extra else {}),
        },
        "releases": [
            {
                "release": appearance.release,
                "lineNumber": appearance.line,
                "githubUrl": _url(appearance, track),
                **_moved_from(appearance, site),
            }
            for appearance in track.appearances
        ],
        "messageHistory": [
            {
                "errorMessage": wording.template,
                "messagePattern": wording.pattern,
                "from": wording.first,
                "until": wording.last,
            }
            for wording in track.wordings
        ],
    }


def _moved_from(appearance: Appearance, site: Site) -> dict[str, str | None]:
    """Where the site stood in that release, and what an assert asserted there, if not what
    they are now (it moved, or was rewritten, since)."""
    moved: dict[str, str | None] = {}
    if appearance.file_path != site.file_path:
        moved["filePath"] = appearance.file_path
    if appearance.function != site.function:
        moved["function"] = appearance.function
    if site.kind == "assert" and appearance.condition != site.condition:
        moved["condition"] = appearance.condition
    return moved


def _url(appearance: Appearance, track: Track) -> str | None:
    if appearance.commit is None:
        return None
    file_path = appearance.file_path
    if appearance is track.appearances[-1] and track.source_start and track.source_end:
        return source_url(appearance.commit, file_path, track.source_start, track.source_end)
    return source_url(appearance.commit, file_path, appearance.line, appearance.line)


def error_message(site: Site) -> str:
    """The template; a bare assert has none, so it reads as the statement Python shows."""
    if site.template:
        message = site.template
    elif site.kind == "assert":
        message = f"assert {site.condition}"
    else:
        message = f"(a {site.error_class} with no message, in {site.function})"
    return message[:MAX_MESSAGE_CHARS]


def message_pattern(site: Site) -> str:
    return site.pattern if site.template else messages.escape(error_message(site))


def match_pattern(template: str) -> str:
    """The typed pattern with named groups the matcher uses, of the message's first line
    (the exception line of a traceback); empty where that line has too little literal text
    to tell it from any other line (a bare assert, ``raise X(msg)``): the site is kept as a
    record, left to the frames to find."""
    first_line = template.split("\n", 1)[0]
    literal = "".join(piece for piece in split_template(first_line) if isinstance(piece, str))
    if len(literal.strip()) < MIN_MATCHABLE_LITERAL:
        return ""
    return derive_pattern(first_line)


def record_document(track: Track, facts: dict[str, Any]) -> dict[str, Any]:
    """A record in the dataset's schema v2 with the mined facts, for an uncurated site."""
    site = track.site
    older = [
        {"text": wording.template, "from": wording.first, "until": wording.last}
        for wording in track.wordings[:-1]
        if match_pattern(wording.template)
    ]
    return {
        "id": track.id,
        "repo": REPO,
        "slug": derive_slug(facts["errorMessage"]),
        "errorCode": None,
        "errorMessage": facts["errorMessage"],
        "messagePattern": facts["messagePattern"],
        "matchPattern": facts["matchPattern"],
        "errorType": "exception",
        "errorClass": site.error_class,
        "httpStatus": None,
        "severity": "error",
        "filePath": site.file_path,
        "lineNumber": site.line,
        "sourceCode": facts["sourceCode"],
        "sourceCodeStart": facts["sourceCodeStart"],
        "sourceCodeEnd": facts["sourceCodeEnd"],
        "githubUrl": facts["githubUrl"],
        "documentation": derived_documentation(track),
        "documentationSource": "derived",
        "solutions": [],
        "preventionTips": [],
        "tags": ["jax", "pallas", site.backend, site.kind],
        "analyzedSha": facts["analyzedSha"],
        "schemaVersion": 2,
        "olderWordings": older,
        "site": facts["site"],
        "releases": facts["releases"],
        "messageHistory": facts["messageHistory"],
    }


def derived_documentation(track: Track) -> str:
    """Plain prose from what the code says; curated text always replaces it."""
    site = track.site
    where = f"`{site.function}`" if site.function else f"`{site.file_path}` at module level"
    if site.kind == "assert":
        sentence = f"Asserted in {where}: `{site.condition}` must hold, else `AssertionError`."
    elif site.condition:
        sentence = f"Raised by {where} when `{site.condition}` is true."
    else:
        sentence = f"Raised by {where}."
    if site.definitions:
        sentence += " Where " + "; ".join(f"`{d}`" for d in site.definitions) + "."
    if site.lowering_rule:
        sentence += f" It belongs to the lowering rule registered by `{site.lowering_rule}`."
    sentence += f" In JAX {span(track.releases)} ({site.backend.replace('_', ' ')})."
    return sentence


def load(path: Path) -> dict[str, Track]:
    """The sites of a mined dataset file, to link a new release into."""
    tracks: dict[str, Track] = {}
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            if not line.strip():
                continue
            item = json.loads(line)
            if "record" in item:
                track = _track(item["record"]["id"], item["record"], curated=False)
            else:
                track = _track(item["annotation"]["recordId"], item["annotation"]["mined"], True)
            tracks[track.id] = track
    return tracks


def _track(track_id: str, facts: dict[str, Any], curated: bool) -> Track:
    place = facts["site"]
    history = facts["messageHistory"]
    site = Site(
        file_path=facts["filePath"],
        line=facts["lineNumber"],
        kind=place["kind"],
        error_class=facts["errorClass"],
        template=history[-1]["errorMessage"],
        pattern=history[-1]["messagePattern"],
        function=place["function"],
        backend=place["backend"],
        condition=place["condition"],
        definitions=tuple(place["definitions"]),
        lowering_rule=place["loweringRule"],
        language=place["language"],
        extra=dict(place.get("details", {})),
    )
    commits = {entry["release"]: _commit_of_url(entry["githubUrl"]) for entry in facts["releases"]}
    return Track(
        id=track_id,
        site=site,
        wordings=[
            Wording(w["errorMessage"], w["messagePattern"], w["from"], w["until"]) for w in history
        ],
        appearances=[
            Appearance(
                entry["release"],
                entry["lineNumber"],
                commits[entry["release"]],
                entry.get("filePath", site.file_path),
                entry.get("function", site.function),
                entry.get("condition", site.condition) if site.kind == "assert" else None,
            )
            for entry in facts["releases"]
        ],
        source=facts["sourceCode"],
        source_start=facts["sourceCodeStart"],
        source_end=facts["sourceCodeEnd"],
        curated=curated,
    )


def _commit_of_url(url: str | None) -> str | None:
    return url.split("/blob/")[1].split("/")[0] if url else None


def write(tracks: dict[str, Track], out: Any) -> int:
    """JSON Lines, one document a line, in a stable order; returns how many."""
    count = 0
    for document in documents(tracks):
        out.write(json.dumps(document, ensure_ascii=False, sort_keys=True) + "\n")
        count += 1
    return count
