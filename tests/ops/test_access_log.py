"""The access line: its shape, its level, its masking, and how lines are gathered into writes."""

from __future__ import annotations

import asyncio
import io
import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import uvloop
from starlette.types import Message, Receive, Scope, Send

from app.observability import logs
from app.observability.logs import configure_logging, flush_access_log, log_access
from app.observability.middleware import RequestContext
from tests.ops.conftest import run_on_a_loop_of_its_own

FIELDS = {
    "method": "GET",
    "path": "/api/errors/x",
    "route": "/api/errors/{record_id}",
    "status": 200,
    "duration_ms": 0.12,
    "client": "127.0.0.1",
}


class Writes(io.StringIO):
    """A stderr that remembers each write separately."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[str] = []

    def write(self, text: str) -> int:
        self.writes.append(text)
        return super().write(text)

    def lines(self) -> list[dict[str, object]]:
        return [json.loads(line) for line in self.getvalue().splitlines()]


Capture = Callable[[], Writes]


@pytest.fixture
def capture(monkeypatch: pytest.MonkeyPatch) -> Iterator[Capture]:
    """Call it in the test itself: pytest sets ``sys.stderr`` again between setup and call."""

    def install() -> Writes:
        flush_access_log()
        stream = Writes()
        monkeypatch.setattr("sys.stderr", stream)
        return stream

    yield install
    flush_access_log()
    configure_logging()


def test_the_line_has_the_shape_of_every_other_line(capture: Capture) -> None:
    stderr = capture()
    configure_logging("INFO", "json")
    log_access("req-1", FIELDS, failed=False)
    flush_access_log()
    logs.get_logger("errata.other").info("request", request_id="req-1", **FIELDS)
    access, other = stderr.lines()
    assert list(access)[:5] == ["timestamp", "level", "logger", "event", "request_id"]
    assert list(access) == list(other)
    assert {key: access[key] for key in access if key not in ("timestamp", "logger")} == {
        key: other[key] for key in other if key not in ("timestamp", "logger")
    }
    assert access["logger"] == "errata.access" and access["level"] == "info"
    assert str(access["timestamp"]).endswith("Z")


def test_failed_requests_are_warnings_and_the_level_is_respected(capture: Capture) -> None:
    stderr = capture()
    configure_logging("WARNING", "json")
    log_access("quiet", FIELDS, failed=False)
    log_access("loud", {**FIELDS, "status": 503}, failed=True)
    flush_access_log()
    assert [(line["request_id"], line["level"]) for line in stderr.lines()] == [("loud", "warning")]


def test_credentials_in_the_path_are_masked(capture: Capture) -> None:
    stderr = capture()
    configure_logging("INFO", "json")
    log_access("r", {**FIELDS, "path": "/x/https://user:hunter2@host/Bearer abc.def"}, failed=False)
    flush_access_log()
    (line,) = stderr.lines()
    assert "hunter2" not in str(line["path"]) and "abc.def" not in str(line["path"])
    assert "[redacted]" in str(line["path"])


def test_console_format_goes_through_structlog(capture: Capture) -> None:
    stderr = capture()
    configure_logging("INFO", "console")
    log_access("req-console", FIELDS, failed=False)
    text = stderr.getvalue()
    assert "req-console" in text and "errata.access" in text and not text.startswith("{")


def test_lines_are_written_together_soon_after(capture: Capture) -> None:
    stderr = capture()
    lines = logs._LineBuffer(delay=0.05)
    for number in range(3):
        lines.add(f"line {number}\n")
    assert stderr.writes == []
    deadline = time.monotonic() + 5
    while not stderr.writes and time.monotonic() < deadline:
        time.sleep(0.01)
    assert stderr.writes == ["line 0\nline 1\nline 2\n"]


EVENT_LOOPS = {"asyncio": asyncio.new_event_loop, "uvloop": uvloop.new_event_loop}


@pytest.mark.parametrize("make_loop", EVENT_LOOPS.values(), ids=EVENT_LOOPS.keys())
def test_lines_added_on_an_event_loop_are_written_by_a_timer_on_it(
    capture: Capture, make_loop: Callable[[], asyncio.AbstractEventLoop]
) -> None:
    stderr = capture()
    lines = logs._LineBuffer(delay=0.2)

    async def serve() -> list[list[str]]:
        loop = asyncio.get_running_loop()
        lines.add("a\n", loop)
        time.sleep(0.25)  # the loop is busy: its timer cannot run
        lines.add("b\n", loop)  # "a" has waited long enough: this call writes it
        lines.add("c\n", loop)
        seen = [list(stderr.writes)]
        await asyncio.sleep(0.02)  # "a"'s timer, late, must not write "b" and "c" early
        seen.append(list(stderr.writes))
        await asyncio.sleep(0.5)
        return seen

    assert run_on_a_loop_of_its_own(serve(), make_loop) == [["a\n"], ["a\n"]]
    assert stderr.writes == ["a\n", "b\nc\n"]
    assert not lines._flusher_started  # no thread to wait for the loop's GIL


def test_a_served_request_has_its_line_written_by_the_loop_serving_it(
    capture: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    stderr = capture()
    configure_logging("INFO", "json")
    monkeypatch.setattr(logs._access_lines, "_start_flusher", lambda: pytest.fail("a thread"))

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})

    async def serve() -> list[str]:
        scope = {"type": "http", "method": "GET", "path": "/api/x", "headers": []}
        await RequestContext(app, resolve=lambda path: path)(scope, receive, send)
        await asyncio.sleep(0.2)
        return [line["path"] for line in stderr.lines()]

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Message) -> None:
        pass

    assert run_on_a_loop_of_its_own(serve()) == ["/api/x"]


def test_a_write_is_whole_lines_within_the_limit(capture: Capture) -> None:
    stderr = capture()
    lines = logs._LineBuffer(limit=100, delay=60)
    sent = [f"line {number:02} {'x' * number}\n" for number in range(30)]
    for line in sent:
        lines.add(line)
    lines.flush()
    assert len(stderr.writes) > 1
    for write in stderr.writes:
        assert len(write) <= 100 and write.endswith("\n")
    assert "".join(stderr.writes) == "".join(sent)


def test_a_forked_child_does_not_write_its_parents_lines(
    capture: Capture, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    capture()
    configure_logging("INFO", "json")
    with (tmp_path / "log").open("a", buffering=1) as log:
        monkeypatch.setattr("sys.stderr", log)
        log_access("parent", FIELDS, failed=False)  # buffered when the child is forked
        child = os.fork()
        if child == 0:
            log_access("child", FIELDS, failed=False)
            flush_access_log()
            os._exit(0)
        os.waitpid(child, 0)
        flush_access_log()
    ids = [json.loads(line)["request_id"] for line in (tmp_path / "log").read_text().splitlines()]
    assert sorted(ids) == ["child", "parent"]
