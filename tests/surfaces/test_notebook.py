"""``%load_ext errata`` in a real IPython shell and a real Jupyter kernel, and
``errata.install()`` in a script: a cell that lowers a real Pallas kernel with JAX 0.10.2 on
the CPU, as tests/oracle does, raises JAX's own error, which is explained below its
traceback."""

from __future__ import annotations

import html
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import CapturedIO, capture_output
from jupyter_client.manager import start_new_kernel

from app.config import REPO_ROOT
from tests.surfaces.conftest import DO_THIS, HEADLINE, RECORD_LINK, process_env, users_diff

IMPORT = "from tests.oracle.jax_kernels import lower"
# JAX raises "Can only transfer integer bytes (shape=[7], dtype=i4)" for it.
FAILING = "lower('copy_gmem_to_smem', (7,), 'int4')"
DIFF = users_diff(FAILING)
JAX_SAYS = "ValueError: Can only transfer integer bytes (shape=[7], dtype=i4)"
_COLOURS = re.compile(r"\x1b\[[0-9;]*m")


def plain(text: str) -> str:
    return _COLOURS.sub("", text)


@pytest.fixture
def shell(offline: Path) -> Iterator[InteractiveShell]:
    shell = InteractiveShell.instance()
    shell.run_cell(IMPORT)
    yield shell
    shell.run_line_magic("unload_ext", "errata")
    InteractiveShell.clear_instance()


def run(shell: InteractiveShell, cell: str) -> CapturedIO:
    with capture_output() as captured:
        shell.run_cell(cell)
    return captured


def test_a_failing_cell_is_explained_below_its_traceback(shell: InteractiveShell) -> None:
    run(shell, "%load_ext errata")
    captured = run(shell, FAILING)
    assert JAX_SAYS in plain(captured.stdout)  # IPython's traceback, as without errata
    assert "Traceback" in plain(captured.stdout)
    [shown] = captured.outputs
    page = shown.data["text/html"]
    assert f"<b>{html.escape(HEADLINE)}</b>" in page
    assert f"<div>{DO_THIS} <span" in page
    assert all(f">{html.escape(line)}</span>" in page for line in DIFF)
    assert f"Record page: <code>{RECORD_LINK}</code>" in page
    assert '<a href="https://github.com/jax-ml/jax/blob/' in page  # JAX's source, linked
    text = shown.data["text/plain"]
    assert text.startswith(f"errata: {HEADLINE}\n{DO_THIS} (")
    assert all(f"\n    {line}\n" in text for line in DIFF)
    assert f"\nRecord page → {RECORD_LINK}\n" in text
    assert captured.stderr == ""


def test_an_unknown_error_is_one_quiet_line(shell: InteractiveShell) -> None:
    run(shell, "%load_ext errata")
    captured = run(shell, "undefined_name")
    assert "NameError" in plain(captured.stdout)
    assert captured.outputs == []
    assert captured.stderr == "errata: no known error in this traceback\n"


def test_a_failure_to_explain_is_one_line_and_the_next_cell_is_explained(
    shell: InteractiveShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    run(shell, "%load_ext errata")
    monkeypatch.setenv("ERRATA_URL", "http://127.0.0.1:9")  # nothing listens there
    unreachable = run(shell, FAILING)
    assert JAX_SAYS in plain(unreachable.stdout)
    assert unreachable.outputs == []
    assert unreachable.stderr.startswith("errata: could not explain this error (cannot reach")
    assert unreachable.stderr.count("\n") == 1
    monkeypatch.delenv("ERRATA_URL")
    assert len(run(shell, FAILING).outputs) == 1  # the extension is still there


def test_a_jupyter_kernel_shows_the_explanation_as_html(offline_env: dict[str, str]) -> None:
    manager, client = start_new_kernel(
        kernel_name="python3", env=process_env(offline_env), cwd=str(REPO_ROOT)
    )
    messages: list[dict[str, Any]] = []
    try:
        client.execute_interactive(f"%load_ext errata\n{IMPORT}", timeout=120)
        reply = client.execute_interactive(FAILING, timeout=300, output_hook=messages.append)
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    assert reply["content"]["status"] == "error"
    kinds = [message["msg_type"] for message in messages if message["msg_type"] != "status"]
    assert kinds[-2:] == ["error", "display_data"]  # the traceback, then the explanation
    error, shown = messages[-3]["content"], messages[-2]["content"]
    assert plain(error["traceback"][-1]) == JAX_SAYS
    assert f"<b>{html.escape(HEADLINE)}</b>" in shown["data"]["text/html"]
    assert all(html.escape(line) in shown["data"]["text/html"] for line in DIFF)


def test_install_explains_a_scripts_uncaught_exception(offline_env: dict[str, str]) -> None:
    script = f"import errata\nerrata.install()\n{IMPORT}\n{FAILING}\n"
    done = subprocess.run(
        [sys.executable, "-c", script],
        env=process_env(offline_env),
        cwd=REPO_ROOT,
        capture_output=True,
        timeout=300,
    )
    assert done.returncode == 1
    stderr = done.stderr.decode()
    traceback_end = stderr.index(f"\n{JAX_SAYS}\n") + len(JAX_SAYS) + 2
    assert stderr[traceback_end:].startswith(f"errata: {HEADLINE}\n{DO_THIS} (")
    assert f"\nRecord page → {RECORD_LINK}\n" in stderr[traceback_end:]
