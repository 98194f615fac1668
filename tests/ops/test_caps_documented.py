"""The operations guide lists every cap on a request's work with the value the code uses."""

from __future__ import annotations

import importlib
import re

from tests.conftest import REPO_ROOT

OPERATIONS = REPO_ROOT / "docs" / "operations.md"
_ROW = re.compile(r"^\| `(?P<name>[A-Z_]+)` \| (?P<value>[^|]+) \| `(?P<path>app/[\w/]+)\.py` \|")
_UNITS = {"KiB": 1 << 10, "MiB": 1 << 20}


def _documented(value: str) -> int:
    """``1 MiB``, ``4,096``, ``2^48`` as the number they say."""
    number, _, unit = value.strip().partition(" ")
    if "^" in number:
        base, power = number.split("^")
        return int(base) ** int(power)
    return int(number.replace(",", "")) * _UNITS.get(unit, 1)


def test_each_cap_in_the_guide_is_the_code_s() -> None:
    rows = [m for line in OPERATIONS.read_text().splitlines() if (m := _ROW.match(line))]
    assert len(rows) >= 20
    for row in rows:
        module = importlib.import_module(row["path"].replace("/", "."))
        assert _documented(row["value"]) == getattr(module, row["name"]), row["name"]


def test_every_cap_on_reading_a_paste_is_in_the_guide() -> None:
    documented = set(re.findall(r"^\| `([A-Z_]+)` \|", OPERATIONS.read_text(), re.MULTILINE))
    for module in ("normalize", "tracebacks", "matcher", "raise_points", "release", "values"):
        source = (REPO_ROOT / "app" / "matching" / f"{module}.py").read_text()
        caps = set(re.findall(r"^(MAX_[A-Z_]+|[A-Z_]+_PIECE) = ", source, re.MULTILINE))
        assert caps - {"MAX_CONTROL_SHARE"} <= documented, module
