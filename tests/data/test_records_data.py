"""errata's own data: records for catalog rules 5-25, and annotations of the four seeds.

The records must import cleanly, carry the identifiers and slugs the dataset derives, cover
every catalog rule exactly once (with the seeds), tell each rule's messages apart from every
other rule's, and ship validation code that decides the documented examples correctly:
with true bit widths, which are 4 for int4 where ``itemsize * 8`` says 8.
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from app.answers.catalog import operations_for_rule
from app.config import REPO_ROOT
from app.engines.mosaic_gpu import check
from app.engines.mosaic_gpu.operations import OPERATIONS
from app.jaxref.templates import compile_pattern
from app.records.importer import read_documents
from app.records.slugs import derive_slug
from app.records.validation import validate_annotation, validate_record

DATA = REPO_ROOT / "data"
# The records of catalog rules; records written for mined sites carry no rule and are
# checked in test_site_records.
RECORDS = sorted(
    path
    for path in (DATA / "records").glob("*.json")
    if json.loads(path.read_text(encoding="utf-8"))["record"].get("rule")
)
ANNOTATIONS = sorted((DATA / "annotations").glob("*.json"))
SEED_FILES = sorted(p for p in (DATA / "seeds").iterdir() if not p.name.startswith("."))
# The catalog's templates and rendered examples, kept with the matching tests.
CATALOG = json.loads((REPO_ROOT / "tests" / "matching" / "catalog_messages.json").read_text())[
    "constraints"
]
RULE_IDS = [rule["rule_id"] for rule in CATALOG]  # catalog order: rule n is RULE_IDS[n - 1]
CATALOG_BY_ID = {rule["rule_id"]: rule for rule in CATALOG}
EXAMPLES = {rule["rule_id"]: [ex["text"] for ex in rule["rendered_examples"]] for rule in CATALOG}

DATASET_VERSION = "2026-11-30T00:00:00.000Z"
ANALYZED_SHA = "cec06d116c05f0d52adfceee3d3b730fdbcb0ce5"
SEED_RULES = {
    "225d0e9c2ee22311": "MGPU-COPY-INTEGER-BYTES",
    "ffb598de9e3ff51b": "MGPU-COPY-WARPGROUP-BYTES",
    "b6ff9cfce0e99931": "MGPU-ALIAS-BYTE-ALIGNED-BITCAST",
    "19b6a360721eb407": "MGPU-DTYPE-BITCAST-REGION",
}
ERRATA_FIELDS = ["rule", "operations", "olderWordings", "relatedErrors", "examples"]
BASE_TAGS = {"jax", "pallas", "mosaic-gpu", "alignment"}
CODE_FIELDS = ("validationCode", "typeGuard")


def _load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


@cache
def record_docs() -> dict[str, dict[str, Any]]:
    """errata's records by file name."""
    return {path.name: _load(path)["record"] for path in RECORDS}


@cache
def annotation_docs() -> dict[str, dict[str, Any]]:
    """Annotations by the seed record id they annotate."""
    loaded = [_load(path)["annotation"] for path in ANNOTATIONS]
    return {annotation["recordId"]: annotation for annotation in loaded}


@cache
def seed_docs() -> dict[str, dict[str, Any]]:
    """The seed records as the importer reads them (two are rendered pages)."""
    found = {}
    for path in SEED_FILES:
        for incoming in read_documents(path.read_text(encoding="utf-8"), str(path)):
            document = validate_record(incoming.record).document
            found[document["id"]] = document
    return found


def _correction(annotation: dict[str, Any], field: str) -> str | None:
    for correction in annotation["corrections"]:
        if correction["field"] == field:
            return correction["correction"]
    return None


def documented_rules() -> list[tuple[str, str, dict[str, Any]]]:
    """(rule, message pattern, examples) for every record, seeds with errata's corrections."""
    rules = [(r["rule"], r["messagePattern"], r["examples"]) for r in record_docs().values()]
    for record_id, seed in seed_docs().items():
        annotation = annotation_docs()[record_id]
        pattern = _correction(annotation, "messagePattern") or seed["messagePattern"]
        rules.append((annotation["rule"], pattern, annotation["examples"]))
    return rules


def coded_examples() -> list[tuple[str, dict[str, Any], dict[str, str | None]]]:
    """(rule, example, code by field) wherever an example is given, seeds' code corrected."""
    cases = []
    for record in record_docs().values():
        if record["examples"]:
            code = {field: record[field] for field in CODE_FIELDS}
            cases.append((record["rule"], record["examples"], code))
    for record_id, seed in seed_docs().items():
        annotation = annotation_docs()[record_id]
        code = {field: _correction(annotation, field) or seed.get(field) for field in CODE_FIELDS}
        cases.append((annotation["rule"], annotation["examples"], code))
    return cases


# --- files, schema and derived fields ------------------------------------------------------


def test_catalog_is_the_25_rules() -> None:
    assert len(RULE_IDS) == 25 == len(set(RULE_IDS))


@pytest.mark.parametrize("path", RECORDS, ids=lambda p: p.name)
def test_record_file_is_an_envelope_the_importer_reads(path: Path) -> None:
    document = _load(path)
    assert set(document) == {"record", "datasetVersion"}
    assert document["datasetVersion"] == DATASET_VERSION
    [incoming] = list(read_documents(path.read_text(encoding="utf-8"), str(path)))
    assert not incoming.is_annotation
    assert incoming.dataset_version == DATASET_VERSION


@pytest.mark.parametrize("name", sorted(record_docs()))
def test_record_passes_validation_unchanged(name: str) -> None:
    record = record_docs()[name]
    assert validate_record(record).document == record


@pytest.mark.parametrize("name", sorted(record_docs()))
def test_record_fields_follow_the_seed_order(name: str) -> None:
    seed_order = list(_load(SEED_FILES[0])["record"])
    assert list(record_docs()[name]) == seed_order + ERRATA_FIELDS


@pytest.mark.parametrize("name", sorted(record_docs()))
def test_record_is_named_and_identified_by_its_rule(name: str) -> None:
    record = record_docs()[name]
    assert name == f"{record['rule'].lower()}.json"
    digest = hashlib.sha256(f"jax-ml/jax:{record['rule']}".encode()).hexdigest()
    assert record["id"] == digest[:16]
    assert record["slug"] == derive_slug(record["errorMessage"])


def test_ids_are_unique_and_distinct_from_the_seeds() -> None:
    ids = [record["id"] for record in record_docs().values()]
    assert len(ids) == len(set(ids))
    assert not set(ids) & set(seed_docs())


@pytest.mark.parametrize("name", sorted(record_docs()))
def test_record_states_the_catalog_facts(name: str) -> None:
    record = record_docs()[name]
    rule = CATALOG_BY_ID[record["rule"]]
    assert record["errorMessage"] == (rule["template"] or "AssertionError")
    assert record["errorClass"] == rule["exception"].split()[0]
    assert record["repo"] == "jax-ml/jax"
    assert record["githubUrl"] == (
        f"https://github.com/jax-ml/jax/blob/{ANALYZED_SHA}/"
        f"{record['filePath']}#L{record['lineNumber']}"
    )
    assert record["analyzedSha"] == ANALYZED_SHA
    assert record["schemaVersion"] == 2
    assert set(record["tags"]) >= BASE_TAGS
    assert len(record["tags"]) == len(set(record["tags"]))
    expected = {
        "errorCode": None,
        "errorType": "exception",
        "httpStatus": None,
        "severity": "error",
        "sourceCode": None,
        "sourceCodeStart": None,
        "sourceCodeEnd": None,
        "handlingStrategy": "validation",
        "tryCatchPattern": None,
    }
    assert {field: record[field] for field in expected} == expected
    for field in ("documentation", "triggerScenarios", "commonSituations", "exampleFix"):
        assert record[field].strip(), field
    assert record["exampleFix"].startswith("# before\n") and "\n# after" in record["exampleFix"]
    assert record["solutions"] and record["preventionTips"]


# --- coverage -------------------------------------------------------------------------------


def test_each_record_covers_a_distinct_rule_and_rules_5_to_25_are_covered() -> None:
    rules = [record["rule"] for record in record_docs().values()]
    assert len(rules) == len(set(rules))
    assert sorted(rules) == sorted(RULE_IDS[4:])


def test_seeds_and_records_cover_all_25_rules() -> None:
    assert set(seed_docs()) == set(SEED_RULES) == set(annotation_docs())
    seed_rules = [annotation_docs()[record_id]["rule"] for record_id in seed_docs()]
    assert sorted(seed_rules) == sorted(RULE_IDS[:4])
    covered = seed_rules + [record["rule"] for record in record_docs().values()]
    assert sorted(covered) == sorted(RULE_IDS)


# --- message patterns -----------------------------------------------------------------------


def _matrix() -> list[Any]:
    cases = []
    for rule, pattern, _ in documented_rules():
        for other in RULE_IDS:
            for number, text in enumerate(EXAMPLES[other]):
                cases.append(
                    pytest.param(rule, pattern, other, text, id=f"{rule}~{other}-{number}")
                )
    return cases


@pytest.mark.parametrize(("rule", "pattern", "other", "text"), _matrix())
def test_pattern_matches_its_own_examples_and_no_other_rules(
    rule: str, pattern: str, other: str, text: str
) -> None:
    found = compile_pattern(pattern).search(text)
    if other == rule:
        assert found, f"{rule}'s pattern misses its own example {text!r}"
    else:
        assert not found, f"{rule}'s pattern also matches {other}'s {text!r}"


def test_integer_bytes_rules_are_told_apart_by_their_rendering() -> None:
    """Same words; the copy prints a list and MLIR type, async_store a tuple and numpy name."""
    patterns = {rule: pattern for rule, pattern, _ in documented_rules()}
    copy = compile_pattern(patterns["MGPU-COPY-INTEGER-BYTES"])
    store = compile_pattern(patterns["MGPU-ASYNC-STORE-INTEGER-BYTES"])
    assert copy.search("Can only transfer integer bytes (shape=[3, 5], dtype=i4)")
    assert not copy.search("Can only transfer integer bytes (shape=(3, 5), dtype=int4)")
    assert store.search("Can only transfer integer bytes (shape=(3, 5), dtype=int4)")
    assert not store.search("Can only transfer integer bytes (shape=[3, 5], dtype=i4)")


def _older_wordings() -> list[Any]:
    cases = []
    for rule, pattern, wordings in [
        *((r["rule"], r["messagePattern"], r["olderWordings"]) for r in record_docs().values()),
        *((a["rule"], None, a["olderWordings"]) for a in annotation_docs().values()),
    ]:
        for number, wording in enumerate(wordings):
            cases.append(pytest.param(rule, pattern, wording, id=f"{rule}-{number}"))
    return cases


@pytest.mark.parametrize(("rule", "current", "wording"), _older_wordings())
def test_older_wording_pattern_matches_its_example_only(
    rule: str, current: str | None, wording: dict[str, Any]
) -> None:
    compiled = compile_pattern(wording["pattern"])
    assert wording["until"]
    if "{" not in wording["text"]:
        assert wording.get("example", wording["text"]) == wording["text"]
    if "example" in wording:
        assert compiled.search(wording["example"])
    if wording["pattern"] != current:  # an older wording that renders like today's may match it
        for text in EXAMPLES[rule]:
            assert not compiled.search(text), f"older wording matches today's {text!r}"


# --- validation code ------------------------------------------------------------------------


def _code_snippets() -> list[Any]:
    cases = []
    for record in record_docs().values():
        for field in CODE_FIELDS:
            cases.append(pytest.param(record[field], field, id=f"{record['rule']}-{field}"))
    for annotation in annotation_docs().values():
        for correction in annotation["corrections"]:
            if correction["field"] in CODE_FIELDS:
                name = f"{annotation['rule']}-{correction['field']}-correction"
                cases.append(pytest.param(correction["correction"], correction["field"], id=name))
    return cases


@pytest.mark.parametrize(("code", "field"), _code_snippets())
def test_code_uses_true_bit_widths_and_compiles(code: str, field: str) -> None:
    assert "itemsize" not in code
    tree = ast.parse(code)
    if field == "typeGuard":
        functions = [node for node in tree.body if isinstance(node, ast.FunctionDef)]
        assert len(functions) == 1, "a type guard is one function"


def _run_guard(code: str, side: dict[str, Any]) -> bool:
    namespace: dict[str, Any] = {}
    exec(compile(code, "<typeGuard>", "exec"), namespace)
    [name] = [node.name for node in ast.parse(code).body if isinstance(node, ast.FunctionDef)]
    guard = namespace[name]
    arguments = {"shape": tuple(side["shape"]), "dtype": side["dtype"]}
    arguments["target_dtype"] = side["targetDtype"]
    wanted = inspect.signature(guard).parameters
    return guard(**{key: value for key, value in arguments.items() if key in wanted})


def _run_validation(code: str | None, side: dict[str, Any]) -> None:
    assert code is not None, "an example needs validation code to check"
    namespace = {
        "shape": tuple(side["shape"]),
        "dtype": side["dtype"],
        "target_dtype": side["targetDtype"],
    }
    exec(compile(code, "<validationCode>", "exec"), namespace)


@pytest.mark.parametrize(
    ("rule", "example", "code"), [pytest.param(*case, id=case[0]) for case in coded_examples()]
)
def test_code_rejects_the_before_and_accepts_the_after(
    rule: str, example: dict[str, Any], code: dict[str, str | None]
) -> None:
    with pytest.raises(AssertionError):
        _run_validation(code["validationCode"], example["before"])
    _run_validation(code["validationCode"], example["after"])
    if code["typeGuard"] is not None:
        assert _run_guard(code["typeGuard"], example["before"]) is False
        assert _run_guard(code["typeGuard"], example["after"]) is True


# --- operations, examples, related errors ---------------------------------------------------


@pytest.mark.parametrize(
    ("rule", "pattern", "example"),
    [pytest.param(*case, id=case[0]) for case in documented_rules() if case[2] is not None],
)
def test_example_is_well_formed_and_matched(
    rule: str, pattern: str, example: dict[str, Any]
) -> None:
    assert set(example) == {"operation", "before", "after", "message"}
    for side in ("before", "after"):
        assert set(example[side]) == {"shape", "dtype", "targetDtype"}
        assert all(isinstance(dim, int) for dim in example[side]["shape"])
    assert compile_pattern(pattern).search(example["message"])


def _all_operations() -> list[tuple[str, list[str], dict[str, Any] | None]]:
    return [
        *((r["rule"], r["operations"], r["examples"]) for r in record_docs().values()),
        *((a["rule"], a["operations"], a["examples"]) for a in annotation_docs().values()),
    ]


@pytest.mark.parametrize(
    ("rule", "operations", "example"),
    [pytest.param(*case, id=case[0]) for case in _all_operations()],
)
def test_operations_are_known_and_cover_the_example(
    rule: str, operations: list[str], example: dict[str, Any] | None
) -> None:
    assert set(operations) <= set(OPERATIONS)
    assert len(operations) == len(set(operations))
    # Every construct whose checks include the rule: a match in a construct left out gets
    # no fix (a copy_smem_to_gmem traceback got none when the list predated that construct).
    assert set(operations) == set(operations_for_rule(rule))
    if example is not None:
        assert example["operation"] in operations


def test_related_errors_name_exactly_one_other_record() -> None:
    messages = {record["id"]: record["errorMessage"] for record in record_docs().values()}
    messages.update({record_id: seed["errorMessage"] for record_id, seed in seed_docs().items()})
    listing = [(r["id"], r["relatedErrors"]) for r in record_docs().values()]
    listing += [(a["recordId"], a["relatedErrors"]) for a in annotation_docs().values()]
    for owner, related in listing:
        assert related, owner
        for text in related:
            prefix = text.rstrip(". …").strip()
            hits = [rid for rid, message in messages.items() if message.startswith(prefix)]
            assert len(hits) == 1, (owner, text, hits)
            assert hits != [owner], (owner, text)


# --- annotations ----------------------------------------------------------------------------


@pytest.mark.parametrize("path", ANNOTATIONS, ids=lambda p: p.name)
def test_annotation_file_is_read_as_an_annotation(path: Path) -> None:
    document = _load(path)
    assert set(document) == {"annotation"}
    annotation = document["annotation"]
    assert path.name == f"{annotation['recordId']}.json"
    [incoming] = list(read_documents(path.read_text(encoding="utf-8"), str(path)))
    assert incoming.is_annotation
    assert validate_annotation(incoming.record).document == annotation


@pytest.mark.parametrize("record_id", sorted(SEED_RULES))
def test_annotation_corrects_fields_the_seed_has(record_id: str) -> None:
    annotation = annotation_docs()[record_id]
    seed = seed_docs()[record_id]
    assert annotation["rule"] == SEED_RULES[record_id]
    assert annotation["examples"] is not None
    assert annotation["notes"]
    fields = [correction["field"] for correction in annotation["corrections"]]
    assert len(fields) == len(set(fields))
    for correction in annotation["corrections"]:
        assert correction["field"] in seed, correction["field"]
        assert correction["problem"].strip() and correction["correction"].strip()
        if correction["field"] == "messagePattern":
            compile_pattern(correction["correction"])


def test_seed_code_that_counts_bytes_is_corrected() -> None:
    """Wherever a seed computes bit widths from item sizes, an annotation replaces the code."""
    for record_id, seed in seed_docs().items():
        corrected = {c["field"] for c in annotation_docs()[record_id]["corrections"]}
        for field in CODE_FIELDS:
            if seed.get(field) and re.search(r"itemsize|dtype_bitwidth", seed[field]):
                assert field in corrected, (record_id, field)


# --- the alignment engine agrees ------------------------------------------------------------


@pytest.mark.parametrize(
    ("rule", "example"), [pytest.param(rule, ex, id=rule) for rule, ex, _ in coded_examples()]
)
def test_engine_fails_the_before_with_the_message_and_passes_the_after(
    rule: str, example: dict[str, Any]
) -> None:
    before, after = example["before"], example["after"]
    result = check(
        example["operation"],
        tuple(before["shape"]),
        before["dtype"],
        target_dtype=before["targetDtype"],
    )
    assert not result.ok and result.first_violation is not None
    assert result.first_violation.rule_id == rule
    assert result.first_violation.message == example["message"]
    fixed = check(
        example["operation"],
        tuple(after["shape"]),
        after["dtype"],
        target_dtype=after["targetDtype"],
    )
    assert fixed.ok, fixed.first_violation
