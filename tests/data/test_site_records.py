"""Curated records of the errors people report most, written by hand.

Most are the record of one mined site of JAX's source, under the mined record's own id, so
the dataset's ids never change: it must say what the site says (file, line, message, older
wordings), carry what mining cannot (documentation, solutions, an example fix, prevention),
and name the releases it applies to. A few are raised outside the mined paths (jaxlib's C++
``safe_zip`` and ``safe_map``, JAX core's missing lowering): no site to agree with, they are
held to the releases their wordings name, under an id made from their slug. Every match
pattern must read the real message, which the oracle tests check against JAX.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from app.config import REPO_ROOT
from app.jaxref.files import FUNCTIONS_FILE
from app.jaxref.releases import newest_release, release_commits, source_url
from app.jaxref.templates import compile_pattern, derive_pattern
from app.knowledge import dataset
from app.knowledge.mining import DEFAULT_CURATED, MINED_SITES, adopt_into, curated_records
from app.records.importer import read_documents
from app.records.slugs import derive_slug
from app.records.validation import validate_record

DATA = REPO_ROOT / "data"
# Every record written by hand outside the catalog's rules, of errors JAX raises (a
# compiler's message, ``saidBy``, is no site of JAX's: test_compiler_records checks those).
CURATED = sorted(
    path
    for path in (DATA / "records").glob("*.json")
    for record in [json.loads(path.read_text(encoding="utf-8"))["record"]]
    if not record.get("rule") and not record.get("saidBy")
)
# Those of errors raised where mining does not look (jaxlib's C++, JAX's core): no mined
# site. Each is pinned to the newest release where Pallas meets it, at a line holding this.
UNMINED = {
    DATA / "records" / "pallas-safe-zip-length.json": (newest_release(), "zip("),
    DATA / "records" / "pallas-safe-map-length.json": (newest_release(), "map(_make_block_slice"),
    DATA / "records" / "pallas-call-no-lowering-before-0-4-21.json": (
        "0.4.20",
        "raise NotImplementedError(",
    ),
    DATA / "records" / "pallas-removed-load-and-store.json": (
        newest_release(),
        'raise AttributeError(f"module {module!r} has no attribute {name!r}")',
    ),
    DATA / "records" / "pallas-python-if-on-a-traced-value.json": (
        newest_release(),
        "raise TracerBoolConversionError(arg)",
    ),
    DATA / "records" / "pallas-scratch-shape-not-a-memory-ref.json": (
        newest_release(),
        "s.get_ref_aval()",
    ),
    DATA / "records" / "pallas-dynamic-slice-size.json": (
        newest_release(),
        "assert isinstance(aval, AbstractValue), aval",
    ),
    # A dict of compiler parameters, hashed with the primitive's other parameters.
    DATA / "records" / "pallas-call-compiler-params-dict.json": (
        newest_release(),
        "return cls._create(primitive, eqn_ctx, avals_in, effects, params, platforms)",
    ),
    # Python's own errors at Pallas's calls of user code: pinned to where Pallas traces it,
    # or where a pipeline, run_scoped or plgpu.kernel calls the user's function.
    **{
        DATA / "records" / f"{prefix}-{name}.json": (newest_release(), statement)
        for prefix, names, statement in (
            ("pallas-kernel", ("given-more-refs", "missing-refs"), "pe.trace_to_jaxpr("),
            ("pallas-index-map", ("given-more-indices", "missing-indices"), "pe.trace_to_jaxpr("),
            (
                "pallas-tpu-pipeline-body",
                ("given-more-refs", "missing-refs"),
                "body(*current_refs, *scratches)",
            ),
            (
                "pallas-gpu-pipeline-step",
                ("given-more-arguments", "missing-arguments"),
                "next_body_carry = body(",
            ),
            ("lax-fori-loop-body", ("given-more-arguments", "missing-arguments"), "body_fun(i, x)"),
            (
                "pallas-run-scoped-body",
                ("given-more-refs", "missing-refs"),
                "pe.trace_to_jaxpr_nocache(",
            ),
            (
                "mgpu-kernel-body",
                ("given-more-refs", "missing-refs"),
                "pallas_primitives.run_scoped(",
            ),
        )
        for name in names
    },
}

SITE_RECORDS = [path for path in CURATED if path not in UNMINED]
UNRELATED = "ValueError: Can only transfer whole pixels to the GPU canvas (shape=(3, 5))"
BACKEND_TAGS = {"mosaic-gpu", "tpu", "triton", "pallas-call", "core-map", "block-spec"}


def _record(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))["record"]


# The records bound to JAX's functions that call user code.
CALLED = [path for path in CURATED if _record(path).get("calledBy")]


def _patterns(record: dict[str, Any]) -> list[str]:
    """The record's patterns; a bare assert has none (no message: its frame names it)."""
    current = [record["matchPattern"]] if record["matchPattern"] else []
    return [*current, *(wording["pattern"] for wording in record["olderWordings"])]


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


def test_there_are_site_records_and_the_unmined_ones_are_curated() -> None:
    assert len(SITE_RECORDS) >= 20
    assert set(UNMINED) <= set(CURATED)


@pytest.mark.parametrize("path", CURATED, ids=lambda p: p.name)
def test_file_is_an_envelope_the_importer_reads_unchanged(path: Path) -> None:
    [incoming] = list(read_documents(path.read_text(encoding="utf-8"), str(path)))
    assert not incoming.is_annotation
    assert incoming.dataset_version
    assert validate_record(incoming.record).document == _record(path)


@pytest.mark.parametrize("path", SITE_RECORDS, ids=lambda p: p.name)
def test_record_is_its_mined_site(path: Path) -> None:
    record = _record(path)
    site = mined_sites()[record["id"]]
    printed = site["messageHistory"][-1]["errorMessage"]
    # A bare assert or raise prints no message; its record's message is its statement (an
    # assert's) or the class alone (a raise's), as mined.
    assert printed == record["errorMessage"] or (printed == "" and not _patterns(record))
    assert record["errorMessage"] == site["errorMessage"]
    for field in ("filePath", "lineNumber", "errorClass", "messagePattern", "githubUrl"):
        assert record[field] == site[field], field
    assert record["slug"] == derive_slug(record["errorMessage"])
    assert record["schemaVersion"] == 2


@pytest.mark.parametrize("path", SITE_RECORDS, ids=lambda p: p.name)
def test_record_keeps_every_older_wording_of_its_site(path: Path) -> None:
    """Each with its mined pattern, the record's own where that pattern reads anything, or
    the one derived from its text, as a wording without a pattern gets (``'{op}' op …``
    read with or without the op that libtpu's wrapper leaves out)."""
    record = _record(path)
    history = mined_sites()[record["id"]]["messageHistory"]
    assert [(w["text"], w["until"]) for w in record["olderWordings"]] == [
        (w["errorMessage"], w["until"]) for w in history[:-1]
    ]
    for wording, mined in zip(record["olderWordings"], history, strict=False):
        # Its values' groups may be named, for what reads them (a primitive's ``name``).
        unnamed = re.sub(r"\(\?P<\w+>", "(", wording["pattern"])
        assert wording["pattern"] in (record["matchPattern"], derive_pattern(wording["text"])) or (
            unnamed == mined["messagePattern"]
        )


@pytest.mark.parametrize("path", CURATED, ids=lambda p: p.name)
def test_no_pattern_of_the_record_reads_unrelated_text(path: Path) -> None:
    for pattern in _patterns(_record(path)):
        assert not compile_pattern(pattern).search(UNRELATED), pattern


@pytest.mark.parametrize("path", SITE_RECORDS, ids=lambda p: p.name)
def test_record_is_documented_for_the_releases_of_its_site(path: Path) -> None:
    record = _record(path)
    releases = [entry["release"] for entry in mined_sites()[record["id"]]["releases"]]
    assert releases[0] in record["documentation"], releases
    assert releases[-1] in record["documentation"], releases


@pytest.mark.parametrize("path", CURATED, ids=lambda p: p.name)
def test_record_is_documented_by_hand(path: Path) -> None:
    record = _record(path)
    assert record["documentationSource"] == "curated"
    for field in ("documentation", "triggerScenarios", "commonSituations", "verifiedBy"):
        assert record[field].strip(), field
    assert len(record["solutions"]) >= 2
    assert all(solution.strip() for solution in record["solutions"])
    assert record["preventionTips"] and all(tip.strip() for tip in record["preventionTips"])
    fix = record["exampleFix"]
    assert fix.startswith("# before") and "\n# after" in fix
    assert {"jax", "pallas"} <= set(record["tags"]) and BACKEND_TAGS & set(record["tags"])
    assert len(record["tags"]) == len(set(record["tags"]))


@pytest.mark.parametrize("path", CURATED, ids=lambda p: p.name)
def test_match_pattern_compiles_and_older_wordings_do_too(path: Path) -> None:
    record = _record(path)
    for pattern in _patterns(record):
        compile_pattern(pattern)
    # Only a site that prints no message has no pattern: it is known by its frame's line.
    site = mined_sites().get(record["id"])
    assert record["matchPattern"] or (site and site["messageHistory"][-1]["errorMessage"] == "")


@pytest.mark.parametrize("path", CURATED, ids=lambda p: p.name)
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
    ids = [_record(path)["id"] for path in CURATED]
    assert len(ids) == len(set(ids))
    rule_ids = {
        record["id"] for record in curated_records([DATA / "records"]) if record.get("rule")
    }
    assert not set(ids) & rule_ids


def test_both_layout_inference_failures_name_each_other() -> None:
    """Users report 'layout inference failed' in two wordings: two sites, two records."""
    by_id = {_record(path)["id"]: _record(path) for path in SITE_RECORDS}
    no_solution, unsatisfiable = by_id["ed821fb8907ba389"], by_id["33bc240ef4ec1a11"]
    assert any(unsatisfiable["errorMessage"].startswith(t) for t in no_solution["relatedErrors"])
    assert any(no_solution["errorMessage"].startswith(t) for t in unsatisfiable["relatedErrors"])


def test_adopting_the_curated_records_makes_their_sites_annotations() -> None:
    """Re-mining keeps these ids: each record claims its site rather than adding a record."""
    tracks = dataset.load(MINED_SITES)
    dataset.adopt_curated(tracks, curated_records(DEFAULT_CURATED))
    for path in SITE_RECORDS:
        assert tracks[_record(path)["id"]].curated, path.name


def test_the_committed_dataset_is_what_adopting_the_curated_records_makes_it() -> None:
    """``errata admin adopt-curated`` was run after the last record was written."""
    out = io.StringIO()
    assert adopt_into(MINED_SITES, out) == 0
    assert out.getvalue() == MINED_SITES.read_text(encoding="utf-8")


def test_a_bare_assert_record_adopts_the_bare_site_on_its_line() -> None:
    """transform_type's tiling assert has no message to adopt it by: its record names the
    site's file and line (733 in 0.11.1), which one release's appearance stands on."""
    record = next(r for r in curated_records(DEFAULT_CURATED) if r["id"] == "054ee89b15485d92")
    assert record["errorMessage"] == record["errorClass"] == "AssertionError"
    tracks = dataset.load(MINED_SITES)
    site = tracks.pop(record["id"])
    site.id, site.curated = "as mined", False
    tracks[site.id] = site
    others = {k: t.curated for k, t in tracks.items()}
    dataset.adopt_curated(tracks, [record])
    assert tracks[record["id"]] is site and site.curated and "as mined" not in tracks
    assert {k: t.curated for k, t in tracks.items() if k != record["id"]} == {
        k: v for k, v in others.items() if k != "as mined"
    }
    moved = {**record, "lineNumber": record["lineNumber"] + 1}  # no appearance there
    site.id, site.curated = "as mined", False
    tracks = {"as mined": site}
    dataset.adopt_curated(tracks, [moved])
    assert list(tracks) == ["as mined"]


# --- errors raised outside the mined paths --------------------------------------------------


@pytest.mark.parametrize("path", UNMINED, ids=lambda p: p.name)
def test_unmined_record_is_identified_by_its_slug_as_catalog_records_by_their_rule(
    path: Path,
) -> None:
    record = _record(path)
    assert record["slug"] == derive_slug(record["errorMessage"])
    digest = hashlib.sha256(f"jax-ml/jax:{record['slug']}".encode()).hexdigest()
    assert record["id"] == digest[:16]
    assert record["id"] not in mined_sites()
    assert record["schemaVersion"] == 2


@pytest.mark.parametrize("path", UNMINED, ids=lambda p: p.name)
def test_unmined_record_is_pinned_to_the_newest_release_where_pallas_calls_it(path: Path) -> None:
    record = _record(path)
    release, statement = UNMINED[path]
    commit = release_commits()[release]
    assert record["analyzedSha"] == commit, release
    start, end = record["sourceCodeStart"], record["sourceCodeEnd"]
    assert start <= record["lineNumber"] <= end
    assert record["githubUrl"] == source_url(commit, record["filePath"], start, end)
    source = record["sourceCode"].splitlines()
    assert len(source) == end - start + 1
    assert statement in source[record["lineNumber"] - start]
    assert release in record["documentation"]


@pytest.mark.parametrize("path", UNMINED, ids=lambda p: p.name)
def test_unmined_record_reads_each_wording_as_its_own_and_names_its_releases(path: Path) -> None:
    """Each older wording's pattern reads its example and no other wording's; the current
    patterns read the message quoted in the example fix, and no older example."""
    record = _record(path)
    printed = f"# {record['errorClass']}: "
    current = next(
        line.removeprefix(printed)
        for line in record["exampleFix"].splitlines()
        if line.startswith(printed)
    )
    examples = [current, *(wording["example"] for wording in record["olderWordings"])]
    patterns = [record["matchPattern"], *(w["pattern"] for w in record["olderWordings"])]
    assert compile_pattern(record["messagePattern"]).search(current)
    for number, pattern in enumerate(patterns):
        read = [compile_pattern(pattern).search(example) is not None for example in examples]
        assert read == [other == number for other in range(len(examples))], pattern
    for wording in record["olderWordings"]:
        assert wording["until"] in record["documentation"], wording["until"]


# --- errors Python raises at JAX's calls of user code -----------------------------------------


def test_the_records_bound_to_callers_are_the_unmined_call_errors() -> None:
    assert len(CALLED) == 14
    assert set(CALLED) <= set(UNMINED)


@pytest.mark.parametrize("path", CALLED, ids=lambda p: p.name)
def test_each_caller_is_a_function_of_jax_and_the_record_stands_in_one(path: Path) -> None:
    """A caller, and a wrapper it calls through, is named as tracebacks print it: a function
    of its file in some mined release. The record's own line is inside a caller in the
    newest release."""
    record = _record(path)
    spans = json.loads(FUNCTIONS_FILE.read_text(encoding="utf-8"))
    newest = 1 << (len(spans["releases"]) - 1)
    for caller in [*record["calledBy"], *record["calledThrough"]]:
        assert spans["files"][caller["file"]].get(caller["function"]), caller
    holding = [
        caller
        for caller in record["calledBy"]
        if caller["file"] == record["filePath"]
        for first, last, releases in spans["files"][caller["file"]][caller["function"]]
        if first <= record["lineNumber"] <= last and releases & newest
    ]
    assert holding, record["calledBy"]
    assert record["errorClass"] == "TypeError"
