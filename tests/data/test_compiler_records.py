"""The curated records of messages no JAX source holds (``data/records/compiler-*.json``) and
the advice for memory reports (``data/compilers/memory-advice.json``).

Each record must import unchanged, say who prints its message and how a paste is read for
it, read its own message as that reading reads it (in RE2, as the store checks patterns, and
in Python's re, as the reader reads them), and name only other known errors as related.
"""

from __future__ import annotations

import hashlib
import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from app.config import REPO_ROOT, SEED_PATHS
from app.jaxref.files import XLA_ERRORS_FILE
from app.jaxref.templates import compile_pattern
from app.knowledge.mining import MINED_SITES, curated_records
from app.matching.compiler_advice import (
    COMPILER_RECORD_FILES,
    COMPILER_RECORDS,
    MEMORY_ADVICE_FILE,
    Reading,
    _memory_advice,
    answer_of,
    compiler_records,
)
from app.matching.memory import _REPORTS
from app.records.importer import read_documents
from app.records.schema import ErrorRecord
from app.records.slugs import derive_slug
from app.records.validation import RecordInvalid, validate_record

DATA = REPO_ROOT / "data"
FILES = sorted(COMPILER_RECORDS.glob(COMPILER_RECORD_FILES))
# Who prints the messages, as the records' tags name them.
COMPILER_TAGS = {"libtpu", "xla", "triton", "ptxas", "llvm", "mlir", "mosaic-gpu", "helion"}
READINGS: tuple[Reading, ...] = ("whole", "wrapped", "verifier")
# The readings whose compiler the wrapper or the verifier decides, not the record.
READER_COMPILERS = {"wrapped": "libtpu (Mosaic's TPU compiler)", "verifier": "MLIR's verifier"}


def _record(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))["record"]


@cache
def other_messages() -> dict[str, list[str]]:
    """Every other known error's messages, by id: mined sites (every wording), and the
    records people wrote."""
    messages: dict[str, list[str]] = {}
    with MINED_SITES.open(encoding="utf-8") as lines:
        for line in lines:
            item = json.loads(line)
            if "record" in item:
                history = item["record"].get("messageHistory") or []
                words = [w["errorMessage"] for w in history] or [item["record"]["errorMessage"]]
                messages[item["record"]["id"]] = words
    for record in curated_records([DATA / "seeds", DATA / "records"]):
        if not record.get("saidBy"):
            messages.setdefault(record["id"], []).append(record["errorMessage"])
    return messages


def test_the_records_of_compilers_messages_are_the_files_so_named() -> None:
    """Every record that says who prints it is a compiler-*.json file, and only those."""
    said = {path for path in (DATA / "records").glob("*.json") if _record(path).get("saidBy")}
    assert said == set(FILES)
    assert len(FILES) == 32


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_file_is_an_envelope_the_importer_reads_unchanged(path: Path) -> None:
    [incoming] = list(read_documents(path.read_text(encoding="utf-8"), str(path)))
    assert not incoming.is_annotation and incoming.dataset_version
    assert validate_record(incoming.record).document == _record(path)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_record_is_identified_by_its_slug(path: Path) -> None:
    record = _record(path)
    assert record["slug"] == derive_slug(record["errorMessage"])
    digest = hashlib.sha256(f"compiler:{record['slug']}".encode()).hexdigest()
    assert record["id"] == digest[:16]
    assert record["id"] not in other_messages()
    assert record["schemaVersion"] == 2


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_record_is_curated_advice_with_no_site_of_jaxs(path: Path) -> None:
    record = _record(path)
    assert record["documentationSource"] == "curated"
    # a symptom of another error (a version skew's) takes that record's solutions
    assert record["documentation"].strip() and (
        record["solutions"] or record["saidBy"].get("sameFixAs") in other_messages()
    )
    assert all(solution.strip() for solution in record["solutions"])
    assert record["filePath"] is None and record["githubUrl"] is None
    assert record["tags"][0] == "compiler-message" and COMPILER_TAGS & set(record["tags"])
    assert len(record["tags"]) == len(set(record["tags"]))
    assert "matchPattern" not in record  # never matched by its pattern alone


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_pattern_reads_the_records_own_message_as_its_reading_does(path: Path) -> None:
    record = _record(path)
    said, message, pattern = record["saidBy"], record["errorMessage"], record["messagePattern"]
    compile_pattern(pattern)  # as the store checks it: RE2, and never empty text
    python = re.compile(pattern)
    if said["reading"] == "whole":
        assert said["words"] in message and python.search(message)
    elif said["reading"] == "wrapped":
        assert python.match(message)
    else:
        assert pattern.startswith("'" + re.escape(said["op"]) + "' op ")
        assert python.match(message) and message.startswith(f"'{said['op']}' op ")


@pytest.mark.parametrize("reading", READINGS)
def test_each_reading_is_ordered_one_to_n_and_names_its_compiler(reading: str) -> None:
    said = [_record(path)["saidBy"] for path in FILES]
    orders = sorted(s["order"] for s in said if s["reading"] == reading)
    assert orders == list(range(1, len(orders) + 1))
    if reading in READER_COMPILERS:
        assert {s["compiler"] for s in said if s["reading"] == reading} == {
            READER_COMPILERS[reading]
        }


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_related_errors_are_other_known_errors(path: Path) -> None:
    for text in _record(path)["relatedErrors"]:
        prefix = text.rstrip(". …").strip()
        assert any(
            wording.startswith(prefix) for words in other_messages().values() for wording in words
        ), text


def test_the_reader_takes_every_record_with_its_documentation_then_its_solutions() -> None:
    loaded = {
        record.record_id: record for reading in READINGS for record in compiler_records(reading)
    }
    # the curated files, and the records of XLA's catalogue that no curated record holds
    mined = map(json.loads, XLA_ERRORS_FILE.read_text(encoding="utf-8").splitlines())
    assert len(loaded) == len(FILES) + sum("record" in line for line in mined)
    assert all(loaded[_record(path)["id"]].curated for path in FILES)
    for path in FILES:
        record = _record(path)
        fix = record["saidBy"].get("sameFixAs")
        solutions = _solutions_of(fix) if fix else record["solutions"]
        assert loaded[record["id"]].advice == " ".join([record["documentation"], *solutions])
        assert loaded[record["id"]].answered_by == (fix or record["id"])
    model = ErrorRecord.model_validate(_record(FILES[0]))
    assert answer_of(model) == loaded[model.id].advice


def _solutions_of(record_id: str) -> list[str]:
    [record] = [r for r in curated_records([DATA / "records"]) if r["id"] == record_id]
    solutions: list[str] = record["solutions"]
    return solutions


@pytest.mark.parametrize(
    ("change", "refused"),
    [
        ({"reading": "whole"}, "needs words"),
        ({"reading": "verifier", "workOut": None}, "needs op"),
        ({"words": "Slice shape"}, "words is for a reading of 'whole' only"),
        ({"workOut": "misalignedRows"}, "workOut"),
        ({"order": 0}, "order"),
        ({"sameFixAs": "no such id!"}, "sameFixAs"),
        ({"compilers": "libtpu"}, "compilers"),
    ],
)
def test_a_records_saidby_is_checked_as_it_is_imported(
    change: dict[str, Any], refused: str
) -> None:
    record = _record(COMPILER_RECORDS / "compiler-libtpu-slice-aligned-to-tiling.json")
    record["saidBy"] = {**record["saidBy"], **change}
    with pytest.raises(RecordInvalid, match=refused):
        validate_record(record)


def test_memory_advice_is_given_for_every_kind_of_memory_report_and_is_no_seed() -> None:
    """Each backend and memory space a report is read for has advice, and nothing else;
    the file is no record document, so no seed path holds it."""
    assert set(_memory_advice()) == {(backend, memory) for backend, memory, *_ in _REPORTS}
    assert all(advice and all(a.strip() for a in advice) for advice in _memory_advice().values())
    assert not any(MEMORY_ADVICE_FILE.is_relative_to(path) for path in SEED_PATHS)
