"""What errata's data says to do about messages that no JAX source holds, and about a kernel
over its on-chip memory, for the readers that find them in a paste.

The messages are curated records, ``data/records/compiler-*.json``: seeded, served, searched
and shown like any other record. Each record's ``saidBy`` names the compiler or runtime that
prints it and how :mod:`app.matching.compilers` reads a paste for it; its documentation
followed by its solutions is what the reader answers. The reader takes them from the shipped
files rather than from the store, as it takes the frame index, so that reading a paste needs
no database.

The advice for a memory report (``data/compilers/memory-advice.json``) is no record: it is not
one message's, but is given by backend and memory space to every report that
:mod:`app.matching.memory` works out, whichever of the backend's wordings it is (Triton's two,
XLA's allocator's for TPU SMEM), beside the record that may match the same line (Mosaic GPU's
own check has one, with its own solutions).
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from app.jaxref.files import DATA_DIR, XLA_ERRORS_FILE

if TYPE_CHECKING:
    from app.records.schema import ErrorRecord

COMPILER_RECORDS = DATA_DIR / "records"
COMPILER_RECORD_FILES = "compiler-*.json"
MEMORY_ADVICE_FILE = DATA_DIR / "compilers" / "memory-advice.json"

Reading = Literal["whole", "wrapped", "verifier"]


class CompilerDataError(ValueError):
    """Shipped data the readers cannot use; names the file."""


@dataclass(frozen=True)
class CompilerRecord:
    """A curated record of a compiler's message, as the reader of compilers' messages uses it."""

    record_id: str
    compiler: str  # who prints it: "libtpu (Mosaic's TPU compiler)"
    reading: Reading
    # The record's messagePattern, compiled as the reader has always read it (Python's re:
    # the data is shipped, not a request's); its data tests hold it to RE2 as well.
    pattern: re.Pattern[str]
    advice: str  # the record's documentation, then its solutions: what the answer says
    words: str | None = None  # whole: words every such message holds, looked for first
    op: str | None = None  # verifier: the upstream MLIR op
    work_out: str | None = None  # wrapped: what the figures after the message work out
    code: str | None = None  # XLA's error code it is (``E2003``), which a paste may name alone
    docs_url: str | None = None  # XLA's page of that code
    code_name: str | None = None  # and its name (``CompileTimeMosaicUnsupportedRhsType``)
    curated: bool = True  # written by people, not mined from XLA's catalogue
    answer_id: str = ""  # the record whose solutions answer it: its own, or its sameFixAs

    @property
    def answered_by(self) -> str:
        return self.answer_id or self.record_id


CompilerTable = dict[str, tuple[CompilerRecord, ...]]
# The table once read (or handed over by ``keep_compiler_table``): one per process.
_TABLE: list[CompilerTable] = []


def compiler_records(reading: Reading) -> tuple[CompilerRecord, ...]:
    """The live records of one reading, in their ``saidBy.order``."""
    return compiler_table().get(reading, ())


def compiler_table() -> CompilerTable:
    """Every live compiler record by reading, read from the shipped files on first use."""
    if not _TABLE:
        _TABLE.append(_compiler_records())
    return _TABLE[0]


def keep_compiler_table(table: CompilerTable) -> None:
    """Read ``table``, a snapshot's ``compiler_table()``, rather than the files: checking
    them takes the record schema, whose import is most of a short command's start."""
    _TABLE[:] = [table]


def code_records() -> dict[str, CompilerRecord]:
    """The record of each XLA error code: the curated record that holds it, else the
    catalogue's (the miner writes none for a code a curated record holds; were there two,
    the curated one, then the first in reading order, would answer)."""
    table: dict[str, CompilerRecord] = {}
    for records in compiler_table().values():
        for record in records:
            if record.code is None:
                continue
            held = table.get(record.code)
            if held is None or (record.curated and not held.curated):
                table[record.code] = record
    return table


def answer_of(record: ErrorRecord, fix: ErrorRecord | None = None) -> str:
    """What the reader says of a compiler's message: the record's documentation, then its
    solutions, or those of the record ``fix`` (its ``sameFixAs``)."""
    solutions = (fix or record).solutions
    return " ".join(part for part in (record.documentation, *solutions) if part)


def _compiler_records() -> CompilerTable:
    by_reading: defaultdict[str, list[tuple[int, CompilerRecord]]] = defaultdict(list)
    pages = _catalogue_pages()
    for where, model in _compiler_models():
        said = model.saidBy
        if said is None:
            raise CompilerDataError(f"{where}: a compiler's record names who says it (saidBy)")
        if model.retired:
            continue
        page = pages.get(model.id)
        fix = _record_of(said.sameFixAs) if said.sameFixAs else None
        record = CompilerRecord(
            record_id=model.id,
            compiler=said.compiler,
            reading=said.reading,
            pattern=re.compile(str(model.messagePattern)),
            advice=answer_of(model, fix),
            words=said.words,
            op=said.op,
            work_out=said.workOut,
            code=model.errorCode,
            docs_url=page[0] if page else None,
            code_name=page[1] if page else None,
            curated=(model.model_extra or {}).get("documentationSource") == "curated",
            answer_id=fix.id if fix else "",
        )
        by_reading[said.reading].append((said.order, record))
    ordered = {}
    for reading, records in by_reading.items():
        orders = [order for order, _ in records]
        if len(orders) != len(set(orders)):
            raise CompilerDataError(
                f"two compiler records of the reading {reading!r} share an order"
            )
        ordered[reading] = tuple(record for _, record in sorted(records, key=lambda r: r[0]))
    return ordered


def _compiler_models() -> Iterator[tuple[str, ErrorRecord]]:
    """The curated records of compilers' messages, then the records of XLA's catalogue."""
    for path in sorted(COMPILER_RECORDS.glob(COMPILER_RECORD_FILES)):
        yield str(path), _record(path)
    for number, item in enumerate(_catalogue_lines(), 1):
        if "record" in item:
            yield f"{XLA_ERRORS_FILE}:{number}", _validated(item["record"], XLA_ERRORS_FILE)


def _catalogue_pages() -> dict[str, tuple[str, str]]:
    """XLA's page and name of each record of a code, by record id: the catalogue's own
    records', and those of the curated records it annotates."""
    pages = {}
    for item in _catalogue_lines():
        part = item.get("record") or item.get("annotation") or {}
        facts = part.get("catalogue") or {}
        if facts.get("docsUrl"):
            pages[part.get("id") or part["recordId"]] = (facts["docsUrl"], facts["name"])
    return pages


def _catalogue_lines() -> list[dict[str, Any]]:
    """The mined catalogue's lines; none where it was never mined."""
    if not XLA_ERRORS_FILE.exists():
        return []
    try:
        text = XLA_ERRORS_FILE.read_text(encoding="utf-8")
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    except (OSError, ValueError) as exc:
        raise CompilerDataError(f"{XLA_ERRORS_FILE}: {exc}") from exc


def _record(path: Path) -> ErrorRecord:
    """The record of a file as the importer reads it (``RecordInvalid`` is a ValueError)."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
        return _validated(document["record"], path)
    except (OSError, KeyError, TypeError, ValueError) as exc:
        raise CompilerDataError(f"{path}: {exc}") from exc


def _record_of(record_id: str) -> ErrorRecord:
    """The curated record of ``record_id`` (that a compiler's record names as its fix)."""
    for path in sorted(COMPILER_RECORDS.glob("*.json")):
        if f'"{record_id}"' in path.read_text(encoding="utf-8"):
            record = _record(path)
            if record.id == record_id:
                return record
    raise CompilerDataError(f"{COMPILER_RECORDS}: no record {record_id}, named by sameFixAs")


def _validated(document: object, where: Path) -> ErrorRecord:
    # Imported here: a process handed the table (``keep_compiler_table``) never loads it.
    from app.records.validation import validate_record

    try:
        return validate_record(document).model
    except (TypeError, ValueError) as exc:
        raise CompilerDataError(f"{where}: {exc}") from exc


class _MemoryAdvice(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    backend: Literal["mosaic_gpu", "triton", "tpu"]
    memory: Literal["SMEM", "VMEM"]
    advice: list[str] = Field(min_length=1)


class _MemoryAdviceFile(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    memoryAdvice: list[_MemoryAdvice]


def memory_advice(backend: str, memory: str) -> list[str]:
    """What to do about a kernel of ``backend`` over its ``memory`` (``SMEM``, ``VMEM``);
    ``KeyError`` for a pair the data has no advice for."""
    return list(_memory_advice()[backend, memory])


@cache
def _memory_advice() -> dict[tuple[str, str], tuple[str, ...]]:
    try:
        text = MEMORY_ADVICE_FILE.read_text(encoding="utf-8")
        entries = _MemoryAdviceFile.model_validate_json(text).memoryAdvice
    except (OSError, ValidationError) as exc:
        raise CompilerDataError(f"{MEMORY_ADVICE_FILE}: {exc}") from exc
    advice: dict[tuple[str, str], tuple[str, ...]] = {
        (entry.backend, entry.memory): tuple(entry.advice) for entry in entries
    }
    if len(advice) != len(entries):
        raise CompilerDataError(f"{MEMORY_ADVICE_FILE}: a backend and memory given twice")
    return advice
