"""Structured logs: one JSON object a line, with the request id bound through contextvars.

The standard library's loggers (uvicorn's, SQLAlchemy's, the app's own) all go through one
formatter. The access log, written once per request, is a structlog logger that renders
the same lines without the standard library's machinery (a fifth of the cost). Request
bodies, pastes and headers are never passed to a logger; as a second line of defence,
values under secret-sounding keys and bearer credentials are masked.
"""

from __future__ import annotations

import logging
import os
import re
import sys
from collections.abc import MutableMapping
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


class _StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever ``sys.stderr`` is at the time of the write (test runners swap it)."""

    @property  # type: ignore[override]
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


def configure_logging(level: str = "INFO", fmt: str = "json") -> None:
    """Send every logger through the same processors to stderr; safe to call again."""
    shared = _shared_processors()
    renderer: Any = (
        structlog.dev.ConsoleRenderer(colors=False)
        if fmt == "console"
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
