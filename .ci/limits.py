"""Size limits ruff does not check: lines per module and per function, long string literals.

    python .ci/limits.py [app]

Exits 1, naming each offender, when a module of ``app/`` is over ``MAX_MODULE_LINES``, a
function over ``MAX_FUNCTION_LINES`` (from its ``def`` to its last line, docstring included),
or more than ``MAX_LONG_STRINGS`` string literals (docstrings aside) are over
``LONG_STRING`` characters: prose that long is curated knowledge, which belongs in ``data/``.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

MAX_MODULE_LINES = 700
MAX_FUNCTION_LINES = 80
LONG_STRING = 160
MAX_LONG_STRINGS = 10


def main(root: Path) -> int:
    problems: list[str] = []
    long_strings: list[str] = []
    for path in sorted(root.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        lines = source.count("\n") + 1
        if lines > MAX_MODULE_LINES:
            problems.append(f"{path}: {lines} lines (at most {MAX_MODULE_LINES})")
        tree = ast.parse(source, str(path))
        docstrings = _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    problems.append(
                        f"{path}:{node.lineno}: {node.name} is {length} lines "
                        f"(at most {MAX_FUNCTION_LINES})"
                    )
            elif _is_long_string(node, docstrings):
                long_strings.append(f"{path}:{node.lineno}")
    if len(long_strings) > MAX_LONG_STRINGS:
        problems.append(
            f"{len(long_strings)} string literals over {LONG_STRING} characters "
            f"(at most {MAX_LONG_STRINGS}): " + ", ".join(long_strings)
        )
    for problem in problems:
        print(problem)
    return 1 if problems else 0


def _docstrings(tree: ast.Module) -> set[int]:
    """The ids of every docstring's node: the first statement of a module, class or def, and
    an attribute's (PEP 257), which follows its assignment; pydantic reads a field's."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            for index, statement in enumerate(node.body):
                if not (
                    isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)
                ):
                    continue
                after = node.body[index - 1] if index else None
                if index == 0 or isinstance(after, ast.Assign | ast.AnnAssign):
                    found.add(id(statement.value))
    return found


def _is_long_string(node: ast.AST, docstrings: set[int]) -> bool:
    """A string literal over ``LONG_STRING`` characters, implicit concatenations joined."""
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and len(node.value) > LONG_STRING
        and id(node) not in docstrings
    )


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1] if len(sys.argv) > 1 else "app")))
