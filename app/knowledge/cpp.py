"""The C++ miner: every error site of ``jaxlib/mosaic/`` (the Mosaic TPU and GPU dialects and
their passes) read with tree-sitter into ``Site``s.

What counts as an error site, and what its message is:

- MLIR diagnostics: ``emitOpError(…) << …`` prints ``'<op name>' op <message>``, with the op's
  name written out where the source fixes it (a method of the op's class, a value declared or
  cast as that class; names come from the dialects' ``.td`` files) and ``{op}`` elsewhere;
  ``emitError`` and ``mlir::emitError(loc, …)`` / ``emitOptionalError`` print the message
  alone. Warnings and remarks are not errors and are left out.
- ``absl::…Error(…)`` statuses: the message alone (its status code, which a printed status
  puts in front, is kept in ``extra["status"]``). Statuses and diagnostics both reach Python
  as ``MLIRError`` or inside a runtime error's text, so both keep ``CPP_ERROR_CLASS``.
- ``throw std::runtime_error(…)`` and kin: the Python exception nanobind turns it into.
- Messages are built from string literals, ``<<`` streaming, ``absl::StrCat``,
  ``absl::StrFormat`` / ``llvm::createStringError`` (printf), ``absl::Substitute`` and
  ``llvm::formatv`` (``{0}`` kept as written); any other value is a placeholder spelled as
  the source spells it.
- Function-like macros defined under ``jaxlib/mosaic`` (``TPU_ASSERT_EQ_OP``, ``NYI``,
  ``THROW_IF``…) and lambdas that wrap a diagnostic (``auto error = [this](auto... params)
  { return emitOpError(llvm::formatv(params...)); }``) are expanded at each use, so the use
  is the site and prints what the expansion prints. Macros that print nothing
  (``FAILUREOR_ASSIGN_OR_RETURN``) yield no site. ``CHECK``/``LOG(FATAL)`` abort the process
  and are not mined.

Test sources (``*_test.cc``) are skipped. TableGen has no tree-sitter grammar here, so the
``.td`` files are read with regular expressions for the op definitions alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import tree_sitter_cpp
from tree_sitter import Language, Node, Parser, Query, QueryCursor

from app.jaxref.messages import Part, Placeholder, pattern, template
from app.jaxref.scope import CPP_SCOPE, backend_of
from app.knowledge.sites import CPP_ERROR_CLASS, Site

_SOURCE_SUFFIXES = (".cc", ".h")

# The Python exception nanobind raises for a thrown C++ standard exception.
_THROWN_CLASSES = {
    "runtime_error": "RuntimeError",
    "invalid_argument": "ValueError",
    "domain_error": "ValueError",
    "length_error": "ValueError",
    "range_error": "ValueError",
    "out_of_range": "IndexError",
    "overflow_error": "OverflowError",
    "value_error": "ValueError",
    "type_error": "TypeError",
    "index_error": "IndexError",
}
_OP_DIAGNOSTICS = frozenset({"emitOpError"})
_PLAIN_DIAGNOSTICS = frozenset({"emitError", "emitOptionalError"})
_CASTS = frozenset({"cast", "dyn_cast", "cast_or_null", "dyn_cast_or_null"})
_HINTS = frozenset({"LLVM_UNLIKELY", "LLVM_LIKELY"})
# Names whose presence makes a macro or lambda worth expanding.
_DIAGNOSTIC_WORDS = re.compile(
    r"\b(?:emitOpError|emitError|emitOptionalError|throw)\b|absl::\w+Error"
)

_PRINTF = re.compile(r"%%|%[-+ #0]*(?:\d+|\*)?(?:\.(?:\d+|\*))?(?:hh|h|ll|l|L|z|j|t)?[a-zA-Z]")
_FORMATV = re.compile(r"\{\{|\{\s*(\d+)\s*(?:,[^:}]*)?(?::[^}]*)?\}")
_SUBSTITUTE = re.compile(r"\$\$|\$(\d)")
_TOKEN = re.compile(
    r"""R"(?P<delim>[^(\s]*)\(.*?\)(?P=delim)"|"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*'"""
    r"""|//[^\n]*|/\*.*?\*/|\.\.\.|\#\#|\#|\w+|\s+|.""",
    re.S,
)
_DECLARING_MACRO = re.compile(r"\b[A-Z_]*ASSIGN_OR_RETURN\s*\(")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "a": "\a", "b": "\b", "f": "\f"}

# TableGen: the dialect's name, the op base classes it owns, and each op's mnemonic.
_TD_COMMENT = re.compile(r"//[^\n]*")
_TD_DIALECT = re.compile(
    r"\bdef\s+(\w+)\s*:\s*Dialect\s*\{.*?\blet\s+name\s*=\s*\"([^\"]+)\"", re.S
)
_TD_OP_CLASS = re.compile(r"\bclass\s+(\w+)\s*<(?:[^<>]|<[^<>]*>)*>\s*:\s*Op\s*<\s*(\w+)\s*,", re.S)
_TD_OP = re.compile(r"\bdef\s+(\w+)\s*:\s*(\w+)\s*<\s*(?:(\w+)\s*,\s*)?\"([^\"]+)\"", re.S)


@cache
def _parser() -> Parser:
    return Parser(Language(tree_sitter_cpp.language()))


def mine_cpp(root: Path) -> list[Site]:
    """Every error site under ``root/jaxlib/mosaic``, ordered by file and line."""
    mosaic = root / CPP_SCOPE
    op_names = read_op_names(mosaic)
    files = {
        path.relative_to(root).as_posix(): _parser().parse(_parseable(path.read_text()).encode())
        for path in sorted(mosaic.rglob("*"))
        if path.suffix in _SOURCE_SUFFIXES and not path.stem.endswith("_test")
    }
    own_macros = {file_path: _macros(tree.root_node) for file_path, tree in files.items()}
    shared_macros: dict[str, _Macro] = {}
    for macros in own_macros.values():
        shared_macros.update(macros)
    sites: list[Site] = []
    for file_path, tree in files.items():
        macros = shared_macros | own_macros[file_path]
        sites.extend(_FileMiner(file_path, op_names, macros).mine(tree.root_node))
    return sorted(sites, key=lambda site: (site.file_path, site.line, site.template))


def _parseable(source: str) -> str:
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
        for token in _TOKEN.finditer(source, use.end() - 1):
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


def read_op_names(mosaic: Path) -> dict[str, dict[str, str]]:
    """``{"MatmulOp": {"tpu": "tpu.matmul"}}``: each op class's name, by dialect."""
    sources = [_TD_COMMENT.sub("", path.read_text()) for path in sorted(mosaic.rglob("*.td"))]
    dialects = {record: name for text in sources for record, name in _TD_DIALECT.findall(text)}
    base_classes = {
        cls: dialects[dialect]
        for text in sources
        for cls, dialect in _TD_OP_CLASS.findall(text)
        if dialect in dialects
    }
    names: dict[str, dict[str, str]] = {}
    for text in sources:
        for record, base, dialect_record, mnemonic in _TD_OP.findall(text):
            dialect = dialects.get(dialect_record) if base == "Op" else base_classes.get(base)
            if dialect:
                cpp_class = record.split("_", 1)[-1]
                names.setdefault(cpp_class, {})[dialect] = f"{dialect}.{mnemonic}"
    return names


@dataclass(frozen=True)
class _Macro:
    """A function-like macro, or a lambda read as one: its parameters and replacement text."""

    name: str
    params: tuple[str, ...]
    variadic: str | None  # ``__VA_ARGS__`` for a macro, the pack's name for a lambda
    body: str


@dataclass
class _Context:
    """Where a message is emitted from: what resolves ``op`` and names the function."""

    function: Node | None  # the outermost enclosing function definition
    position: int  # the byte where the site stands, for declarations before it
    via: str | None = None  # the macro or lambda the site was expanded from
    fallback_condition: str | None = None


@dataclass
class _FileMiner:
    """One source file's sites, with the macros it can see and the ops of the tree."""

    file_path: str
    op_names: dict[str, dict[str, str]]
    macros: dict[str, _Macro]
    backend: str = field(init=False)
    reporting: set[str] = field(init=False)

    def __post_init__(self) -> None:
        self.backend = backend_of(self.file_path)
        self.reporting = _reporting(self.macros)

    def mine(self, root: Node) -> Iterator[Site]:
        wrappers = list(_lambda_wrappers(root))
        expanded_until = 0  # the end of the last macro use expanded: its inner calls are read
        for call in _calls(root):
            if call.start_byte < expanded_until or any(
                _contains(body, call)
                for body, _ in wrappers  # a wrapper's own diagnostic
            ):
                continue
            function = _outermost_function(call)
            context = _Context(function, call.start_byte)
            line = call.start_point.row + 1
            macro = self._reporting_macro(call) or _wrapper_in_scope(call, function, wrappers)
            if macro is not None:
                expanded_until = call.end_byte
                yield from self._expanded(macro, call, context, line)
            else:
                site = self._site(call, context, line)
                if site is not None:
                    yield site

    def _reporting_macro(self, call: Node) -> _Macro | None:
        """The macro ``call`` invokes, when it reports an error or streams into a diagnostic
        it is handed (``TPU_ASSERT_IMPL(op.emitOpError(), cond)``)."""
        macro = self.macros.get(_callee_name(call) or "")
        if macro is None:
            return None
        if macro.name in self.reporting:
            return macro
        if _streams_into_parameter(macro) and _DIAGNOSTIC_WORDS.search(_text(call)):
            return macro
        return None

    def _expanded(self, macro: _Macro, call: Node, context: _Context, line: int) -> Iterator[Site]:
        arguments = call.child_by_field_name("arguments")
        text = _expand(_call_text(macro, arguments), self.macros, frozenset(), {macro.name: macro})
        expansion = _parser().parse(f"void expansion() {{\n{text};\n}}\n".encode())
        context.via = macro.name
        context.fallback_condition = _condition(call)
        for inner in _calls(expansion.root_node):
            site = self._site(inner, context, line)
            if site is not None:
                yield site

    def _site(self, call: Node, context: _Context, line: int) -> Site | None:
        callee = call.child_by_field_name("function")
        arguments = _call_arguments(call)
        name = _callee_name(call)
        if callee is None or name is None:
            return None
        qualifier = _qualifier(callee)
        error_class = CPP_ERROR_CLASS
        extra: dict[str, str] = {}
        parts: list[Part]
        if name in _OP_DIAGNOSTICS:
            op = self._op_name(_receiver(callee), context)
            op_part: Part = op if op is not None else Placeholder("op")
            parts = ["'", op_part, "' op ", *_message(arguments)]
            parts.extend(_streamed(call))
            form = name
        elif name in _PLAIN_DIAGNOSTICS:
            if callee.type != "field_expression" and not (
                callee.type == "identifier" and self._method_class(context)
            ):
                arguments = arguments[1:]  # the location
            parts = [*_message(arguments), *_streamed(call)]
            form = name
        elif qualifier == "absl" and name.endswith("Error") and name != "Error":
            parts = _message(arguments[:1])
            extra["status"] = _status_code(name)
            form = f"absl::{name}"
        elif name == "createStringError":
            if arguments and not _is_string(arguments[0]):
                arguments = arguments[1:]  # the error code
            parts = _printf(arguments)
            form = name
        elif name in _THROWN_CLASSES:
            if call.parent is None or call.parent.type != "throw_statement":
                return None
            parts = _message(arguments[:1])
            error_class = _THROWN_CLASSES[name]
            form = f"throw {qualifier + '::' if qualifier else ''}{name}"
        else:
            return None
        extra["form"] = form
        if context.via:
            extra["via"] = context.via
        return Site(
            file_path=self.file_path,
            line=line,
            kind="diagnostic",
            error_class=error_class,
            template=template(parts),
            pattern=pattern(parts),
            function=_qualified_name(context.function),
            backend=self.backend,
            condition=_condition(call) or context.fallback_condition,
            language="cpp",
            extra=extra,
        )

    def _op_name(self, receiver: Node | None, context: _Context) -> str | None:
        cpp_class = self._receiver_class(receiver, context)
        by_dialect = self.op_names.get(cpp_class or "", {})
        if self.backend in by_dialect:  # both dialects have a WaitOp: the file's own wins
            return by_dialect[self.backend]
        return next(iter(by_dialect.values())) if len(by_dialect) == 1 else None

    def _receiver_class(self, receiver: Node | None, context: _Context) -> str | None:
        """The C++ class of the value a diagnostic is emitted on, where the source fixes it."""
        if receiver is None or receiver.type == "this":
            return self._method_class(context)
        if receiver.type in ("parenthesized_expression", "pointer_expression"):
            inner = receiver.named_children[-1] if receiver.named_children else None
            return self._receiver_class(inner, context)
        if receiver.type == "identifier":
            return _declared_class(_text(receiver), context)
        if receiver.type == "call_expression":
            function = receiver.child_by_field_name("function")
            if function is None:
                return None
            if function.type in ("template_function", "qualified_identifier"):
                cast = _cast_target(receiver)
                if cast is not None:
                    return cast
            if _callee_name(receiver) == "getOperation":
                return self._receiver_class(_receiver(function), context)
        return None

    def _method_class(self, context: _Context) -> str | None:
        """The class whose method holds the site, when that class is an op."""
        cpp_class = _enclosing_class(context.function)
        return cpp_class if cpp_class in self.op_names else None


# -- messages ---------------------------------------------------------------------------------


def _message(arguments: Sequence[Node]) -> list[Part]:
    return [part for argument in arguments for part in _parts(argument)]


def _streamed(call: Node) -> list[Part]:
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
        return [_text(node)]
    if node.type == "parenthesized_expression" and node.named_child_count == 1:
        return _parts(node.named_children[0])
    if node.type == "binary_expression" and _is_concatenation(node):
        return _parts(node.child_by_field_name("left")) + _parts(node.child_by_field_name("right"))
    if node.type == "call_expression":
        name = _callee_name(node)
        arguments = _call_arguments(node)
        if name in ("StrCat", "Twine", "string", "StringRef", "str") and (
            name == "StrCat" or (len(arguments) == 1 and _is_string(arguments[0]))
        ):
            return _message(arguments)
        if name in ("StrFormat", "createStringError") and arguments and _is_string(arguments[0]):
            return _printf(arguments)
        if name == "formatv" and arguments and _is_string(arguments[0]):
            return _formatv(arguments[0])
        if name == "Substitute" and arguments and _is_string(arguments[0]):
            return _substitute(arguments)
    return [Placeholder(_spelling(node))]


def _is_concatenation(node: Node) -> bool:
    """``"…" + name + "…"``: a ``+`` chain that joins text, not numbers."""
    operator = node.child_by_field_name("operator")
    if operator is None or operator.type != "+":
        return False
    return any(_is_string(leaf) for leaf in _plus_operands(node))


def _plus_operands(node: Node) -> Iterator[Node]:
    operator = node.child_by_field_name("operator")
    if node.type == "binary_expression" and operator is not None and operator.type == "+":
        for side in ("left", "right"):
            child = node.child_by_field_name(side)
            if child is not None:
                yield from _plus_operands(child)
    else:
        yield node


def _printf(arguments: Sequence[Node]) -> list[Part]:
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


def _is_string(node: Node) -> bool:
    return node.type in ("string_literal", "raw_string_literal", "concatenated_string")


def _string_value(node: Node) -> str:
    """A literal's characters: adjacent literals joined, escapes read."""
    if node.type == "concatenated_string":
        return "".join(_string_value(child) for child in node.named_children if _is_literal(child))
    if node.type == "raw_string_literal":
        content = node.child_by_field_name("content") or next(
            (child for child in node.named_children if child.type == "raw_string_content"), None
        )
        return _text(content) if content is not None else ""
    value = []
    for child in node.named_children:
        if child.type == "escape_sequence":
            value.append(_unescape(_text(child)))
        elif child.type in ("string_content", "character"):
            value.append(_text(child))
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


def _status_code(constructor: str) -> str:
    """``InvalidArgumentError`` → ``INVALID_ARGUMENT``: the code a printed status begins with."""
    words = re.findall(r"[A-Z][a-z]*", constructor.removesuffix("Error"))
    return "_".join(word.upper() for word in words)


# -- macros and wrapping lambdas --------------------------------------------------------------


def _macros(root: Node) -> dict[str, _Macro]:
    """The file's function-like macros."""
    found: dict[str, _Macro] = {}
    for node in _nodes(root, "preproc_function_def"):
        name_node, params, value = (
            node.child_by_field_name(key) for key in ("name", "parameters", "value")
        )
        if name_node is None or params is None or value is None:
            continue
        name = _text(name_node)
        names = [_text(child) for child in params.children if child.type == "identifier"]
        variadic = "__VA_ARGS__" if any(child.type == "..." for child in params.children) else None
        body = _text(value).replace("\\\n", " ")
        found[name] = _Macro(name, tuple(names), variadic, body)
    return found


def _reporting(macros: dict[str, _Macro]) -> set[str]:
    """The macros whose expansion reports an error, directly or through another macro."""
    reporting = {name for name, macro in macros.items() if _DIAGNOSTIC_WORDS.search(macro.body)}
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


def _streams_into_parameter(macro: _Macro) -> bool:
    return any(
        re.search(rf"(?:\(\s*{param}\s*\)|\b{param}\b)\s*<<", macro.body) for param in macro.params
    )


def _lambda_wrappers(root: Node) -> Iterator[tuple[Node, _Macro]]:
    """``auto error = [this](auto... params) { return emitOpError(formatv(params...)); }``.

    A lambda that returns a diagnostic built from its parameters is read as a macro: each call
    of it is a site with the message of its arguments.
    """
    for node in _nodes(root, "init_declarator"):
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
        identifiers = {_text(child) for child in _nodes(expression, "identifier")}
        if not _DIAGNOSTIC_WORDS.search(_text(expression)) or not used & identifiers:
            continue
        yield body, _Macro(_text(name), tuple(params), variadic, _text(expression))


def _lambda_parameters(parameters: Node) -> tuple[list[str], str | None]:
    names: list[str] = []
    variadic = None
    for parameter in parameters.named_children:
        identifiers = _nodes(parameter, "identifier")
        if not identifiers:
            continue
        if parameter.type == "variadic_parameter_declaration":
            variadic = _text(identifiers[-1])
        else:
            names.append(_text(identifiers[-1]))
    return names, variadic


def _wrapper_in_scope(
    call: Node, function: Node | None, wrappers: list[tuple[Node, _Macro]]
) -> _Macro | None:
    """The lambda ``call`` calls: one wrapping a diagnostic, defined earlier in the same
    function or at namespace scope."""
    callee = call.child_by_field_name("function")
    if callee is None or callee.type != "identifier":
        return None
    name = _text(callee)
    in_scope = [
        macro
        for body, macro in wrappers
        if macro.name == name
        and body.end_byte < call.start_byte
        and (
            _outermost_function(body) is None
            or (function is not None and _contains(function, body))
        )
    ]
    return in_scope[-1] if in_scope else None


def _call_text(macro: _Macro, arguments: Node | None) -> str:
    return f"{macro.name}{_text(arguments) if arguments is not None else '()'}"


def _expand(
    text: str, macros: dict[str, _Macro], active: frozenset[str], extra: dict[str, _Macro]
) -> str:
    """``text`` with every call of a known macro replaced, as the preprocessor would."""
    known = macros | extra
    tokens = [match.group() for match in _TOKEN.finditer(text)]
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
        out.append(_expand(replaced, macros, active | {macro.name}, extra))
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


def _substitute_body(macro: _Macro, arguments: list[str]) -> str:
    """The replacement text with parameters, ``#param``, ``##`` and ``__VA_OPT__`` resolved."""
    bound = dict(zip(macro.params, arguments, strict=False))
    rest = arguments[len(macro.params) :]
    varargs = ", ".join(rest) if rest != [""] else ""
    tokens = [match.group() for match in _TOKEN.finditer(macro.body)]
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


# -- where a site stands ----------------------------------------------------------------------


@cache
def _query(node_type: str) -> Query:
    return Query(Language(tree_sitter_cpp.language()), f"({node_type}) @node")


def _nodes(root: Node, *node_types: str) -> list[Node]:
    """The nodes of these types under ``root`` (itself included), in source order."""
    found = [
        node
        for node_type in node_types
        for node in QueryCursor(_query(node_type)).captures(root).get("node", [])
    ]
    return sorted(found, key=lambda node: (node.start_byte, -node.end_byte))


def _calls(root: Node) -> list[Node]:
    return _nodes(root, "call_expression")


def _contains(outer: Node, inner: Node) -> bool:
    return outer.start_byte <= inner.start_byte and inner.end_byte <= outer.end_byte


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", errors="replace")


def _spelling(node: Node) -> str:
    """A value as the source spells it, on one line, without enclosing parentheses."""
    while node.type == "parenthesized_expression" and node.named_child_count == 1:
        node = node.named_children[0]
    return " ".join(_text(node).split())


def _call_arguments(call: Node) -> list[Node]:
    arguments = call.child_by_field_name("arguments")
    return arguments.named_children if arguments is not None else []


def _callee_name(call: Node) -> str | None:
    callee = call.child_by_field_name("function")
    while callee is not None:
        if callee.type in ("identifier", "field_identifier"):
            return _text(callee)
        if callee.type == "field_expression":
            callee = callee.child_by_field_name("field")
        elif callee.type in ("qualified_identifier", "template_function", "template_method"):
            callee = callee.child_by_field_name("name")
        else:
            return None
    return None


def _qualifier(callee: Node) -> str | None:
    """``absl`` of ``absl::InternalError``; None for an unqualified name."""
    if callee.type != "qualified_identifier":
        return None
    scope = callee.child_by_field_name("scope")
    return _text(scope) if scope is not None else None


def _receiver(callee: Node) -> Node | None:
    """``op`` of ``op.emitOpError``/``op->emitOpError``; None when called on ``this``."""
    if callee.type == "field_expression":
        return callee.child_by_field_name("argument")
    return None


def _cast_target(call: Node) -> str | None:
    """``FooOp`` of ``cast<FooOp>(…)`` and kin."""
    function = call.child_by_field_name("function")
    if function is not None and function.type == "qualified_identifier":
        function = function.child_by_field_name("name")
    if function is None or function.type != "template_function":
        return None
    name = function.child_by_field_name("name")
    arguments = function.child_by_field_name("arguments")
    if name is None or _text(name) not in _CASTS or arguments is None:
        return None
    return _class_name(_text(arguments).strip("<>"))


def _class_name(type_text: str) -> str:
    """``const tpu::MatmulOp &`` → ``MatmulOp``."""
    bare = re.sub(r"<.*>", "", type_text)
    bare = re.sub(r"\b(?:const|volatile)\b|[*&\s]", "", bare)
    return bare.rsplit("::", 1)[-1]


def _declared_class(name: str, context: _Context) -> str | None:
    """The class ``name`` is declared with (or cast to) last before the site, in its function."""
    if context.function is None:
        return None
    found: str | None = None
    declarations = _nodes(
        context.function, "parameter_declaration", "optional_parameter_declaration", "declaration"
    )
    for node in declarations:
        if node.start_byte >= context.position:
            break
        type_node = node.child_by_field_name("type")
        for declarator in node.children_by_field_name("declarator"):
            target = declarator
            value = None
            if declarator.type == "init_declarator":
                target = declarator.child_by_field_name("declarator") or declarator
                value = declarator.child_by_field_name("value")
            elif node.child_by_field_name("value") is not None:
                value = node.child_by_field_name("value")
            identifiers = _nodes(target, "identifier")
            if not identifiers or _text(identifiers[-1]) != name or type_node is None:
                continue
            if type_node.type == "placeholder_type_specifier":
                found = (
                    _cast_target(value)
                    if value is not None and value.type == "call_expression"
                    else None
                )
            else:
                found = _class_name(_text(type_node))
    return found


def _outermost_function(node: Node) -> Node | None:
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


def _enclosing_class(function: Node | None) -> str | None:
    """``MatmulOp`` of ``MatmulOp::verify`` or of a method written inside ``class MatmulOp``."""
    if function is None:
        return None
    name = _function_name_node(function)
    if name is not None and name.type == "qualified_identifier":
        scope = name.child_by_field_name("scope")
        if scope is not None:
            return _class_name(_text(scope))
    parent = function.parent
    while parent is not None:
        if parent.type in ("class_specifier", "struct_specifier"):
            class_name = parent.child_by_field_name("name")
            return _text(class_name) if class_name is not None else None
        parent = parent.parent
    return None


def _qualified_name(function: Node | None) -> str | None:
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
            scopes.append(_text(scope) if scope is not None else "(anonymous)")
        elif parent.type in ("class_specifier", "struct_specifier"):
            scope = parent.child_by_field_name("name")
            if scope is not None:
                scopes.append(_text(scope))
        parent = parent.parent
    return "::".join([*reversed(scopes), " ".join(_text(name).split())])


def _condition(node: Node) -> str | None:
    """The ``if`` condition guarding ``node`` in its function (``!(…)`` in an ``else``)."""
    child = node
    parent = node.parent
    while parent is not None and parent.type not in ("function_definition", "lambda_expression"):
        if parent.type == "if_statement":
            clause = parent.child_by_field_name("condition")
            consequence = parent.child_by_field_name("consequence")
            alternative = parent.child_by_field_name("alternative")
            if clause is not None and consequence is not None and _contains(consequence, child):
                return _condition_text(clause)
            if clause is not None and alternative is not None and _contains(alternative, child):
                return f"!({_condition_text(clause)})"
        child = parent
        parent = parent.parent
    return None


def _condition_text(clause: Node) -> str:
    value = clause.child_by_field_name("value") or clause.named_children[-1]
    while value.type == "call_expression" and _callee_name(value) in _HINTS:
        hinted = _call_arguments(value)
        if len(hinted) != 1:
            break
        value = hinted[0]
    return _spelling(value)
