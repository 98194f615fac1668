"""The log format chooses itself: plain text for a person at a terminal, JSON for the rest."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys

from app.config import REPO_ROOT, load_settings
from tests.conftest import LiveServer

LOG_A_LINE = (
    "import logging\n"
    "from app.config import load_settings\n"
    "from app.observability.logs import configure_logging\n"
    "settings = load_settings()\n"
    "configure_logging(settings.log_level, settings.log_format)\n"
    "logging.getLogger('app.records.seeding').info('loaded the seeds')\n"
)


def _stderr_of(*, terminal: bool) -> str:
    env = {key: value for key, value in os.environ.items() if key != "ERRATA_LOG_FORMAT"}
    if not terminal:
        done = subprocess.run(
            [sys.executable, "-c", LOG_A_LINE], env=env, capture_output=True, text=True, check=True
        )
        return done.stderr
    controller, follower = pty.openpty()
    with subprocess.Popen([sys.executable, "-c", LOG_A_LINE], env=env, stderr=follower) as child:
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(controller, 4096)
            except OSError:  # the terminal closes when the child exits
                break
            if not chunk:
                break
            chunks.append(chunk)
    os.close(controller)
    assert child.returncode == 0
    return b"".join(chunks).decode()


def test_the_default_is_chosen_by_where_stderr_goes() -> None:
    assert load_settings().log_format == "auto"
    piped = _stderr_of(terminal=False).strip()
    assert json.loads(piped)["event"] == "loaded the seeds"
    shown = _stderr_of(terminal=True).strip()
    assert "loaded the seeds" in shown
    assert not shown.startswith("{")
    assert "\x1b[" in shown  # coloured for the terminal


def test_the_seed_line_says_how_many_records_and_annotations_it_added(
    live_server: LiveServer,
) -> None:
    lines = [json.loads(line) for line in live_server.log_path.read_text().splitlines()]
    [seeded] = [line for line in lines if line["event"].startswith("loaded the seeds")]
    records = len(list((REPO_ROOT / "data" / "seeds").iterdir())) + len(
        list((REPO_ROOT / "data" / "records").glob("*.json"))
    )
    annotations = len(list((REPO_ROOT / "data" / "annotations").glob("*.json")))
    assert seeded["event"] == (
        f"loaded the seeds: {records} records and {annotations} annotations"
        " (errata's corrections, and the mined facts of curated records' sites) added"
    )
