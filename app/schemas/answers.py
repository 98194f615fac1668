"""Answers worked out beyond a fix: memory budgets, primitives, keywords, source-only sites."""

from __future__ import annotations

from pydantic import BaseModel, Field


class GpuOut(BaseModel):
    name: str
    computeCapability: str
    maxSmemBytes: int


class BufferOut(BaseModel):
    shape: list[int]
    dtype: str
    role: str
    slots: int = Field(description="Copies of the block: the pipeline depth, 1 for scratch.")
    bytes: int = Field(description="Allocated, rounded up to 1024 bytes.")


class BlockFitOut(BaseModel):
    shape: list[int]
    axis: int
    size: int
    newShape: list[int]
    smemBytes: int


class SmemBudgetOut(BaseModel):
    smemBytes: int
    maxSmemBytes: int
    gpu: GpuOut
    fits: bool
    overBytes: int
    overPercent: float
    buffers: list[BufferOut]
    barrierBytes: int
    maxConcurrentSteps: int = Field(description="The depth JAX allocates (capped at the steps).")
    fittingDepth: int | None = Field(
        description="The largest max_concurrent_steps up to the one asked that fits; null when "
        "not even 1 does."
    )
    fittingBlocks: list[BlockFitOut] = Field(
        description="Per block shape and axis, the largest divisor of that axis that fits and "
        "passes every other pallas_call check of the engine (only when over the limit)."
    )
    fitsOn: list[str] = Field(description="GPUs whose opt-in SMEM per block holds it as is.")
    jaxVersion: str


class MemoryOut(BaseModel):
    lineNumber: int
    backend: str
    memory: str = Field(description="SMEM (GPU) or VMEM (TPU).")
    requestedBytes: int
    limitBytes: int
    exact: bool = Field(description="False where the report rounds to hundredths of a MiB.")
    overBytes: int
    overPercent: float
    devices: list[str] = Field(description="GPUs whose opt-in SMEM per block is the limit.")
    fitsOn: list[str] = Field(description="GPUs whose opt-in SMEM per block holds the request.")
    maxConcurrentSteps: int | None = Field(description="The pipeline depth the paste shows.")
    fittingDepth: int | None = Field(
        description="The largest depth that fits, from the request's bytes per step (every "
        "buffer taken as pipelined); null without a depth in the paste."
    )
    budget: SmemBudgetOut | None = Field(
        description="The whole budget, where the paste shows the depth, a block shape and a "
        "dtype and its bytes are that many such buffers."
    )
    advice: list[str]


class LoweredOut(BaseModel):
    semantics: str
    since: str
    releases: str = Field(examples=["0.9.0–0.10.2"])
    inNewest: bool


class RewriteOut(BaseModel):
    summary: str
    before: str
    after: str


class PrimitiveOut(BaseModel):
    primitive: str
    backend: str
    semantics: str | None = Field(description="The lowering semantics the error names.")
    lowered: list[LoweredOut] = Field(description="Releases with a rule, per semantics.")
    upgradeTo: str | None = Field(
        description="The first release that lowers it under the semantics named, when the "
        "newest release still does."
    )
    rewrite: RewriteOut | None


class KeywordTakerOut(BaseModel):
    calledAs: list[str] = Field(examples=[["pltpu.CompilerParams", "pltpu.TPUCompilerParams"]])
    releases: str = Field(examples=["0.4.32–0.10.2"])


class KeywordOut(BaseModel):
    keyword: str = Field(examples=["dimension_semantics"])
    takenBy: list[KeywordTakerOut] = Field(
        description="Pallas's other public callables that take the keyword, and in which releases."
    )
    closeTo: list[str] = Field(
        description="The callable's own keywords spelled like it, closest first."
    )


class ClosestOut(BaseModel):
    errorId: str
    slug: str
    errorMessage: str
    score: float
    why: str


class ChangedInOut(BaseModel):
    """The release after the site's last, which no longer has it, from the mined history."""

    lastRelease: str = Field(examples=["0.4.28"])
    release: str = Field(examples=["0.4.29"], description="The first release without the site.")
    commit: str | None = Field(description="That release's commit.")
    compareUrl: str | None = Field(description="What changed between the two releases.")
    advice: str = Field(description="The upgrade, as the answer words it.")


class SourceOnlyOut(BaseModel):
    filePath: str
    function: str
    kind: str = Field(description="raise or assert")
    condition: str = Field(description="The check, as JAX's source writes it.")
    variables: dict[str, str] = Field(description="The message's values, as pasted.")
    releases: str
    sourceUrl: str | None
    unknown: str = Field(description="What errata does not know yet.")
    closest: list[ClosestOut] = Field(description="Curated records most like this one.")
    changedIn: ChangedInOut | None = Field(
        default=None,
        description="Where a later release no longer has the site: the release to upgrade to.",
    )
