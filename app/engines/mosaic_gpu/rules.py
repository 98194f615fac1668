"""Every Mosaic GPU alignment rule by id, and the rule a message's words belong to.

The rules are data in ``catalog_rules`` (the catalog's, ranked) and ``observed_rules``
(errors JAX raises for the same constructs); their types and constants are in ``rule_types``.
This module joins the two tables in one order, the catalog's first.
"""

from __future__ import annotations

from .catalog_rules import CATALOG_RULES
from .observed_rules import OBSERVED_RULES
from .rule_types import Rule

_RULES: tuple[Rule, ...] = (*CATALOG_RULES, *OBSERVED_RULES)

RULES: dict[str, Rule] = {rule.id: rule for rule in _RULES}
# The wordings that print no value, each the words of one rule in some release.
_RULE_OF_WORDING = {
    wording.template: rule.id
    for rule in _RULES
    for wording in rule.wordings
    if wording.template and "{" not in wording.template
}


def rule_worded(message: str) -> str | None:
    """The rule that some release words exactly ``message``: how a site of Mosaic GPU mined
    from JAX's source is known as a rule's, in a release newer than the rule's record."""
    return _RULE_OF_WORDING.get(message)
