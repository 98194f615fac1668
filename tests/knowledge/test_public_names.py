"""Pallas's public names per release, against the real modules of the installed JAX."""

from __future__ import annotations

import builtins
import importlib
import json
import re
import warnings
from functools import cache
from pathlib import Path
from typing import Any

import jax
import pytest

from app.jaxref.releases import release_commits
from app.knowledge.mining import DEFAULT_CURATED, curated_records
from app.knowledge.public_names import (
    MINED_API,
    PublicModule,
    Releases,
    api_records,
    exported_names,
    import_warning,
    module_name,
)

INSTALLED = "0.10.2"
PALLAS = Path(jax.__file__).parent / "experimental" / "pallas"
# "`atomic_add` is in jax.experimental.pallas.triton in JAX 0.9.0–0.10.2: plt.atomic_add."
ELSEWHERE = re.compile(r"^`(?P<name>\w+)` is in (?P<module>[\w.]+) in JAX (?P<releases>[^:]+):")


@cache
def committed() -> tuple[dict[str, Any], ...]:
    return tuple(json.loads(line)["record"] for line in MINED_API.read_text().splitlines())


def installed_modules() -> list[tuple[str, Path]]:
    return [(module_name(f"jax/experimental/pallas/{p.name}"), p) for p in PALLAS.glob("*.py")]


def in_runs(text: str) -> set[str]:
    """The releases ``runs`` wrote as ``0.4.16–0.4.33, 0.7.2``, read back from the table."""
    table = [*release_commits()]
    found: set[str] = set()
    for run in text.split(", "):
        first, _, last = run.partition("–")
        found.update(table[table.index(first) : table.index(last or first) + 1])
    return found


def read(module: str, name: str | None, error_class: str) -> None:
    """Read the name (or import the module) as the record's error says code does."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        if error_class == "ModuleNotFoundError":
            importlib.import_module(module)
        elif error_class == "AttributeError":
            getattr(importlib.import_module(module), str(name))
        else:
            exec(f"from {module} import {name}", {})  # a mined name


def test_the_installed_jax_is_a_release_mined() -> None:
    assert jax.__version__ == INSTALLED
    assert INSTALLED in release_commits()


@pytest.mark.parametrize("module, path", installed_modules(), ids=lambda value: str(value))
def test_every_name_read_from_a_module_is_one_the_real_module_serves(
    module: str, path: Path
) -> None:
    names = exported_names(path.read_text(encoding="utf-8"))
    assert names
    for name in names:
        read(module, name, "AttributeError")


def test_each_record_of_a_name_the_installed_jax_lacks_is_the_error_it_raises() -> None:
    lacking = [r for r in committed() if INSTALLED in r["missingIn"]]
    assert {r["errorClass"] for r in lacking} == {
        "AttributeError",
        "ImportError",
        "ModuleNotFoundError",
    }
    for record in lacking:
        with pytest.raises(getattr(builtins, record["errorClass"])) as raised:
            read(record["publicModule"], record["publicName"], record["errorClass"])
        assert record["errorMessage"] in str(raised.value), record["id"]


def test_each_record_of_a_name_the_installed_jax_has_is_read_without_error() -> None:
    having = [r for r in committed() if INSTALLED in r["exportedIn"]]
    assert len(having) > 100
    for record in having:
        read(record["publicModule"], record["publicName"], record["errorClass"])


def test_where_a_record_says_a_missing_name_went_the_installed_jax_serves_it() -> None:
    told = 0
    for record in committed():
        if INSTALLED not in record["missingIn"]:
            continue
        for solution in record["solutions"]:
            found = ELSEWHERE.match(solution)
            if found is not None and INSTALLED in in_runs(found["releases"]):
                read(found["module"], found["name"], "AttributeError")
                told += 1
    assert told > 10


def test_the_committed_names_of_the_installed_release_are_its_source() -> None:
    exported = {
        module: set(exported_names(path.read_text(encoding="utf-8")))
        for module, path in installed_modules()
    }
    for record in committed():
        module, name = record["publicModule"], record["publicName"]
        if name is None:
            assert (INSTALLED in record["exportedIn"]) == (module in exported)
        elif module in exported:
            assert (INSTALLED in record["exportedIn"]) == (name in exported[module]), name


def test_a_removed_module_names_its_deprecation_and_where_its_names_went() -> None:
    [gpu] = [
        r
        for r in committed()
        if r["errorClass"] == "ModuleNotFoundError"
        and r["publicModule"] == "jax.experimental.pallas.gpu"
    ]
    assert INSTALLED in gpu["missingIn"]
    with pytest.raises(ModuleNotFoundError, match=re.escape(gpu["errorMessage"])):
        read("jax.experimental.pallas.gpu", None, "ModuleNotFoundError")
    assert any("deprecated" in solution for solution in gpu["solutions"])
    assert any("jax.experimental.pallas.triton" in solution for solution in gpu["solutions"])


def test_a_curated_record_answering_an_error_leaves_no_mined_record_of_it() -> None:
    curated = curated_records(DEFAULT_CURATED)
    messages = {r["errorMessage"] for r in committed()}
    assert "module 'jax.experimental.pallas' has no attribute 'store'" not in messages
    assert "cannot import name 'store' from 'jax.experimental.pallas'" in messages
    served = releases_of(["from x import store\n", "from x import other\n"], PALLAS_INIT)
    left = {(r["publicName"], r["errorClass"]) for r in api_records(served, curated)}
    assert ("store", "AttributeError") not in left
    assert ("store", "ImportError") in left
    assert ("other", "AttributeError") in left


PALLAS_TPU, PALLAS_INIT = "jax/experimental/pallas/tpu.py", "jax/experimental/pallas/__init__.py"


def releases_of(sources: list[str], path: str = PALLAS_TPU) -> Releases:
    """The first mined releases, each with one module (``path``) of the source given."""
    return {
        release: {
            module_name(path): PublicModule(path, tuple(text.splitlines()), exported_names(text))
        }
        for release, text in zip(release_commits(), sources, strict=False)
    }


def test_a_renamed_name_is_told_by_the_one_that_took_its_place() -> None:
    mined = releases_of(
        [
            "from x import TPUMemorySpace\nfrom x import ANY\n",
            "from x import TPUMemorySpace\nfrom x import ANY\n",
            "from x import MemorySpace\nfrom x import ANY\n",
        ]
    )
    records = {r["errorMessage"]: r for r in api_records(mined)}
    removed = records["module 'jax.experimental.pallas.tpu' has no attribute 'TPUMemorySpace'"]
    third = list(mined)[2]
    assert removed["missingIn"] == [third]
    assert (
        f"JAX {third} exports `MemorySpace` in its place: pltpu.MemorySpace."
        in (removed["solutions"])
    )
    added = records["cannot import name 'MemorySpace' from 'jax.experimental.pallas.tpu'"]
    assert added["exportedIn"] == [third]
    assert any(f"'jax>={third}'" in solution for solution in added["solutions"])
    assert "module 'jax.experimental.pallas.tpu' has no attribute 'ANY'" not in records


def test_names_served_with_a_warning_deleted_or_for_type_checkers_only() -> None:
    source = "\n".join(
        [
            "import typing",
            "from x import kept as kept, gone as gone, _private",
            "from y import *",
            "del gone",
            "if typing.TYPE_CHECKING:",
            "  load = _deprecated_load",
            "else:",
            "  _deprecations = {",
            "      'load': ('pl.load is deprecated, use ref[idx].', _deprecated_load),",
            "      'removed': ('pl.removed was removed.', None),",
            "  }",
            "annotated: int",
            "assigned: int = 3",
            "from z import warnings as _w",
            "_w.warn('module-id', 'This module is deprecated. Use z instead.')",
        ]
    )
    names = exported_names(source)
    assert set(names) == {"typing", "kept", "load", "assigned"}
    assert names["load"].deprecation == "pl.load is deprecated, use ref[idx]."
    assert import_warning(source) == "This module is deprecated. Use z instead."
