"""The text of a C++ diagnostic, for the C++ miner (``cpp_sites``): literal parts and
placeholders.

A message is read from string literals, ``<<`` streaming, ``absl::StrCat``, printf formats
(``absl::StrFormat``, ``llvm::createStringError``), ``absl::Substitute`` and ``llvm::formatv``;
any other value is a placeholder spelled as the source spells it. Apart from the miner so that
how a message reads is one place.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from tree_sitter import Node

from app.jaxref.messages import Part, Placeholder
from app.knowledge.cpp_syntax import call_arguments, callee_name, node_text, spelling

_PRINTF = re.compile(r"%%|%[-+ #0]*(?:\d+|\*)?(?:\.(?:\d+|\*))?(?:hh|h|ll|l|L|z|j|t)?[a-zA-Z]")
_FORMATV = re.compile(r"\{\{|\{\s*(\d+)\s*(?:,[^:}]*)?(?::[^}]*)?\}")
_SUBSTITUTE = re.compile(r"\$\$|\$(\d)")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "a": "\a", "b": "\b", "f": "\f"}


def message_parts(arguments: Sequence[Node]) -> list[Part]:
    return [part for argument in arguments for part in _parts(argument)]


def streamed_parts(call: Node) -> list[Part]:
    """The values a diagnostic is streamed with: ``emitOpError("…") << a << "…"``."""
    parts: list[Part] = []
    node = call
    while node.parent is not None:
        parent = node.parent
        if parent.type == "parenthesized_expression":
            node = parent
            continue
        operator = parent.child_by_field_name("operator")
        if parent.type != "binary_expression" or operator is None or operator.type != "<<":
            break
        if parent.child_by_field_name("left") != node:
            break
        parts.extend(_parts(parent.child_by_field_name("right")))
        node = parent
    return parts


def _parts(node: Node | None) -> list[Part]:
    """A message value as literal text and placeholders."""
    if node is None:
        return []
    if node.type in ("string_literal", "raw_string_literal", "concatenated_string"):
        return [_string_value(node)]
    if node.type == "char_literal":
        return [_string_value(node)]
    if node.type == "number_literal":
        return [node_text(node)]
    if node.type == "parenthesized_expression" and node.named_child_count == 1:
        return _parts(node.named_children[0])
    if node.type == "binary_expression" and _is_concatenation(node):
        return _parts(node.child_by_field_name("left")) + _parts(node.child_by_field_name("right"))
    if node.type == "call_expression":
        name = callee_name(node)
        arguments = call_arguments(node)
        if name in ("StrCat", "Twine", "string", "StringRef", "str") and (
            name == "StrCat" or (len(arguments) == 1 and is_string(arguments[0]))
        ):
            return message_parts(arguments)
        if name in ("StrFormat", "createStringError") and arguments and is_string(arguments[0]):
            return printf_parts(arguments)
        if name == "formatv" and arguments and is_string(arguments[0]):
            return _formatv(arguments[0])
        if name == "Substitute" and arguments and is_string(arguments[0]):
            return _substitute(arguments)
    return [Placeholder(spelling(node))]


def _is_concatenation(node: Node) -> bool:
    """``"…" + name + "…"``: a ``+`` chain that joins text, not numbers."""
    operator = node.child_by_field_name("operator")
    if operator is None or operator.type != "+":
        return False
    return any(is_string(leaf) for leaf in _plus_operands(node))


def _plus_operands(node: Node) -> Iterator[Node]:
    operator = node.child_by_field_name("operator")
    if node.type == "binary_expression" and operator is not None and operator.type == "+":
        for side in ("left", "right"):
            child = node.child_by_field_name(side)
            if child is not None:
                yield from _plus_operands(child)
    else:
        yield node


def printf_parts(arguments: Sequence[Node]) -> list[Part]:
    """``absl::StrFormat("got %d", n)``: each conversion is the argument it prints."""
    values = iter(arguments[1:])
    parts: list[Part] = []
    text = _string_value(arguments[0])
    position = 0
    for match in _PRINTF.finditer(text):
        parts.append(text[position : match.start()])
        if match.group() == "%%":
            parts.append("%")
        else:
            value = next(values, None)
            parts.extend(_parts(value) if value is not None else [Placeholder(match.group())])
        position = match.end()
    parts.append(text[position:])
    return parts


def _formatv(format_string: Node) -> list[Part]:
    """``llvm::formatv("got {0}", n)``: the placeholders kept as formatv numbers them."""
    parts: list[Part] = []
    text = _string_value(format_string)
    position = 0
    for match in _FORMATV.finditer(text):
        parts.append(text[position : match.start()])
        parts.append("{" if match.group(1) is None else Placeholder(match.group(1)))
        position = match.end()
    parts.append(text[position:])
    return parts


def _substitute(arguments: Sequence[Node]) -> list[Part]:
    """``absl::Substitute("got $0", n)``: each ``$n`` is the argument it prints."""
    parts: list[Part] = []
    text = _string_value(arguments[0])
    position = 0
    for match in _SUBSTITUTE.finditer(text):
        parts.append(text[position : match.start()])
        index = match.group(1)
        if index is None:
            parts.append("$")
        else:
            values = arguments[1:]
            value = values[int(index)] if int(index) < len(values) else None
            parts.extend(_parts(value) if value is not None else [Placeholder(index)])
        position = match.end()
    parts.append(text[position:])
    return parts


def is_string(node: Node) -> bool:
    return node.type in ("string_literal", "raw_string_literal", "concatenated_string")


def _string_value(node: Node) -> str:
    """A literal's characters: adjacent literals joined, escapes read."""
    if node.type == "concatenated_string":
        return "".join(_string_value(child) for child in node.named_children if _is_literal(child))
    if node.type == "raw_string_literal":
        content = node.child_by_field_name("content") or next(
            (child for child in node.named_children if child.type == "raw_string_content"), None
        )
        return node_text(content) if content is not None else ""
    value = []
    for child in node.named_children:
        if child.type == "escape_sequence":
            value.append(_unescape(node_text(child)))
        elif child.type in ("string_content", "character"):
            value.append(node_text(child))
    return "".join(value)


def _is_literal(node: Node) -> bool:
    return node.type in ("string_literal", "raw_string_literal", "char_literal")


def _unescape(sequence: str) -> str:
    letter = sequence[1:]
    if letter in _ESCAPES:
        return _ESCAPES[letter]
    if letter[:1] == "x":
        return chr(int(letter[1:], 16))
    if letter[:1].isdigit():
        return chr(int(letter, 8))
    return letter


def status_code(constructor: str) -> str:
    """``InvalidArgumentError`` → ``INVALID_ARGUMENT``: the code a printed status begins with."""
    words = re.findall(r"[A-Z][a-z]*", constructor.removesuffix("Error"))
    return "_".join(word.upper() for word in words)
