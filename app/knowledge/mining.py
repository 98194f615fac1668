"""Mining one release, or every release of the table, into the dataset's JSON Lines.

``errata admin mine`` and ``errata admin mine-releases`` are thin shells over these two
functions.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import IO, Any

from app.jaxref.files import DATA_DIR
from app.jaxref.releases import commit_of, linking_order, release_key
from app.jaxref.scope import CPP_SCOPE, FRAME_SCOPE, PYTHON_SCOPE
from app.knowledge import dataset
from app.knowledge.functions import function_spans, write_function_spans
from app.knowledge.history import Track
from app.knowledge.lowering import mine_lowering_rules, rules_by_release
from app.knowledge.sources import ReleaseSource
from app.records.importer import expand_paths, read_documents, read_text

DEFAULT_CURATED = (DATA_DIR / "seeds", DATA_DIR / "records")
MINED_SITES = DATA_DIR / "mined" / "jax-sites.jsonl"
MINED_PATHS = (*PYTHON_SCOPE, *FRAME_SCOPE, CPP_SCOPE)


def curated_records(paths: Iterable[Path]) -> list[dict[str, Any]]:
    """The records people wrote (seeds, the alignment family), whose sites they own."""
    records: list[dict[str, Any]] = []
    for path in expand_paths([p for p in paths if p.exists()]):
        for incoming in read_documents(read_text(path), str(path)):
            if not incoming.is_annotation and isinstance(incoming.record, dict):
                records.append(incoming.record)
    return records


def mine_one(
    source: Path,
    release: str,
    commit: str | None,
    out: IO[str],
    *,
    history: Path | None = None,
    curated: Iterable[Path] = DEFAULT_CURATED,
) -> int:
    """Mine ``source`` as ``release``, linked into ``history`` when given; write the dataset."""
    release_key(release)  # a release number, or ValueError before any work
    known = dataset.load(history) if history is not None and history.exists() else None
    tracks = dataset.build(
        [(source, release, commit or commit_of(release))], known, curated_records(curated)
    )
    return dataset.write(tracks, out)


def mine_releases(
    sources: Mapping[str, ReleaseSource],
    out: IO[str],
    *,
    rules_out: Path | None = None,
    functions_out: Path | None = None,
    curated: Iterable[Path] = DEFAULT_CURATED,
) -> dict[str, Track]:
    """Mine each release of ``sources`` (``release_sources``), linked in ``linking_order``:
    only the mined paths are taken from each release's tree. The lowering rules of every
    release go to ``rules_out``, where each release defines its functions to
    ``functions_out``."""
    with tempfile.TemporaryDirectory(prefix="errata-mine-") as scratch:
        trees = [
            (sources[r].extract(MINED_PATHS, Path(scratch) / r), r, sources[r].commit)
            for r in linking_order(list(sources))
        ]
        tracks = dataset.build(trees, None, curated_records(curated))
        rules = rules_by_release((release, mine_lowering_rules(tree)) for tree, release, _ in trees)
        if functions_out is not None:
            oldest_first = sorted(trees, key=lambda tree: release_key(tree[1]))
            write_function_spans(
                ((release, function_spans(tree)) for tree, release, _ in oldest_first),
                functions_out,
            )
    dataset.write(tracks, out)
    if rules_out is not None:
        rules_out.write_text(json.dumps({"rules": rules}, indent=1) + "\n", encoding="utf-8")
    return tracks


def adopt_into(sites: Path, out: IO[str], curated: Iterable[Path] = DEFAULT_CURATED) -> int:
    """The mined dataset ``sites`` written to ``out`` with the curated records adopting
    their sites, as mining would have (``dataset.adopt_curated``), without mining again:
    for a record written after the mining. The number of sites newly curated."""
    tracks = dataset.load(sites)
    before = sum(track.curated for track in tracks.values())
    dataset.adopt_curated(tracks, curated_records(curated))
    dataset.write(tracks, out)
    return sum(track.curated for track in tracks.values()) - before
