"""``%load_ext errata`` and ``errata.install()``: an uncaught exception explained below its
traceback.

In IPython and Jupyter the explanation follows each failing cell, through the shell's
``post_run_cell`` event: IPython shows the traceback itself as always, and errata only adds
to the cell's output (HTML in a notebook, text in a terminal). In a script, ``install``
chains ``sys.excepthook``: the hook that was there prints the traceback, then errata the
explanation on stderr. Explaining never raises: when it fails (a server gone, a snapshot
that cannot be built) it says so in one line. Loading the extension reads the catalog in a
thread, so the first failing cell does not wait for it.
"""

from __future__ import annotations

import sys
import threading
from types import TracebackType
from typing import Any

from app.client.explain import explain, warm_up

_EVENT = "post_run_cell"


def load_ipython_extension(shell: Any) -> None:
    """Explain each failing cell of ``shell``; once, however often it is loaded."""
    if _explain_cell not in shell.events.callbacks[_EVENT]:
        shell.events.register(_EVENT, _explain_cell)
        threading.Thread(target=warm_up, name="errata-warm-up", daemon=True).start()


def unload_ipython_extension(shell: Any) -> None:
    if _explain_cell in shell.events.callbacks[_EVENT]:
        shell.events.unregister(_EVENT, _explain_cell)


def install() -> None:
    """In IPython, the extension; elsewhere, ``sys.excepthook`` chained (once)."""
    shell = _running_shell()
    if shell is not None:
        load_ipython_extension(shell)
    elif not getattr(sys.excepthook, "explains", False):
        sys.excepthook = _chained(sys.excepthook)


def _explain_cell(result: Any) -> None:
    """After a cell: its exception explained (not an interrupt, nor a cell that did not
    parse: those are the user's, and IPython said them)."""
    error = result.error_in_exec
    if not isinstance(error, Exception):
        return
    answers = _explained(error)
    if answers is None:
        return
    from IPython.display import display

    from app.notebook.explanation import explanation_html, explanation_text

    bundle = {"text/plain": explanation_text(answers), "text/html": explanation_html(answers)}
    display(bundle, raw=True)  # type: ignore[no-untyped-call]


def _chained(previous: Any) -> Any:
    def hook(kind: type[BaseException], error: BaseException, trace: TracebackType) -> None:
        previous(kind, error, trace)
        if isinstance(error, Exception):
            answers = _explained(error)
            if answers is not None:
                from app.notebook.explanation import explanation_text

                sys.stderr.write(explanation_text(answers))

    hook.explains = True  # type: ignore[attr-defined]
    return hook


def _explained(error: Exception) -> list[Any] | None:
    """The answers to show for ``error``; None, once a line has said why, when there are
    none (errata knows no such error) or explaining failed."""
    try:
        from app.notebook.explanation import known

        answers = known(explain(error))
    except Exception as exc:  # whatever failed, the user's own error matters more
        why = getattr(exc, "detail", None) or repr(exc)  # a ProblemError's detail says it
        _say(f"could not explain this error ({why})")
        return None
    if not answers:
        _say("no known error in this traceback")
        return None
    return answers


def _say(message: str) -> None:
    print(f"errata: {message}", file=sys.stderr)


def _running_shell() -> Any:
    """The IPython shell this runs in, if any (IPython is not imported if it is not)."""
    ipython = sys.modules.get("IPython")
    return ipython.get_ipython() if ipython is not None else None
