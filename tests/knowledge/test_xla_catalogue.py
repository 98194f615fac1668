"""``errata admin mine-xla``: XLA's error catalogue (``xla/error/error_codes.h`` and
``docs/errors/``) read into records, from a cut of openxla/xla (tests/fixtures/xla_source,
each page as of the commit its PINS.json names) and from a git repository of it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from app.jaxref.files import XLA_ERRORS_FILE
from app.knowledge.mining import DEFAULT_CURATED, curated_records
from app.knowledge.xla_catalogue import (
    PINS_FILE,
    XlaSourceError,
    cut_source,
    error_codes,
    git_source,
    read_page,
)
from app.knowledge.xla_errors import catalogue_documents, code_record_id
from app.records.validation import validate_record

CUT = Path(__file__).parents[1] / "fixtures" / "xla_source"
PINS: dict[str, str] = json.loads((CUT / PINS_FILE).read_text(encoding="utf-8"))
# The codes whose records people wrote, from reports: the catalogue annotates them.
CURATED_CODES = {"E1000", "E1001", "E2001", "E2002", "E2003"}


def errata(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app", *args], capture_output=True, text=True, timeout=120
    )


def mined() -> list[dict[str, Any]]:
    return list(catalogue_documents(cut_source(CUT), curated_records(DEFAULT_CURATED)))


def test_every_code_with_a_page_is_one_record_and_the_generic_ones_none() -> None:
    codes = error_codes(cut_source(CUT).header)
    assert len(codes) == 28 and codes[0].code == "E0000"
    documents = mined()
    by_code = {
        d["record"]["errorCode"] if "record" in d else d["annotation"]["catalogue"]["code"]: d
        for d in documents
    }
    paged = {f"E{path[-7:-3]}" for path in PINS}
    assert set(by_code) == paged and len(documents) == len(paged) == 12
    assert {c for c, d in by_code.items() if "annotation" in d} == CURATED_CODES


def test_a_record_is_the_pages_meaning_and_advice_pinned_to_its_commit() -> None:
    [e3000] = [d["record"] for d in mined() if d.get("record", {}).get("errorCode") == "E3000"]
    validate_record(e3000)
    commit = PINS["docs/errors/error_3000.md"]
    assert e3000["id"] == code_record_id("E3000")
    assert e3000["errorMessage"] == "E3000: CompileTimeSparseCoreAllocationFailure"
    assert e3000["analyzedSha"] == commit
    assert e3000["githubUrl"].endswith(f"/blob/{commit}/docs/errors/error_3000.md")
    assert e3000["documentation"].startswith(
        "XLA's error E3000 (Compile Time: SparseCore Allocation Failure): This error occurs"
    )
    assert e3000["documentation"].endswith("See https://openxla.org/xla/errors/error_3000.")
    assert any("max_ids_per_partition" in advice for advice in e3000["solutions"])
    assert e3000["saidBy"] == {
        "compiler": "libtpu (XLA's SparseCore compiler)",
        "reading": "whole",
        "order": 4000,
        "words": "CompileTimeSparseCoreAllocationFailure",
    }


def test_a_code_a_curated_record_holds_is_its_annotation_not_a_second_record() -> None:
    [e2003] = [
        d["annotation"]
        for d in mined()
        if "annotation" in d and d["annotation"]["catalogue"]["code"] == "E2003"
    ]
    curated = {
        r["errorCode"]: r["id"] for r in curated_records(DEFAULT_CURATED) if r.get("errorCode")
    }
    assert e2003["recordId"] == curated["E2003"]
    assert e2003["catalogue"]["docsUrl"] == "https://openxla.org/xla/errors/error_2003"
    assert e2003["catalogue"]["name"] == "CompileTimeMosaicUnprovenMemoryAccessAlignment"


@pytest.mark.parametrize(
    ("path", "meaning", "advice"),
    [
        # today's shape: a paragraph, samples, Overview, Debugging with numbered headings
        (
            "docs/errors/error_2003.md",
            "This error occurs when the compiler analyzes a memory access operation",
            "Assert Alignment Explicitly: If you know your index is valid",
        ),
        # the first shape: "Why do these happen?", and its fixes in a section of their own
        (
            "docs/errors/error_0101.md",
            "This error indicates that the XLA runtime on a TPU device failed to load",
            "Decrease Batch Size: This is one of the most effective ways",
        ),
        # a Debugging section of prose alone
        (
            "docs/errors/error_2002.md",
            "This error occurs when the block shape of a kernel input or output",
            "To resolve this error, ensure your kernel's block shapes align",
        ),
    ],
)
def test_each_shape_of_page_gives_its_meaning_and_advice(
    path: str, meaning: str, advice: str
) -> None:
    page = read_page(path, (CUT / path).read_text(encoding="utf-8"), PINS[path])
    assert page.meaning.startswith(meaning)
    assert any(advice in item for item in page.advice)
    assert not any("Jump to" in item or item.endswith(":") for item in page.advice)


def test_a_wrapped_sample_message_is_one_line_again() -> None:
    path = "docs/errors/error_2002.md"
    page = read_page(path, (CUT / path).read_text(encoding="utf-8"), PINS[path])
    assert page.samples == (
        "UNIMPLEMENTED: Mosaic failed to compile TPU kernel: Failed to set window params for "
        "input 0: Operand of shape (..., 256, 8192) has tiling (16, 128), but its block shape "
        "(..., 8, 8192) is not divisible by tiling evenly nor matches the full shape.",
    )


def test_the_committed_catalogue_is_what_mine_xla_writes_of_the_cut(tmp_path: Path) -> None:
    out = tmp_path / "xla-errors.jsonl"
    done = errata("admin", "mine-xla", "--xla-cut", str(CUT), "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "12 records and annotations" in done.stderr
    assert out.read_text(encoding="utf-8") == XLA_ERRORS_FILE.read_text(encoding="utf-8")


def test_a_git_repository_pins_each_page_to_the_commit_that_last_changed_it(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "xla"
    shutil.copytree(CUT, repo)
    (repo / PINS_FILE).unlink()

    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout.strip()

    git("init", "-q")
    git("add", ".")
    git("commit", "-qm", "catalogue")
    first = git("rev-parse", "HEAD")
    page = repo / "docs" / "errors" / "error_3001.md"
    page.write_text(page.read_text(encoding="utf-8") + "\nMore.\n", encoding="utf-8")
    git("commit", "-qam", "one page")
    second = git("rev-parse", "HEAD")
    source = git_source(repo)
    assert source.pages["docs/errors/error_3001.md"][1] == second
    assert source.pages["docs/errors/error_3000.md"][1] == first
    assert git_source(repo, first).pages["docs/errors/error_3001.md"][1] == first
    with pytest.raises(XlaSourceError, match="no XLA catalogue"):
        git_source(repo, "0" * 40)


def test_mine_xla_takes_one_source(tmp_path: Path) -> None:
    done = errata("admin", "mine-xla", "--out", str(tmp_path / "x.jsonl"))
    assert done.returncode == 2 and "--xla-git" in done.stderr
    done = errata("admin", "mine-xla", "--xla-cut", str(tmp_path), "--out", str(tmp_path / "x"))
    assert done.returncode == 2 and "not a cut of XLA's catalogue" in done.stderr
