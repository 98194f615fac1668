"""The compute API's TPU requests and answers: ``{"backend": "tpu", ...}`` on /api/compute.

``pallas_call`` checks one BlockSpec (``arrayShape``, ``blockShape``, ``dtype``);
``vmem_budget`` counts a kernel's blocks (``blocks``) against the chip's VMEM. The answer
has the Mosaic GPU answer's shape: ``firstViolation``, ``violations`` and ``fixes`` with
code before and after.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from app.jaxref.shapes import MAX_RANK
from app.schemas.compute import FixOut, ViolationOut

TpuOperation = Literal["pallas_call", "vmem_budget"]
# A kernel's buffers: inputs, outputs and scratch of one pallas_call.
MAX_TPU_BLOCKS = 64
Dims = Annotated[list[int], Field(max_length=MAX_RANK)]
BlockDims = Annotated[list[int | None], Field(max_length=MAX_RANK)]


class TpuBlockIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    blockShape: BlockDims = Field(examples=[[512, 1024]], description="null: squeezed")
    dtype: str = Field(min_length=1, max_length=100, examples=["float32"])
    role: Literal["input", "output", "scratch"] = "input"
    bufferCount: int | None = Field(
        default=None, description="pl.Buffered(n); unset: 2 for inputs and outputs, 1 scratch"
    )
    arrayShape: Dims | None = Field(
        default=None, description="The array the block tiles: lets smaller blocks be checked."
    )


class TpuComputeRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    backend: Literal["tpu"]
    operation: TpuOperation = Field(examples=["pallas_call"])
    arrayShape: Dims | None = Field(default=None, examples=[[256, 256]])
    blockShape: BlockDims | None = Field(default=None, examples=[[100, 100]])
    dtype: str | None = Field(default=None, min_length=1, max_length=100, examples=["float32"])
    blocks: Annotated[list[TpuBlockIn], Field(max_length=MAX_TPU_BLOCKS)] = Field(
        default_factory=list
    )
    vmemLimitBytes: int | None = Field(default=None, description="The kernel's vmem_limit_bytes")
    chip: str | None = Field(default=None, max_length=40, examples=["v5e"])
    jaxVersion: str | None = Field(default=None, max_length=40, examples=["0.10.2"])
    maxFixes: int = Field(default=5, ge=0, le=20)

    @model_validator(mode="after")
    def _has_its_operands(self) -> TpuComputeRequest:
        if self.operation == "pallas_call":
            missing = [
                name
                for name in ("arrayShape", "blockShape", "dtype")
                if getattr(self, name) is None
            ]
            if missing:
                raise ValueError(f"pallas_call needs {', '.join(missing)}")
        elif not self.blocks:
            raise ValueError("vmem_budget needs blocks")
        return self


class VmemOut(BaseModel):
    totalBytes: int = Field(description="Every buffer, padded to its tiles.")
    limitBytes: int
    limitIsDefault: bool = Field(description="The chip's default scoped limit was used.")
    physicalBytes: int
    overBytes: int
    neededLimitBytes: int | None = Field(
        description="The vmem_limit_bytes that would do; null when over physical VMEM."
    )


class TpuComputeResponse(BaseModel):
    ok: bool
    backend: Literal["tpu"] = "tpu"
    operation: TpuOperation
    chip: str
    jaxVersion: str
    arrayShape: list[int] | None
    blockShape: list[int | None] | None
    dtype: str | None
    firstViolation: ViolationOut | None
    violations: list[ViolationOut]
    fixes: list[FixOut]
    vmem: VmemOut | None
