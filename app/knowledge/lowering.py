"""The lowering rules each release registers: which primitive lowers on which backend, and
for which lowering semantics (Mosaic GPU's Lane and Warpgroup; TPU's core types).

Rules are registered four ways in JAX's source, all read here: a decorator
(``@register_lowering_rule(lax.abs_p, mgpu.LoweringSemantics.Lane)``) or the same call
applied to a rule (``register_lowering(lax.sign_p)(lower_fun(…))``), an item assignment
(``lowering_rules[kind][lax.abs_p] = rule``), also in a loop over a literal list or over a
module's dict (``for prim, fn in _JAX_FN_MAPPING.items(): triton_lowering_rules[prim] = …``),
and a dict update of a rules table
(``mosaic_lowering_rules[LANExWG_SEMANTICS].update({lax.abs_p: rule})``).

A primitive is listed by the name JAX gives it, which error messages print: ``lax.abs_p`` is
``abs``, but ``primitives.load_p`` is ``masked_load``, read from its module's
``load_p = jax_core.Primitive('masked_load')``.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from app.jaxref.files import DATA_DIR
from app.jaxref.releases import release_key
from app.jaxref.scope import backend_of, parse_python

# The rules of every release, as mined and committed (``errata admin mine-releases`` writes it).
MINED_RULES = DATA_DIR / "lowering-rules.json"

# Pallas's source. Each backend's package registers its rules, from its lowering module and
# from the modules beside it (``@lowering.register_lowering_rule(print_layout_p, …)`` in Mosaic
# GPU's primitives.py); modules elsewhere in Pallas register a backend's rule through its
# lowering module (``@tpu_lowering.register_lowering_rule(einshape_lo_p)`` in einshape.py).
_PALLAS = "jax/_src/pallas"
# What a module holds to register a rule: only such modules are parsed.
_REGISTERS = re.compile(rb"register_lowering|lowering_rules")
# Semantics named by the key of a rules table or a decorator's argument.
_SEMANTICS = (
    ("LANE", "Lane"),
    ("WG", "Warpgroup"),
    ("WARPGROUP", "Warpgroup"),
    ("SC_VECTOR", "SC vector subcore"),
    ("SC_SCALAR", "SC scalar subcore"),
    ("TC", "TensorCore"),
)
# Every core type: ``kernel_types=[*tpu_core.CoreType]`` (``KernelType`` in earlier releases).
_EVERY_CORE_TYPE = re.compile(r"\*\s*[\w.]*(?:CoreType|KernelType)\b(?!\.)")
# TPU's core types as errata names them, by the enum member's name in lower case.
TPU_CORE_TYPES = {
    "tc": "TensorCore",
    "sc_scalar_subcore": "SC scalar subcore",
    "sc_vector_subcore": "SC vector subcore",
}
# The keywords of a registering call that name semantics or kernel types.
_KINDS = ("lowering_semantics", "kernel_types", "semantics")
_DEFAULT_SEMANTICS = {"mosaic_gpu": "Lane", "tpu": "TensorCore", "triton": "default"}


@dataclass(frozen=True, order=True)
class LoweringRule:
    backend: str
    primitive: str
    semantics: str


@dataclass(frozen=True)
class _RulesModule:
    """What a rules module's registrations are read against."""

    # the package's backend; ``None`` outside the backends' packages
    backend: str | None
    dicts: dict[str, ast.Dict]
    # ``primitives.load_p`` → ``masked_load``, where the name is not the variable's
    primitive_names: dict[str, str]
    # ``sc_lowering.register_lowering_rule`` → its kernel types where a call names none
    registering_defaults: dict[str, list[str]]
    # outside the backends' packages, ``tpu_lowering`` → tpu: the backends of imported names
    imported_backends: dict[str, str]

    def registering_backend(self, call: str) -> str | None:
        """The backend a registering call (``tpu_lowering.register_lowering_rule``) registers
        into; ``None`` for Pallas's own ``register_lowering_rule`` outside the packages."""
        if self.backend is not None:
            return self.backend
        receiver, _, name = call.rpartition(".")
        return self.imported_backends.get(receiver or name)


def mine_lowering_rules(root: Path) -> set[LoweringRule]:
    """Every rule registered in Pallas's source: in a backend's package as that backend's, and
    elsewhere as the backend whose registering call the module imports."""
    trees = {
        file: parse_python(file.relative_to(root).as_posix(), file)
        for file in sorted((root / _PALLAS).rglob("*.py"))
        if _REGISTERS.search(file.read_bytes())
    }
    defaults = {file: _registering_partials(tree) for file, tree in trees.items()}
    created = cache(_created_in)
    rules: set[LoweringRule] = set()
    for file, tree in trees.items():
        backend = backend_of(file.relative_to(root).as_posix())
        module = _RulesModule(
            None if backend == "core" else backend,
            _module_dicts(tree),
            _as_spelled(tree, root, file, created),
            _as_spelled(tree, root, file, lambda path: defaults.get(path, {})),
            _imported_backends(tree) if backend == "core" else {},
        )
        rules.update(_in_body(tree.body, module, {}))
    return rules


def _imported_backends(tree: ast.Module) -> dict[str, str]:
    """The names a module imports from a backend's package, with their backend
    (``from jax._src.pallas.mosaic import lowering as tpu_lowering``: tpu_lowering, tpu)."""
    imported: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            named = [
                (alias.asname or alias.name, f"{node.module}.{alias.name}") for alias in node.names
            ]
        elif isinstance(node, ast.Import):
            named = [(alias.asname or alias.name, alias.name) for alias in node.names]
        else:
            continue
        for name, dotted in named:
            backend = backend_of(dotted.replace(".", "/") + "/")
            if backend != "core":
                imported[name] = backend
    return imported


def _as_spelled[T](
    tree: ast.Module, root: Path, file: Path, read: Callable[[Path], Mapping[str, T]]
) -> dict[str, T]:
    """What ``read`` finds of a module's top-level names, of this module and of each it
    imports from JAX's source under ``root``, by how this module spells each name
    (``primitives.load_p``, an imported ``load_p``, its own ``load_p``)."""
    spelled = dict(read(file))
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            package = root.joinpath(*node.module.split("."))
            for alias in node.names:
                prefix = alias.asname or alias.name
                in_module = read(package / f"{alias.name}.py")
                spelled |= {f"{prefix}.{name}": value for name, value in in_module.items()}
                in_package = read(package.with_suffix(".py"))
                if alias.name in in_package:
                    spelled[prefix] = in_package[alias.name]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                in_module = read(root.joinpath(*alias.name.split(".")).with_suffix(".py"))
                prefix = alias.asname or alias.name
                spelled |= {f"{prefix}.{name}": value for name, value in in_module.items()}
    return spelled


def _registering_partials(tree: ast.Module) -> dict[str, list[str]]:
    """The registering calls a module makes with kernel types of its own, by name:
    SparseCore's ``register_lowering_rule = functools.partial(tc_lowering.register_lowering_rule,
    kernel_types=(CoreType.SC_SCALAR_SUBCORE, CoreType.SC_VECTOR_SUBCORE))``."""
    partials = {}
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)):
            continue
        call = node.value
        if not (ast.unparse(call.func).endswith("partial") and call.args):
            continue
        if "register_lowering" not in ast.unparse(call.args[0]):
            continue
        given = [_semantics_in(ast.unparse(kw.value)) for kw in call.keywords if kw.arg in _KINDS]
        for target in node.targets:
            if isinstance(target, ast.Name) and given:
                partials[target.id] = given[0]
    return partials


# ``load_p = jax_core.Primitive('masked_load')`` at module level (``core.CallPrimitive`` too)
_CREATED_PRIMITIVE = re.compile(r"""^(\w+_p) = [\w.]*Primitive\(\s*['"](\w+)['"]""", re.M)


def _created_in(file: Path) -> dict[str, str]:
    """``{"load_p": "masked_load"}``: each primitive a module creates under a name that is
    not its variable's. A regular expression, not a parse: every module a rules module
    imports is read, in every release."""
    if not file.is_file():
        return {}
    return {
        var: name
        for var, name in _CREATED_PRIMITIVE.findall(file.read_text(encoding="utf-8"))
        if var != f"{name}_p"
    }


def _module_dicts(tree: ast.Module) -> dict[str, ast.Dict]:
    """The module's dicts written out (``_JAX_FN_MAPPING = {lax.abs_p: …, …}``), by name."""
    return {
        target.id: node.value
        for node in tree.body
        if isinstance(node, ast.Assign | ast.AnnAssign) and isinstance(node.value, ast.Dict)
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(target, ast.Name)
    }


def _loop_elements(loop: ast.expr, dicts: dict[str, ast.Dict]) -> list[ast.expr] | None:
    """What a ``for`` binds, where the source spells it out: a literal list, or a module
    dict's keys or ``.items()``; ``None`` for anything else."""
    if isinstance(loop, ast.List | ast.Tuple):
        return list(loop.elts)
    named, method = loop, None
    if isinstance(loop, ast.Call) and isinstance(loop.func, ast.Attribute) and not loop.args:
        named, method = loop.func.value, loop.func.attr
    if not isinstance(named, ast.Name) or named.id not in dicts or method not in (None, "items"):
        return None
    table = dicts[named.id]
    keys = [key for key in table.keys if key is not None]
    if method == "items":
        return [ast.Tuple([key, value]) for key, value in zip(keys, table.values, strict=False)]
    return keys


def _in_body(
    body: list[ast.stmt], module: _RulesModule, env: dict[str, ast.expr]
) -> Iterator[LoweringRule]:
    """Registrations at module level, with a ``for`` over a literal list or a module's dict
    unrolled (``for op, impl in [(lax.add_p, …), …]: rules[…][op] = …`` registers each
    ``op``)."""
    for node in body:
        if isinstance(node, ast.For):
            for element in _loop_elements(node.iter, module.dicts) or []:
                yield from _in_body(node.body, module, env | _bind(node.target, element))
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for decorator in node.decorator_list:
                yield from _from_decorator(decorator, module, env)
        elif isinstance(node, ast.Assign) and module.backend is not None:
            for target in node.targets:
                if isinstance(target, ast.Subscript) and _is_rules_table(target.value):
                    primitive = _primitive(_resolved(target.slice, env), module)
                    if primitive:
                        semantics = _semantics_of(target.value, module.backend, env)
                        yield LoweringRule(module.backend, primitive, semantics)
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            yield from _from_update(node.value, module, env)
            # register_lowering(p)(rule), also in a loop over primitives
            yield from _from_decorator(node.value.func, module, env)
        else:
            for field in ("body", "orelse", "finalbody"):
                yield from _in_body(getattr(node, field, None) or [], module, env)


def _from_update(
    call: ast.Call, module: _RulesModule, env: dict[str, ast.expr]
) -> Iterator[LoweringRule]:
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr == "update") or module.backend is None:
        return
    if not _is_rules_table(func.value):
        return
    for argument in call.args:
        if isinstance(argument, ast.Dict):
            for key in argument.keys:
                primitive = _primitive(_resolved(key, env), module) if key is not None else None
                if primitive:
                    semantics = _semantics_of(func.value, module.backend, env)
                    yield LoweringRule(module.backend, primitive, semantics)


def _bind(target: ast.expr, element: ast.expr) -> dict[str, ast.expr]:
    if isinstance(target, ast.Name):
        return {target.id: element}
    if isinstance(target, ast.Tuple) and isinstance(element, ast.Tuple):
        bound: dict[str, ast.expr] = {}
        for name, value in zip(target.elts, element.elts, strict=False):
            bound |= _bind(name, value)
        return bound
    return {}


def _resolved(node: ast.expr, env: dict[str, ast.expr]) -> ast.expr:
    return env.get(node.id, node) if isinstance(node, ast.Name) else node


def _from_decorator(
    decorator: ast.expr, module: _RulesModule, env: dict[str, ast.expr]
) -> Iterator[LoweringRule]:
    if not isinstance(decorator, ast.Call):
        return
    call = ast.unparse(decorator.func)
    receiver, _, name = call.rpartition(".")
    if not name.startswith(("register_lowering", "_register_lowering")) or not decorator.args:
        return
    if receiver == "mlir":  # JAX's lowering of a primitive outside kernels, not Pallas's
        return
    backend = module.registering_backend(call)
    if backend is None:
        return
    primitive = _primitive(_resolved(decorator.args[0], env), module)
    if primitive is None:
        return
    named = [ast.unparse(arg) for arg in decorator.args[1:2]]
    named += [ast.unparse(kw.value) for kw in decorator.keywords if kw.arg in _KINDS]
    found = [s for text in named for s in _semantics_in(text)]
    found = found or module.registering_defaults.get(call, [])
    for semantics in found or [_DEFAULT_SEMANTICS.get(backend, "default")]:
        yield LoweringRule(backend, primitive, semantics)


def _is_rules_table(node: ast.expr) -> bool:
    return "lowering_rules" in ast.unparse(node)


def _primitive(node: ast.expr, module: _RulesModule) -> str | None:
    """``lax.abs_p`` → ``abs``, ``primitives.load_p`` → ``masked_load``; anything else is not
    a primitive named in the source."""
    spelled = ast.unparse(node)
    if spelled in module.primitive_names:
        return module.primitive_names[spelled]
    text = spelled.split(".")[-1]
    return text.removesuffix("_p") if text.endswith("_p") and text.isidentifier() else None


def _semantics_of(table: ast.expr, backend: str, env: dict[str, ast.expr]) -> str:
    """``rules[LANExWG_SEMANTICS]`` → Lane; ``rules[semantics]`` as the loop binds it."""
    key = table.slice if isinstance(table, ast.Subscript) else table
    found = _semantics_in(ast.unparse(_resolved(key, env)))
    return found[0] if found else _DEFAULT_SEMANTICS.get(backend, "default")


def _semantics_in(text: str) -> list[str]:
    """``mgpu.LoweringSemantics.Lane`` → Lane; ``LANExWG_SEMANTICS`` (lowering × primitive
    semantics) → Lane; ``[CoreType.TC, CoreType.SC_VECTOR_SUBCORE]`` → both;
    ``[*tpu_core.CoreType]`` → every core type."""
    if _EVERY_CORE_TYPE.search(text):
        return list(TPU_CORE_TYPES.values())
    upper = text.upper()
    last = upper.split(".")[-1]
    if last.endswith("_SEMANTICS") and "X" in last:
        upper = last.split("X")[0]
    names: list[str] = []
    for marker, name in _SEMANTICS:
        if marker in upper and name not in names:
            names.append(name)
    return names


def rules_by_release(mined: Iterable[tuple[str, set[LoweringRule]]]) -> list[dict[str, object]]:
    """``[{"backend", "primitive", "semantics", "releases": [...]}]``, sorted, for ``data/``."""
    releases: dict[LoweringRule, list[str]] = {}
    for release, rules in sorted(mined, key=lambda item: release_key(item[0])):
        for rule in rules:
            releases.setdefault(rule, []).append(release)
    return [
        {
            "backend": rule.backend,
            "primitive": rule.primitive,
            "semantics": rule.semantics,
            "releases": found,
        }
        for rule, found in sorted(releases.items())
    ]
