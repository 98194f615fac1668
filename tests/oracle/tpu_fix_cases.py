"""The engine's fixes for every failure a TPU recorded, as cases for the chip to run.

    python -m tests.oracle.tpu_fix_cases     # writes data/tpu-verdicts/fixes.json

For each block case the chip refused, the engine's first three block fixes; for each VMEM
case over its limit, the ``vmem_limit_bytes`` it asks for and the blocks it shrinks
together. ``tools/tpu_verdicts.py OUT --cases data/tpu-verdicts/fixes.json`` runs them on
a TPU (``verdicts-…-fixes.jsonl``), and ``test_tpu_engine_vs_chip.py`` holds every fix to
its verdict.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from app.engines.tpu import VmemBlock, block_fixes, vmem_budget
from app.engines.tpu.vmem import SHRINK_TOGETHER

from .tpu_verdicts import VERDICTS, RecordedVerdict, recorded_verdicts, tool

FIX_CASES = VERDICTS / "fixes.json"
BLOCK_FIXES_HELD = 3  # the fixes an answer shows


def case(family: str, **parameters: Any) -> dict[str, Any]:
    """A case as tools/tpu_verdicts.py writes one, its id made by the script itself."""
    shapes = {k: tuple(v) if isinstance(v, list) else v for k, v in parameters.items()}
    made: dict[str, Any] = tool("tpu_verdicts").case(family, **shapes)
    return made


def fix_cases(recorded: Iterable[RecordedVerdict]) -> list[dict[str, Any]]:
    """The engine's fixes of the recorded failures, each once, in the recorded order."""
    found: dict[str, dict[str, Any]] = {}
    for verdict in recorded:
        if verdict.verdict != "error":
            continue
        fixes = {"block": _block_fixes, "vmem": _vmem_fixes}.get(verdict.family)
        for each in fixes(verdict.parameters) if fixes else ():
            found.setdefault(each["id"], each)
    return list(found.values())


def _block_fixes(p: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for fix in block_fixes(p["shape"], p["block"], p["dtype"], "v5e")[:BLOCK_FIXES_HELD]:
        yield case("block", shape=p["shape"], block=list(fix.shape), dtype=p["dtype"])


def _vmem_fixes(p: dict[str, Any]) -> Iterator[dict[str, Any]]:
    roles = ("input", "output")
    blocks = [VmemBlock(p["block"], p["dtype"], role, p["buffers"], p["shape"]) for role in roles]
    budget = vmem_budget(blocks, "v5e", p["limit"])
    for fix in budget.fixes:
        changed = {"limit": p["limit"], "block": p["block"]}
        if fix.kind == "vmem_limit":
            changed["limit"] = budget.needed_limit_bytes
        elif fix.kind == "block" and fix.description.startswith(SHRINK_TOGETHER):
            changed["block"] = list(fix.shape)
        else:
            continue  # one block of the two, or one input single-buffered: not this kernel
        yield case(
            "vmem",
            shape=p["shape"],
            block=changed["block"],
            dtype=p["dtype"],
            limit=changed["limit"],
            buffers=p["buffers"],
        )


def main() -> None:
    cases = fix_cases(recorded_verdicts())
    FIX_CASES.write_text(json.dumps(cases, indent=1) + "\n")
    print(f"{len(cases)} cases in {FIX_CASES}")


if __name__ == "__main__":
    main()
