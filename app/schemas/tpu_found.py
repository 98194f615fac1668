"""What a match computes for a Pallas TPU error its paste states the values of."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from app.schemas.tpu_compute import TpuComputeResponse

TpuFoundKind = Literal["block", "tiling", "vmem", "offset", "matmul"]


class TpuCodeOut(BaseModel):
    """A change of the paste's own code: its lines before and after, in its order."""

    before: str
    after: str


class TpuTilingOut(BaseModel):
    """libtpu's E2002: the operand's tile, and the nearest blocks of whole tiles."""

    operand: str | None
    blockShape: list[int]
    tile: list[int] = Field(description="(rows, lanes) of one tile of the operand's dtype.")
    blocks: list[list[int]] = Field(description="Blocks of whole tiles, nearest first.")
    code: list[TpuCodeOut | None] = Field(
        default_factory=list,
        description="Per block, the paste's BlockSpecs and grid changed to it; null where "
        "the paste's code does not write the block.",
    )


class TpuMatmulOut(BaseModel):
    lhsDtype: str
    rhsDtype: str
    accDtype: str | None
    precision: str | None = Field(
        None, description='"highest" where the message shows the dot asked for it ("Bad lhs type").'
    )
    supported: bool
    reason: str
    alternatives: list[list[str]] = Field(
        description="(lhs, rhs, accumulator) dtypes the chip multiplies, nearest first."
    )


class TpuOffsetOut(BaseModel):
    """A dynamic start Mosaic cannot prove aligned (E2003)."""

    axis: str = Field(description="lane or sublane")
    dimension: int
    multiple: int
    advice: str


class TpuFoundOut(BaseModel):
    model_config = ConfigDict(use_attribute_docstrings=True)

    kind: TpuFoundKind
    lineNumber: int
    copies: list[int] = Field(default_factory=list)
    """Every line the same message with the same values stands on (a traceback prints it
    again at its end)."""
    chip: str
    jaxVersion: str | None
    assumed: list[str] = Field(default_factory=list)
    """What the paste does not state and the answer takes as the engine's default: the chip
    (v5e) where it names none, a dtype where the check needs only its width."""
    compute: TpuComputeResponse | None = None
    """A block's or a VMEM budget's verdict and verified fixes, as `/api/compute` answers."""
    tiling: TpuTilingOut | None = None
    matmul: TpuMatmulOut | None = None
    offset: TpuOffsetOut | None = None
    requestedBytes: int | None = None
    """VMEM: what the compiler's report says the kernel asked for, and its limit."""
    limitBytes: int | None = None
    vmemLimitBytes: int | None = None
    """Without the kernel's blocks in the paste: the `vmem_limit_bytes` that holds what the
    compiler asked for (whole MiB), when the chip's VMEM can."""
    physicalBytes: int | None = None
    unavailable: str | None = None
    """Why nothing was computed, where the paste lacks a value or the engine refuses one."""
