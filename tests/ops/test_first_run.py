"""What `make serve` tells a new user while it installs and starts: a dry run of the Makefile."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from app.config import REPO_ROOT


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_serve_says_what_it_does_while_it_installs_and_where_it_serves(
    tmp_path: Path,
) -> None:
    fresh = tmp_path / "venv"  # as on a fresh machine: nothing installed yet
    dry_run = subprocess.run(
        ["make", "--dry-run", "serve", f"VENV={fresh}", "HOST=0.0.0.0", "PORT=9000"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    said = [line for line in dry_run.splitlines() if line.startswith("echo ")]
    assert any("installing errata and its dependencies" in line for line in said)
    assert any("http://0.0.0.0:9000/" in line for line in said)
    assert "--host 0.0.0.0 --port 9000" in dry_run
