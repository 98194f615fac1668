"""Function-like macros and diagnostic-wrapping lambdas, expanded as the preprocessor would,
for the C++ miner (``cpp_sites``).

A macro defined under ``jaxlib/mosaic`` (``TPU_ASSERT_EQ_OP``, ``NYI``…) or a lambda that
returns a diagnostic built from its parameters is expanded at each use, so that the use is
the site. Apart from the miner because expansion is token work of its own.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from tree_sitter import Node

from app.knowledge.cpp_syntax import TOKEN, contains, node_text, nodes_of, outermost_function

# Names whose presence makes a macro or lambda worth expanding.
DIAGNOSTIC_WORDS = re.compile(
    r"\b(?:emitOpError|emitError|emitOptionalError|throw)\b|absl::\w+Error"
)


@dataclass(frozen=True)
class Macro:
    """A function-like macro, or a lambda read as one: its parameters and replacement text."""

    name: str
    params: tuple[str, ...]
    variadic: str | None  # ``__VA_ARGS__`` for a macro, the pack's name for a lambda
    body: str


def file_macros(root: Node) -> dict[str, Macro]:
    """The file's function-like macros."""
    found: dict[str, Macro] = {}
    for node in nodes_of(root, "preproc_function_def"):
        name_node, params, value = (
            node.child_by_field_name(key) for key in ("name", "parameters", "value")
        )
        if name_node is None or params is None or value is None:
            continue
        name = node_text(name_node)
        names = [node_text(child) for child in params.children if child.type == "identifier"]
        variadic = "__VA_ARGS__" if any(child.type == "..." for child in params.children) else None
        body = node_text(value).replace("\\\n", " ")
        found[name] = Macro(name, tuple(names), variadic, body)
    return found


def reporting_macros(macros: dict[str, Macro]) -> set[str]:
    """The macros whose expansion reports an error, directly or through another macro."""
    reporting = {name for name, macro in macros.items() if DIAGNOSTIC_WORDS.search(macro.body)}
    growing = True
    while growing:  # TPU_ASSERT_EQ_OP reports through TPU_ASSERT_CMP_OP_IMPL
        growing = False
        for macro in macros.values():
            if macro.name not in reporting and any(
                re.search(rf"\b{other}\b", macro.body) for other in reporting
            ):
                reporting.add(macro.name)
                growing = True
    return reporting


def streams_into_parameter(macro: Macro) -> bool:
    return any(
        re.search(rf"(?:\(\s*{param}\s*\)|\b{param}\b)\s*<<", macro.body) for param in macro.params
    )


def lambda_wrappers(root: Node) -> Iterator[tuple[Node, Macro]]:
    """``auto error = [this](auto... params) { return emitOpError(formatv(params...)); }``.

    A lambda that returns a diagnostic built from its parameters is read as a macro: each call
    of it is a site with the message of its arguments.
    """
    for node in nodes_of(root, "init_declarator"):
        name, value = node.child_by_field_name("declarator"), node.child_by_field_name("value")
        if name is None or value is None or value.type != "lambda_expression":
            continue
        body = value.child_by_field_name("body")
        declarator = value.child_by_field_name("declarator")
        parameters = declarator.child_by_field_name("parameters") if declarator else None
        if body is None or parameters is None or body.named_child_count != 1:
            continue
        statement = body.named_children[0]
        if statement.type != "return_statement" or not statement.named_children:
            continue
        expression = statement.named_children[0]
        params, variadic = _lambda_parameters(parameters)
        used = set(params) | ({variadic} if variadic else set())
        identifiers = {node_text(child) for child in nodes_of(expression, "identifier")}
        if not DIAGNOSTIC_WORDS.search(node_text(expression)) or not used & identifiers:
            continue
        yield body, Macro(node_text(name), tuple(params), variadic, node_text(expression))


def _lambda_parameters(parameters: Node) -> tuple[list[str], str | None]:
    names: list[str] = []
    variadic = None
    for parameter in parameters.named_children:
        identifiers = nodes_of(parameter, "identifier")
        if not identifiers:
            continue
        if parameter.type == "variadic_parameter_declaration":
            variadic = node_text(identifiers[-1])
        else:
            names.append(node_text(identifiers[-1]))
    return names, variadic


def wrapper_in_scope(
    call: Node, function: Node | None, wrappers: list[tuple[Node, Macro]]
) -> Macro | None:
    """The lambda ``call`` calls: one wrapping a diagnostic, defined earlier in the same
    function or at namespace scope."""
    callee = call.child_by_field_name("function")
    if callee is None or callee.type != "identifier":
        return None
    name = node_text(callee)
    in_scope = [
        macro
        for body, macro in wrappers
        if macro.name == name
        and body.end_byte < call.start_byte
        and (
            outermost_function(body) is None or (function is not None and contains(function, body))
        )
    ]
    return in_scope[-1] if in_scope else None


def call_text(macro: Macro, arguments: Node | None) -> str:
    return f"{macro.name}{node_text(arguments) if arguments is not None else '()'}"


def expand(
    text: str, macros: dict[str, Macro], active: frozenset[str], extra: dict[str, Macro]
) -> str:
    """``text`` with every call of a known macro replaced, as the preprocessor would."""
    known = macros | extra
    tokens = [match.group() for match in TOKEN.finditer(text)]
    out: list[str] = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        macro = known.get(token) if token not in active else None
        opening = _next_significant(tokens, index + 1)
        if macro is None or opening is None or tokens[opening] != "(":
            out.append(token)
            index += 1
            continue
        arguments, index = _arguments(tokens, opening)
        replaced = _substitute_body(macro, arguments)
        out.append(expand(replaced, macros, active | {macro.name}, extra))
    return "".join(out)


def _next_significant(tokens: list[str], index: int) -> int | None:
    while index < len(tokens) and tokens[index].isspace():
        index += 1
    return index if index < len(tokens) else None


def _arguments(tokens: list[str], opening: int) -> tuple[list[str], int]:
    """The comma-separated arguments after ``tokens[opening] == "("``, and the next index."""
    arguments: list[str] = []
    current: list[str] = []
    depth = 0
    index = opening
    while index < len(tokens):
        token = tokens[index]
        index += 1
        if token in "([{":
            depth += 1
            if depth == 1:
                continue
        elif token in ")]}":
            depth -= 1
            if depth == 0:
                break
        elif token == "," and depth == 1:
            arguments.append("".join(current).strip())
            current = []
            continue
        current.append(token)
    last = "".join(current).strip()
    if last or arguments:
        arguments.append(last)
    return arguments, index


def _substitute_body(macro: Macro, arguments: list[str]) -> str:
    """The replacement text with parameters, ``#param``, ``##`` and ``__VA_OPT__`` resolved."""
    bound = dict(zip(macro.params, arguments, strict=False))
    rest = arguments[len(macro.params) :]
    varargs = ", ".join(rest) if rest != [""] else ""
    tokens = [match.group() for match in TOKEN.finditer(macro.body)]
    out: list[str] = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        index += 1
        if token == "#":
            target = _next_significant(tokens, index)
            if target is not None and tokens[target] in bound:
                out.append(_stringify(bound[tokens[target]]))
                index = target + 1
                continue
        if token == "##":
            while out and out[-1].isspace():
                out.pop()
            following = _next_significant(tokens, index)
            index = following if following is not None else index
            continue
        if token == "__VA_OPT__":
            opening = _next_significant(tokens, index)
            if opening is not None and tokens[opening] == "(":
                inner, index = _arguments(tokens, opening)
                if varargs:
                    out.append(", ".join(inner))
                continue
        if token == macro.variadic:
            out.append(varargs)
            following = _next_significant(tokens, index)
            if following is not None and tokens[following] == "...":
                index = following + 1
            continue
        out.append(bound.get(token, token))
    return "".join(out)


def _stringify(argument: str) -> str:
    spelled = " ".join(argument.split())
    return '"' + spelled.replace("\\", "\\\\").replace('"', '\\"') + '"'
