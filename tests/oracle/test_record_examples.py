"""Every record's before/after example, lowered by JAX itself: before fails with the
record's message, after lowers."""

from __future__ import annotations

from typing import Any

import pytest

from tests.data.test_records_data import coded_examples
from tests.oracle.jax_kernels import jax_verdict

pytestmark = pytest.mark.oracle

EXAMPLES = [pytest.param(example, id=rule) for rule, example, _ in coded_examples()]


@pytest.mark.parametrize("example", EXAMPLES)
def test_jax_fails_the_before_and_lowers_the_after(example: dict[str, Any]) -> None:
    before, after = example["before"], example["after"]
    failing = jax_verdict(
        example["operation"], tuple(before["shape"]), before["dtype"], before["targetDtype"]
    )
    assert failing.message == example["message"]
    fixed = jax_verdict(
        example["operation"], tuple(after["shape"]), after["dtype"], after["targetDtype"]
    )
    assert fixed.error_class is None, fixed
