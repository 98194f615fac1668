"""XLA's error codes in a paste: each code of the mined catalogue (data/mined/xla-errors.jsonl)
answered by its record, named whole or by its code alone, and never a log line's date."""

from __future__ import annotations

import json
from functools import cache

import pytest

from app.jaxref.files import XLA_ERRORS_FILE
from app.matching.compiler_advice import code_records
from app.matching.compilers import compiler_messages


@cache
def catalogue() -> dict[str, tuple[str, str, str]]:
    """Each code of the committed catalogue: its record's id (the curated record a line
    annotates, or the line's own), its name and XLA's page of it."""
    codes = {}
    for line in XLA_ERRORS_FILE.read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        part = item.get("record") or item["annotation"]
        facts = part["catalogue"]
        codes[facts["code"]] = (part.get("id") or part["recordId"], facts["name"], facts["docsUrl"])
    return codes


CODES = sorted(catalogue())


def test_the_catalogue_has_every_code_that_has_a_page() -> None:
    assert [
        *("E0100", "E0101", "E0102", "E0200", "E1000", "E1001", "E1200"),
        *("E2001", "E2002", "E2003", "E3000", "E3001"),
    ] == CODES
    assert {code: record.record_id for code, record in code_records().items()} == {
        code: record_id for code, (record_id, _, _) in catalogue().items()
    }


@pytest.mark.parametrize("code", CODES)
def test_each_code_alone_finds_its_record(code: str) -> None:
    """A note naming only the code ("hit E2003 again") is answered by the code's record,
    with XLA's page of it."""
    record_id, _, url = catalogue()[code]
    record = code_records()[code]
    assert record.record_id == record_id
    [said] = compiler_messages(f"hit {code} again after the rebase\n")
    assert (said.line, said.message, said.compiler) == (1, code, record.compiler)
    assert said.why.startswith(record.advice)
    assert url in said.why


@pytest.mark.parametrize("code", CODES)
def test_each_code_printed_whole_is_read_once_as_its_record(code: str) -> None:
    """As XLA prints it (``E1000: CompileTimeHbmOom:`` then the message and its page), and by
    its name alone (pytorch/helion#2753 names E2003 so)."""
    _, name, url = catalogue()[code]
    record = code_records()[code]
    printed = (
        f"RESOURCE_EXHAUSTED: {code}: {name}:\nsomething went wrong\nSee {url} for more details."
    )
    [said] = compiler_messages(printed)
    assert (said.line, said.why) == (1, record.advice) or said.why.startswith(record.advice)
    assert said.compiler == record.compiler
    [named] = compiler_messages(f"fails with `{name}` on v5e")
    assert named.compiler == record.compiler and named.why.startswith(record.advice)


def test_the_curated_record_of_a_code_answers_with_its_own_advice() -> None:
    """E2003's record was written from reports (pl.multiple_of); the catalogue's page joins it
    as its link, not as a second answer."""
    [said] = compiler_messages("hit E2003 again")
    assert "pl.multiple_of" in said.why
    assert said.why.endswith("(XLA's page of E2003: https://openxla.org/xla/errors/error_2003)")
    [said] = compiler_messages("the job died with E3001 on the v5p pod")
    assert said.why.startswith("XLA's error E3001 (CompileTime: SparseCore No Viable")


@pytest.mark.parametrize(
    "paste",
    [
        "E1001 12:00:01.123456  4242 runner.py:88] step 3 done",  # absl's level and date
        "E0002: InvalidArgument: bad shape",  # a generic code: no page, no record
        "hit E9999 again",  # no such code
        "PE2003 and E20031 and xE1001 and v1.E2002",  # inside other words
        "see error_2003.md",
    ],
)
def test_what_is_no_code_of_the_catalogue_is_no_message(paste: str) -> None:
    assert compiler_messages(paste) == []
