"""The engine against every JAX release it models, each installed in a venv of its own.

Off by default (``-m releases`` runs it): each release is downloaded once (jax, jaxlib and
what they need: 11 GB for the 21 releases) into ``ERRATA_JAX_RELEASES_DIR`` (default
``~/.cache/errata/jax-releases``), and lowers the grid of ``test_engine_vs_jax.py`` with the
same kernels, spelled as that release spells them: with the release's default lowering
semantics, then with Lane and with Warpgroup asked for. The engine, asked for that release
and semantics, must give the same first error, class and message, or agree that the kernel
lowers. The fix the engine gives a case for every release that raises its error (a paste
that names no release) must lower in each release.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from app.answers.catalog import Catalog
from app.answers.match import MatchService
from app.config import REPO_ROOT
from app.engines.mosaic_gpu import InputValueError, check, parse_version, suggest_fixes
from app.schemas.match import MatchRequest
from tests.data.test_site_records import mined_sites

from .test_engine_vs_jax import GRID, Case

pytestmark = pytest.mark.releases

RELEASES = (
    "0.7.0",
    "0.7.1",
    "0.7.2",
    "0.8.0",
    "0.8.1",
    "0.8.2",
    "0.8.3",
    "0.9.0",
    "0.9.0.1",
    "0.9.1",
    "0.9.2",
    "0.10.0",
    "0.10.1",
    "0.10.2",
    "0.11.0",
    "0.11.1",
    "0.11.2",
    "0.12.0",
    "0.12.0.1",
)
RELEASES_DIR = Path(
    os.environ.get("ERRATA_JAX_RELEASES_DIR", Path.home() / ".cache" / "errata" / "jax-releases")
)
# The semantics asked for: None is the release's default (Lane to 0.10.2, then Warpgroup).
SEMANTICS = (None, "Lane", "Warpgroup")
EXAMPLES_SHOWN = 10
# Before 0.10.2 a kernel without operands whose body writes no GMEM ref is never lowered
# ("core_map without discharging"), which is what the bitcast and async store harnesses
# are: those releases' cases of theirs are left unconfirmed.
NO_OUTPUT_HARNESS_SINCE = (0, 10, 2)
NO_OUTPUT_HARNESSES = frozenset({"smem_bitcast", "async_store"})
Verdict = tuple[str | None, str | None]


def release_python(version: str) -> Path:
    """The interpreter of a venv holding JAX ``version``, made on first use."""
    venv = RELEASES_DIR / f"jax-{version}"
    python = venv / "bin" / "python"
    installed = venv / ".installed"
    if not installed.exists():
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
        packages = [f"jax=={version}", f"jaxlib=={version}", "absl-py"]
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", *packages], check=True)
        installed.touch()
    return python


def run_in_release(version: str, module: str, *arguments: str, given: str = "") -> Any:
    """The JSON a module of ``tests.oracle`` writes, run by JAX ``version``'s interpreter."""
    run = subprocess.run(
        [str(release_python(version)), "-m", f"tests.oracle.{module}", *arguments],
        input=given,
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT), "JAX_PLATFORMS": "cpu"},
        check=False,
    )
    assert run.returncode == 0, run.stderr[-4000:]
    return json.loads(run.stdout)


def jax_verdicts(version: str, cases: list[Case], semantics: str | None = None) -> list[Verdict]:
    """JAX ``version``'s verdict on each case, lowered in its own interpreter (with the
    release's default lowering semantics unless ``semantics`` names others)."""
    asked = [semantics] if semantics else []
    verdicts = run_in_release(version, "release_verdicts", *asked, given=json.dumps(cases))
    return [(error_class, message) for error_class, message in verdicts]


def engine_verdict(case: Case, version: str, semantics: str | None = None) -> Verdict | None:
    """The engine's first error for ``version``; None where it models no such construct
    (or the harness cannot build it)."""
    operation, shape, dtype, target = case
    if operation in NO_OUTPUT_HARNESSES and parse_version(version) < NO_OUTPUT_HARNESS_SINCE:
        return None
    try:
        result = check(
            operation, shape, dtype, target, jax_version=version, lowering_semantics=semantics
        )
    except InputValueError:
        return None
    first = result.first_violation
    return (first.error_class, first.message) if first else (None, None)


@pytest.mark.parametrize("semantics", SEMANTICS)
@pytest.mark.parametrize("version", RELEASES)
def test_engine_agrees_with_the_release(version: str, semantics: str | None) -> None:
    modelled = {case: engine_verdict(case, version, semantics) for case in GRID}
    cases = [case for case, verdict in modelled.items() if verdict is not None]
    disagreements = [
        (case, modelled[case], jax)
        for case, jax in zip(cases, jax_verdicts(version, cases, semantics), strict=True)
        if modelled[case] != jax
    ]
    figures = (
        f"JAX {version} ({semantics or 'default'} semantics): {len(cases)} cases, "
        f"{len(cases) - len(disagreements)} agree, {len(disagreements)} disagree"
    )
    print(figures)
    assert not disagreements, f"{figures}\n{_examples(disagreements)}"


@functools.cache
def first_rule(case: Case, version: str) -> str | None:
    """The rule of the engine's first error for ``version`` under its default semantics;
    None where the case lowers, or where the engine (or the harness) does not model it."""
    if engine_verdict(case, version) is None:
        return None
    operation, shape, dtype, target = case
    first = check(operation, shape, dtype, target, jax_version=version).first_violation
    return first.rule_id if first else None


@pytest.mark.parametrize("version", RELEASES)
def test_a_fix_for_every_release_raising_the_error_lowers_in_each(version: str) -> None:
    """A paste of an error that dates it no closer is fixed for every release that raises
    that error (each under its default semantics, as the match service asks): each grid
    case's best such fix lowers in this release."""
    fixed: dict[Case, Case] = {}
    for case in GRID:
        rule = first_rule(case, version)
        if rule is None:
            continue
        others = [r for r in RELEASES if r != version and first_rule(case, r) == rule]
        operation, shape, dtype, target = case
        best = suggest_fixes(
            operation, shape, dtype, target, jax_version=version, limit=1, also_in=others
        )
        if best:
            fixed[case] = (operation, best[0].shape, best[0].dtype, best[0].target_dtype)
    verdicts = jax_verdicts(version, list(fixed.values()))
    failing = [
        (case, fix, verdict)
        for (case, fix), verdict in zip(fixed.items(), verdicts, strict=True)
        if verdict != (None, None)
    ]
    figures = f"JAX {version}: {len(fixed)} fixes for every release, {len(failing)} do not lower"
    print(figures)
    assert not failing, f"{figures}\n" + "\n".join(map(str, failing[:EXAMPLES_SHOWN]))


PALLAS_CALL_RECORD = REPO_ROOT / "data" / "records" / "mgpu-pallas-call-no-lowering.json"


@pytest.mark.parametrize("version", ("0.11.1", "0.11.2", "0.12.0.1"))
def test_a_mosaic_gpu_pallas_call_asserts_from_0_11_2_and_the_records_fix_lowers(
    version: str, catalog: Catalog
) -> None:
    """The record's example: its before lowers until 0.11.1, then raises its bare assert at
    the line the mined site gives for the release, and its traceback is answered with the
    record, dated to a span holding the release; its after lowers in each."""
    lowered = run_in_release(version, "release_examples")
    assert lowered["after"] is None
    record = json.loads(PALLAS_CALL_RECORD.read_text())["record"]
    lines = {
        entry["release"]: entry["lineNumber"] for entry in mined_sites()[record["id"]]["releases"]
    }
    if version not in lines:
        assert lowered["before"] is None
        return
    assert lowered["before"] == ["AssertionError", "", record["filePath"], lines[version]]
    answer = MatchService(catalog).match(MatchRequest(text=lowered["pasted"]))
    # A bare assert has no message: the frame that raised it names the site and its record.
    assert not answer.matches
    [point] = answer.raisePoints
    assert (point.errorId, point.slug, point.line) == (record["id"], record["slug"], lines[version])
    assert version in point.releases
    assert catalog.records[record["id"]].solutions == tuple(record["solutions"])
    assert answer.release is not None and version in answer.release.releases


def _examples(disagreements: list[tuple[Case, Verdict, Verdict]]) -> str:
    """One example of each kind of disagreement (by the two messages' openings), counted."""
    kinds: dict[tuple[str, str], list[str]] = {}
    for case, engine, jax in disagreements:
        key = (f"{engine[0]}: {(engine[1] or '')[:48]}", f"{jax[0]}: {(jax[1] or '')[:48]}")
        kinds.setdefault(key, []).append(f"{case}: engine {engine}, JAX {jax}")
    return "\n".join(
        f"  {len(found)} × {found[0]}" for found in list(kinds.values())[:EXAMPLES_SHOWN]
    )
