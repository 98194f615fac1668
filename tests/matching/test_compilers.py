"""Messages of the compilers JAX hands a TPU kernel to, read through JAX's wrappers: each
from a real report."""

from __future__ import annotations

import pytest

from app.matching.compilers import compiler_messages

CASES = [
    # jax#30104: the message on the wrapper's own line
    (
        "XlaRuntimeError: INTERNAL: Mosaic failed to compile TPU kernel: Target does not "
        "support this comparison\n\nThe MLIR operation involved:\n",
        1,
        "libtpu (Mosaic's TPU compiler)",
        "Target does not support this comparison",
    ),
    # sgl-project/sglang-jax#1546: the message on the line after the wrapper
    (
        "Traceback (most recent call last):\n"
        "jax.errors.JaxRuntimeError: INVALID_ARGUMENT: Mosaic failed to compile TPU kernel:\n"
        "Failed to set window params for output 0: E2002: CompileTimeMosaicMisalignedBlock\n",
        2,
        "libtpu (Mosaic's TPU compiler)",
        "Failed to set window params for output 0: E2002: CompileTimeMosaicMisalignedBlock",
    ),
    # pytorch/xla#8797: quoted in inline code
    (
        "`RuntimeError: Bad StatusOr access: INTERNAL: Mosaic failed to compile TPU kernel: "
        "Slice shape along dimension 2 must be aligned to tiling (8), but is 2.`",
        1,
        "libtpu (Mosaic's TPU compiler)",
        "Slice shape along dimension 2 must be aligned to tiling (8), but is 2.",
    ),
    # jax#38988
    (
        "RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in\n"
        "memory space vmem. Used 65.05M of 64.00M vmem.",
        1,
        "libtpu (XLA's TPU compiler)",
        "Ran out of memory in",
    ),
]


@pytest.mark.parametrize(("paste", "line", "compiler", "message"), CASES)
def test_a_compilers_message_is_read_from_behind_jaxs_wrapper(
    paste: str, line: int, compiler: str, message: str
) -> None:
    [said] = compiler_messages(paste)
    assert (said.line, said.compiler, said.message) == (line, compiler, message)
    assert "libtpu" in said.why


def test_a_paste_without_a_wrapper_has_no_compilers_message() -> None:
    assert compiler_messages("ValueError: Target does not support this comparison") == []
