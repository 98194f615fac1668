"""errata in Python: ``errata.explain(exc)``, ``errata.install()`` and ``%load_ext errata``.

Importing this costs nothing: each function imports what it needs from ``app`` when called,
so a notebook or a training script that never fails never loads errata's catalog.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from app.answers.answer import MatchAnswer

__all__ = ["explain", "install", "load_ipython_extension", "unload_ipython_extension"]


def explain(
    error: BaseException | str, *, jax_version: str | None = None, url: str | None = None
) -> MatchAnswer:
    """What errata knows of an exception or a traceback's text: the match and its answers,
    computed in this process, or by the server at ``url`` or ``ERRATA_URL``."""
    from app.client.explain import explain as explained

    return explained(error, jax_version=jax_version, url=url)


def install() -> None:
    """Explain every uncaught exception after its traceback: in IPython, each failing cell's;
    in a script, through ``sys.excepthook``."""
    from app.notebook.extension import install as installed

    installed()


def load_ipython_extension(shell: Any) -> None:
    """``%load_ext errata``: explain each failing cell's exception below its traceback."""
    from app.notebook.extension import load_ipython_extension as load

    load(shell)


def unload_ipython_extension(shell: Any) -> None:
    """``%unload_ext errata``: failing cells show their traceback alone again."""
    from app.notebook.extension import unload_ipython_extension as unload

    unload(shell)
