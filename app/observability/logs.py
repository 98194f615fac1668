"""Structured logs: one JSON object a line, with the request id bound through contextvars.

The standard library's loggers (uvicorn's, SQLAlchemy's, the app's own) all go through one
formatter. The access log, written once per request, renders the same lines in one
``orjson`` call and writes them a few at a time (``log_access``). Request bodies, pastes
and headers are never passed to a logger; as a second line of defence, values under
secret-sounding keys and bearer credentials are masked.
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import os
import re
import sys
import threading
import time
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache, lru_cache
from typing import Any, TextIO

import orjson
import structlog

REDACTED = "[redacted]"
_SECRET_KEYS = re.compile(r"authorization|token|secret|password|passwd|cookie|api[_-]?key", re.I)
_BEARER = re.compile(r"\b(Bearer|Basic)\s+[^\s,;\"']+", re.I)
_URL_PASSWORD = re.compile(r"(?P<scheme>[a-z][a-z0-9+.-]*://[^:/@\s]+):[^@/\s]+@", re.I)
# Text without any of these has nothing for _BEARER or _URL_PASSWORD to mask.
_MASKABLE = re.compile(r"bearer|basic|://", re.I)
_LEADING = ("timestamp", "level", "logger", "event", "request_id")
# The loggers uvicorn writes to; they are emptied and sent to the root handler.
UVICORN_LOGGERS = ("uvicorn", "uvicorn.error", "uvicorn.access", "uvicorn.asgi")
ACCESS_LOGGER = "errata.access"


@dataclass(frozen=True)
class _AccessLogSettings:
    """What ``configure_logging`` last said, as the access log needs it."""

    threshold: int = logging.INFO
    json: bool = True


_access_log_settings = _AccessLogSettings()


class _LineBuffer:
    """Lines gathered and written together, as nginx's ``access_log … buffer= flush=`` does:
    one write per ``limit`` bytes or ``delay`` seconds, not one per request.

    A write is whole lines of at most ``limit`` bytes (within ``PIPE_BUF``), so lines from
    several workers sharing a pipe never interleave mid-line. While lines keep coming, the
    one adding a line writes those waiting once the oldest has waited ``delay``. The last
    ones are written by a timer on the event loop serving the request that added the first
    of them, when the caller names that loop; else by a thread of the buffer's own. (A
    server names its loop: woken while the loop's thread was busy, the thread waited for
    the GIL for a long time, and every system call of the loop meanwhile handed the GIL over
    to no use, 8 µs a request. The running loop is not asked for: code that merely runs
    inside one, as under Playwright's sync API, may never let it run again.) A forked child
    starts empty.
    """

    def __init__(self, limit: int = 4096, delay: float = 0.05) -> None:
        self.limit = limit
        self.delay = delay
        self._lines: list[str] = []
        self._size = 0
        self._oldest = 0.0  # when the first waiting line came (monotonic)
        self._lock = threading.Lock()
        self._due = threading.Event()  # set while lines wait
        self._flusher_started = False

    def add(self, line: str, loop: asyncio.AbstractEventLoop | None = None) -> None:
        now = time.monotonic()
        with self._lock:
            if self._lines and (
                self._size + len(line) > self.limit or now - self._oldest >= self.delay
            ):
                self._write()
            first = not self._lines
            if first:
                self._oldest = now
            self._lines.append(line)
            self._size += len(line)
        if first:
            self._write_later(now, loop)

    def flush(self) -> None:
        with self._lock:
            self._write()

    def _write_later(self, oldest: float, loop: asyncio.AbstractEventLoop | None) -> None:
        """Write the lines that began waiting at ``oldest`` once ``delay`` has passed, unless a
        later line has written them by then."""
        if loop is None:
            self._start_flusher()
            self._due.set()
        else:
            loop.call_later(self.delay, self._write_batch, oldest)

    def _write_batch(self, oldest: float) -> None:
        with self._lock:
            if self._lines and self._oldest == oldest:
                self._write()

    def _write(self) -> None:
        if self._lines:
            sys.stderr.write("".join(self._lines))
            self._lines.clear()
            self._size = 0

    def forget_parent(self) -> None:
        """In a forked child: the parent writes its own lines, and its threads are gone."""
        self._lines = []
        self._size = 0
        self._lock = threading.Lock()
        self._due = threading.Event()
        self._flusher_started = False

    def _start_flusher(self) -> None:
        if not self._flusher_started:
            self._flusher_started = True
            threading.Thread(target=self._flush_when_due, name="access-log", daemon=True).start()

    def _flush_when_due(self) -> None:
        while True:
            self._due.wait()
            time.sleep(self.delay)
            with self._lock:
                if self._lines and time.monotonic() - self._oldest >= self.delay:
                    self._write()
                if not self._lines:  # else lines came after a write: sleep again
                    self._due.clear()


_access_lines = _LineBuffer()
atexit.register(_access_lines.flush)
os.register_at_fork(after_in_child=_access_lines.forget_parent)


def flush_access_log() -> None:
    """Write the access lines still buffered (at shutdown; tests)."""
    _access_lines.flush()


class _StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever ``sys.stderr`` is at the time of the write (test runners swap it)."""

    @property
    def stream(self) -> TextIO:
        return sys.stderr

    @stream.setter
    def stream(self, _value: TextIO) -> None:
        pass


class _StderrLogger:
    """structlog's output end: one rendered line to whatever ``sys.stderr`` is at the time
    (line-buffered, so each line is written whole)."""

    def __init__(self, name: str) -> None:
        self.name = name  # for add_logger_name, as on a standard library logger

    def msg(self, message: str) -> None:
        sys.stderr.write(message + "\n")

    debug = info = warning = error = critical = exception = msg


@cache
def _stderr_logger(name: str = "errata", *_args: Any) -> _StderrLogger:
    return _StderrLogger(name)


_pid = os.getpid()


def _remember_pid() -> None:
    global _pid
    _pid = os.getpid()


os.register_at_fork(after_in_child=_remember_pid)


def _add_process(_logger: Any, _name: str, event: MutableMapping[str, Any]) -> Any:
    event["pid"] = _pid
    return event


def _mask(value: Any) -> Any:
    if isinstance(value, str) and _MASKABLE.search(value) is not None:
        value = _BEARER.sub(r"\1 " + REDACTED, value)
        return _URL_PASSWORD.sub(r"\g<scheme>:" + REDACTED + "@", value)
    return value


@lru_cache(maxsize=1024)  # field names come from code: a few dozen
def _is_secret_key(key: str) -> bool:
    return key != "event" and _SECRET_KEYS.search(key) is not None


def redact(_logger: Any, _name: str, event: MutableMapping[str, Any]) -> Any:
    """Mask values under secret-sounding keys, bearer credentials and URL passwords."""
    for key, value in list(event.items()):
        if _is_secret_key(key):
            event[key] = REDACTED
        elif isinstance(value, str):
            event[key] = _mask(value)
    return event


def _json(event: Any, **options: Any) -> str:
    """orjson, which renders a line in a third of the standard library's time."""
    return orjson.dumps(event, default=options.get("default")).decode()


def _leading_fields(_logger: Any, _name: str, event: MutableMapping[str, Any]) -> Any:
    """Put when, how bad, where and what first; the event's own fields follow."""
    head = {key: event.pop(key) for key in _LEADING if key in event}
    return {**head, **event}


def _shared_processors() -> list[Any]:
    return [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        _add_process,
    ]


def configure_logging(level: str = "INFO", fmt: str = "auto") -> None:
    """Send every logger through the same processors to stderr; safe to call again.

    ``fmt`` is json, console, or auto: a person at a terminal reads plain coloured lines,
    a log collector (anything else on stderr) reads JSON."""
    global _access_log_settings
    terminal = sys.stderr.isatty()
    console = fmt == "console" or (fmt == "auto" and terminal)
    _access_log_settings = _AccessLogSettings(
        threshold=logging.getLevelNamesMapping()[level.upper()], json=not console
    )
    shared = _shared_processors()
    renderer: Any = (
        structlog.dev.ConsoleRenderer(colors=terminal)
        if console
        else structlog.processors.JSONRenderer(serializer=_json)
    )
    rendering = [structlog.processors.format_exc_info, redact, _leading_fields, renderer]
    structlog.configure(
        processors=[*shared, *rendering],
        logger_factory=_stderr_logger,
        wrapper_class=structlog.make_filtering_bound_logger(level.upper()),
        cache_logger_on_first_use=False,
    )
    formatter = structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=shared,
        processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, *rendering],
    )
    handler = _StderrHandler()
    handler.setFormatter(formatter)
    handler.set_name("errata")
    root = logging.getLogger()
    for old in [h for h in root.handlers if h.get_name() == "errata"]:
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())
    for name in UVICORN_LOGGERS:
        logger = logging.getLogger(name)
        logger.handlers.clear()
        logger.setLevel(level.upper())
        # The app logs each request itself, with its request id and route, and no query string.
        logger.propagate = name != "uvicorn.access"


def get_logger(name: str) -> Any:
    return structlog.get_logger(name)


def log_access(
    request_id: str,
    fields: Mapping[str, Any],
    *,
    failed: bool,
    loop: asyncio.AbstractEventLoop | None = None,
) -> None:
    """One access line, at ``warning`` for a failed request, else at ``info``.

    It is written for every request, so in JSON it is rendered here, in one ``orjson``
    call, in the shape of every other line (structlog's processors cost seven times as
    much), and written with the lines of other requests within 50 ms (see ``_LineBuffer``;
    ``loop``: the event loop serving the request). Of the fields, only the path is the
    client's text: it is masked.
    """
    settings = _access_log_settings
    level = logging.WARNING if failed else logging.INFO
    if level < settings.threshold:
        return
    if not settings.json:
        get_logger(ACCESS_LOGGER).log(level, "request", request_id=request_id, **fields)
        return
    event: dict[str, Any] = {
        "timestamp": datetime.now(UTC),
        "level": "warning" if failed else "info",
        "logger": ACCESS_LOGGER,
        "event": "request",
        "request_id": request_id,
    }
    event.update(fields)
    if "path" in event:
        event["path"] = _mask(event["path"])
    event["pid"] = _pid
    _access_lines.add(orjson.dumps(event, option=orjson.OPT_UTC_Z).decode() + "\n", loop)
