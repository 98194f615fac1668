"""The match API's request and answer: what a paste holds, as JSON."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from app.matching.matcher import MAX_EXCEPTIONS_READ
from app.schemas.answers import KeywordOut, MemoryOut, PrimitiveOut, SourceOnlyOut
from app.schemas.compute import ComputeResponse
from app.schemas.tpu_found import TpuFoundOut

JAX_VERSION_MAX_LENGTH = 40


class MatchRequest(BaseModel):
    text: str = Field(min_length=1, description="A traceback, log or chat paste (≤ 1 MiB).")
    jaxVersion: str | None = Field(default=None, max_length=JAX_VERSION_MAX_LENGTH)


class ValuesOut(BaseModel):
    shape: list[int] | None
    dtype: str | None
    bitwidth: int | None
    elementCount: int | None
    bits: int | None
    bytes: int | None
    memorySpace: str | None
    numbers: dict[str, int]
    inferred: list[str] = Field(description="Values read from elsewhere in the paste.")


class WhyOut(BaseModel):
    model_config = ConfigDict(use_attribute_docstrings=True)

    patternId: int
    pattern: str
    normalizedLine: str
    truncated: bool
    foundIn: str
    """Where the message was read: `exception message`, `wrapped message` (joined from lines),
    `cut message` (an exception's, cut off), `line` (inside any other line), `wrapped line`
    (two lines joined) or `cut line`."""
    literal: str = Field(description="The longest literal text of the pattern: what was found.")
    stripped: str = Field(
        description="Text before the message on its line, left out of the match (a log "
        "prefix, a wrapper such as `INTERNAL: Mosaic failed to compile TPU kernel:`)."
    )
    unread: list[str] = Field(description="Values a cut-off message no longer shows.")
    calledBy: str | None = None
    """For Python's own error at JAX's call of the user's function (a kernel given the wrong
    number of refs), or an error of a helper outside JAX's mined files (jaxlib's `safe_zip`
    or `safe_map`): JAX's frame that made the call, as `file:line function`."""
    rankedBy: str | None = None
    """Where another record fits the same message: the ranking criterion that put this one
    first (`raising-frame`, `quoted-statement`, … `newest-release`; the Architecture page
    lists them), or null where none told them apart."""


class UserFrameOut(BaseModel):
    file: str
    line: int
    source: str | None = Field(description="The line of code under the frame, as pasted.")


class SourceSiteOut(BaseModel):
    filePath: str = Field(examples=["jax/_src/pallas/mosaic_gpu/primitives.py"])
    line: int
    release: str = Field(examples=["0.10.2"])


class MatchOut(BaseModel):
    model_config = ConfigDict(use_attribute_docstrings=True)

    errorId: str
    slug: str
    rule: str | None
    errorClass: str | None
    score: float
    variant: str
    matchedLine: str
    lineNumber: int
    chainPosition: int | None
    captures: dict[str, str]
    values: ValuesOut
    operation: str | None
    fix: ComputeResponse | None
    fixUnavailable: str | None = Field(description="Why there is no fix, when there is none.")
    alternatives: list[str]
    userFrame: UserFrameOut | None = Field(
        description="The user's own code nearest the error (not a library's), if pasted."
    )
    why: WhyOut
    sourceUrl: str | None = None
    """The error's site in the release the answer follows (`release.used`), pinned to that
    release's commit; where that release has no such site, in the nearest release that has
    (the newest, when the paste tells no release); for Python's own error at JAX's call of
    user code, the line of JAX's frame that made the call, in a release the paste can come
    from; for a site no mined release has, the record's own `githubUrl`."""
    source: SourceSiteOut | None = Field(
        default=None, description="The file, line and release `sourceUrl` points at."
    )
    primitive: PrimitiveOut | None = Field(
        default=None,
        description="For an unimplemented primitive: the releases and lowering semantics "
        "with a rule for it, and the usual rewrite.",
    )
    keyword: KeywordOut | None = Field(
        default=None,
        description="For a keyword a call of one of Pallas's public functions does not take: "
        "the functions that take it, and the function's own keywords spelled like it.",
    )
    sourceOnly: SourceOnlyOut | None = Field(
        default=None,
        description="For an error known only from JAX's source (no curated advice): what the "
        "source says, what is not known, and the closest curated records.",
    )


class ExceptionOut(BaseModel):
    exceptionClass: str
    message: str
    lineNumber: int
    chainPosition: int
    truncated: bool


class SuggestionOut(BaseModel):
    errorId: str
    slug: str
    errorMessage: str
    score: float


class EvidenceOut(BaseModel):
    model_config = ConfigDict(use_attribute_docstrings=True)

    kind: str
    """`frame` (a JAX frame on an error site's line), `function` (a JAX frame in a function with
    error sites), `version` (a version the paste names) or `wording` (a message matched, as
    only some releases printed it; `text` is its words)."""
    lineNumber: int
    text: str
    releases: list[str]


class ReleaseOut(BaseModel):
    releases: list[str] = Field(description="The JAX releases the paste can come from.")
    span: str = Field(examples=["0.8.0–0.8.1"])
    frames: int = Field(description="JAX frames that agree with these releases.")
    evidence: list[EvidenceOut]
    given: str | None = Field(description="The jaxVersion asked for: it wins over the paste.")
    used: str | None = Field(description="The release the answer follows.")
    contradiction: str | None = Field(
        description="Where the jaxVersion asked for, or the paste's own versions, disagree."
    )
    outside: str | None = Field(
        default=None,
        description="A version the paste names that is no mined release (a nightly newer "
        "than the newest), and the release the answer follows in its place.",
    )


class CodeFixOut(BaseModel):
    """A change of the paste's own code, computed for the values it writes and checked."""

    title: str
    note: str
    before: str = Field(description="The paste's lines of code that change, in its order.")
    after: str


class RaisePointOut(BaseModel):
    model_config = ConfigDict(use_attribute_docstrings=True)

    errorId: str | None = Field(
        description="None: the frame's own line, where no release of JAX has a site (Python's "
        "own error raised inside JAX's code)."
    )
    slug: str | None = Field(description="None when the site's record is not in the catalog.")
    filePath: str
    function: str
    line: int = Field(description="The frame's line in JAX's source.")
    lineNumber: int = Field(description="The frame's line in the paste.")
    releases: list[str] = Field(description="Releases with this site on that line.")
    sourceUrl: str | None
    why: str
    via: Literal["frame", "quote", "cut"]
    """`frame`: the exception's last JAX frame is on this site; `quote`: the paste quotes the
    site's statement outside a traceback (a code block, a diff); `cut`: a traceback cut
    before its exception line ends at a frame on this site."""
    failure: str | None = Field(
        None,
        description="What failed, computed from the values the paste's code writes, where "
        "the site's record has a rule the engine computes for a bare exception.",
    )
    fixes: list[CodeFixOut] = Field(
        default_factory=list, description="Changes of the paste's code, best first."
    )


class CompilerMessageOut(BaseModel):
    lineNumber: int
    compiler: str = Field(examples=["libtpu (Mosaic's TPU compiler)"])
    message: str = Field(description="What the compiler said, after JAX's wrapper.")
    why: str = Field(description="Why JAX's source does not hold it.")
    errorId: str | None = Field(
        default=None, description="The record whose advice `why` gives, where one does."
    )


class MatchResponse(BaseModel):
    model_config = ConfigDict(use_attribute_docstrings=True)

    matches: list[MatchOut]
    exceptions: list[ExceptionOut]
    unmatched: list[ExceptionOut]
    suggestions: list[SuggestionOut]
    release: ReleaseOut | None = Field(
        default=None, description="Which JAX release the paste comes from, and why."
    )
    raisePoints: list[RaisePointOut] = Field(default_factory=list)
    """For an exception no message matched (a bare `AssertionError`, a message built at run
    time), the error sites its last JAX frame points at, surest first; then the sites a
    traceback cut before its exception line ends at, and those whose `raise` or `assert` the
    paste quotes outside a traceback, where nothing else names them."""
    memory: list[MemoryOut] = Field(
        default_factory=list,
        description="Each report of a kernel over its on-chip memory (Mosaic GPU, Triton, "
        "TPU), matched or not: how far over, which devices have that limit, what fits.",
    )
    tpu: list[TpuFoundOut] = Field(default_factory=list)
    """Each Pallas TPU error whose values the paste states (a block JAX refused, VMEM over its
    limit, E2002's tiling, E2003's offset, a matmul's dtypes), computed by the TPU engine for
    those values: its verdict and verified fixes, or why none was computed."""
    compilerMessages: list[CompilerMessageOut] = Field(default_factory=list)
    """What a compiler JAX wraps said (`Mosaic failed to compile TPU kernel: …`), MLIR's
    verifier of the IR Pallas built (`MLIRError: Verification failed:`) or a failed internal
    check of XLA's (`RET_CHECK failure (…)`), or a message a compiler or runtime prints whole
    (`Ran out of memory in memory space vmem` without figures), where no match or memory
    report explains it: a message no release of JAX's source holds."""
    skippedExceptions: int = Field(
        default=0,
        description="Exceptions earlier in the paste than the last "
        f"{MAX_EXCEPTIONS_READ}, which were not read.",
    )
