"""The records of call errors, against Python's own errors on the installed JAX 0.10.2 and on
functions written here: each record raised in 0.10.2 is that call's exact message there, and
each call a record says 0.10.2 accepts binds."""

from __future__ import annotations

import ast
import hashlib
import importlib
import json
import textwrap
import warnings
from functools import cache
from typing import Any

import jax
import pytest

from app.jaxref.releases import ids_until
from app.jaxref.templates import compile_pattern
from app.knowledge.calls import MINED_CALLS, call_records
from app.knowledge.public_names import SHORT_NAMES
from app.knowledge.signatures import Signature, function_signature
from tests.knowledge.test_signatures import call_signature

INSTALLED = "0.10.2"
UNKNOWN = "not_a_parameter"  # a keyword no callable takes
MODULES = {short: module for module, short in SHORT_NAMES.items()}  # "pl" → its module


@cache
def committed() -> tuple[dict[str, Any], ...]:
    lines = MINED_CALLS.read_text(encoding="utf-8").splitlines()
    return tuple(json.loads(line)["record"] for line in lines)


def installed(record: dict[str, Any]) -> list[Any]:
    """The record's callable as each spelling of it serves it on the installed JAX (a
    spelling of other releases only, ``pltpu.run_scoped``, serves nothing)."""
    found = []
    for spelled in record["calledAs"]:
        short, _, name = spelled.rpartition(".")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            try:
                module = importlib.import_module(MODULES.get(short, short))
            except ModuleNotFoundError:  # jax.experimental.pallas.gpu
                continue
            if hasattr(module, name):
                found.append(getattr(module, name))
    assert found, record["calledAs"]
    return found


def the_call(record: dict[str, Any], callable_: Any) -> tuple[list[Any], dict[str, Any]]:
    """Arguments that make the record's mistake, every other required parameter given: by
    position if positional-only (those after a positional-only one left out, which a call
    cannot skip), else by keyword."""
    parameters = [
        p
        for p in call_signature(callable_).parameters.values()
        if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]
    named = record["parameter"]
    required = [p for p in parameters if p.default is p.empty and p.name != named]
    positional_only = [p.name for p in parameters if p.kind == p.POSITIONAL_ONLY]
    before = positional_only.index(named) if named in positional_only else len(positional_only)
    args = [None for p in required if p.name in positional_only[:before]]
    kwargs = {p.name: None for p in required if p.kind != p.POSITIONAL_ONLY}
    if record["callError"] in ("unexpected-keyword", "positional-only-keyword"):
        kwargs[named] = None
    elif record["callError"] == "unknown-keyword":
        kwargs[UNKNOWN] = None
    elif record["callError"] == "too-many-positional":
        # "takes 2 positional arguments but 3 were given": as many, all by position
        given = int(record["errorMessage"].rsplit(" but ", 1)[1].split()[0])
        # Python counts self among the positional arguments of a method
        bound = record["errorMessage"].split("(", 1)[0].endswith((".__init__", ".__call__"))
        args, kwargs = [None] * (given - bound), {}
    return args, kwargs


def positional_only_parameters(callable_: Any) -> list[str]:
    parameters = call_signature(callable_).parameters.values()
    return [p.name for p in parameters if p.kind == p.POSITIONAL_ONLY]


def raised_in_installed() -> list[dict[str, Any]]:
    return [r for r in committed() if INSTALLED in r["raisedIn"]]


def accepted_in_installed() -> list[dict[str, Any]]:
    return [r for r in committed() if INSTALLED in r["acceptedIn"]]


def test_the_installed_jax_is_a_release_the_records_name() -> None:
    named = {r for record in committed() for r in (*record["raisedIn"], *record["acceptedIn"])}
    assert jax.__version__ == INSTALLED
    assert INSTALLED in named


def test_each_callable_has_its_records_once_whatever_the_names_it_went_by() -> None:
    """``plt.CompilerParams`` was ``TritonCompilerParams`` of the removed
    ``jax.experimental.pallas.gpu`` too: one callable, whose records list both."""
    ids = [record["id"] for record in committed()]
    assert len(ids) == len(set(ids))
    [triton] = [
        r
        for r in committed()
        if r["callError"] == "unknown-keyword"
        and "plt.CompilerParams" in r["calledAs"]
        and r["errorMessage"].startswith("TritonCompilerParams")
    ]
    assert "jax.experimental.pallas.gpu.TritonCompilerParams" in triton["calledAs"]


def _key(release: str) -> tuple[int, ...]:
    return tuple(int(part) for part in release.split("."))


@pytest.mark.parametrize("record", raised_in_installed(), ids=lambda r: r["errorMessage"])
def test_each_call_a_record_says_the_installed_jax_refuses_raises_its_exact_message(
    record: dict[str, Any],
) -> None:
    for callable_ in installed(record):
        args, kwargs = the_call(record, callable_)
        with pytest.raises(TypeError) as caught:
            callable_(*args, **kwargs)
        found = compile_pattern(record["messagePattern"]).search(str(caught.value))
        assert found
        if record["callError"] == "unknown-keyword":
            assert found.group("keyword") == UNKNOWN
        if record["parameter"] not in positional_only_parameters(callable_):
            assert str(caught.value) == record["errorMessage"].replace("{keyword}", UNKNOWN)


@pytest.mark.parametrize("record", accepted_in_installed(), ids=lambda r: r["errorMessage"])
def test_each_call_a_record_says_the_installed_jax_accepts_binds(record: dict[str, Any]) -> None:
    """Binds as far as the record's mistake goes: a release taking more positional arguments
    than the call gave may require still more (0.10.2's ``matmul_pop(acc, shape, dtype)``)."""
    for callable_ in installed(record):
        args, kwargs = the_call(record, callable_)
        call_signature(callable_).bind_partial(*args, **kwargs)


def signature_of(source: str) -> Signature:
    """The signature ``function_signature`` reads from one ``def``."""
    [node] = ast.parse(textwrap.dedent(source)).body
    assert isinstance(node, ast.FunctionDef)
    signature = function_signature(node, node.name, "jax/_src/pallas/example.py")
    assert signature is not None
    return signature


def python_function(source: str) -> Any:
    namespace: dict[str, Any] = {}
    exec(textwrap.dedent(source), namespace)
    return next(v for k, v in namespace.items() if k != "__builtins__")


SHAPES = [
    "def f(): pass",
    "def f(a): pass",
    "def f(a, b): pass",
    "def f(a, b=1): pass",
    "def f(a=0, b=1): pass",
    "def f(a, /, b, *, c): pass",
    "def f(a, b=1, *, c=2): pass",
]


@pytest.mark.parametrize("source", SHAPES)
def test_one_positional_argument_too_many_is_worded_as_python_words_it(source: str) -> None:
    """A function of that shape where an older release took any arguments."""
    records = records_over(["def f(*args, **kwargs): pass", source])
    [record] = [r for r in records.values() if r["callError"] == "too-many-positional"]
    function = python_function(source)
    given = int(record["errorMessage"].rsplit(" but ", 1)[1].split()[0])
    with pytest.raises(TypeError) as caught:
        function(*[None] * given)
    assert str(caught.value) == record["errorMessage"]
    # Python counts the keyword-only arguments given too; the pattern reads those words.
    keyword_only = {
        p.name: None for p in signature_of(source).parameters if p.kind == "keyword-only"
    }
    with pytest.raises(TypeError) as caught:
        function(*[None] * given, **keyword_only)
    assert compile_pattern(record["messagePattern"]).search(str(caught.value))


RELEASES = ["0.4.35", "0.4.36", "0.4.37"]  # in a row
OLD, MIDDLE, NEW = RELEASES


def records_over(sources: list[str]) -> dict[str, dict[str, Any]]:
    """The records of one public function whose ``def`` in the releases up to ``NEW`` is
    each of ``sources``, by message."""
    releases = RELEASES[-len(sources) :]
    signatures = {
        release: {("jax.experimental.pallas.mosaic_gpu", "copy"): signature_of(source)}
        for release, source in zip(releases, sources, strict=True)
    }
    return {record["errorMessage"]: record for record in call_records(signatures)}


def test_parameters_required_removed_or_renamed_give_the_errors_of_their_releases() -> None:
    records = records_over(
        [
            "def copy(src, dst, dec=1, priority=0): pass",
            "def copy(src, dst, barrier, dec=1): pass",
            "def copy(src, dst, barrier, decrement=1): pass",
        ]
    )
    barrier = records["copy() missing 1 required positional argument: 'barrier'"]
    assert (barrier["raisedIn"], barrier["acceptedIn"]) == ([MIDDLE, NEW], [OLD])
    assert barrier["callError"] == "missing-argument"
    assert any("upgrade" not in s and "pin it" in s for s in barrier["solutions"])
    # Python names every argument missing; the record of each matches.
    function = python_function("def copy(src, dst, barrier, decrement=1): pass")
    with pytest.raises(TypeError) as caught:
        function()
    assert (
        str(caught.value)
        == "copy() missing 3 required positional arguments: 'src', 'dst', and 'barrier'"
    )
    assert compile_pattern(barrier["messagePattern"]).search(str(caught.value))

    priority = records["copy() got an unexpected keyword argument 'priority'"]
    assert (priority["raisedIn"], priority["acceptedIn"]) == ([MIDDLE, NEW], [OLD])
    dec = records["copy() got an unexpected keyword argument 'dec'"]
    assert dec["raisedIn"] == [NEW]
    assert dec["solutions"][0] == f"JAX {NEW} calls it `decrement`: pass decrement=… instead."
    assert len({r["id"] for r in records.values()}) == len(records)


def test_a_parameter_made_keyword_only_gives_one_positional_argument_too_many() -> None:
    records = records_over(
        ["def f(a, b, c=1): pass", "def f(a, b, c=1): pass", "def f(a, b, *, c=1): pass"]
    )
    [record] = [r for r in records.values() if r["callError"] == "too-many-positional"]
    assert record["errorMessage"] == "f() takes 2 positional arguments but 3 were given"
    assert (record["raisedIn"], record["acceptedIn"]) == ([NEW], [OLD, MIDDLE])
    assert record["solutions"][0].startswith("Pass the arguments after the first 2 by keyword.")


def test_a_keyword_made_positional_only_is_worded_as_python_words_it() -> None:
    records = records_over(
        ["def when(condition): pass", "def when(condition): pass", "def when(condition, /): pass"]
    )
    [record] = [r for r in records.values() if r["callError"] == "positional-only-keyword"]
    with pytest.raises(TypeError) as caught:
        python_function("def when(condition, /): pass")(condition=True)
    assert str(caught.value) == record["errorMessage"]
    assert record["raisedIn"] == [NEW]


def test_a_function_moved_after_its_ids_were_given_keeps_them() -> None:
    """``tpu_info.py`` moved from ``pallas/mosaic/`` to ``jax/_src/`` in 0.11.0: the records
    of its calls keep the ids given when 0.10.2 was the newest release mined, derived from
    the file it had there, while they show where it stands now."""
    moved = [
        r
        for r in committed()
        if r["filePath"] == "jax/_src/tpu_info.py" and ids_until() in r["raisedIn"]
    ]
    assert len(moved) > 10
    for record in moved:
        key = f"call:jax/_src/pallas/mosaic/tpu_info.py:{record['messagePattern']}"
        assert record["id"] == hashlib.sha256(key.encode()).hexdigest()[:16]
