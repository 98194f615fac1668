"""The ``errata`` command as a user runs it: real processes, a fresh SQLite file each."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.db import make_engine, make_session_factory
from app.records.store import RecordStore
from tests.conftest import CURATED_SEEDS_ENV, SEED_DIR


@pytest.fixture
def errata(tmp_path: Path):  # type: ignore[no-untyped-def]
    env = {
        **os.environ,
        **CURATED_SEEDS_ENV,
        "ERRATA_DATABASE_URL": f"sqlite:///{tmp_path / 'cli.sqlite3'}",
    }

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "app", *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )

    return run


def test_import_twice_then_show(errata) -> None:  # type: ignore[no-untyped-def]
    first = errata("import", str(SEED_DIR))
    assert first.returncode == 0, first.stderr
    assert "added 4, updated 0, unchanged 0, failed 0" in first.stdout
    second = errata("import", str(SEED_DIR))
    assert "added 0, updated 0, unchanged 4, failed 0" in second.stdout
    shown = errata("show", "225d0e9c2ee22311")
    assert json.loads(shown.stdout) == json.loads(
        (SEED_DIR / "000_3bebb9c19a64106a.txt").read_text()
    )


def test_a_bad_file_fails_alone_with_a_nonzero_exit(errata, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    bad = tmp_path / "bad.json"
    bad.write_text('[{"id": "fine-one", "errorMessage": "m"}, {"id": "x", "lineNumber": 3}]')
    good = tmp_path / "good.json"
    good.write_text('{"id": "good-one", "errorMessage": "m"}')
    result = errata("import", str(bad), str(good))
    assert result.returncode == 1
    assert "record 2" in result.stderr and "errorMessage" in result.stderr
    assert "added 1, updated 0, unchanged 0, failed 1" in result.stdout
    good_one = errata("show", "good-one")
    assert good_one.returncode == 0
    record = json.loads(good_one.stdout)["record"]
    assert (record["id"], record["errorMessage"]) == ("good-one", "m")
    missing = errata("show", "fine-one")
    assert missing.returncode == 1 and "fine-one" in missing.stderr


def test_db_upgrade_with_seed(errata, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert errata("db", "upgrade", "--seed").returncode == 0
    shown = errata("show", "19b6a360721eb407")
    assert shown.returncode == 0
    engine = make_engine(f"sqlite:///{tmp_path / 'cli.sqlite3'}")
    try:
        with make_session_factory(engine)() as session:
            row = RecordStore(session).get("19b6a360721eb407")
            stored = {"record": row.document, "datasetVersion": row.dataset_version}
    finally:
        engine.dispose()
    assert json.loads(shown.stdout) == stored
    assert stored["record"]["id"] == "19b6a360721eb407" and stored["record"]["errorMessage"]


def test_match_reads_a_file_or_stdin(errata, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    traceback = Path(__file__).parent / "fixtures" / "tracebacks" / "MGPU-COPY-INTEGER-BYTES.txt"
    readable = errata("match", str(traceback))
    assert readable.returncode == 0, readable.stderr
    assert "225d0e9c2ee22311" in readable.stdout and "(256,)" in readable.stdout
    as_json = json.loads(errata("match", "--json", str(traceback)).stdout)
    assert as_json["matches"][0]["values"]["shape"] == [7]
    nothing = tmp_path / "nothing.txt"
    nothing.write_text("RuntimeError: the coffee machine is empty\n")
    missed = errata("match", str(nothing))
    assert missed.returncode == 1 and "No known error found" in missed.stdout


@pytest.mark.parametrize(
    ("version", "words"), [("banana", "cannot read"), ("0.4.38", "not modelled")]
)
def test_match_refuses_a_jax_version_the_engine_does_not_model(  # type: ignore[no-untyped-def]
    errata, version: str, words: str
) -> None:
    traceback = Path(__file__).parent / "fixtures" / "tracebacks" / "MGPU-COPY-INTEGER-BYTES.txt"
    refused = errata("match", "--jax-version", version, str(traceback))
    assert refused.returncode == 2
    assert refused.stdout == ""
    (line,) = refused.stderr.splitlines()
    assert line.startswith("--jax-version: ") and words in line
