"""The verdicts ``tools/tpu_verdicts.py`` recorded, read back as cases for the tests.

Files are JSON Lines as ``data/tpu-verdicts/README.md`` describes them, alone or inside a
``.tar.gz``; a file that breaks the schema stops the tests rather than being skipped.
"""

from __future__ import annotations

import importlib.util
import json
import tarfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

from .capture_tracebacks import REPO_ROOT

VERDICTS = REPO_ROOT / "data" / "tpu-verdicts"
SCHEMA_VERSION = 1
VERDICT_KINDS = frozenset({"ok", "error", "lowered"})
_VERDICT_FIELDS = frozenset(
    {
        "kind",
        "id",
        "family",
        "verdict",
        "correct",
        "errorClass",
        "errorModule",
        "message",
        "truncated",
    }
)


@dataclass(frozen=True)
class RunHeader:
    """Where a file's verdicts were recorded."""

    mode: str  # "tpu" or "cpu-lower"
    chip: str  # JAX's device kind: "TPU v5 lite"
    jax: str
    jaxlib: str | None
    libtpu: str | None
    platform_version: str | None
    started: str
    source: str  # the file's name: the grid's, or a run of given cases ("…-fixes.jsonl")


@dataclass(frozen=True)
class RecordedVerdict:
    """One case of the grid and what the chip (or the lowering) said of it."""

    run: RunHeader
    id: str
    family: str
    parameters: Mapping[str, Any]
    verdict: str  # "ok", "error" or "lowered"
    correct: bool | None  # for "ok": the result equalled numpy's
    error_class: str | None
    message: str | None

    @property
    def passed(self) -> bool:
        return self.verdict == "lowered" or (self.verdict == "ok" and self.correct is True)


def recorded_verdicts(folder: Path = VERDICTS, mode: str = "tpu") -> Iterator[RecordedVerdict]:
    """Every verdict of ``mode`` recorded under ``folder``, file by file in name order."""
    for path in sorted(folder.iterdir()):
        for name, lines in _files(path):
            for verdict in read_verdicts(lines, name):
                if verdict.run.mode == mode:
                    yield verdict


@cache
def every_recorded() -> tuple[RecordedVerdict, ...]:
    """The committed verdicts of real chips, read once for all the tests that ask."""
    return tuple(recorded_verdicts())


def chip_ran_right(family: str, **parameters: Any) -> bool:
    """Whether the chip compiled and ran right every recorded case of ``family`` with these
    parameters (the others unset; a matmul of either shape); there must be one."""
    cases = [
        v for v in every_recorded() if v.family == family and same_case(v.parameters, parameters)
    ]
    assert cases, (family, parameters)
    return all(case.passed for case in cases)


def same_case(recorded: Mapping[str, Any], wanted: Mapping[str, Any]) -> bool:
    """``recorded`` has ``wanted``'s parameters, and no other set but a matmul's shapes."""
    unset = recorded.keys() - wanted.keys() - {"lhsShape", "rhsShape"}
    return all(recorded.get(k) == v for k, v in wanted.items()) and all(
        recorded[k] is None for k in unset
    )


@cache
def tool(name: str) -> ModuleType:
    """A script of ``tools/`` as a module: it runs on a TPU machine without the project, so
    it is no package of it."""
    spec = importlib.util.spec_from_file_location(name, REPO_ROOT / "tools" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _files(path: Path) -> Iterator[tuple[str, list[str]]]:
    if path.name.endswith(".jsonl"):
        yield path.name, path.read_text().splitlines()
    elif path.name.endswith((".tar.gz", ".tgz", ".tar")):
        with tarfile.open(path) as archive:
            for member in archive.getmembers():
                stream = archive.extractfile(member) if member.isfile() else None
                if stream is not None and member.name.endswith(".jsonl"):
                    yield f"{path.name}:{member.name}", stream.read().decode().splitlines()


def read_verdicts(lines: list[str], name: str) -> list[RecordedVerdict]:
    """The verdicts of one file's ``lines``; a line off the schema raises ``ValueError``."""
    rows = [json.loads(line) for line in lines if line.strip()]
    if not rows or rows[0].get("kind") != "header":
        raise ValueError(f"{name}: the first line is not a header")
    first = rows[0]
    if first.get("schemaVersion") != SCHEMA_VERSION:
        raise ValueError(f"{name}: schema version {first.get('schemaVersion')!r}")
    versions = first["versions"]
    run = RunHeader(
        first["mode"],
        first["chip"],
        versions["jax"],
        versions.get("jaxlib"),
        versions.get("libtpu") or versions.get("libtpu-nightly"),
        first.get("platformVersion"),
        first["started"],
        name,
    )
    return [_verdict(run, row, f"{name}:{number}") for number, row in enumerate(rows[1:], 2)]


def _verdict(run: RunHeader, row: dict[str, Any], where: str) -> RecordedVerdict:
    if row.get("kind") != "case" or row.get("verdict") not in VERDICT_KINDS:
        raise ValueError(f"{where}: not a case with a verdict: {row}")
    if row["verdict"] == "error" and not row.get("errorClass"):
        raise ValueError(f"{where}: an error without its class")
    return RecordedVerdict(
        run=run,
        id=row["id"],
        family=row["family"],
        parameters={k: v for k, v in row.items() if k not in _VERDICT_FIELDS},
        verdict=row["verdict"],
        correct=row.get("correct"),
        error_class=row.get("errorClass"),
        message=row.get("message"),
    )
