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

This module decides what is a site; ``cpp_syntax`` walks the tree, ``cpp_messages`` reads a
message's text and ``cpp_macros`` expands macros and wrapping lambdas.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from tree_sitter import Node

from app.jaxref.messages import Part, Placeholder, pattern, template
from app.jaxref.scope import CPP_SCOPE, backend_of
from app.knowledge.cpp_macros import (
    DIAGNOSTIC_WORDS,
    Macro,
    call_text,
    expand,
    file_macros,
    lambda_wrappers,
    reporting_macros,
    streams_into_parameter,
    wrapper_in_scope,
)
from app.knowledge.cpp_messages import (
    is_string,
    message_parts,
    printf_parts,
    status_code,
    streamed_parts,
)
from app.knowledge.cpp_syntax import (
    bare_class_name,
    call_arguments,
    callee_name,
    calls_in,
    cast_target,
    contains,
    cpp_parser,
    enclosing_class,
    guarding_condition,
    node_text,
    nodes_of,
    outermost_function,
    parseable,
    qualified_name,
    receiver_of,
    scope_qualifier,
)
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

# TableGen: the dialect's name, the op base classes it owns, and each op's mnemonic.
_TD_COMMENT = re.compile(r"//[^\n]*")
_TD_DIALECT = re.compile(
    r"\bdef\s+(\w+)\s*:\s*Dialect\s*\{.*?\blet\s+name\s*=\s*\"([^\"]+)\"", re.S
)
_TD_OP_CLASS = re.compile(r"\bclass\s+(\w+)\s*<(?:[^<>]|<[^<>]*>)*>\s*:\s*Op\s*<\s*(\w+)\s*,", re.S)
_TD_OP = re.compile(r"\bdef\s+(\w+)\s*:\s*(\w+)\s*<\s*(?:(\w+)\s*,\s*)?\"([^\"]+)\"", re.S)


def mine_cpp(root: Path) -> list[Site]:
    """Every error site under ``root/jaxlib/mosaic``, ordered by file and line."""
    mosaic = root / CPP_SCOPE
    op_names = read_op_names(mosaic)
    files = {
        path.relative_to(root).as_posix(): cpp_parser().parse(parseable(path.read_text()).encode())
        for path in sorted(mosaic.rglob("*"))
        if path.suffix in _SOURCE_SUFFIXES and not path.stem.endswith("_test")
    }
    own_macros = {file_path: file_macros(tree.root_node) for file_path, tree in files.items()}
    shared_macros: dict[str, Macro] = {}
    for macros in own_macros.values():
        shared_macros.update(macros)
    sites: list[Site] = []
    for file_path, tree in files.items():
        macros = shared_macros | own_macros[file_path]
        sites.extend(_FileMiner(file_path, op_names, macros).mine(tree.root_node))
    return sorted(sites, key=lambda site: (site.file_path, site.line, site.template))


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
    macros: dict[str, Macro]
    backend: str = field(init=False)
    reporting: set[str] = field(init=False)

    def __post_init__(self) -> None:
        self.backend = backend_of(self.file_path)
        self.reporting = reporting_macros(self.macros)

    def mine(self, root: Node) -> Iterator[Site]:
        wrappers = list(lambda_wrappers(root))
        expanded_until = 0  # the end of the last macro use expanded: its inner calls are read
        for call in calls_in(root):
            if call.start_byte < expanded_until or any(
                contains(body, call)
                for body, _ in wrappers  # a wrapper's own diagnostic
            ):
                continue
            function = outermost_function(call)
            context = _Context(function, call.start_byte)
            line = call.start_point.row + 1
            macro = self._reporting_macro(call) or wrapper_in_scope(call, function, wrappers)
            if macro is not None:
                expanded_until = call.end_byte
                yield from self._expanded(macro, call, context, line)
            else:
                site = self._site(call, context, line)
                if site is not None:
                    yield site

    def _reporting_macro(self, call: Node) -> Macro | None:
        """The macro ``call`` invokes, when it reports an error or streams into a diagnostic
        it is handed (``TPU_ASSERT_IMPL(op.emitOpError(), cond)``)."""
        macro = self.macros.get(callee_name(call) or "")
        if macro is None:
            return None
        if macro.name in self.reporting:
            return macro
        if streams_into_parameter(macro) and DIAGNOSTIC_WORDS.search(node_text(call)):
            return macro
        return None

    def _expanded(self, macro: Macro, call: Node, context: _Context, line: int) -> Iterator[Site]:
        arguments = call.child_by_field_name("arguments")
        text = expand(call_text(macro, arguments), self.macros, frozenset(), {macro.name: macro})
        expansion = cpp_parser().parse(f"void expansion() {{\n{text};\n}}\n".encode())
        context.via = macro.name
        context.fallback_condition = guarding_condition(call)
        for inner in calls_in(expansion.root_node):
            site = self._site(inner, context, line)
            if site is not None:
                yield site

    def _site(self, call: Node, context: _Context, line: int) -> Site | None:
        callee = call.child_by_field_name("function")
        arguments = call_arguments(call)
        name = callee_name(call)
        if callee is None or name is None:
            return None
        qualifier = scope_qualifier(callee)
        error_class = CPP_ERROR_CLASS
        extra: dict[str, str] = {}
        parts: list[Part]
        if name in _OP_DIAGNOSTICS:
            op = self._op_name(receiver_of(callee), context)
            op_part: Part = op if op is not None else Placeholder("op")
            parts = ["'", op_part, "' op ", *message_parts(arguments)]
            parts.extend(streamed_parts(call))
            form = name
        elif name in _PLAIN_DIAGNOSTICS:
            if callee.type != "field_expression" and not (
                callee.type == "identifier" and self._method_class(context)
            ):
                arguments = arguments[1:]  # the location
            parts = [*message_parts(arguments), *streamed_parts(call)]
            form = name
        elif qualifier == "absl" and name.endswith("Error") and name != "Error":
            parts = message_parts(arguments[:1])
            extra["status"] = status_code(name)
            form = f"absl::{name}"
        elif name == "createStringError":
            if arguments and not is_string(arguments[0]):
                arguments = arguments[1:]  # the error code
            parts = printf_parts(arguments)
            form = name
        elif name in _THROWN_CLASSES:
            if call.parent is None or call.parent.type != "throw_statement":
                return None
            parts = message_parts(arguments[:1])
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
            function=qualified_name(context.function),
            backend=self.backend,
            condition=guarding_condition(call) or context.fallback_condition,
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
            return _declared_class(node_text(receiver), context)
        if receiver.type == "call_expression":
            function = receiver.child_by_field_name("function")
            if function is None:
                return None
            if function.type in ("template_function", "qualified_identifier"):
                cast = cast_target(receiver)
                if cast is not None:
                    return cast
            if callee_name(receiver) == "getOperation":
                return self._receiver_class(receiver_of(function), context)
        return None

    def _method_class(self, context: _Context) -> str | None:
        """The class whose method holds the site, when that class is an op."""
        cpp_class = enclosing_class(context.function)
        return cpp_class if cpp_class in self.op_names else None


def _declared_class(name: str, context: _Context) -> str | None:
    """The class ``name`` is declared with (or cast to) last before the site, in its function."""
    if context.function is None:
        return None
    found: str | None = None
    declarations = nodes_of(
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
            identifiers = nodes_of(target, "identifier")
            if not identifiers or node_text(identifiers[-1]) != name or type_node is None:
                continue
            if type_node.type == "placeholder_type_specifier":
                found = (
                    cast_target(value)
                    if value is not None and value.type == "call_expression"
                    else None
                )
            else:
                found = bare_class_name(node_text(type_node))
    return found
