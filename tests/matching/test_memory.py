"""Reports of a kernel over its on-chip memory, found on whichever line they stand."""

from __future__ import annotations

from app.matching.memory import find_overflows

SMEM = (
    "Mosaic GPU kernel exceeds available shared memory: smem_bytes=262160 > max_smem_bytes=232448"
)
VMEM = "Ran out of memory in memory space vmem while allocating. Used 18.50M of 16.00M vmem."


def test_each_report_is_read_once_with_its_line_number() -> None:
    paste = "\n".join(
        [
            "I0101 12:00:00 launching kernel",
            "memory report follows",  # names memory, reports nothing
            f"ValueError: {SMEM}",
            "",
            VMEM,  # three report words on one line: read once
        ]
    )
    found = find_overflows(paste)
    assert [(o.line_number, o.backend, o.requested, o.limit) for o in found] == [
        (3, "mosaic_gpu", 262160, 232448),
        (5, "tpu", round(18.5 * 2**20), 16 * 2**20),
    ]


def test_a_report_wrapped_over_lines_is_read_once_from_its_first() -> None:
    """jax#38988, as a terminal wrapped it; the line before names memory but reports none."""
    paste = (
        "the kernel ran out of memory:\n"
        "RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in\n"
        "memory space vmem. Used 65.05M of 64.00M vmem. Exceeded vmem capacity by 1.05M\n"
        + SMEM.replace("memory: ", "memory:\n  ")
    )
    found = find_overflows(paste)
    assert [(o.line_number, o.backend, o.requested, o.limit) for o in found] == [
        (2, "tpu", round(65.05 * 2**20), 64 * 2**20),
        (4, "mosaic_gpu", 262160, 232448),
    ]


def test_xlas_tpu_allocator_names_the_memory_in_the_allocation_after_its_figures() -> None:
    """AI-Hypercomputer/maxtext#4929: a scalar-prefetch operand over SMEM; an allocation of
    VMEM after it, in another report, is VMEM's."""
    paste = (
        "RESOURCE_EXHAUSTED: Allocation (size=2097152) would exceed memory (size=1048576)\n"
        ":: #allocation3 [shape = 'u8[2097152]{0}', space=smem, size = 0x200000, scoped,\n"
        "   tag = 'prefetched SMEM operand 0'] :: splash_mha_fwd_segmented_residuals.3\n"
        "RESOURCE_EXHAUSTED: Allocation (size=33554432) would exceed memory (size=16777216)\n"
        ":: #allocation0 [shape = 'u8[33554432]{0}', space=vmem, scoped]\n"
    )
    found = find_overflows(paste)
    assert [(o.line_number, o.memory, o.requested, o.limit, o.exact) for o in found] == [
        (1, "SMEM", 2097152, 1048576, True),
        (4, "VMEM", 33554432, 16777216, True),
    ]


def test_a_paste_that_never_names_memory_has_no_report() -> None:
    assert find_overflows("smem_bytes=262160 > max_smem_bytes=232448\n" * 3) == []


def test_a_figure_that_is_no_number_is_no_report() -> None:
    """``16.3.5M`` (a paste's typo, a mangled log) reads as no figure, not as an error."""
    for text in (
        "Ran out of memory in memory space vmem. Used 16.3.5M of 16.00M vmem.",
        "Scoped allocation with size 8.0.0M and limit 2.00M exceeded scoped vmem limit by 6M",
    ):
        assert find_overflows(text) == []
