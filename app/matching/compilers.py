"""Messages that JAX's source does not hold: what a compiler that JAX hands a kernel to says
through JAX's wrappers (``Mosaic failed to compile TPU kernel: …``, XLA's TPU errors).

errata mines JAX's Python and the open C++ of Mosaic (``jaxlib/mosaic``). The TPU
compiler that runs after them ships only in libtpu, as a binary: its messages can be named
as its own, but not pinned to a line of source.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class CompilerMessage:
    line: int  # the 1-based line of the paste where the wrapper stands
    compiler: str
    message: str  # what the compiler said, after the wrapper
    why: str  # why JAX's source does not hold it, which holds where no record matches it


_TPU_WRAPPER = "Mosaic failed to compile TPU kernel"
_XLA_TPU_WRAPPER = "XLA:TPU compile permanent error"
_WRAPPERS = {
    _TPU_WRAPPER: (
        "libtpu (Mosaic's TPU compiler)",
        "no release of JAX that errata mined holds it. Mosaic's TPU compiler is JAX's open "
        "jaxlib/mosaic, whose messages errata knows, then a closed part in libtpu, whose "
        "version decides this one (pip show libtpu)",
    ),
    _XLA_TPU_WRAPPER: (
        "libtpu (XLA's TPU compiler)",
        "XLA's TPU compiler wrote it; it ships in libtpu, not in JAX's source",
    ),
}
_SAID = re.compile(
    "(?P<wrapper>" + "|".join(map(re.escape, _WRAPPERS)) + r")[:.]?[ \t]*(?P<message>[^\n]*)"
)
_QUOTE_CLOSING = "`'\" "


def compiler_messages(text: str) -> list[CompilerMessage]:
    """Each message the paste shows from a compiler JAX wraps, in order. A message on the
    line after its wrapper (``…TPU kernel:`` then the message) is read from there."""
    if not any(wrapper in text for wrapper in _WRAPPERS):
        return []
    found = []
    for said in _SAID.finditer(text):
        message = said["message"].rstrip(_QUOTE_CLOSING)
        if not message:
            following = text[said.end() :].lstrip("\n").partition("\n")[0]
            message = following.strip().rstrip(_QUOTE_CLOSING)
        compiler, why = _WRAPPERS[said["wrapper"]]
        line = text.count("\n", 0, said.start()) + 1
        found.append(CompilerMessage(line, compiler, message, why))
    return found
