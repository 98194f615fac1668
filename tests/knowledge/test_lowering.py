"""Lowering rules read from each backend's rules module, in every way JAX registers them."""

from __future__ import annotations

from pathlib import Path

import jax

from app.knowledge.lowering import LoweringRule, mine_lowering_rules, rules_by_release

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
    }


def test_the_installed_jaxs_triton_rules_are_read_whatever_registers_them() -> None:
    """JAX 0.10.2's Triton lowering registers sign by calling register_lowering on a rule,
    and its elementwise math and binary operators in loops over dicts; each lowers."""
    rules = mine_lowering_rules(Path(jax.__file__).parent.parent)
    triton = {rule.primitive for rule in rules if rule.backend == "triton"}
    assert {"sign", "erf_inv", "is_finite", "exp", "add", "sub", "lt", "max"} <= triton


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
