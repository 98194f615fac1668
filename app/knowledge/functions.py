"""Where each release defines its functions: the lines a traceback's frame can stand on.

A frame prints its file, line and function's own name (``pallas_call.py", line 383, in
wrapped``). Every release puts its functions at lines of their own, so a frame reads as the
releases whose function of that name spans its line, whether or not the function raises.
Mined from the same files as the error sites (``scope.PYTHON_SCOPE``), and from the JAX a
traceback passes through on its way to them (``scope.FRAME_SCOPE``), and committed as
``data/jax-functions.json``: file → function → ``[first line, last line, releases]``, the
releases a bit mask over the table's releases, oldest first, as the frame index counts them.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterable
from pathlib import Path

from app.jaxref.scope import FRAME_SCOPE, PYTHON_SCOPE, parse_python, python_files

Spans = dict[str, dict[str, list[tuple[int, int]]]]  # file → function → (first, last line)


def function_spans(root: Path) -> Spans:
    """Each function of a source tree's mined files, with the lines from its first
    decorator to its last line; nested functions and methods by their own name, as a frame
    prints them (several functions of one name each keep their span)."""
    spans: Spans = {}
    for relative, path in python_files(root, PYTHON_SCOPE + FRAME_SCOPE):
        tree = parse_python(relative, path)
        by_name = spans.setdefault(relative, {})
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                last = node.end_lineno or node.lineno
                by_name.setdefault(node.name, []).append((first, last))
    return spans


def by_release(releases: Iterable[tuple[str, Spans]]) -> dict[str, object]:
    """The spans of every release merged, each span with the releases (a bit mask, in the
    order given) that define that function over those very lines."""
    names: list[str] = []
    masks: dict[str, dict[str, dict[tuple[int, int], int]]] = {}
    for bit, (release, spans) in enumerate(releases):
        names.append(release)
        for file, functions in spans.items():
            for function, placed in functions.items():
                known = masks.setdefault(file, {}).setdefault(function, {})
                for span in placed:
                    known[span] = known.get(span, 0) | 1 << bit
    files = {
        file: {
            function: [[first, last, mask] for (first, last), mask in sorted(known.items())]
            for function, known in sorted(functions.items())
        }
        for file, functions in sorted(masks.items())
    }
    return {"releases": names, "files": files}


def write_function_spans(releases: Iterable[tuple[str, Spans]], out: Path) -> None:
    """Write the merged spans of ``releases`` (oldest first) as the frame index reads them."""
    data = by_release(releases)
    out.write_text(json.dumps(data, separators=(",", ":")) + "\n", encoding="utf-8")
