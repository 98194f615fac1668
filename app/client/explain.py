"""An exception or a traceback's text → the Answer, computed here or fetched from a server.

Here is the default: the match runs in this process on the catalog snapshot that
``errata match`` reads (``answers.offline``), so no server is needed, and links are the
commands that show the same (``errata show …``). With ``ERRATA_URL`` (or ``url=``), the
paste is posted to that server's ``/api/match`` and its JSON read back: the same answer,
with links to the server's pages. Either way the result is the API's match answer
(:class:`~app.answers.answer.MatchAnswer`): what the paste holds, then ``answers``.
"""

from __future__ import annotations

import json
import os
import threading
import traceback
from typing import TYPE_CHECKING, Any

from app.errors import ProblemError, ServiceUnavailable

if TYPE_CHECKING:
    from urllib.error import HTTPError

    from app.answers.answer import MatchAnswer
    from app.answers.snapshot import Prepared

SERVER_VARIABLE = "ERRATA_URL"
# A server that answers a match in milliseconds and has not within this has a problem the
# caller should hear about, not wait on (a notebook cell is held meanwhile).
SERVER_TIMEOUT_S = 10.0
_warming = threading.Lock()
_kept: list[Prepared] = []  # what ``_prepared`` read, once read
# What the warm-up answers: an error line, so the reader's every stage runs once.
WARM_UP_LINE = "ValueError: Can only transfer integer bytes (shape=[7], dtype=i4)"


class ServerProblem(ProblemError):
    """The server's problem detail for a paste it refused, as its own status and title."""

    def __init__(self, problem: dict[str, Any]) -> None:
        super().__init__(str(problem.get("detail", "")), errors=problem.get("errors"))
        self.status = int(problem.get("status", 400))
        self.title = str(problem.get("title", "Bad request"))


def explain(
    error: BaseException | str, *, jax_version: str | None = None, url: str | None = None
) -> MatchAnswer:
    """What errata knows of ``error`` (an exception, or a traceback as text): the match and
    its answers. A ``ProblemError`` when the paste is refused or the server cannot be read."""
    text = error if isinstance(error, str) else traceback_text(error)
    server = url if url is not None else os.environ.get(SERVER_VARIABLE)
    if server:
        return _fetched(server, text, jax_version)
    from app.answers.links import COMMANDS
    from app.answers.offline import match_here

    return match_here(_prepared(), text, jax_version, COMMANDS)


def warm_up() -> None:
    """Read the snapshot and answer one line, so that the modules and caches the first
    answer needs are ready; for a thread started when a notebook loads the extension.
    Failures are the first answer's to say."""
    if os.environ.get(SERVER_VARIABLE):
        return
    try:
        explain(WARM_UP_LINE)
    except Exception:  # said, if it lasts, by the first explanation
        return


def _prepared() -> Prepared:
    """The snapshot, read once in this process: a notebook's session answers from the
    catalog it started with (a warm-up under way finishes first, then is used)."""
    from app.answers.offline import prepared

    with _warming:
        if not _kept:
            _kept.append(prepared())
        return _kept[0]


def traceback_text(error: BaseException) -> str:
    """The exception as Python prints it, chained causes and JAX's filtered frames included."""
    return "".join(traceback.format_exception(error))


def _fetched(server: str, text: str, jax_version: str | None) -> MatchAnswer:
    import urllib.error
    import urllib.request

    from app.answers.answer import MatchAnswer

    body = json.dumps({"text": text, "jaxVersion": jax_version}).encode()
    request = urllib.request.Request(
        server.rstrip("/") + "/api/match",
        data=body,
        headers={"Content-Type": "application/json", "Accept": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=SERVER_TIMEOUT_S) as response:
            return MatchAnswer.model_validate_json(response.read())
    except urllib.error.HTTPError as exc:
        raise ServerProblem(_problem(exc)) from None
    except (urllib.error.URLError, TimeoutError) as exc:
        reason = getattr(exc, "reason", exc)
        raise ServiceUnavailable(f"cannot reach {server}: {reason}") from None


def _problem(exc: HTTPError) -> dict[str, Any]:
    """The server's problem detail; its status and reason where the body is not one."""
    try:
        problem = json.loads(exc.read())
    except ValueError:
        problem = None
    if isinstance(problem, dict) and "detail" in problem:
        return problem
    return {"status": exc.code, "title": str(exc.reason), "detail": f"HTTP {exc.code}"}
