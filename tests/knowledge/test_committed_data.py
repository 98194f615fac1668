"""The committed mined dataset against JAX's real source and against the seeds."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import jax
import pytest

from app.jaxref.releases import newest_release, release_commits
from app.knowledge.lowering import MINED_RULES
from app.knowledge.mining import MINED_PATHS, MINED_SITES
from app.knowledge.python_source import mine_python
from app.knowledge.sources import release_sources

SEEDS = Path(__file__).parents[2] / "data" / "seeds"
INSTALLED = "0.10.2"
REF_UNION = json.loads(
    (
        Path(__file__).parents[2] / "data" / "records" / "mgpu-refunion-byte-aligned-shapes.json"
    ).read_text()
)["record"]["id"]


@cache
def committed() -> list[dict[str, Any]]:
    """Every site of the committed dataset: records, and curated records' mined parts."""
    facts = []
    for line in MINED_SITES.read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        if "record" in item:
            facts.append(item["record"] | {"recordId": item["record"]["id"]})
        else:
            facts.append(item["annotation"]["mined"] | {"recordId": item["annotation"]["recordId"]})
    return facts


def site_key(facts: dict[str, Any]) -> tuple[Any, ...]:
    site = facts["site"]
    return (
        facts["filePath"],
        facts["lineNumber"],
        facts["errorClass"],
        facts["messageHistory"][-1]["errorMessage"],
        facts["messageHistory"][-1]["messagePattern"],
        site["kind"],
        site["function"],
        site["condition"],
        tuple(site["definitions"]),
        site["loweringRule"],
        site["backend"],
    )


def test_the_installed_jax_is_the_release_the_data_was_checked_against() -> None:
    assert jax.__version__ == INSTALLED


def test_re_mining_the_newest_release_gives_the_committed_python_sites(tmp_path: Path) -> None:
    """The data cannot drift from the miner: mining the newest release again, from the wheel
    the package index serves (pip downloads it), gives exactly the committed sites that
    release has, in every file the wheel ships (a release mined from its git tag also holds
    a few modules the wheel leaves out)."""
    newest = newest_release()
    [source] = release_sources(None, {newest: release_commits()[newest]}).values()
    root = source.extract(MINED_PATHS, tmp_path)
    mined = mine_python(root)
    fresh = sorted(
        (
            site.file_path,
            site.line,
            site.error_class,
            site.template,
            site.pattern,
            site.kind,
            site.function,
            site.condition,
            site.definitions,
            site.lowering_rule,
            site.backend,
        )
        for site in mined
    )
    stored = sorted(
        site_key(facts)
        for facts in committed()
        if facts["site"]["language"] == "python"
        and facts["releases"][-1]["release"] == newest
        and (root / facts["filePath"]).exists()
    )
    assert len(fresh) >= 2900
    assert fresh == stored


def test_counts_at_the_newest_release_reach_the_whole_scope() -> None:
    alive = [f for f in committed() if f["releases"][-1]["release"] == newest_release()]
    raises = [
        f for f in alive if f["site"]["kind"] == "raise" and f["site"]["language"] == "python"
    ]
    asserts = [f for f in alive if f["site"]["kind"] == "assert"]
    assert len(raises) >= 1900
    assert len(asserts) >= 900


@pytest.mark.parametrize("seed", ["000_3bebb9c19a64106a.txt", "001_08f723cb3bf58b12.txt"])
def test_the_json_seeds_message_and_pattern_are_mined_character_for_character(seed: str) -> None:
    record = json.loads((SEEDS / seed).read_text())["record"]
    [facts] = [f for f in committed() if f["recordId"] == record["id"]]
    assert facts["errorMessage"] == record["errorMessage"]
    assert facts["messagePattern"] == record["messagePattern"]
    assert facts["filePath"] == record["filePath"]


def history_of(record_id: str) -> list[tuple[str, str]]:
    [facts] = [f for f in committed() if f["recordId"] == record_id]
    return [(w["from"], w["until"]) for w in facts["messageHistory"]]


def test_the_known_changes_of_wording_are_in_the_history() -> None:
    # Warpgroup bytes: worded at 0.4.36, reworded at 0.7.1 and at 0.8.2.
    assert history_of("ffb598de9e3ff51b") == [
        ("0.4.36", "0.7.0"),
        ("0.7.1", "0.8.1"),
        ("0.8.2", newest_release()),
    ]
    # Integer bytes: the check arrives in 0.6.0.
    assert history_of("225d0e9c2ee22311")[0][0] == "0.6.0"
    # The TMA box gains its ", got (…)" tail in 0.8.2.
    assert history_of("4071b4b3352344ac")[-1][0] == "0.8.2"


def test_the_ref_union_tail_arrives_in_0_8_2() -> None:
    [facts] = [f for f in committed() if f["recordId"] == REF_UNION]
    assert facts["messageHistory"][-1]["errorMessage"].startswith(
        "Only byte-aligned shapes are supported. Got shape:"
    )
    [tail] = [w for w in facts["messageHistory"] if "Got shape" in w["errorMessage"]]
    assert tail["from"] == "0.8.2"


def test_every_link_is_pinned_to_its_release_commit_and_the_file_of_that_release() -> None:
    commits = release_commits()
    for facts in committed():
        for entry in facts["releases"]:
            file_path = entry.get("filePath", facts["filePath"])
            assert f"/blob/{commits[entry['release']]}/{file_path}#L" in entry["githubUrl"]


def test_abs_gains_its_mosaic_gpu_lowering_in_0_9_0() -> None:
    rules = json.loads(MINED_RULES.read_text())["rules"]
    mosaic_abs = [r for r in rules if r["backend"] == "mosaic_gpu" and r["primitive"] == "abs"]
    assert {r["semantics"] for r in mosaic_abs} == {"Lane", "Warpgroup"}
    assert all(r["releases"][0] == "0.9.0" for r in mosaic_abs)


def test_sites_of_one_message_in_one_function_never_trade_places() -> None:
    """Two sites printing the same words in one function stand in the same order in every
    release that has both there, whatever either printed then (the linker once paired each
    with the nearest line, and such sites traded places from release to release; then took
    tcgen05's ValueError of 0.7.0, which became a NotImplementedError, for the rewording of
    another site beside it)."""
    from itertools import combinations

    def placed(facts: dict[str, Any]) -> dict[str, tuple[str, str, int]]:
        """Release → (file, function, line) of the site in that release."""
        return {
            e["release"]: (
                e.get("filePath", facts["filePath"]),
                e.get("function", facts["site"]["function"]),
                e["lineNumber"],
            )
            for e in facts["releases"]
        }

    alike: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for facts in committed():
        key = (facts["filePath"], facts["site"]["function"], facts["errorMessage"])
        alike.setdefault(key, []).append(facts)
    traded = []
    for group in alike.values():
        for first, second in combinations(group, 2):
            a, b = placed(first), placed(second)
            both = [r for r in a if r in b and a[r][:2] == b[r][:2]]
            if len({a[r][2] < b[r][2] for r in both}) > 1:
                traded.append((first["recordId"], second["recordId"]))
    assert sum(len(group) > 1 for group in alike.values()) > 100
    assert traded == []
