"""Error sites of JAX's Python source, read with ``ast``.

Every ``raise X(…)`` with a message and every ``assert`` becomes a ``Site``. The message is
read the way Python builds it: literals, f-strings, implicit concatenation, ``+``, ``%`` and
``.format`` on a literal, a message bound to a local first (``msg = f"…"; raise X(msg)``) and a
module-level helper whose message is one call away. What cannot be read statically becomes a
placeholder spelled as the source spells it, so the template still says where a value goes.
"""

from __future__ import annotations

import ast
import re
import string
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from app.jaxref import messages
from app.jaxref.messages import Part, Placeholder
from app.jaxref.scope import backend_of, only_for_type_checkers, parse_python, python_files
from app.knowledge.sites import Site

# A printf conversion: ``%s``, ``%(name)d``, ``%-8.3f``; ``%%`` is a literal percent sign.
_PRINTF = re.compile(r"%(?:\((?P<key>[^)]*)\))?[-#0 +]*(?:\*|\d+)?(?:\.(?:\*|\d+))?[a-zA-Z%]")
# How deep a message may be built from locals and helpers before the rest stays a placeholder.
_MAX_DEPTH = 4
_DECORATOR_WORDS = ("register", "lowering")


def mine_python(root: Path) -> list[Site]:
    """Every error site of the Python files in scope under ``root`` (see ``scope``)."""
    sites: list[Site] = []
    for file_path, file in python_files(root):
        module = _Module(parse_python(file_path, file), backend_of(file_path), file_path)
        sites.extend(module.sites())
    return sites


def mine_file(file_path: str, source: str) -> list[Site]:
    """The sites of one piece of source; none where it is not Python (a pasted statement)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    module = _Module(tree, backend_of(file_path), file_path)
    return list(module.sites())


@dataclass(frozen=True)
class _Scope:
    """Where a statement stands: its function (if any) and the ``if`` tests around it."""

    qualname: str | None
    function: ast.FunctionDef | ast.AsyncFunctionDef | None
    outer_function: ast.FunctionDef | ast.AsyncFunctionDef | None  # the top-level def
    conditions: tuple[str, ...]


class _Module:
    def __init__(self, tree: ast.Module, backend: str, file_path: str) -> None:
        self.tree = tree
        self.backend = backend
        self.file_path = file_path
        self._assignments: dict[int, list[_Assignment]] = {}
        self.helpers = {
            node.name: node
            for node in tree.body
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        }

    def sites(self) -> Iterator[Site]:
        yield from self._walk(self.tree.body, _Scope(None, None, None, ()), [])

    def _assignments_of(
        self, function: ast.FunctionDef | ast.AsyncFunctionDef | None
    ) -> list[_Assignment]:
        """Read once per function: a long lowering rule raises in dozens of places."""
        if function is None:
            return []
        found = self._assignments.get(id(function))
        if found is None:
            found = self._assignments[id(function)] = _assignments(function)
        return found

    def _walk(self, body: Sequence[ast.stmt], scope: _Scope, names: list[str]) -> Iterator[Site]:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                inner = _Scope(
                    ".".join([*names, node.name]),
                    node,
                    scope.outer_function or node,
                    (),
                )
                yield from self._walk(node.body, inner, [*names, node.name, "<locals>"])
            elif isinstance(node, ast.ClassDef):
                yield from self._walk(node.body, scope, [*names, node.name])
            elif isinstance(node, ast.If) and only_for_type_checkers(node.test):
                # Read by type checkers alone: at run time only the ``else`` runs (JAX's
                # Python ``safe_map`` stands there for typing; jaxlib's C++ one is called).
                yield from self._walk(node.orelse, scope, names)
            elif isinstance(node, ast.If):
                test = ast.unparse(node.test)
                yield from self._walk(node.body, _with_condition(scope, test), names)
                yield from self._walk(node.orelse, _with_condition(scope, f"not ({test})"), names)
            elif isinstance(node, ast.Raise):
                site = self._raise_site(node, scope)
                if site is not None:
                    yield site
            elif isinstance(node, ast.Assert):
                yield self._assert_site(node, scope)
            else:
                for field in ("body", "orelse", "finalbody", "handlers"):
                    children = getattr(node, field, None)
                    if children:
                        yield from self._walk(children, scope, names)
                if isinstance(node, ast.Match):
                    for case in node.cases:
                        yield from self._walk(case.body, scope, names)

    def _raise_site(self, node: ast.Raise, scope: _Scope) -> Site | None:
        exception = node.exc
        if isinstance(exception, ast.Call) and isinstance(exception.func, ast.Name):
            helper = self.helpers.get(exception.func.id)
            returned = _returned_call(helper) if helper is not None else None
            if returned is not None and helper is not None:
                # ``raise _unsupported(x)`` where the helper returns ``SomeError(f"…")``.
                exception = returned
                scope = _Scope(scope.qualname, helper, scope.outer_function, scope.conditions)
        if isinstance(exception, ast.Call) and exception.args:
            error_class = _class_name(exception.func)
            parts = self._message(exception.args[0], scope, node.lineno, 0)
        else:
            # ``raise NotImplementedError`` or ``…()``: Python prints the class alone, and the
            # frame's source line tells the site.
            error_class = _bare_class(exception)
            parts = []
        if error_class is None:
            return None
        return self._site(node, scope, "raise", error_class, parts, _condition(scope))

    def _assert_site(self, node: ast.Assert, scope: _Scope) -> Site:
        condition = ast.unparse(node.test)
        parts = self._message(node.msg, scope, node.lineno, 0) if node.msg is not None else []
        return self._site(node, scope, "assert", "AssertionError", parts, condition)

    def _site(
        self,
        node: ast.stmt,
        scope: _Scope,
        kind: str,
        error_class: str,
        parts: list[Part],
        condition: str | None,
    ) -> Site:
        return Site(
            file_path=self.file_path,
            line=node.lineno,
            kind=kind,
            error_class=error_class,
            template=messages.template(parts),
            pattern=messages.pattern(parts),
            function=scope.qualname,
            backend=self.backend,
            condition=condition,
            definitions=_definitions(condition, self._assignments_of(scope.function), node.lineno),
            lowering_rule=_registration(scope.outer_function),
        )

    def _message(self, node: ast.expr, scope: _Scope, line: int, depth: int) -> list[Part]:
        """The message ``node`` builds, as literal text and placeholders."""
        if depth > _MAX_DEPTH:
            return [Placeholder(ast.unparse(node))]
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return [node.value]
        if isinstance(node, ast.JoinedStr):
            return _fstring(node)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return [
                *self._message(node.left, scope, line, depth + 1),
                *self._message(node.right, scope, line, depth + 1),
            ]
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
            left = self._message(node.left, scope, line, depth + 1)
            if len(left) == 1 and isinstance(left[0], str):
                return _printf(left[0], node.right)
        if isinstance(node, ast.Call):
            formatted = self._format_call(node, scope, line, depth)
            if formatted is not None:
                return formatted
        if isinstance(node, ast.Name) and scope.function is not None:
            bound = _bound_value(scope.function, node.id, line)
            if bound is not None:
                return [
                    part
                    for value in bound
                    for part in self._message(value, scope, value.lineno, depth + 1)
                ]
        return [Placeholder(ast.unparse(node))]

    def _format_call(
        self, node: ast.Call, scope: _Scope, line: int, depth: int
    ) -> list[Part] | None:
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "format":
            base = self._message(func.value, scope, line, depth + 1)
            if len(base) == 1 and isinstance(base[0], str):
                return _str_format(base[0], node)
            # An f-string formatted again (``msg = f"…"; raise TypeError(msg.format(…))``,
            # jax.numpy's ``check_arraylike``): with no brace left in its text, the second
            # formatting changes nothing, and the message is the f-string's.
            literal = "".join(part for part in base if isinstance(part, str))
            if len(base) > 1 and "{" not in literal and "}" not in literal:
                return base
        if isinstance(func, ast.Name) and func.id in self.helpers:
            returned = _returned_value(self.helpers[func.id])
            if returned is not None:
                helper = self.helpers[func.id]
                inner = _Scope(func.id, helper, helper, ())
                return self._message(returned, inner, returned.lineno, depth + 1)
        return None


def _with_condition(scope: _Scope, test: str) -> _Scope:
    return _Scope(scope.qualname, scope.function, scope.outer_function, (*scope.conditions, test))


def _condition(scope: _Scope) -> str | None:
    """The innermost ``if`` test that guards the statement (``not (…)`` for an ``else``)."""
    return scope.conditions[-1] if scope.conditions else None


def _bare_class(exception: ast.expr | None) -> str | None:
    """The class a ``raise`` without a message raises: ``NotImplementedError`` of ``raise
    NotImplementedError`` or ``raise NotImplementedError()``; none for a re-raise (``raise``,
    ``raise e``), whose name is a caught exception's, not a class's."""
    if isinstance(exception, ast.Call) and not exception.keywords:
        exception = exception.func
    if exception is None or isinstance(exception, ast.Call):
        return None
    name = _class_name(exception)
    return name if name is not None and spelled_as_class(name) else None


def spelled_as_class(name: str) -> bool:
    """Whether a raised name is spelled as a class (``NotImplementedError``), not as a
    caught exception (``e``) or a helper building one (``_unsupported``)."""
    return name.lstrip("_")[:1].isupper()


def _class_name(func: ast.expr) -> str | None:
    """``ValueError`` of ``ValueError(…)`` and ``mgpu.LayoutInferenceError`` alike."""
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _fstring(node: ast.JoinedStr) -> list[Part]:
    """An f-string's parts, each placeholder spelled as written: ``{bytes=}``, ``{x!r}``."""
    parts: list[Part] = []
    for value in node.values:
        if isinstance(value, ast.Constant):
            parts.append(str(value.value))
            continue
        if not isinstance(value, ast.FormattedValue):
            continue
        expression = ast.unparse(value.value)
        spelling = expression
        debug = _debug_text(parts, expression)
        if debug is not None:
            # ``{bytes=}``: Python put ``bytes=`` in the literal before the value.
            previous = parts.pop()
            assert isinstance(previous, str)
            parts.append(previous[: len(previous) - len(debug)])
            spelling = debug.strip()
            if value.format_spec is not None:
                spelling += ":" + _format_spec(value.format_spec)
            elif value.conversion not in (-1, ord("r")):
                spelling += "!" + chr(value.conversion)
        else:
            if value.conversion != -1:
                spelling += "!" + chr(value.conversion)
            if value.format_spec is not None:
                spelling += ":" + _format_spec(value.format_spec)
        parts.append(Placeholder(spelling))
    return parts


def _debug_text(parts: list[Part], expression: str) -> str | None:
    """The ``expr=`` text Python placed before a self-documenting value, if it is one."""
    if not parts or not isinstance(parts[-1], str):
        return None
    pieces = [re.escape(piece) for piece in re.split(r"\s+", expression) if piece]
    found = re.search(r"\s*".join(pieces) + r"\s*=\s*\Z", parts[-1])
    return found.group(0) if found else None


def _format_spec(spec: ast.expr) -> str:
    if isinstance(spec, ast.JoinedStr):
        return "".join(
            str(v.value) if isinstance(v, ast.Constant) else "{" + ast.unparse(v) + "}"
            for v in spec.values
        )
    return ast.unparse(spec)


def _printf(literal: str, arguments: ast.expr) -> list[Part]:
    """``"… %s …" % (a, b)`` into parts, each conversion spelled as its argument."""
    values = list(arguments.elts) if isinstance(arguments, ast.Tuple) else [arguments]
    parts: list[Part] = []
    position = 0
    end = 0
    for found in _PRINTF.finditer(literal):
        parts.append(literal[end : found.start()])
        end = found.end()
        if found.group(0) == "%%":
            parts.append("%")
            continue
        if found.group("key") is not None:
            parts.append(Placeholder(found.group("key")))
        elif position < len(values):
            parts.append(Placeholder(ast.unparse(values[position])))
            position += 1
        else:
            parts.append(Placeholder(found.group(0)))
    parts.append(literal[end:])
    return parts


def _str_format(literal: str, call: ast.Call) -> list[Part]:
    """``"… {} … {name}".format(a, name=b)`` into parts spelled as the arguments."""
    keywords = {kw.arg: kw.value for kw in call.keywords if kw.arg is not None}
    parts: list[Part] = []
    position = 0
    try:
        fields = list(string.Formatter().parse(literal))
    except ValueError:
        return [literal]
    for text, name, spec, conversion in fields:
        parts.append(text)
        if name is None:
            continue
        value: ast.expr | None
        if name == "":
            value = call.args[position] if position < len(call.args) else None
            position += 1
        elif name.isdigit():
            index = int(name)
            value = call.args[index] if index < len(call.args) else None
        else:
            value = keywords.get(name.split(".")[0].split("[")[0])
        spelling = ast.unparse(value) if value is not None else name
        if conversion:
            spelling += "!" + conversion
        if spec:
            spelling += ":" + spec
        parts.append(Placeholder(spelling))
    return parts


def _bound_value(
    function: ast.FunctionDef | ast.AsyncFunctionDef, name: str, line: int
) -> list[ast.expr] | None:
    """What ``name`` holds at ``line``: its last plain assignment before it, then every
    ``name += …`` between the two. ``None`` when the function never binds it so."""
    assigned: ast.expr | None = None
    appended: list[ast.expr] = []
    for node in ast.walk(function):
        if not isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
            continue
        if node.lineno >= line:
            continue
        if isinstance(node, ast.AugAssign):
            if (
                isinstance(node.target, ast.Name)
                and node.target.id == name
                and isinstance(node.op, ast.Add)
            ):
                appended.append(node.value)
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if node.value is None:
            continue
        binds = any(isinstance(t, ast.Name) and t.id == name for t in targets)
        if binds and (assigned is None or node.lineno > assigned.lineno):
            assigned = node.value
    if assigned is None:
        return None
    later = sorted(
        (value for value in appended if value.lineno > assigned.lineno), key=lambda v: v.lineno
    )
    return [assigned, *later]


def _returned_value(function: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.expr | None:
    """The expression a small helper returns: one ``return`` after an optional docstring."""
    body = [
        node
        for node in function.body
        if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))
    ]
    if len(body) == 1 and isinstance(body[0], ast.Return) and body[0].value is not None:
        return body[0].value
    return None


def _returned_call(function: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.Call | None:
    """The exception a helper builds (``return ValueError(f"…")``), if that is all it does."""
    returned = _returned_value(function)
    if isinstance(returned, ast.Call) and returned.args:
        name = _class_name(returned.func)
        if name is not None and (name.endswith(("Error", "Exception")) or name[:1].isupper()):
            return returned
    return None


@dataclass(frozen=True)
class _Assignment:
    """A plain assignment of a function: the names it binds and the names it reads."""

    line: int
    binds: frozenset[str]
    reads: frozenset[str]
    node: ast.Assign


def _assignments(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[_Assignment]:
    """Every ``x = …`` in the function (nested blocks included), in ``ast.walk`` order."""
    return [
        _Assignment(
            node.lineno,
            frozenset(
                n.id for target in node.targets for n in ast.walk(target) if isinstance(n, ast.Name)
            ),
            frozenset(n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)),
            node,
        )
        for node in ast.walk(function)
        if isinstance(node, ast.Assign)
    ]


def _definitions(
    condition: str | None, assignments: Sequence[_Assignment], line: int
) -> tuple[str, ...]:
    """The assignments before ``line`` that give the condition's names their values, in
    source order, following each definition's own names one step further."""
    if condition is None:
        return ()
    try:
        wanted = {
            n.id for n in ast.walk(ast.parse(condition, mode="eval")) if isinstance(n, ast.Name)
        }
    except SyntaxError:
        return ()
    found: dict[int, ast.Assign] = {}
    for _ in range(2):
        more: set[str] = set()
        for assignment in assignments:
            if assignment.line >= line or assignment.line in found:
                continue
            if assignment.binds & wanted:
                found[assignment.line] = assignment.node
                more |= assignment.reads
        wanted = more
    return tuple(ast.unparse(found[key]) for key in sorted(found))


def _registration(function: ast.FunctionDef | ast.AsyncFunctionDef | None) -> str | None:
    """The decorator registering the top-level function as a lowering rule, as source."""
    if function is None:
        return None
    for decorator in function.decorator_list:
        text = ast.unparse(decorator)
        head = text.split("(")[0].lower()
        if all(word in head for word in _DECORATOR_WORDS):
            return "@" + text
    return None
