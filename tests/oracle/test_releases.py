"""The engine against every JAX release it models, each installed in a venv of its own.

Off by default (``-m releases`` runs it): each release is downloaded once (jax and jaxlib,
about 100 MB) into ``ERRATA_JAX_RELEASES_DIR`` (default ``~/.cache/errata/jax-releases``),
and lowers the grid of ``test_engine_vs_jax.py`` with the same kernels, spelled as that
release spells them. The engine, asked for that release, must give the same first error,
class and message, or agree that the kernel lowers.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.alignment import AlignmentInputError, check, parse_version
from app.config import REPO_ROOT

from .test_engine_vs_jax import GRID, Case

pytestmark = pytest.mark.releases

RELEASES = (
    "0.5.3",
    "0.6.0",
    "0.6.1",
    "0.6.2",
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
)
RELEASES_DIR = Path(
    os.environ.get("ERRATA_JAX_RELEASES_DIR", Path.home() / ".cache" / "errata" / "jax-releases")
)
EXAMPLES_SHOWN = 10
# Before 0.10 a kernel without operands whose body writes no ref is never lowered ("core_map
# without discharging"), which is what the bitcast harness is: those releases' bitcasts are
# left unconfirmed.
BITCAST_HARNESS_SINCE = (0, 10, 0)
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


def jax_verdicts(version: str, cases: list[Case]) -> list[Verdict]:
    """JAX ``version``'s verdict on each case, lowered in its own interpreter."""
    run = subprocess.run(
        [str(release_python(version)), "-m", "tests.oracle.release_verdicts"],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT), "JAX_PLATFORMS": "cpu"},
        check=False,
    )
    assert run.returncode == 0, run.stderr[-4000:]
    return [(error_class, message) for error_class, message in json.loads(run.stdout)]


def engine_verdict(case: Case, version: str) -> Verdict | None:
    """The engine's first error for ``version``; None where it models no such construct
    (or the harness cannot build it)."""
    operation, shape, dtype, target = case
    if operation == "smem_bitcast" and parse_version(version) < BITCAST_HARNESS_SINCE:
        return None
    try:
        result = check(operation, shape, dtype, target, jax_version=version)
    except AlignmentInputError:
        return None
    first = result.first_violation
    return (first.error_class, first.message) if first else (None, None)


@pytest.mark.parametrize("version", RELEASES)
def test_engine_agrees_with_the_release(version: str) -> None:
    modelled = {case: engine_verdict(case, version) for case in GRID}
    cases = [case for case, verdict in modelled.items() if verdict is not None]
    disagreements = [
        (case, modelled[case], jax)
        for case, jax in zip(cases, jax_verdicts(version, cases), strict=True)
        if modelled[case] != jax
    ]
    figures = (
        f"JAX {version}: {len(cases)} cases, {len(cases) - len(disagreements)} agree, "
        f"{len(disagreements)} disagree"
    )
    print(figures)
    assert not disagreements, f"{figures}\n{_examples(disagreements)}"


def _examples(disagreements: list[tuple[Case, Verdict, Verdict]]) -> str:
    """One example of each kind of disagreement (by the two messages' openings), counted."""
    kinds: dict[tuple[str, str], list[str]] = {}
    for case, engine, jax in disagreements:
        key = (f"{engine[0]}: {(engine[1] or '')[:48]}", f"{jax[0]}: {(jax[1] or '')[:48]}")
        kinds.setdefault(key, []).append(f"{case}: engine {engine}, JAX {jax}")
    return "\n".join(
        f"  {len(found)} × {found[0]}" for found in list(kinds.values())[:EXAMPLES_SHOWN]
    )
