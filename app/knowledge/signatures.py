"""The parameters of Pallas's public functions and classes in each release, read from the
source with ``ast``.

A public name is followed from the public module to the ``def`` or ``class`` it binds, through
imports (``from jax._src.pallas.mosaic_gpu.primitives import copy_gmem_to_smem``), module
aliases (``pallas_core.BlockSpec``) and plain assignments. A class is called through its own
``__init__``, the ``__init__`` its ``@dataclass`` decorator writes from its fields (its base
dataclasses' first), or the one it inherits. What cannot be read for sure has no signature:
a function under a decorator that may change how it is called (``jax.jit``), an enum, a
protocol, a named tuple, a class whose base is out of reach. A name bound to an enum's
member (``SMEM = MemorySpace.SMEM``) is called through the enum's ``__call__``.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from app.knowledge.history import source_window
from app.knowledge.public_names import Releases, module_level
from app.knowledge.sources import ReleaseSource

# Decorators that call the function they wrap with the arguments they were given, so that
# Python's errors about those arguments name the function itself; ``partial(api_boundary,
# …)`` is one of them too.
TRANSPARENT_DECORATORS = frozenset(
    {"api_boundary", "contextmanager", "named_call", "overload", "wraps"}
)
ENUM_BASES = frozenset({"Enum", "IntEnum", "StrEnum", "Flag", "IntFlag"})
# Bases whose classes are not called through an ``__init__`` read from their fields.
OPAQUE_BASES = ENUM_BASES | frozenset(
    {"NamedTuple", "Protocol", "Exception", "ValueError", "TypeError", "RuntimeError",
     "NotImplementedError", "tuple", "dict", "str", "int", "float", "ABC"}
)  # fmt: skip
IGNORED_BASES = frozenset({"object", "Generic"})
# A docstring's section of parameters (Google style), and one entry of it.
_SECTION = re.compile(r"(?:Args|Arguments|Attributes|Parameters):\s*")
_ENTRY = re.compile(r"\*{0,2}(?P<name>\w+)(?:\s*\([^)]*\))?\s*:\s*(?P<text>.*)")
MAX_DOCUMENTED_CHARS = 400
MAX_HOPS = 6  # imports followed from a public name to its definition


@dataclass(frozen=True)
class Parameter:
    name: str
    kind: str  # "positional-only", "positional" or "keyword-only"
    required: bool


@dataclass(frozen=True)
class Signature:
    """How a callable takes its arguments, and where it is defined."""

    qualname: str  # as Python's errors name it: "copy_gmem_to_smem", "BlockSpec.__init__"
    parameters: tuple[Parameter, ...]
    var_positional: str | None
    var_keyword: str | None
    path: str
    line: int
    bound: int = 0  # 1 for an ``__init__``: Python counts ``self`` among positional arguments
    # The source around ``line``, and its first and last line numbers.
    window: tuple[str, int, int] = field(default=("", 0, 0), compare=False)
    documented: dict[str, str] = field(default_factory=dict, compare=False)  # its docstring's

    def takes_keyword(self, name: str) -> bool:
        """Whether ``name=…`` names one of its parameters."""
        return any(p.name == name and p.kind != "positional-only" for p in self.parameters)

    def refuses_keyword(self, name: str) -> bool:
        return not self.takes_keyword(name) and self.var_keyword is None

    def requires(self, name: str) -> bool:
        return any(p.name == name and p.required for p in self.parameters)

    def positional_limit(self) -> int | None:
        """How many arguments it takes by position; None: any number."""
        if self.var_positional is not None:
            return None
        return sum(p.kind != "keyword-only" for p in self.parameters)

    def shown(self, name: str | None = None) -> str:
        """``copy_gmem_to_smem(src, dst, barrier, *, collective_axes=…)``, called ``name``
        (by default its own name, a class's for its ``__init__``)."""
        parts: list[str] = []
        kinds = [p.kind for p in self.parameters]
        for number, parameter in enumerate(self.parameters):
            if parameter.kind == "keyword-only" and (
                number == 0 or kinds[number - 1] != "keyword-only"
            ):
                parts.append(f"*{self.var_positional}" if self.var_positional else "*")
            parts.append(parameter.name if parameter.required else f"{parameter.name}=…")
            if parameter.kind == "positional-only" and (
                number + 1 == len(kinds) or kinds[number + 1] != "positional-only"
            ):
                parts.append("/")
        if self.var_positional and "keyword-only" not in kinds:
            parts.append(f"*{self.var_positional}")
        if self.var_keyword:
            parts.append(f"**{self.var_keyword}")
        return f"{name or self.qualname.removesuffix('.__init__')}({', '.join(parts)})"


Signatures = dict[str, dict[tuple[str, str], Signature]]  # release → (module, name) → it


def mine_signatures(mined: Releases, sources: Mapping[str, ReleaseSource]) -> Signatures:
    """The signature of each public name of ``mined`` that has one, release by release,
    read from the release's source (``release_sources``)."""
    parsed: dict[str, _Parsed] = {}
    found: Signatures = {}
    for release, modules in mined.items():
        tree = SourceTree.of(sources[release], parsed)
        found[release] = {
            (module, name): signature
            for module, public in modules.items()
            for name in public.names
            if (signature := tree.signature(module, name)) is not None
        }
    return found


class SourceTree:
    """The Python files under ``jax/`` of a release, parsed on demand.

    ``files`` maps each path to a key that changes only with the file's content, and
    ``read`` reads a path. ``parsed`` is shared between the releases of one mining, by key,
    since most files do not change from one release to the next.
    """

    def __init__(
        self, files: dict[str, str], read: Callable[[str], str], parsed: dict[str, _Parsed]
    ) -> None:
        self._files = files
        self._read_path = read
        self._parsed = parsed

    @classmethod
    def of(cls, source: ReleaseSource, parsed: dict[str, _Parsed]) -> SourceTree:
        files = {path: key for path, key in source.files("jax").items() if path.endswith(".py")}
        return cls(files, source.read, parsed)

    @classmethod
    def installed(cls, root: Path) -> SourceTree:
        """The JAX installed in ``root`` (the folder holding its ``jax/``)."""
        files = {path.relative_to(root).as_posix(): str(path) for path in root.glob("jax/**/*.py")}
        return cls(files, lambda path: (root / path).read_text(encoding="utf-8"), {})

    def _bound(self, module: str) -> tuple[str, dict[str, _Binding]] | None:
        """The file of a module, by its dotted name, and what its top-level names are
        bound to; worked out once per version of the file."""
        base = module.replace(".", "/")
        for path in (f"{base}.py", f"{base}/__init__.py"):
            if path in self._files:
                parsed = self._read(path)
                if parsed.bindings is None:
                    parsed.bindings = _bindings(parsed.tree, _package(module, path))
                return path, parsed.bindings
        return None

    def _read(self, path: str) -> _Parsed:
        key = self._files[path]
        if key not in self._parsed:
            text = self._read_path(path)
            self._parsed[key] = _Parsed(ast.parse(text), text.splitlines())
        return self._parsed[key]

    def signature(self, module: str, name: str) -> Signature | None:
        member = self._member(module, name, MAX_HOPS)
        found = self.definition(module, name) if member is None else None
        signature: Signature | None = None
        node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | None = None
        if member is not None:  # an enum's member, called through the enum's ``__call__``
            path, owner = member
            node = _method(owner, "__call__")
            if node is not None:
                signature = function_signature(node, f"{owner.name}.__call__", path, bound=1)
        elif found is not None:
            path, node, home = found
            if isinstance(node, ast.ClassDef):
                signature = self._class_signature(path, node, home, MAX_HOPS)
            else:
                signature = function_signature(node, node.name, path)
        if signature is None or node is None:
            return None
        return replace(
            signature,
            window=source_window(self._read(signature.path).lines, signature.line),
            documented=documented_parameters(node),
        )

    def _member(self, module: str, name: str, hops: int) -> tuple[str, ast.ClassDef] | None:
        """The enum and file of a name bound to one of the enum's members, as ``SMEM =
        MemorySpace.SMEM`` binds one: the member is called through the enum's ``__call__``."""
        read = self._bound(module)
        if read is None or hops == 0:
            return None
        bound = read[1].get(name)
        if isinstance(bound, _Imported):
            return self._member(bound.module, bound.name, hops - 1)
        if not isinstance(bound, _Attribute):
            return None
        owner = self.definition(module, bound.owner, hops - 1)
        if owner is None or not isinstance(owner[1], ast.ClassDef):
            return None
        if not any(_base_name(base) in ENUM_BASES for base in owner[1].bases):
            return None  # a class attribute is no instance of its class
        members = {
            target.id
            for item in owner[1].body
            if isinstance(item, ast.Assign)
            for target in item.targets
            if isinstance(target, ast.Name)
        }
        return (owner[0], owner[1]) if bound.name in members else None

    def definition(
        self, module: str, name: str, hops: int = MAX_HOPS
    ) -> tuple[str, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef, str] | None:
        """The ``def`` or ``class`` a module's name is bound to, its file and its module."""
        read = self._bound(module)
        if read is None or hops == 0:
            return None
        path, bindings = read
        bound = bindings.get(name)
        if isinstance(bound, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            return path, bound, module
        if isinstance(bound, _Imported):
            return self.definition(bound.module, bound.name, hops - 1)
        if isinstance(bound, _Alias):
            return self.definition(module, bound.name, hops - 1)
        if isinstance(bound, _Attribute):
            return self._attribute(module, bound, hops - 1)
        return None

    def _attribute(
        self, module: str, bound: _Attribute, hops: int
    ) -> tuple[str, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef, str] | None:
        """``alias.name``, where ``alias`` is a module the module imported."""
        read = self._bound(module)
        owner = None if read is None else read[1].get(bound.owner)
        if isinstance(owner, _ModuleImported):
            return self.definition(owner.module, bound.name, hops)
        if isinstance(owner, _Imported):  # ``from package import module``
            return self.definition(f"{owner.module}.{owner.name}", bound.name, hops)
        return None

    def _class_signature(
        self, path: str, node: ast.ClassDef, module: str, hops: int
    ) -> Signature | None:
        if hops == 0 or any(_base_name(base) in OPAQUE_BASES for base in node.bases):
            return None
        init = _method(node, "__init__")
        if init is not None:
            return function_signature(init, f"{node.name}.__init__", path, bound=1)
        if _dataclass_options(node) is not None:
            fields = self._fields(path, node, module, hops)
            return None if fields is None else _dataclass_signature(node, path, fields)
        bases = [self._base(path, base, module, hops) for base in _real_bases(node)]
        if not bases:
            return None  # ``object.__init__``: a call with arguments says it takes none
        first = bases[0]
        return None if first is None else self._class_signature(*first, hops - 1)

    def _base(
        self, path: str, base: ast.expr, module: str, hops: int
    ) -> tuple[str, ast.ClassDef, str] | None:
        found = None
        if isinstance(base, ast.Name):
            found = self.definition(module, base.id, hops)
        elif isinstance(base, ast.Attribute) and isinstance(base.value, ast.Name):
            found = self._attribute(module, _Attribute(base.value.id, base.attr), hops)
        if found is None or not isinstance(found[1], ast.ClassDef):
            return None
        return found[0], found[1], found[2]

    def _fields(
        self, path: str, node: ast.ClassDef, module: str, hops: int
    ) -> list[tuple[Parameter, bool]] | None:
        """A dataclass's fields in ``__init__`` order, each with whether it is keyword-only:
        its base dataclasses' first (a field redefined keeps its place)."""
        fields: dict[str, tuple[Parameter, bool]] = {}
        for base in _real_bases(node):
            found = self._base(path, base, module, hops - 1)
            if found is None:
                return None
            if _dataclass_options(found[1]) is None:
                continue  # a plain base gives the dataclass no field
            inherited = self._fields(*found, hops - 1)
            if inherited is None:
                return None
            fields.update((field.name, (field, kw_only)) for field, kw_only in inherited)
        kw_only = (_dataclass_options(node) or {}).get("kw_only") is True
        for item in node.body:
            if not (isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)):
                continue
            annotation = ast.unparse(item.annotation)
            if "ClassVar" in annotation:
                continue
            if annotation.endswith("KW_ONLY"):
                kw_only = True
                continue
            options = _field_options(item.value)
            if options.get("init") is False:
                continue
            required = item.value is None or (
                isinstance(item.value, ast.Call)
                and _called(item.value) == "field"
                and not {"default", "default_factory"} & set(options)
            )
            name = item.target.id
            field_kw_only = options.get("kw_only", kw_only) is True
            fields[name] = (Parameter(name, "positional", required), field_kw_only)
        return list(fields.values())


def _method(node: ast.ClassDef, name: str) -> ast.FunctionDef | None:
    """The method ``name`` a class defines in its own body."""
    return next(
        (item for item in node.body if isinstance(item, ast.FunctionDef) and item.name == name),
        None,
    )


def documented_parameters(
    node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef,
) -> dict[str, str]:
    """What a definition's docstring says of each parameter; for a class, its own docstring's
    and its ``__init__``'s."""
    nodes: list[ast.AST] = [node]
    if isinstance(node, ast.ClassDef):
        nodes += [item for item in node.body if getattr(item, "name", None) == "__init__"]
    found: dict[str, str] = {}
    for documented in nodes:
        assert isinstance(documented, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        found.update(docstring_parameters(ast.get_docstring(documented) or ""))
    return found


def docstring_parameters(docstring: str) -> dict[str, str]:
    """The entries of a docstring's ``Args:`` (or ``Attributes:``) section, each on one
    line: ``name: text`` at the section's indentation, continued by lines indented more."""
    found: dict[str, str] = {}
    indent = current = None
    inside = False
    for line in docstring.splitlines():
        width = len(line) - len(line.lstrip())
        if _SECTION.fullmatch(line):
            inside, indent, current = True, None, None
        elif not inside or not line.strip():
            current = None
        elif width == 0:
            inside = False
        elif indent is None or width == indent:
            indent = width
            entry = _ENTRY.fullmatch(line.strip())
            current = entry["name"] if entry else None
            if entry:
                found[entry["name"]] = entry["text"]
        elif current is not None:
            found[current] = f"{found[current]} {line.strip()}"
    return {name: _shortened(text) for name, text in found.items() if text}


def _shortened(text: str) -> str:
    if len(text) <= MAX_DOCUMENTED_CHARS:
        return text
    return text[: text.rfind(" ", 0, MAX_DOCUMENTED_CHARS)] + " …"


def function_signature(
    node: ast.FunctionDef | ast.AsyncFunctionDef, qualname: str, path: str, bound: int = 0
) -> Signature | None:
    """A ``def``'s signature, or None under a decorator that may change it."""
    if not all(map(_transparent, node.decorator_list)):
        return None
    arguments = node.args
    positional = [*arguments.posonlyargs, *arguments.args]
    first_default = len(positional) - len(arguments.defaults)
    parameters = [
        Parameter(
            argument.arg,
            "positional-only" if number < len(arguments.posonlyargs) else "positional",
            number < first_default,
        )
        for number, argument in enumerate(positional)
    ][bound:]
    parameters += [
        Parameter(argument.arg, "keyword-only", default is None)
        for argument, default in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True)
    ]
    return Signature(
        qualname,
        tuple(parameters),
        arguments.vararg.arg if arguments.vararg else None,
        arguments.kwarg.arg if arguments.kwarg else None,
        path,
        node.lineno,
        bound,
    )


def _transparent(decorator: ast.expr) -> bool:
    name = _called(decorator)
    if name == "partial" and isinstance(decorator, ast.Call) and decorator.args:
        name = _called(decorator.args[0])
    return name in TRANSPARENT_DECORATORS


def _dataclass_signature(
    node: ast.ClassDef, path: str, fields: list[tuple[Parameter, bool]]
) -> Signature | None:
    if (_dataclass_options(node) or {}).get("init") is False:
        return None
    parameters = [field for field, kw_only in fields if not kw_only]
    parameters += [
        Parameter(field.name, "keyword-only", field.required)
        for field, kw_only in fields
        if kw_only
    ]
    return Signature(f"{node.name}.__init__", tuple(parameters), None, None, path, node.lineno, 1)


def _dataclass_options(node: ast.ClassDef) -> dict[str, object] | None:
    """The keywords of a class's ``@dataclass(...)`` decorator; None: not a dataclass."""
    for decorator in node.decorator_list:
        if _called(decorator) == "dataclass":
            return _keywords(decorator) if isinstance(decorator, ast.Call) else {}
    return None


def _field_options(value: ast.expr | None) -> dict[str, object]:
    """The keywords of a ``dataclasses.field(...)`` default; a plain default is ``default``."""
    if value is None:
        return {}
    if isinstance(value, ast.Call) and _called(value) == "field":
        return _keywords(value)
    return {"default": True}


def _keywords(call: ast.Call) -> dict[str, object]:
    return {
        keyword.arg: keyword.value.value if isinstance(keyword.value, ast.Constant) else True
        for keyword in call.keywords
        if keyword.arg is not None
    }


def _called(expression: ast.expr) -> str:
    """The last name of a decorator or call: ``dataclasses.dataclass(frozen=True)`` →
    ``dataclass``; ``functools.partial(jax.jit, …)`` → ``partial``."""
    if isinstance(expression, ast.Call):
        expression = expression.func
    if isinstance(expression, ast.Attribute):
        return expression.attr
    return expression.id if isinstance(expression, ast.Name) else ""


def _base_name(base: ast.expr) -> str:
    return _called(base.value if isinstance(base, ast.Subscript) else base)


def _real_bases(node: ast.ClassDef) -> list[ast.expr]:
    """A class's bases, less ``object`` and ``Generic[...]``."""
    return [base for base in node.bases if _base_name(base) not in IGNORED_BASES]


@dataclass
class _Parsed:
    tree: ast.Module
    lines: list[str]
    bindings: dict[str, _Binding] | None = None  # its top-level names, once worked out


@dataclass(frozen=True)
class _Imported:
    module: str
    name: str


@dataclass(frozen=True)
class _ModuleImported:
    module: str


@dataclass(frozen=True)
class _Alias:
    name: str


@dataclass(frozen=True)
class _Attribute:
    owner: str
    name: str


_Binding = (
    ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
    | _Imported | _ModuleImported | _Alias | _Attribute | None
)  # fmt: skip


def _bindings(tree: ast.Module, package: str) -> dict[str, _Binding]:
    """What each top-level name of a module is bound to when imported; the last binding
    wins, as in Python. A binding out of reach (a call's result) is None. A name only its
    ``_deprecations`` table serves is bound to the function the table gives."""
    bound: dict[str, _Binding] = {}
    deprecated: dict[str, _Binding] = {}
    for node in module_level(tree.body):
        if isinstance(node, ast.ImportFrom):
            source = _absolute(node.module or "", node.level, package)
            for alias in node.names:
                if alias.name != "*":
                    bound[alias.asname or alias.name] = _Imported(source, alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    bound[alias.asname] = _ModuleImported(alias.name)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound[node.name] = node
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    bound[target.id] = _value(node.value)
                    if target.id == "_deprecations" and isinstance(node.value, ast.Dict):
                        deprecated.update(_served(node.value))
    return deprecated | bound


def _served(table: ast.Dict) -> Iterator[tuple[str, _Binding]]:
    for key, value in zip(table.keys, table.values, strict=True):
        if (
            isinstance(key, ast.Constant)
            and isinstance(key.value, str)
            and isinstance(value, ast.Tuple)
            and len(value.elts) == 2
        ):
            yield key.value, _value(value.elts[1])


def _value(value: ast.expr) -> _Binding:
    if isinstance(value, ast.Name):
        return _Alias(value.id)
    if isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name):
        return _Attribute(value.value.id, value.attr)
    return None


def _package(module: str, path: str) -> str:
    """The package a module's relative imports start from."""
    return module if path.endswith("/__init__.py") else module.rpartition(".")[0]


def _absolute(module: str, level: int, package: str) -> str:
    if level == 0:
        return module
    parts = package.split(".")
    base = ".".join(parts[: len(parts) - (level - 1)])
    return f"{base}.{module}" if module else base


def parameters_of(signatures: dict[str, Signature]) -> Iterator[str]:
    """Every parameter name any of ``signatures`` has, newest release's first, once each."""
    seen: dict[str, None] = {}
    for signature in reversed(signatures.values()):
        seen.update((p.name, None) for p in signature.parameters)
    yield from seen
