"""The names Pallas's public modules export in each release, and the errors of code that
reads a name its JAX does not have.

Pallas's API moves between releases: ``pltpu.TPUCompilerParams`` became
``pltpu.CompilerParams``, ``pl.atomic_add`` moved to ``jax.experimental.pallas.triton``,
``jax.experimental.pallas.gpu`` went away. Code written for one release and run on another
meets Python's own ``AttributeError: module 'jax.experimental.pallas.tpu' has no attribute
'TPUCompilerParams'`` (``ImportError: cannot import name …`` for a ``from`` import,
``ModuleNotFoundError`` for a module), which no ``raise`` in JAX holds. Each public module of
each release (``jax/experimental/pallas/*.py`` at its tag) is read with ``ast``: the names
bound at its top level (imports, assignments, definitions, less those deleted) and the names
its ``_deprecations`` table still serves with a warning. A name some mined release lacks
gives a record of each error reading it raises, which says in which releases it is, what
JAX's deprecation notice said, and where it went: the module that exports it in the
releases without it, or the name that took its place.
"""

from __future__ import annotations

import ast
import difflib
import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import IO, Any

from app.jaxref.files import DATA_DIR
from app.jaxref.releases import release_commits, release_key, runs, source_url
from app.jaxref.scope import only_for_type_checkers
from app.jaxref.templates import compile_pattern, derive_pattern
from app.knowledge.history import source_window
from app.knowledge.sources import ReleaseSource

API_DIRECTORY = "jax/experimental/pallas"
MINED_API = DATA_DIR / "mined" / "jax-api.jsonl"
# A name that took another's place shares this much of its spelling (difflib's ratio):
# ``CompilerParams`` for ``TPUCompilerParams`` (0.90), ``MemorySpace`` for ``TPUMemorySpace``.
MIN_RENAME_SIMILARITY = 0.75
SHORT_NAMES = {
    "jax.experimental.pallas": "pl",
    "jax.experimental.pallas.tpu": "pltpu",
    "jax.experimental.pallas.mosaic_gpu": "plgpu",
    "jax.experimental.pallas.triton": "plt",
}


@dataclass(frozen=True)
class Export:
    """A public name of a module, where it is bound, and the warning reading it gives."""

    line: int
    deprecation: str | None = None


@dataclass(frozen=True)
class PublicModule:
    """One public module of one release."""

    path: str  # "jax/experimental/pallas/tpu.py"
    source: tuple[str, ...]  # its lines
    names: dict[str, Export]
    deprecation: str | None = None  # the warning importing it gives


Releases = dict[str, dict[str, PublicModule]]  # release → module name → the module


def module_name(path: str) -> str:
    """``jax/experimental/pallas/tpu.py`` → ``jax.experimental.pallas.tpu``."""
    return path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")


def exported_names(source: str) -> dict[str, Export]:
    """The public names a module's source binds when imported: top-level imports,
    assignments and definitions, in ``if`` and ``try`` blocks too but not under ``if
    TYPE_CHECKING:`` (only type checkers see those), less those ``del`` removes; and the
    keys of its ``_deprecations`` table, served with a warning unless their value is
    ``None`` (JAX then raises the deprecation message itself)."""
    names: dict[str, Export] = {}
    for node in module_level(ast.parse(source).body):
        if isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                if alias.name != "*":  # what a star brings in is the other module's
                    names[alias.asname or alias.name.split(".")[0]] = Export(node.lineno)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names[node.name] = Export(node.lineno)
        elif isinstance(node, ast.Assign) or (isinstance(node, ast.AnnAssign) and node.value):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            bound = [target.id for target in targets if isinstance(target, ast.Name)]
            names.update((name, Export(node.lineno)) for name in bound)
            if "_deprecations" in bound and isinstance(node.value, ast.Dict):
                names.update(_deprecated(node.value))
        elif isinstance(node, ast.Delete):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    names.pop(target.id, None)
    return {name: export for name, export in names.items() if not name.startswith("_")}


def import_warning(source: str) -> str | None:
    """The warning a module gives when imported: the longest string of a top-level
    ``warn(...)`` call (``deprecations.warn("pallas-gpu-triton", "The … submodule is
    deprecated. Use … instead.")``)."""
    for node in module_level(ast.parse(source).body):
        call = node.value if isinstance(node, ast.Expr) else None
        if isinstance(call, ast.Call) and _called_name(call.func) == "warn":
            texts = [a.value for a in call.args if isinstance(a, ast.Constant)]
            strings = [text for text in texts if isinstance(text, str)]
            if strings:
                return max(strings, key=len)
    return None


def _called_name(function: ast.expr) -> str:
    if isinstance(function, ast.Attribute):
        return function.attr
    return function.id if isinstance(function, ast.Name) else ""


def module_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements a module runs at import, in order, through ``if`` and ``try``."""
    for node in body:
        if isinstance(node, ast.If):
            if not only_for_type_checkers(node.test):
                yield from module_level(node.body)
            yield from module_level(node.orelse)
        elif isinstance(node, ast.Try):
            yield from module_level([*node.body, *node.orelse, *node.finalbody])
        else:
            yield node


def _deprecated(table: ast.Dict) -> dict[str, Export]:
    """The names a ``_deprecations`` table still serves, each with its warning."""
    served: dict[str, Export] = {}
    for key, value in zip(table.keys, table.values, strict=True):
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            continue
        if not isinstance(value, ast.Tuple) or len(value.elts) != 2:
            continue
        message, function = value.elts
        if isinstance(function, ast.Constant) and function.value is None:
            continue  # removed: JAX raises the message instead of serving the name
        warning = message.value if isinstance(message, ast.Constant) else None
        served[key.value] = Export(key.lineno, warning if isinstance(warning, str) else None)
    return served


def mine_api(sources: Mapping[str, ReleaseSource]) -> Releases:
    """Every public module of every release of ``sources`` (``release_sources``)."""
    mined: Releases = {}
    for release, source in sources.items():
        modules = {}
        for path in source.files(API_DIRECTORY):
            if path.endswith(".py") and path.count("/") == API_DIRECTORY.count("/") + 1:
                text = source.read(path)
                modules[module_name(path)] = PublicModule(
                    path, tuple(text.splitlines()), exported_names(text), import_warning(text)
                )
        mined[release] = modules
    return mined


def api_records(mined: Releases, curated: Iterable[dict[str, Any]] = ()) -> list[dict[str, Any]]:
    """A record of each error that reading a public name or module raises in the releases
    without it: ``AttributeError`` and ``ImportError`` for a name, ``ModuleNotFoundError``
    for a module, in module and name order; less those ``curated`` records answer."""
    return unanswered(_all_records(mined), curated)


def unanswered(
    records: Iterable[dict[str, Any]], curated: Iterable[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The ``records`` of errors no ``curated`` record's pattern already matches: people
    wrote their advice for those (``pl.load``). A curated record of Python's own message at
    JAX's call of user code (``calledBy``) answers it only there, not at a call of JAX's."""
    answered = [
        (record.get("errorClass"), compile_pattern(record["messagePattern"]))
        for record in curated
        if record.get("messagePattern") and not record.get("calledBy")
    ]
    return [
        record
        for record in records
        if not any(
            error_class == record["errorClass"] and pattern.search(record["errorMessage"])
            for error_class, pattern in answered
        )
    ]


def _all_records(mined: Releases) -> Iterator[dict[str, Any]]:
    order = list(mined)
    modules = sorted({m for release_modules in mined.values() for m in release_modules})
    for module in modules:
        having = [r for r in order if module in mined[r]]
        if len(having) < len(order):
            yield _module_record(mined, module, having)
        # A submodule's name (``pl.tpu``) is read whether or not the package binds it: a
        # ``from`` import imports it, and importing it binds it.
        names = {n for r in having for n in mined[r][module].names}
        for name in sorted(names.difference(m.rpartition(".")[2] for m in modules)):
            present = [r for r in having if name in mined[r][module].names]
            if len(present) < len(having):
                yield from _name_records(mined, module, name, present, having)


def write_api_records(records: list[dict[str, Any]], out: IO[str]) -> int:
    """The records as the dataset's JSON Lines, one envelope a line."""
    for record in records:
        out.write(json.dumps({"record": record}, sort_keys=True) + "\n")
    return len(records)


def _name_records(
    mined: Releases, module: str, name: str, present: list[str], having: list[str]
) -> list[dict[str, Any]]:
    missing = [r for r in having if r not in present]
    short = short_name(module)
    warned = [r for r in present if mined[r][module].names[name].deprecation]
    facts = f"`{short}.{name}` ({module}) is in JAX {runs(tuple(present))}"
    if warned:
        facts += f"; deprecated, with a warning, in {runs(tuple(warned))}"
    solutions = _notice([(r, mined[r][module].names[name].deprecation) for r in warned])
    solutions += _where_it_went(mined, module, name, missing)
    solutions += pin_or_upgrade(present, missing, f"{module} has `{name}`")
    without = runs(tuple(missing))
    errors = (
        ("AttributeError", f"module '{module}' has no attribute '{name}'", f"`{short}.{name}`"),
        ("ImportError", f"cannot import name '{name}' from '{module}'",
         f"`from {module} import {name}`"),
    )  # fmt: skip
    line = mined[present[-1]][module].names[name].line
    return [
        _record(
            mined, module, name, present, missing, error_class, message, line,
            f"{facts}. {code} in JAX {without}, whose {module} does not have it, raises this "
            f"{error_class}.",
            solutions,
        )
        for error_class, message, code in errors
    ]  # fmt: skip


def _module_record(mined: Releases, module: str, having: list[str]) -> dict[str, Any]:
    missing = [r for r in mined if r not in having]
    solutions = _notice([(r, mined[r][module].deprecation) for r in having])
    if release_key(missing[-1]) > release_key(having[-1]):  # removed
        had = {name for r in having for name in mined[r][module].names}
        successor = _successor(mined[missing[-1]], had)
        if successor is not None:
            other, shared = successor
            solutions.append(
                f"{shared} of the {len(had)} names {module} had are in {other} in JAX "
                f"{runs(tuple(r for r in missing if other in mined[r]))}: import them "
                "from there."
            )
    solutions += pin_or_upgrade(having, missing, f"{module} exists")
    documentation = (
        f"{module} is a module of JAX {runs(tuple(having))}; importing it in JAX "
        f"{runs(tuple(missing))}, which do not have it, raises this ModuleNotFoundError."
    )
    message = f"No module named '{module}'"
    return _record(
        mined, module, None, having, missing, "ModuleNotFoundError", message, 1,
        documentation, solutions,
    )  # fmt: skip


# What Python adds to its message: the module's file after an ImportError's, a name spelled
# like the one asked for (3.10 on for attributes, 3.12 on for imports).
_SUGGESTION = r"(?:\. Did you mean: '\w+'\?)?"
_PYTHON_SUFFIXES = {"AttributeError": _SUGGESTION, "ImportError": rf"(?: \([^()]*\))?{_SUGGESTION}"}


def _record(
    mined: Releases,
    module: str,
    name: str | None,
    present: list[str],
    missing: list[str],
    error_class: str,
    message: str,
    line: int,
    documentation: str,
    solutions: list[str],
) -> dict[str, Any]:
    """A record whose source is the line of the newest release with the name (or module),
    and ``exportedIn`` and ``missingIn`` the releases with and without it."""
    public = mined[present[-1]][module]
    pattern = derive_pattern(message)
    return release_record(
        _id(module, name or "", error_class),
        error_class,
        message,
        pattern,
        (present[-1], public.path, source_window(list(public.source), line), line),
        documentation,
        solutions,
        {
            "publicModule": module,
            "publicName": name,
            "exportedIn": present,
            "missingIn": missing,
            # Matched with what Python adds to the message, which is not JAX's.
            "matchPattern": pattern + _PYTHON_SUFFIXES.get(error_class, ""),
        },
    )


def release_record(
    record_id: str,
    error_class: str,
    message: str,
    pattern: str,
    source: tuple[str, str, tuple[str, int, int], int],
    documentation: str,
    solutions: list[str],
    facts: dict[str, Any],
) -> dict[str, Any]:
    """A record in the dataset's schema of an error of code written for another release,
    its ``source`` (release, file, window, line) pinned to that release's commit."""
    release, path, (window, start, end), line = source
    commit = release_commits()[release]
    return {
        "id": record_id,
        "repo": "jax-ml/jax",
        "errorMessage": message,
        "messagePattern": pattern,
        "errorType": "exception",
        "errorClass": error_class,
        "severity": "error",
        "filePath": path,
        "lineNumber": line,
        "sourceCode": window,
        "sourceCodeStart": start,
        "sourceCodeEnd": end,
        "githubUrl": source_url(commit, path, line, line),
        "documentation": documentation,
        "documentationSource": "derived",
        "solutions": solutions,
        "preventionTips": [
            "Pin the JAX release your kernels were written for, and read the changelog's "
            "Pallas section before moving past it.",
            "Run tests with -W error::DeprecationWarning: JAX warns before it removes a name.",
        ],
        "tags": ["jax", "pallas", "api", "release-difference"],
        "analyzedSha": commit,
        **facts,
    }


def _notice(warnings: list[tuple[str, str | None]]) -> list[str]:
    """The newest deprecation notice of those releases gave, quoted."""
    given = [(release, text) for release, text in warnings if text]
    return [f'JAX {given[-1][0]} warned: "{given[-1][1]}"'] if given else []


def pin_or_upgrade(present: list[str], missing: list[str], has: str) -> list[str]:
    """The release to move to: the last one with it, for code newer JAX broke (or written
    for releases between); else the first, for code written for a newer JAX. An upgrade
    installs the newest release, so it is advised only where the newest has it."""
    solutions = []
    if release_key(missing[-1]) > release_key(present[-1]):
        solutions.append(f"JAX {present[-1]} is the last release whose {has}: pin it.")
    elif release_key(missing[0]) < release_key(present[0]):  # the newest JAX has it
        solutions.append(
            f"{has} from JAX {present[0]} on: upgrade (pip install -U 'jax>={present[0]}')."
        )
    return solutions


def _where_it_went(mined: Releases, module: str, name: str, missing: list[str]) -> list[str]:
    """Where the name is in the releases without it: another public module exporting it,
    or, in a release that dropped it, a name new there spelled much like it."""
    order = list(mined)
    found = []
    newest = missing[-1]
    for other, public in sorted(mined[newest].items()):
        if other != module and name in public.names:
            elsewhere = [r for r in missing if other in mined[r] and name in mined[r][other].names]
            spelled = f"{short_name(other)}.{name}"
            found.append(f"`{name}` is in {other} in JAX {runs(tuple(elsewhere))}: {spelled}.")
    for release in missing:
        before = order.index(release) - 1
        if before < 0 or module not in mined[order[before]]:
            continue
        dropped_at = order[before]
        if name not in mined[dropped_at][module].names:
            continue
        new = set(mined[release][module].names) - set(mined[dropped_at][module].names)
        close = difflib.get_close_matches(name, sorted(new), n=1, cutoff=MIN_RENAME_SIMILARITY)
        if close:
            found.append(
                f"JAX {release} exports `{close[0]}` in its place: {short_name(module)}.{close[0]}."
            )
    return found


def _successor(modules: dict[str, PublicModule], had: set[str]) -> tuple[str, int] | None:
    """The module of ``modules`` exporting most of a removed module's names."""
    shared = {other: len(had & set(m.names)) for other, m in modules.items()}
    best = max(shared, key=lambda other: (shared[other], other), default=None)
    return (best, shared[best]) if best is not None and shared[best] else None


def short_name(module: str) -> str:
    """How Pallas's documentation spells a module: ``pl``, ``pltpu``, ``plgpu``…"""
    return SHORT_NAMES.get(module, module)


def _id(module: str, name: str, error_class: str) -> str:
    return hashlib.sha256(f"api:{module}:{name}:{error_class}".encode()).hexdigest()[:16]
