"""Curated records of mined error sites: the errors people report most, written by hand.

Each is the record of one site of JAX's source, under the mined record's own id, so the
dataset's ids never change: it must say what the site says (file, line, message, older
wordings), carry what mining cannot (documentation, solutions, an example fix, prevention),
and name the releases it applies to. Its match pattern must read the real message, which
the oracle tests check against JAX.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from app.config import REPO_ROOT
from app.knowledge import dataset
from app.knowledge.mining import DEFAULT_CURATED, MINED_SITES, curated_records
from app.matching.templates import compile_pattern
from app.records.importer import read_documents
from app.records.slugs import derive_slug
from app.records.validation import validate_record

DATA = REPO_ROOT / "data"
SITE_RECORDS = sorted(
    path
    for path in (DATA / "records").glob("*.json")
    if not json.loads(path.read_text(encoding="utf-8"))["record"].get("rule")
)
UNRELATED = "ValueError: Can only transfer whole pixels to the GPU canvas (shape=(3, 5))"
BACKEND_TAGS = {"mosaic-gpu", "tpu", "triton", "pallas-call", "core-map", "block-spec"}


def _record(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))["record"]


@cache
def mined_sites() -> dict[str, dict[str, Any]]:
    """What mining says of every site, by id: a record's own fields or an annotation's."""
    sites = {}
    with MINED_SITES.open(encoding="utf-8") as lines:
        for line in lines:
            item = json.loads(line)
            if "record" in item:
                sites[item["record"]["id"]] = item["record"]
            else:
                sites[item["annotation"]["recordId"]] = item["annotation"]["mined"]
    return sites


@cache
def known_messages() -> dict[str, list[str]]:
    """Every wording of every known error (mined sites, seeds, catalog records), by id."""
    messages = {
        site_id: [wording["errorMessage"] for wording in site["messageHistory"]]
        for site_id, site in mined_sites().items()
    }
    for record in curated_records(DEFAULT_CURATED):
        messages.setdefault(record["id"], []).append(record["errorMessage"])
    return messages


def test_there_are_site_records() -> None:
    assert len(SITE_RECORDS) >= 20


@pytest.mark.parametrize("path", SITE_RECORDS, ids=lambda p: p.name)
def test_file_is_an_envelope_the_importer_reads_unchanged(path: Path) -> None:
    [incoming] = list(read_documents(path.read_text(encoding="utf-8"), str(path)))
    assert not incoming.is_annotation
    assert incoming.dataset_version
    assert validate_record(incoming.record).document == _record(path)


@pytest.mark.parametrize("path", SITE_RECORDS, ids=lambda p: p.name)
def test_record_is_its_mined_site(path: Path) -> None:
    record = _record(path)
    site = mined_sites()[record["id"]]
    assert record["errorMessage"] == site["messageHistory"][-1]["errorMessage"]
    assert record["errorMessage"] == site["errorMessage"]
    for field in ("filePath", "lineNumber", "errorClass", "messagePattern", "githubUrl"):
        assert record[field] == site[field], field
    assert record["slug"] == derive_slug(record["errorMessage"])
    assert record["schemaVersion"] == 2


@pytest.mark.parametrize("path", SITE_RECORDS, ids=lambda p: p.name)
def test_record_keeps_every_older_wording_of_its_site(path: Path) -> None:
    """Each with its mined pattern, or the record's own where that pattern reads anything."""
    record = _record(path)
    history = mined_sites()[record["id"]]["messageHistory"]
    assert [(w["text"], w["until"]) for w in record["olderWordings"]] == [
        (w["errorMessage"], w["until"]) for w in history[:-1]
    ]
    for wording, mined in zip(record["olderWordings"], history, strict=False):
        assert wording["pattern"] in (mined["messagePattern"], record["matchPattern"])


@pytest.mark.parametrize("path", SITE_RECORDS, ids=lambda p: p.name)
def test_no_pattern_of_the_record_reads_unrelated_text(path: Path) -> None:
    record = _record(path)
    patterns = [record["matchPattern"], *(w["pattern"] for w in record["olderWordings"])]
    for pattern in patterns:
        assert not compile_pattern(pattern).search(UNRELATED), pattern


@pytest.mark.parametrize("path", SITE_RECORDS, ids=lambda p: p.name)
def test_record_is_documented_by_hand_for_the_releases_it_applies_to(path: Path) -> None:
    record = _record(path)
    releases = [entry["release"] for entry in mined_sites()[record["id"]]["releases"]]
    assert record["documentationSource"] == "curated"
    documentation = record["documentation"]
    assert releases[0] in documentation and releases[-1] in documentation, releases
    for field in ("triggerScenarios", "commonSituations", "verifiedBy"):
        assert record[field].strip(), field
    assert len(record["solutions"]) >= 2
    assert all(solution.strip() for solution in record["solutions"])
    assert record["preventionTips"] and all(tip.strip() for tip in record["preventionTips"])
    fix = record["exampleFix"]
    assert fix.startswith("# before") and "\n# after" in fix
    assert {"jax", "pallas"} <= set(record["tags"]) and BACKEND_TAGS & set(record["tags"])
    assert len(record["tags"]) == len(set(record["tags"]))


@pytest.mark.parametrize("path", SITE_RECORDS, ids=lambda p: p.name)
def test_match_pattern_compiles_and_older_wordings_do_too(path: Path) -> None:
    record = _record(path)
    compile_pattern(record["matchPattern"])
    for wording in record["olderWordings"]:
        compile_pattern(wording["pattern"])


@pytest.mark.parametrize("path", SITE_RECORDS, ids=lambda p: p.name)
def test_related_errors_are_other_known_errors(path: Path) -> None:
    record = _record(path)
    for text in record["relatedErrors"]:
        prefix = text.rstrip(". …").strip()
        owners = {
            owner
            for owner, wordings in known_messages().items()
            if any(wording.startswith(prefix) for wording in wordings)
        }
        assert owners and record["id"] not in owners, (text, owners)


def test_ids_are_unique_and_not_a_catalog_rule_records() -> None:
    ids = [_record(path)["id"] for path in SITE_RECORDS]
    assert len(ids) == len(set(ids))
    rule_ids = {
        record["id"] for record in curated_records([DATA / "records"]) if record.get("rule")
    }
    assert not set(ids) & rule_ids


def test_both_layout_inference_failures_name_each_other() -> None:
    """Users report 'layout inference failed' in two wordings: two sites, two records."""
    by_id = {_record(path)["id"]: _record(path) for path in SITE_RECORDS}
    no_solution, unsatisfiable = by_id["ed821fb8907ba389"], by_id["7cfa01a5c408b193"]
    assert any(unsatisfiable["errorMessage"].startswith(t) for t in no_solution["relatedErrors"])
    assert any(no_solution["errorMessage"].startswith(t) for t in unsatisfiable["relatedErrors"])


def test_adopting_the_curated_records_makes_their_sites_annotations() -> None:
    """Re-mining keeps these ids: each record claims its site rather than adding a record."""
    tracks = dataset.load(MINED_SITES)
    dataset.adopt_curated(tracks, curated_records(DEFAULT_CURATED))
    for path in SITE_RECORDS:
        assert tracks[_record(path)["id"]].curated, path.name
