"""``errata admin mine`` as a user runs it: a real process on a source tree."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

SOURCE = Path(__file__).parents[1] / "fixtures" / "jax_source"


def errata(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app", *args], capture_output=True, text=True, timeout=120
    )


def test_mine_writes_a_release_as_json_lines_pinned_to_its_commit(tmp_path: Path) -> None:
    done = errata("admin", "mine", str(SOURCE), "--version", "0.10.2")
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    records = [line["record"] for line in lines if "record" in line]
    languages = {record["site"]["language"] for record in records}
    assert languages == {"python", "cpp"}  # a checkout has both
    commit = "990e6a0b84138346e6a38785412f36356e0e5dc3"  # jax-v0.10.2
    assert all(f"/blob/{commit}/" in record["githubUrl"] for record in records)
    assert all(record["releases"][0]["release"] == "0.10.2" for record in records)


def sites(jsonl: str) -> dict[str, dict[str, Any]]:
    """Each line's site by id: a record, or the mined facts of a curated record's site (its
    annotation: the fixture's ``serde.cc`` check has a curated record)."""
    found = {}
    for line in map(json.loads, jsonl.splitlines()):
        if "record" in line:
            found[line["record"]["id"]] = line["record"]
        else:
            found[line["annotation"]["recordId"]] = line["annotation"]["mined"]
    return found


def test_mine_links_a_release_into_an_earlier_mining(tmp_path: Path) -> None:
    earlier = tmp_path / "sites.jsonl"
    first = errata("admin", "mine", str(SOURCE), "--version", "0.10.1", "--out", str(earlier))
    assert first.returncode == 0, first.stderr
    linked = errata("admin", "mine", str(SOURCE), "--version", "0.10.2", "--history", str(earlier))
    assert linked.returncode == 0, linked.stderr
    found = sites(linked.stdout)
    assert found
    assert found.keys() == sites(earlier.read_text()).keys()
    assert all(
        [entry["release"] for entry in site["releases"]] == ["0.10.1", "0.10.2"]
        for site in found.values()
    )


def test_mine_refuses_what_is_not_a_jax_tree(tmp_path: Path) -> None:
    out = tmp_path / "out" / "sites.jsonl"
    done = errata("admin", "mine", str(tmp_path), "--version", "0.10.2", "--out", str(out))
    assert done.returncode == 2
    assert "neither a checkout of jax-ml/jax nor an installed jax" in " ".join(done.stderr.split())
    older = errata("admin", "mine", str(SOURCE), "--version", "banana", "--out", str(out))
    assert older.returncode == 2
    assert "not a JAX release number" in " ".join(older.stderr.split())
    assert list(out.parent.iterdir()) == []  # neither the file nor a partial one is left
