"""XLA's error catalogue as the dataset's documents: a record per code no curated record
holds, an annotation of the curated record for a code one does.

Each code of ``error_codes.h`` that has a page becomes, unless people wrote its record, a
record in the dataset's schema v2 with the page's meaning as its documentation and the
page's advice as its solutions, pinned to the commit that last changed the page and linked
to openxla.org's copy. It is a compiler's message (``saidBy``), read whole (``E1000:
CompileTimeHbmOom`` or the name alone), and found by its code alone too ("hit E1000 again").

A code a curated record documents (``errorCode``: E1001, E2001, E2002, E2003) keeps that
record, whose advice comes from real reports: the catalogue's facts join it as an
annotation, so no two records claim one message and the reader answers with the curated one.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from typing import IO, Any

from app.knowledge.xla_catalogue import XlaCode, XlaPage, XlaSource, error_codes, page_path
from app.knowledge.xla_catalogue import read_page as read_xla_page
from app.records.slugs import derive_slug

REPO = "openxla/xla"
SOURCE_URL = "https://github.com/openxla/xla/blob/{commit}/{path}"
# The reading order of a mined code's record among the records read whole: after every
# curated one (they number in the tens), by its number, so each run gives the same.
FIRST_ORDER = 1000
# Who prints a code, by the first words of its name, for a code of one backend.
_PRINTERS = (
    ("CompileTimeMosaic", "libtpu (Mosaic's TPU compiler)"),
    ("CompileTimeSparseCore", "libtpu (XLA's SparseCore compiler)"),
    ("CompileTime", "libtpu (XLA's TPU compiler)"),
    ("Runtime", "libtpu (XLA's TPU runtime)"),
)


def catalogue_documents(
    source: XlaSource, curated: Iterable[dict[str, Any]]
) -> Iterator[dict[str, Any]]:
    """The dataset's lines for every code with a page, in the header's order."""
    owners = {r["errorCode"]: r["id"] for r in curated if r.get("errorCode") and r.get("saidBy")}
    for code in error_codes(source.header):
        path = page_path(code.code)
        if path not in source.pages:  # the generic codes (E0002 InvalidArgument) have none
            continue
        text, commit = source.pages[path]
        page = read_xla_page(path, text, commit)
        facts = catalogue_facts(code, page)
        if code.code in owners:
            yield {"annotation": {"recordId": owners[code.code], "catalogue": facts}}
        else:
            yield {"record": code_record(code, page, facts)}


def catalogue_facts(code: XlaCode, page: XlaPage) -> dict[str, Any]:
    """What the catalogue says of a code, and where: the record's ``catalogue`` part."""
    return {
        "code": code.code,
        "name": code.name,
        "status": code.status,
        "category": page.category,
        "backends": list(page.backends),
        "samples": list(page.samples),
        "docsUrl": page.url,
        "path": page.path,
        "commit": page.commit,
        "githubUrl": SOURCE_URL.format(commit=page.commit, path=page.path),
    }


def code_record(code: XlaCode, page: XlaPage, facts: dict[str, Any]) -> dict[str, Any]:
    """A record of the dataset's schema v2 for a code no curated record holds."""
    message = f"{code.code}: {code.name}"
    meaning = page.meaning or f"{page.category}."
    return {
        "id": code_record_id(code.code),
        "repo": REPO,
        "slug": derive_slug(message),
        "errorCode": code.code,
        "errorMessage": message,
        "messagePattern": rf"(?:{code.code}:?\s*)?{code.name}\b[^\n`]*",
        "errorType": None,
        "errorClass": None,
        "httpStatus": None,
        "severity": "error",
        "filePath": None,
        "lineNumber": None,
        "githubUrl": facts["githubUrl"],
        "documentation": f"XLA's error {code.code} ({page.category}): {meaning} See {page.url}.",
        "documentationSource": "xla-catalogue",
        "solutions": list(page.advice),
        "preventionTips": [],
        "tags": ["compiler-message", "xla", "xla-error-code", *(b.lower() for b in page.backends)],
        "analyzedSha": page.commit,
        "schemaVersion": 2,
        "relatedErrors": [],
        "saidBy": {
            "compiler": printer(code.name, page.backends),
            "reading": "whole",
            "order": FIRST_ORDER + int(code.code[1:]),
            "words": code.name,
        },
        "catalogue": facts,
    }


def code_record_id(code: str) -> str:
    return hashlib.sha256(f"xla-error:{code}".encode()).hexdigest()[:16]


def printer(name: str, backends: tuple[str, ...]) -> str:
    """Who prints a code: libtpu's compiler or runtime for a TPU code, else XLA's."""
    if backends and backends != ("TPU",):
        stage = "runtime" if name.startswith("Runtime") else "compiler"
        return f"XLA's {stage} ({', '.join(backends)})"
    return next(who for prefix, who in _PRINTERS if name.startswith(prefix))


def write_catalogue(documents: Iterable[dict[str, Any]], out: IO[str]) -> int:
    """JSON Lines, one document a line; returns how many."""
    count = 0
    for document in documents:
        out.write(json.dumps(document, ensure_ascii=False, sort_keys=True) + "\n")
        count += 1
    return count
