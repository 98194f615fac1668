"""The compute API's requests and answers: a block's verdict, fixes, sweeps and budgets."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, get_args

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    model_validator,
)

from app.engines.mosaic_gpu.smem import MAX_DEPTH
from app.jaxref.shapes import MAX_RANK

MAX_BATCH = 100
# Releases a fix is checked in at once: every release the engine models, and a few spellings.
MAX_ALSO_RELEASES = 32
MAX_SMEM_BUFFERS = 32

LoweringSemantics = Literal["Lane", "Warpgroup"]
LOWERING_SEMANTICS: tuple[LoweringSemantics, ...] = get_args(LoweringSemantics)
_SEMANTICS = (
    "The kernel's plgpu.CompilerParams(lowering_semantics=...); when unset, the release's "
    "default: Lane up to JAX 0.10.2, Warpgroup from 0.11.0."
)


def _release_list(value: object) -> object:
    """Releases typed in one field (a form's, a command's): ``0.9.2, 0.12.0.1``."""
    return (
        [part for part in re.split(r"[\s,]+", value) if part] if isinstance(value, str) else value
    )


class ComputeRequest(BaseModel):
    """One case. Name the operation, or let a record id or a rule id imply it."""

    model_config = ConfigDict(
        extra="forbid",
        # The document says what the validator below checks: one of the three, as a string.
        json_schema_extra={
            "anyOf": [
                {"required": [name], "properties": {name: {"type": "string"}}}
                for name in ("operation", "errorId", "rule")
            ]
        },
    )

    backend: Literal["mosaic_gpu"] = Field(
        default="mosaic_gpu",
        description='The engine: Mosaic GPU. {"backend": "tpu", ...} asks the Pallas TPU '
        "engine instead (TpuComputeRequest: operation pallas_call or vmem_budget).",
    )
    operation: str | None = Field(default=None, min_length=1, examples=["copy_gmem_to_smem"])
    errorId: str | None = Field(default=None, min_length=1, max_length=64)
    rule: str | None = Field(
        default=None, min_length=1, max_length=100, examples=["MGPU-COPY-INTEGER-BYTES"]
    )
    shape: (
        Annotated[list[int], Field(max_length=MAX_RANK)] | Annotated[str, Field(max_length=500)]
    ) = Field(examples=[[7]])
    dtype: str | None = Field(default=None, min_length=1, max_length=100, examples=["int4"])
    targetDtype: str | None = Field(default=None, min_length=1, max_length=100)
    jaxVersion: str | None = Field(default=None, max_length=40, examples=["0.10.2"])
    alsoJaxVersions: Annotated[
        list[Annotated[str, Field(max_length=40)]],
        Field(max_length=MAX_ALSO_RELEASES),
        BeforeValidator(_release_list),
    ] = Field(
        default_factory=list,
        examples=[["0.9.2", "0.12.0.1"]],
        description="Other releases whose checks every fix must pass too, each under "
        "loweringSemantics or its own default: fixes for code that runs on several.",
    )
    loweringSemantics: LoweringSemantics | None = Field(default=None, description=_SEMANTICS)
    maxFixes: int = Field(default=5, ge=0, le=20)

    @model_validator(mode="after")
    def _names_what_to_check(self) -> ComputeRequest:
        if not (self.operation or self.errorId or self.rule):
            raise ValueError("give one of operation, errorId or rule")
        return self


class ViolationOut(BaseModel):
    rule: str
    errorId: str | None
    errorClass: str
    message: str = Field(description="Word for word what JAX raises.")
    explanation: str


class CodeOut(BaseModel):
    before: str
    after: str
    validation: str


class FixOut(BaseModel):
    kind: str = Field(
        description="Mosaic GPU: pad, reshape, promote or view; TPU: block, vmem_limit, buffered"
    )
    axis: int | None
    shape: list[int]
    dtype: str
    targetDtype: str | None
    addedBytes: float
    verified: bool
    description: str
    note: str = Field(
        description="What else the fix asks of the data: a conversion, a "
        "reinterpretation; empty when only the shape changes."
    )
    code: CodeOut


class ReleaseCheckOut(BaseModel):
    jaxVersion: str
    loweringSemantics: LoweringSemantics
    ok: bool = Field(description="The values as given pass every check in this release.")
    rule: str | None = Field(description="The rule of the error this release raises, if any.")


class ComputeResponse(BaseModel):
    ok: bool = Field(description="The values pass every check in jaxVersion.")
    operation: str
    shape: list[int]
    dtype: str
    targetDtype: str | None
    jaxVersion: str
    loweringSemantics: LoweringSemantics
    firstViolation: ViolationOut | None
    violations: list[ViolationOut]
    fixes: list[FixOut] = Field(
        description="Given where the values fail in some release of checkedIn; each passes "
        "every check in every one of them."
    )
    checkedIn: list[ReleaseCheckOut] = Field(
        description="jaxVersion, then each of alsoJaxVersions: the verdict there."
    )


class BatchRequest(BaseModel):
    cases: list[ComputeRequest] = Field(min_length=1, max_length=MAX_BATCH)


class RawBatch(BaseModel):
    """A batch as read: each case is checked on its own, so one bad case fails alone."""

    cases: list[Any] = Field(min_length=1, max_length=MAX_BATCH)


class CaseProblem(BaseModel):
    """Why one case of a batch has no answer: the problem its own request would get."""

    status: int
    title: str
    detail: str
    errors: list[dict[str, Any]]


class CaseFailure(BaseModel):
    problem: CaseProblem


class BatchResponse(BaseModel):
    results: list[ComputeResponse | CaseFailure] = Field(
        description="One per case, in order: the answer, or the case's problem."
    )


class SweepRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    operation: str = Field(min_length=1, examples=["pallas_call"])
    dtype: str = Field(min_length=1, max_length=100, examples=["float32"])
    start: int = Field(ge=0, examples=[1])
    stop: int = Field(ge=1, examples=[1025])
    axis: int = -1
    otherDims: Annotated[list[int], Field(max_length=MAX_RANK - 1)] = Field(default_factory=list)
    targetDtype: str | None = Field(default=None, min_length=1, max_length=100)
    jaxVersion: str | None = Field(default=None, max_length=40)
    loweringSemantics: LoweringSemantics | None = Field(default=None, description=_SEMANTICS)


class SweepResponse(BaseModel):
    operation: str
    dtype: str
    axis: int
    validSizes: list[int]
    count: int


class SmemBufferIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    shape: (
        Annotated[list[int], Field(max_length=MAX_RANK)] | Annotated[str, Field(max_length=500)]
    ) = Field(examples=[[128, 128]])
    dtype: str | None = Field(default=None, min_length=1, max_length=100, examples=["float16"])
    role: Literal["input", "output", "scratch"] = Field(
        default="input",
        description="input and output blocks are pipelined (one copy per concurrent step); "
        "scratch is allocated once.",
    )


class SmemBudgetRequest(BaseModel):
    """A kernel's SMEM buffers, as a pallas_call or emit_pipeline allocates them."""

    model_config = ConfigDict(extra="forbid")

    buffers: list[SmemBufferIn] = Field(min_length=1, max_length=MAX_SMEM_BUFFERS)
    maxConcurrentSteps: int = Field(default=1, ge=1, le=MAX_DEPTH)
    sequentialSteps: int | None = Field(
        default=None, ge=1, description="Sequential grid steps: the depth never exceeds them."
    )
    barriers: int = Field(
        default=0, ge=0, le=1024, description="Scratch barriers besides the pipeline's."
    )
    gpu: str | None = Field(
        default=None,
        max_length=40,
        description="A GPU or compute capability (H100, A100, sm_90…); H100 when unset.",
    )
    jaxVersion: str | None = Field(default=None, max_length=40)
