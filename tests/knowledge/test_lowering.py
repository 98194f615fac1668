"""Lowering rules read from each backend's rules module, in every way JAX registers them."""

from __future__ import annotations

import functools
import importlib
from pathlib import Path

import jax

from app.knowledge.lowering import (
    TPU_CORE_TYPES,
    LoweringRule,
    mine_lowering_rules,
    rules_by_release,
)

SOURCE = Path(__file__).parents[1] / "fixtures" / "jax_source"


def test_every_way_of_registering_a_rule_is_read() -> None:
    rules = mine_lowering_rules(SOURCE)
    assert rules == {
        # decorators, with the semantics they name
        LoweringRule("mosaic_gpu", "copy_gmem_to_smem", "Lane"),
        LoweringRule("mosaic_gpu", "abs", "Warpgroup"),
        LoweringRule("triton", "abs", "default"),
        # an item of a semantics' table, and a table's update
        LoweringRule("mosaic_gpu", "exp", "Lane"),
        LoweringRule("mosaic_gpu", "log", "Warpgroup"),
        # loops over literal lists, of semantics and of primitives
        LoweringRule("mosaic_gpu", "max", "Lane"),
        LoweringRule("mosaic_gpu", "max", "Warpgroup"),
        LoweringRule("mosaic_gpu", "add", "Warpgroup"),
        LoweringRule("mosaic_gpu", "sub", "Warpgroup"),
        # the registering call applied to a rule, and a loop over a module's dict
        LoweringRule("triton", "sign", "default"),
        LoweringRule("triton", "is_finite", "default"),
        LoweringRule("triton", "logistic", "default"),
        LoweringRule("triton", "eq", "default"),
        LoweringRule("triton", "ne", "default"),
        # by the name the primitive is created with (Primitive('masked_load')), not its
        # variable's
        LoweringRule("triton", "masked_load", "default"),
        LoweringRule("triton", "masked_swap", "default"),
        # registered by a module beside the lowering (not by ``mlir.register_lowering``)
        LoweringRule("mosaic_gpu", "print_layout", "Lane"),
        # SparseCore's registering call, a partial of TPU's with kernel types of its own,
        # called in its module and from another; every core type, spelled as the enum's
        LoweringRule("tpu", "get", "SC scalar subcore"),
        LoweringRule("tpu", "get", "SC vector subcore"),
        LoweringRule("tpu", "cumsum", "SC scalar subcore"),
        LoweringRule("tpu", "cumsum", "SC vector subcore"),
        LoweringRule("tpu", "abs", "TensorCore"),
        LoweringRule("tpu", "abs", "SC scalar subcore"),
        LoweringRule("tpu", "abs", "SC vector subcore"),
    }


def test_the_installed_jaxs_rules_tables_are_read_whole_by_primitive_name() -> None:
    """Mined from the installed JAX's source, each backend lowers the primitives its live
    rules tables hold once Pallas's public modules are imported, for the same semantics and
    core types, by the names error messages print (``masked_load``, ``remat2``,
    ``prng_split``), however and wherever in the backend's package the source registers
    them, Pallas's modules outside the backends' packages included (``einshape.py``
    registers TPU's ``einshape_lo`` through TPU's lowering module)."""
    for public in ("tpu", "mosaic_gpu", "triton", "tpu_sc", "fuser"):
        importlib.import_module(f"jax.experimental.pallas.{public}")
    importlib.import_module("jax._src.pallas.einshape")
    from jax._src.pallas.mosaic import lowering as tpu
    from jax._src.pallas.mosaic_gpu import lowering as mosaic_gpu
    from jax._src.pallas.triton import lowering as triton

    live = {("triton", p.name, "default"): rule for p, rule in triton.triton_lowering_rules.items()}
    for core_type, table in tpu.lowering_rules.items():
        named = TPU_CORE_TYPES[core_type.name.lower()]
        live |= {("tpu", p.name, named): rule for p, rule in table.items()}
    for (lowering_semantics, _), table in mosaic_gpu.mosaic_lowering_rules.items():
        live |= {("mosaic_gpu", p.name, lowering_semantics.name): r for p, r in table.items()}
    rules = mine_lowering_rules(Path(jax.__file__).parent.parent)
    mined = {(rule.backend, rule.primitive, rule.semantics) for rule in rules}
    assert mined <= live.keys()
    assert ("tpu", "einshape_lo", "TensorCore") in mined
    missed = {entry: _defined_in(live[entry]) for entry in live.keys() - mined}
    in_pallas = [entry for entry, module in missed.items() if module.startswith("jax._src.pallas.")]
    assert in_pallas == []


def _defined_in(rule: object) -> str:
    """The module a rule was written in, through the partials that wrap it."""
    while isinstance(rule, functools.partial):
        rule = rule.func
    return getattr(rule, "__module__", None) or ""


def test_rules_are_listed_with_the_releases_that_register_them() -> None:
    abs_rule = LoweringRule("mosaic_gpu", "abs", "Lane")
    exp_rule = LoweringRule("tpu", "exp", "TensorCore")
    listed = rules_by_release(
        [("0.10.2", {abs_rule, exp_rule}), ("0.9.0", {abs_rule}), ("0.8.2", set())]
    )
    assert listed == [
        {
            "backend": "mosaic_gpu",
            "primitive": "abs",
            "semantics": "Lane",
            "releases": ["0.9.0", "0.10.2"],
        },
        {"backend": "tpu", "primitive": "exp", "semantics": "TensorCore", "releases": ["0.10.2"]},
    ]
