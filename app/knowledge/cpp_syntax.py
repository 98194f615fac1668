"""C++ source as tree-sitter reads it, for the C++ miner (``cpp_sites``).

The parser, the respelling that keeps a declaring macro parseable, and the questions the
miner asks of a node: its text, the calls under it, the function and class it stands in,
the ``if`` that guards it. Kept apart from what makes a site so that the rules of the
diagnostics read without the tree walking.
"""

from __future__ import annotations

import re
from functools import cache

import tree_sitter_cpp
from tree_sitter import Language, Node, Parser, Query, QueryCursor

_CASTS = frozenset({"cast", "dyn_cast", "cast_or_null", "dyn_cast_or_null"})
_HINTS = frozenset({"LLVM_UNLIKELY", "LLVM_LIKELY"})
TOKEN = re.compile(
    r"""R"(?P<delim>[^(\s]*)\(.*?\)(?P=delim)"|"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*'"""
    r"""|//[^\n]*|/\*.*?\*/|\.\.\.|\#\#|\#|\w+|\s+|.""",
    re.S,
)
_DECLARING_MACRO = re.compile(r"\b[A-Z_]*ASSIGN_OR_RETURN\s*\(")


@cache
def cpp_parser() -> Parser:
    return Parser(Language(tree_sitter_cpp.language()))


def parseable(source: str) -> str:
    """``ASSIGN_OR_RETURN(Type x, f())`` respelled ``Type x = f()`` in the same place.

    A macro whose first argument is a declaration is no C++ a parser can read, and tree-sitter
    then loses the function around it. Each character keeps its line and column.
    """
    chars = list(source)
    for use in _DECLARING_MACRO.finditer(source):
        line_start = source.rfind("\n", 0, use.start()) + 1
        if source[line_start : use.start()].lstrip().startswith("#"):
            continue  # the macro's own definition
        depth = 0
        comma = None
        for token in TOKEN.finditer(source, use.end() - 1):
            text = token.group()
            if text in ("(", "[", "{"):
                depth += 1
            elif text in (")", "]", "}"):
                depth -= 1
            elif text == "," and depth == 1 and comma is None:
                comma = token.start()
            if depth == 0:
                if comma is not None:
                    chars[use.start() : use.end()] = " " * (use.end() - use.start())
                    chars[comma] = "="
                    chars[token.start()] = " "
                break
    return "".join(chars)


@cache
def _query(node_type: str) -> Query:
    return Query(Language(tree_sitter_cpp.language()), f"({node_type}) @node")


def nodes_of(root: Node, *node_types: str) -> list[Node]:
    """The nodes of these types under ``root`` (itself included), in source order."""
    found = [
        node
        for node_type in node_types
        for node in QueryCursor(_query(node_type)).captures(root).get("node", [])
    ]
    return sorted(found, key=lambda node: (node.start_byte, -node.end_byte))


def calls_in(root: Node) -> list[Node]:
    return nodes_of(root, "call_expression")


def contains(outer: Node, inner: Node) -> bool:
    return outer.start_byte <= inner.start_byte and inner.end_byte <= outer.end_byte


def node_text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", errors="replace")


def spelling(node: Node) -> str:
    """A value as the source spells it, on one line, without enclosing parentheses."""
    while node.type == "parenthesized_expression" and node.named_child_count == 1:
        node = node.named_children[0]
    return " ".join(node_text(node).split())


def call_arguments(call: Node) -> list[Node]:
    arguments = call.child_by_field_name("arguments")
    return arguments.named_children if arguments is not None else []


def callee_name(call: Node) -> str | None:
    callee = call.child_by_field_name("function")
    while callee is not None:
        if callee.type in ("identifier", "field_identifier"):
            return node_text(callee)
        if callee.type == "field_expression":
            callee = callee.child_by_field_name("field")
        elif callee.type in ("qualified_identifier", "template_function", "template_method"):
            callee = callee.child_by_field_name("name")
        else:
            return None
    return None


def scope_qualifier(callee: Node) -> str | None:
    """``absl`` of ``absl::InternalError``; None for an unqualified name."""
    if callee.type != "qualified_identifier":
        return None
    scope = callee.child_by_field_name("scope")
    return node_text(scope) if scope is not None else None


def receiver_of(callee: Node) -> Node | None:
    """``op`` of ``op.emitOpError``/``op->emitOpError``; None when called on ``this``."""
    if callee.type == "field_expression":
        return callee.child_by_field_name("argument")
    return None


def cast_target(call: Node) -> str | None:
    """``FooOp`` of ``cast<FooOp>(…)`` and kin."""
    function = call.child_by_field_name("function")
    if function is not None and function.type == "qualified_identifier":
        function = function.child_by_field_name("name")
    if function is None or function.type != "template_function":
        return None
    name = function.child_by_field_name("name")
    arguments = function.child_by_field_name("arguments")
    if name is None or node_text(name) not in _CASTS or arguments is None:
        return None
    return bare_class_name(node_text(arguments).strip("<>"))


def bare_class_name(type_text: str) -> str:
    """``const tpu::MatmulOp &`` → ``MatmulOp``."""
    bare = re.sub(r"<.*>", "", type_text)
    bare = re.sub(r"\b(?:const|volatile)\b|[*&\s]", "", bare)
    return bare.rsplit("::", 1)[-1]


def outermost_function(node: Node) -> Node | None:
    found = None
    parent = node.parent
    while parent is not None:
        if parent.type == "function_definition":
            found = parent
        parent = parent.parent
    return found


def _function_name_node(function: Node) -> Node | None:
    declarator = function.child_by_field_name("declarator")
    while declarator is not None and declarator.type != "function_declarator":
        declarator = declarator.child_by_field_name("declarator")
    return declarator.child_by_field_name("declarator") if declarator is not None else None


def enclosing_class(function: Node | None) -> str | None:
    """``MatmulOp`` of ``MatmulOp::verify`` or of a method written inside ``class MatmulOp``."""
    if function is None:
        return None
    name = _function_name_node(function)
    if name is not None and name.type == "qualified_identifier":
        scope = name.child_by_field_name("scope")
        if scope is not None:
            return bare_class_name(node_text(scope))
    parent = function.parent
    while parent is not None:
        if parent.type in ("class_specifier", "struct_specifier"):
            class_name = parent.child_by_field_name("name")
            return node_text(class_name) if class_name is not None else None
        parent = parent.parent
    return None


def qualified_name(function: Node | None) -> str | None:
    """``mlir::tpu::MatmulOp::verify``; ``(anonymous)`` for an unnamed namespace."""
    if function is None:
        return None
    name = _function_name_node(function)
    if name is None:
        return None
    scopes: list[str] = []
    parent = function.parent
    while parent is not None:
        if parent.type == "namespace_definition":
            scope = parent.child_by_field_name("name")
            scopes.append(node_text(scope) if scope is not None else "(anonymous)")
        elif parent.type in ("class_specifier", "struct_specifier"):
            scope = parent.child_by_field_name("name")
            if scope is not None:
                scopes.append(node_text(scope))
        parent = parent.parent
    return "::".join([*reversed(scopes), " ".join(node_text(name).split())])


def guarding_condition(node: Node) -> str | None:
    """The ``if`` condition guarding ``node`` in its function (``!(…)`` in an ``else``)."""
    child = node
    parent = node.parent
    while parent is not None and parent.type not in ("function_definition", "lambda_expression"):
        if parent.type == "if_statement":
            clause = parent.child_by_field_name("condition")
            consequence = parent.child_by_field_name("consequence")
            alternative = parent.child_by_field_name("alternative")
            if clause is not None and consequence is not None and contains(consequence, child):
                return _condition_text(clause)
            if clause is not None and alternative is not None and contains(alternative, child):
                return f"!({_condition_text(clause)})"
        child = parent
        parent = parent.parent
    return None


def _condition_text(clause: Node) -> str:
    value = clause.child_by_field_name("value") or clause.named_children[-1]
    while value.type == "call_expression" and callee_name(value) in _HINTS:
        hinted = call_arguments(value)
        if len(hinted) != 1:
            break
        value = hinted[0]
    return spelling(value)
