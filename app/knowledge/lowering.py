"""The lowering rules each release registers: which primitive lowers on which backend, and
for which lowering semantics (Mosaic GPU's Lane and Warpgroup; TPU's core types).

Rules are registered four ways in JAX's source, all read here: a decorator
(``@register_lowering_rule(lax.abs_p, mgpu.LoweringSemantics.Lane)``) or the same call
applied to a rule (``register_lowering(lax.sign_p)(lower_fun(…))``), an item assignment
(``lowering_rules[kind][lax.abs_p] = rule``), also in a loop over a literal list or over a
module's dict (``for prim, fn in _JAX_FN_MAPPING.items(): triton_lowering_rules[prim] = …``),
and a dict update of a rules table
(``mosaic_lowering_rules[LANExWG_SEMANTICS].update({lax.abs_p: rule})``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from app.knowledge.releases import release_key
from app.knowledge.scope import backend_of, parse_python

# The rules of every release, as mined and committed (``errata mine-releases`` writes it).
MINED_RULES = Path(__file__).resolve().parents[2] / "data" / "lowering-rules.json"

# The modules holding each backend's rules table.
_LOWERING_MODULES = (
    "jax/_src/pallas/mosaic_gpu/lowering.py",
    "jax/_src/pallas/triton/lowering.py",
    "jax/_src/pallas/mosaic/lowering.py",
    "jax/_src/pallas/mosaic/sc_lowering.py",
)
# Semantics named by the key of a rules table or a decorator's argument.
_SEMANTICS = (
    ("LANE", "Lane"),
    ("WG", "Warpgroup"),
    ("WARPGROUP", "Warpgroup"),
    ("SC_VECTOR", "SC vector subcore"),
    ("SC_SCALAR", "SC scalar subcore"),
    ("TC", "TensorCore"),
)
_DEFAULT_SEMANTICS = {"mosaic_gpu": "Lane", "tpu": "TensorCore", "triton": "default"}


@dataclass(frozen=True, order=True)
class LoweringRule:
    backend: str
    primitive: str
    semantics: str


def mine_lowering_rules(root: Path) -> set[LoweringRule]:
    rules: set[LoweringRule] = set()
    for file_path in _LOWERING_MODULES:
        file = root / file_path
        if file.is_file():
            tree = parse_python(file_path, file)
            backend = backend_of(file_path)
            rules.update(LoweringRule(backend, p, s) for p, s in _registrations(tree, backend))
    return rules


def _registrations(tree: ast.Module, backend: str) -> Iterator[tuple[str, str]]:
    yield from _in_body(tree.body, backend, {}, _module_dicts(tree))


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
    body: list[ast.stmt], backend: str, env: dict[str, ast.expr], dicts: dict[str, ast.Dict]
) -> Iterator[tuple[str, str]]:
    """Registrations at module level, with a ``for`` over a literal list or a module's dict
    unrolled (``for op, impl in [(lax.add_p, …), …]: rules[…][op] = …`` registers each
    ``op``)."""
    for node in body:
        if isinstance(node, ast.For):
            for element in _loop_elements(node.iter, dicts) or []:
                yield from _in_body(node.body, backend, env | _bind(node.target, element), dicts)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for decorator in node.decorator_list:
                yield from _from_decorator(decorator, backend)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Subscript) and _is_rules_table(target.value):
                    primitive = _primitive(_resolved(target.slice, env))
                    if primitive:
                        yield primitive, _semantics_of(target.value, backend, env)
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            yield from _from_update(node.value, backend, env)
            # register_lowering(p)(rule), also in a loop over primitives
            yield from _from_decorator(node.value.func, backend, env)
        else:
            for field in ("body", "orelse", "finalbody"):
                yield from _in_body(getattr(node, field, None) or [], backend, env, dicts)


def _from_update(
    call: ast.Call, backend: str, env: dict[str, ast.expr]
) -> Iterator[tuple[str, str]]:
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr == "update"):
        return
    if not _is_rules_table(func.value):
        return
    for argument in call.args:
        if isinstance(argument, ast.Dict):
            for key in argument.keys:
                primitive = _primitive(_resolved(key, env)) if key is not None else None
                if primitive:
                    yield primitive, _semantics_of(func.value, backend, env)


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
    decorator: ast.expr, backend: str, env: dict[str, ast.expr] | None = None
) -> Iterator[tuple[str, str]]:
    if not isinstance(decorator, ast.Call):
        return
    name = ast.unparse(decorator.func).split(".")[-1]
    if not name.startswith(("register_lowering", "_register_lowering")) or not decorator.args:
        return
    primitive = _primitive(_resolved(decorator.args[0], env or {}))
    if primitive is None:
        return
    named = [ast.unparse(arg) for arg in decorator.args[1:2]]
    named += [
        ast.unparse(kw.value)
        for kw in decorator.keywords
        if kw.arg in ("lowering_semantics", "kernel_types", "semantics")
    ]
    found = [s for text in named for s in _semantics_in(text)]
    for semantics in found or [_DEFAULT_SEMANTICS.get(backend, "default")]:
        yield primitive, semantics


def _is_rules_table(node: ast.expr) -> bool:
    return "lowering_rules" in ast.unparse(node)


def _primitive(node: ast.expr) -> str | None:
    """``lax.abs_p`` → ``abs``; anything else is not a primitive named in the source."""
    text = ast.unparse(node).split(".")[-1]
    return text.removesuffix("_p") if text.endswith("_p") and text.isidentifier() else None


def _semantics_of(table: ast.expr, backend: str, env: dict[str, ast.expr]) -> str:
    """``rules[LANExWG_SEMANTICS]`` → Lane; ``rules[semantics]`` as the loop binds it."""
    key = table.slice if isinstance(table, ast.Subscript) else table
    found = _semantics_in(ast.unparse(_resolved(key, env)))
    return found[0] if found else _DEFAULT_SEMANTICS.get(backend, "default")


def _semantics_in(text: str) -> list[str]:
    """``mgpu.LoweringSemantics.Lane`` → Lane; ``LANExWG_SEMANTICS`` (lowering × primitive
    semantics) → Lane; ``[CoreType.TC, CoreType.SC_VECTOR_SUBCORE]`` → both."""
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
