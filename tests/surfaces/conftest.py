"""The surfaces answer without a server, from the snapshot ``errata match`` reads: one SQLite
file of the curated records and one cache folder for the whole session, built once."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.config import REPO_ROOT
from tests.conftest import CURATED_SEEDS_ENV

TRACEBACKS = REPO_ROOT / "tests" / "fixtures" / "tracebacks"
# JAX's real error, as a notebook or a logging handler formats it (tests/oracle captured it).
FORMATTED = TRACEBACKS / "MGPU-COPY-INTEGER-BYTES-formatted.txt"
HEADLINE = (
    "ValueError: Can only transfer integer bytes (shape=[7], dtype=i4)"
    " (7 × 4 bits = 28 bits; 28 mod 8 = 4)"
)
DO_THIS = "Do this: Pad the block from 7 to 256 elements"
DIFF = ("-plgpu.SMEM((7,), jnp.int4)", "+plgpu.SMEM((256,), jnp.int4)")  # no code shown


def users_diff(call: str) -> tuple[str, str]:
    """The diff of the user's own line that writes the block of 7 (where the traceback
    shows it): the same fix, written into it."""
    return f"-{call}", "+" + call.replace("(7,)", "(256,)")


RECORD_LINK = "errata show 225d0e9c2ee22311"


@pytest.fixture(scope="session")
def offline_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The variables of a user whose first ``errata match`` built the snapshot."""
    folder = tmp_path_factory.mktemp("offline")
    env = {
        **CURATED_SEEDS_ENV,
        "ERRATA_DATABASE_URL": f"sqlite:///{folder / 'errata.sqlite3'}",
        "XDG_CACHE_HOME": str(folder / "cache"),
    }
    first = subprocess.run(
        [sys.executable, "-m", "app", "match", str(FORMATTED)],
        env=process_env(env),
        cwd=REPO_ROOT,
        capture_output=True,
        timeout=300,
    )
    assert first.returncode == 0, first.stderr.decode()
    return env


def process_env(env: dict[str, str]) -> dict[str, str]:
    """This process's environment with ``env``, no server named and no colours forced."""
    merged = {**os.environ, **env, "PYTHONPATH": str(REPO_ROOT)}
    for name in ("ERRATA_URL", "FORCE_COLOR"):
        merged.pop(name, None)
    return merged


@pytest.fixture
def offline(offline_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """This process answers from the session's snapshot; yields the repository's root, the
    folder the snapshot was made in (its name depends on the working folder)."""
    for name, value in offline_env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("ERRATA_URL", raising=False)
    monkeypatch.chdir(REPO_ROOT)
    yield REPO_ROOT
