"""``errata run -- <command>`` as a user runs it: real processes, their output compared byte
for byte with what the command wrote."""

from __future__ import annotations

import select
import subprocess
import sys
from pathlib import Path

from app.config import REPO_ROOT
from tests.surfaces.conftest import DIFF, DO_THIS, FORMATTED, HEADLINE, RECORD_LINK, process_env

# Output a terminal shows as it comes: a progress line redrawn, bytes that are not UTF-8,
# and no line end at the end.
PROGRESS = b"step 1/3\rstep 2/3\rstep 3/3\n\xff\xfe raw bytes\nno newline"
FAILING = f"""\
import sys
sys.stdout.buffer.write({PROGRESS!r})
sys.stdout.flush()
sys.stderr.write(open({str(FORMATTED)!r}).read())
sys.exit(3)
"""


def errata_run(offline_env: dict[str, str], *command: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "app", "run", "--", *command],
        env=process_env(offline_env),
        cwd=REPO_ROOT,
        capture_output=True,
        timeout=300,
    )


def test_a_failing_command_keeps_its_output_and_code_then_is_explained(
    offline_env: dict[str, str],
) -> None:
    done = errata_run(offline_env, sys.executable, "-c", FAILING)
    assert done.returncode == 3
    assert done.stdout == PROGRESS  # nothing added to the command's standard output
    written = FORMATTED.read_bytes()
    assert done.stderr.startswith(written)  # its standard error first, unchanged
    explanation = done.stderr[len(written) :].decode()
    assert f"\n{HEADLINE}\n\n{DO_THIS}\n" in explanation
    assert all(f"    {line}\n" in explanation for line in DIFF)
    assert f"Record page → {RECORD_LINK}" in explanation


def test_a_real_pallas_error_is_explained(offline_env: dict[str, str]) -> None:
    lowering = (
        "from tests.oracle.jax_kernels import lower; lower('copy_gmem_to_smem', (7,), 'int4')"
    )
    done = errata_run(offline_env, sys.executable, "-c", lowering)
    assert done.returncode == 1  # Python's code for an uncaught exception
    stderr = done.stderr.decode()
    traceback_end = stderr.index("ValueError: Can only transfer integer bytes")
    assert stderr.index(HEADLINE, traceback_end + 1) > traceback_end  # after the traceback
    assert DO_THIS in stderr


def test_a_command_that_succeeds_gets_nothing_added(offline_env: dict[str, str]) -> None:
    done = errata_run(offline_env, sys.executable, "-c", "print('fine', '--flag')")
    assert (done.returncode, done.stdout, done.stderr) == (0, b"fine --flag\n", b"")


def test_an_unknown_failure_is_one_quiet_line(offline_env: dict[str, str]) -> None:
    failing = "import sys; print('plain failure', file=sys.stderr); sys.exit(5)"
    done = errata_run(offline_env, sys.executable, "-c", failing)
    assert done.returncode == 5
    assert done.stderr == b"plain failure\nerrata: no known error in the output\n"


def test_a_signal_and_a_missing_command_are_a_shells_codes(
    offline_env: dict[str, str], tmp_path: Path
) -> None:
    killed = "import os, signal; os.kill(os.getpid(), signal.SIGTERM)"
    assert errata_run(offline_env, sys.executable, "-c", killed).returncode == 128 + 15
    missing = errata_run(offline_env, str(tmp_path / "no-such-command"))
    assert missing.returncode == 127
    assert missing.stderr.decode().startswith("errata: cannot run ")


def test_output_passes_through_as_it_comes(offline_env: dict[str, str]) -> None:
    """A line the command wrote is read through errata before the command ends: it waits for
    its standard input, which is closed only once the line is read."""
    waiting = "import sys; print('ready', flush=True); sys.stdin.read(); print('done')"
    process = subprocess.Popen(
        [sys.executable, "-m", "app", "run", "--", sys.executable, "-c", waiting],
        env=process_env(offline_env),
        cwd=REPO_ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None and process.stdin is not None
    try:
        readable, _, _ = select.select([process.stdout], [], [], 60)
        assert readable, "the command's line did not come through while it ran"
        assert process.stdout.readline() == b"ready\n"  # the command is still running
        process.stdin.close()
        assert process.stdout.read() == b"done\n"
        assert process.wait(timeout=60) == 0
    finally:
        process.kill()
