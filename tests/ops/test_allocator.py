"""The C allocator's arenas are capped in a server's process, unless its environment says."""

from __future__ import annotations

import subprocess
import sys

import pytest

PROBE = "from app.allocator import cap_malloc_arenas; print(cap_malloc_arenas())"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_the_arenas_are_capped_unless_the_environment_sets_a_cap() -> None:
    capped = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True)
    assert capped.stdout.strip() == "True", capped.stderr
    own = subprocess.run(
        [sys.executable, "-c", PROBE],
        capture_output=True,
        text=True,
        env={"MALLOC_ARENA_MAX": "4", "PATH": "/usr/bin:/bin"},
    )
    assert own.stdout.strip() == "False", own.stderr
