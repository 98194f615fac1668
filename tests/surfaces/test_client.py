"""``errata.explain``: in this process from the snapshot, or from a real server."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import errata
from app.client.explain import ServerProblem
from app.config import REPO_ROOT
from app.errors import ServiceUnavailable
from tests.conftest import LiveServer, start_server, stop_server
from tests.oracle.jax_kernels import lower, user_facing_error
from tests.surfaces.conftest import FORMATTED, HEADLINE, RECORD_LINK, users_diff


def raised_by_jax() -> BaseException:
    """JAX 0.10.2's own error for an int4 block of 7 copied to shared memory, on the CPU."""
    try:
        lower("copy_gmem_to_smem", (7,), "int4")
    except Exception as exc:
        return user_facing_error(exc)
    raise AssertionError("JAX lowered a block it refuses")


def test_an_exception_is_explained_in_this_process(offline: Path) -> None:
    answer = errata.explain(raised_by_jax())
    assert answer.matches[0].rule == "MGPU-COPY-INTEGER-BYTES"
    first = answer.answers[0]
    assert first.headline == HEADLINE
    assert first.doThis is not None and first.doThis.diff is not None
    call = 'lower("copy_gmem_to_smem", (7,), "int4")'  # the line above, as the frame shows it
    assert all(line in first.doThis.diff for line in users_diff(call))
    assert first.links[0].url == RECORD_LINK  # no server: the command that shows the record


def test_text_and_a_release_are_taken(offline: Path) -> None:
    answer = errata.explain(FORMATTED.read_text(), jax_version="0.9.2")
    assert answer.release is not None and answer.release.given == "0.9.2"
    unknown = errata.explain("NameError: name 'x' is not defined")
    assert not unknown.matches and unknown.answers[0].kind == "unknown"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    folder = tmp_path_factory.mktemp("explained")
    env = {
        "ERRATA_DATABASE_URL": f"sqlite:///{folder / 'server.sqlite3'}",
        "ERRATA_PUBLIC_BASE_URL": "https://errata.example",
    }
    live = start_server(env, folder / "server.log")
    yield live
    stop_server(live)


def test_a_server_answers_with_its_links(
    server: LiveServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ERRATA_URL", server.base_url)
    answer = errata.explain(FORMATTED.read_text())
    assert answer.answers[0].headline == HEADLINE
    assert answer.answers[0].links[0].url == "https://errata.example/errors/225d0e9c2ee22311"


def test_a_refused_paste_is_the_servers_problem(server: LiveServer) -> None:
    with pytest.raises(ServerProblem) as refused:
        errata.explain("x", jax_version="not a release", url=server.base_url)
    assert refused.value.status == 422 and "jaxVersion" in refused.value.detail


def test_an_unreachable_server_is_said(offline: Path) -> None:
    with pytest.raises(ServiceUnavailable, match=r"cannot reach http://127\.0\.0\.1:9"):
        errata.explain("ValueError: x", url="http://127.0.0.1:9")


def test_importing_errata_loads_none_of_it() -> None:
    """``import errata`` at a notebook's top costs nothing: the reader, the catalog and the
    extension are imported when first used."""
    loaded = subprocess.run(
        [sys.executable, "-c", "import errata, sys; print(sorted(sys.modules))"],
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        capture_output=True,
        check=True,
    )
    modules = ast.literal_eval(loaded.stdout.decode())
    assert "errata" in modules
    assert not [name for name in modules if name.startswith(("app", "pydantic", "IPython"))]
