"""The catalog's message templates and rendered examples, shared by the matching tests."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from app.jaxref.templates import derive_pattern
from app.knowledge.mining import MINED_SITES
from app.matching.index import PatternEntry, PatternIndex

HERE = Path(__file__).parent
FIXTURES = HERE.parent / "fixtures"
TRACEBACKS = FIXTURES / "tracebacks"
PASTES = FIXTURES / "pastes"
SEEDS = HERE.parent.parent / "data" / "seeds"

CATALOG: list[dict[str, Any]] = json.loads((HERE / "catalog_messages.json").read_text())[
    "constraints"
]
WORDED = [rule for rule in CATALOG if rule["template"]]
EXAMPLES = [
    (rule["rule_id"], rule["template"], example["text"], example["captures"])
    for rule in WORDED
    for example in rule["rendered_examples"]
]
SEED_001 = json.loads((SEEDS / "001_08f723cb3bf58b12.txt").read_text())["record"]


def catalog_entries() -> list[PatternEntry]:
    """One entry per wording: each rule's current template, then its older ones."""
    entries = []
    for rule in WORDED:
        metadata = {"rule_id": rule["rule_id"], "exception_class": rule["exception"]}
        entries.append(
            PatternEntry(rule["rule_id"], derive_pattern(rule["template"]), "current", metadata)
        )
        for number, template in enumerate(rule.get("older_templates", []), start=1):
            variant = f"older wording {number}"
            entries.append(
                PatternEntry(rule["rule_id"], derive_pattern(template), variant, metadata)
            )
    return entries


@cache
def catalog_index() -> PatternIndex:
    """The catalog's wordings plus seed 001's own pattern (which ends in a lazy group)."""
    seed = PatternEntry(SEED_001["id"], SEED_001["messagePattern"], "seed pattern")
    return PatternIndex.build([*catalog_entries(), seed])


@cache
def mined_records() -> tuple[dict[str, Any], ...]:
    """The mined dataset's records (sites no curated record took)."""
    lines = MINED_SITES.read_text(encoding="utf-8").splitlines()
    return tuple(item["record"] for item in map(json.loads, lines) if "record" in item)


@cache
def mined_sites() -> tuple[dict[str, Any], ...]:
    """What mining says of every site, curated or not: a record's fields, or an
    annotation's mined part, with the record's id."""
    lines = MINED_SITES.read_text(encoding="utf-8").splitlines()
    return tuple(
        item["record"]
        if "record" in item
        else {**item["annotation"]["mined"], "id": item["annotation"]["recordId"]}
        for item in map(json.loads, lines)
    )


@cache
def everything() -> PatternIndex:
    """The catalog's wordings and every matchable mined site, as a full catalog holds them."""
    mined = [
        PatternEntry(r["id"], r["matchPattern"], "current", {"exception_class": r["errorClass"]})
        for r in mined_records()
        if r["matchPattern"]
    ]
    return PatternIndex.build([*catalog_entries(), *mined])


def fixture_text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


# Lines of every kind the traceback grammar knows, and some it must not be fooled by, for
# property tests that shuffle them.
_MESSAGE = "Can only transfer integer bytes (shape=[7], dtype=i4)"

# pytest's long form of a frame (the first and last of its default report): the frame's
# arguments, some of whose values span lines at any indent, its source up to the failing
# line (">"), a message another site raises among that source, the E lines, then where the
# frame is. The short summary at the end cuts the message.
PYTEST_LONG = f"""\
=================================== FAILURES ===================================
________________________________ test_int4_copy ________________________________

ctx = LoweringRuleContext(module_ctx=ModuleContext(name='_copy_body'), avals_in=[
] i
src = <OpResult object at 0x7f0a3bb56bb0>

    def _copy_gmem_to_smem_lowering(ctx, src, dst):
      if not byte_aligned:
        raise ValueError("Only byte-aligned bitcasts are supported.")
      if bits % 8:
>       raise ValueError(
            f"Can only transfer integer bytes (shape={{dst_ty.shape}},"
        )
E       ValueError: {_MESSAGE}

/usr/lib/python3.11/site-packages/jax/_src/pallas/mosaic_gpu/primitives.py:820: ValueError
=========================== short test summary info ============================
FAILED test_kernel.py::test_int4_copy - ValueError: Can only transfer integer...
========================= 1 failed, 2 passed in 3.21s ==========================
"""


TRACEBACK_LINES = [
    "Traceback (most recent call last):",
    '  File "/site-packages/jax/_src/pallas/primitives.py", line 652, in wrap',
    '    File "nested.py", line 1, in g',
    "    raise ValueError(",
    "    output = rule(ctx, *args, **kwargs)",
    "        deeper source",
    "    ^^^^^^^^^",
    "  ~~~^~~~",
    "",
    "   ",
    _MESSAGE,
    "ValueError: " + _MESSAGE,
    "jax._src.source_info_util.JaxStackTraceBeforeTransformation: ValueError: " + _MESSAGE,
    "The above exception was the direct cause of the following exception:",
    "During handling of the above exception, another exception occurred:",
    "  The above exception was the direct cause of the following exception:",
    "--------------------",
    "  + Exception Group Traceback (most recent call last):",
    "  | ValueError: x",
    "  +-+---------------- 1 ----------------",
    "Cell In[3], line 14",
    "---> 14 f()",
    "File ~/x.py:182, in f(x)",
    "    Traceback (most recent call last):",
    "> ```",
    "With context:",
    "an exception in prose",
    "log line: 42",
    "2026-08-27 09:53:25,647 INFO train.py:75] step 42 loss=6.8",
    "The stack trace below excludes JAX-internal frames.",
    "  For simplicity, JAX has removed its internal frames from the traceback.",
    "AssertionError",
    "  KeyboardInterrupt  ",
    "jax.errors.JaxRuntimeError: INTERNAL: boom",
    "Note: not an error",
    '\tFile "tabbed.py", line 2, in h',
    "<ipython-input-3-abc> in <module>",
    "lowering.py in rule(ctx, x)",
    "File <frozen runpy>:88, in _run_code",
    # pytest's report
    "________________________________ test_int4_copy ________________________________",
    "_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ ",
    "/site-packages/jax/_src/interpreters/mlir.py:2166: in jaxpr_subcomp",
    "test_kernel.py:5: ",
    "/site-packages/jax/_src/pallas/mosaic_gpu/primitives.py:820: ValueError",
    "ctx = LoweringRuleContext(module_ctx=ModuleContext(name='_copy_body'",
    "] i",
    "=========================== short test summary info ============================",
    "FAILED test_kernel.py::test_int4_copy - ValueError: Can only transfer integer...",
]
