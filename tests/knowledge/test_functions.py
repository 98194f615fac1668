"""Where each release defines its functions, mined from JAX's source."""

from __future__ import annotations

import json
from pathlib import Path

import jax
import pytest

from app.jaxref.files import FUNCTIONS_FILE
from app.jaxref.releases import release_commits
from app.jaxref.scope import SourceTreeError, repo_root
from app.knowledge.functions import by_release, function_spans
from app.knowledge.lowering import mine_lowering_rules
from app.knowledge.python_source import mine_python


def test_the_committed_spans_of_the_installed_release_are_its_source() -> None:
    """The test extras pin a mined release; its wheel's source is mined again here (the
    wheel leaves out a few modules the git tag has, such as ``pallas/pipelining``)."""
    installed = jax.__version__
    mined = function_spans(repo_root(Path(jax.__file__).parent))
    committed = json.loads(FUNCTIONS_FILE.read_text(encoding="utf-8"))
    assert committed["releases"] == list(release_commits())
    bit = 1 << committed["releases"].index(installed)
    shipped = {
        (file, function, first, last)
        for file, functions in committed["files"].items()
        if file in mined
        for function, spans in functions.items()
        for first, last, releases in spans
        if releases & bit
    }
    assert shipped == {
        (file, function, first, last)
        for file, functions in mined.items()
        for function, spans in functions.items()
        for first, last in spans
    }
    assert len(mined) > 40 and len(shipped) > 1000


def test_a_function_spans_its_decorators_and_nested_ones_keep_their_own_name(
    tmp_path: Path,
) -> None:
    package = tmp_path / "jax" / "_src" / "pallas"
    package.mkdir(parents=True)
    (package / "core.py").write_text(
        "import functools\n"
        "\n"
        "@functools.cache\n"
        "def outer(x):\n"
        "  def wrapped(y):\n"
        "    return y\n"
        "  return wrapped\n"
        "\n"
        "class Spec:\n"
        "  async def wrapped(self):\n"
        "    pass\n",
        encoding="utf-8",
    )
    (package / "pallas_test_util.py").write_text("def helper():\n  pass\n", encoding="utf-8")
    spans = function_spans(tmp_path)
    assert spans == {
        "jax/_src/pallas/core.py": {"outer": [(3, 7)], "wrapped": [(5, 6), (10, 11)]},
    }


def test_a_file_python_cannot_parse_is_an_error_naming_it(tmp_path: Path) -> None:
    """Skipping it would leave its functions unplaced and its sites unmined: JAX 0.11 and
    later are written for Python 3.12, which an older Python cannot read."""
    package = tmp_path / "jax" / "_src" / "pallas" / "mosaic_gpu"
    package.mkdir(parents=True)
    # a rule registered, or the lowering-rules miner would not read the module
    (package / "lowering.py").write_text("@register_lowering_rule(abs_p)\ndef f[T](:\n", "utf-8")
    named = r"jax/_src/pallas/mosaic_gpu/lowering\.py: Python 3\.\d+ cannot parse it"
    for mine in (function_spans, mine_python, mine_lowering_rules):
        with pytest.raises(SourceTreeError, match=named):
            mine(tmp_path)


def test_releases_defining_a_function_alike_share_its_span() -> None:
    merged = by_release(
        [
            ("0.4.30", {"a.py": {"f": [(1, 5)]}}),
            ("0.4.31", {"a.py": {"f": [(1, 5)], "g": [(7, 9)]}}),
            ("0.5.0", {"a.py": {"f": [(2, 6)]}}),
        ]
    )
    assert merged == {
        "releases": ["0.4.30", "0.4.31", "0.5.0"],
        "files": {"a.py": {"f": [[1, 5, 0b011], [2, 6, 0b100]], "g": [[7, 9, 0b010]]}},
    }
