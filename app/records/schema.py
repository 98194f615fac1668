"""The dataset's record schema (v2), used to validate what comes in and to document the API.

Validation is strict (a line number given as "975" is a wrong type, not a number) and open:
unknown fields are kept, so a newer dataset's records pass through unchanged.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, cast

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    WithJsonSchema,
    model_validator,
)

from app.jaxref.releases import RELEASE_PATTERN
from app.jaxref.templates import MAX_PATTERN_CHARS

RECORD_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"
# An error message is a line or a few, not a document: a longer one would only make every
# fuzzy suggestion slower (its message is compared with each paste that matches nothing).
MAX_MESSAGE_CHARS = 4096
MAX_DATASET_VERSION_CHARS = 64
MAX_SLUG_CHARS = 200


# JSON has one kind of number: 975.0 is the integer 975 (as JSON Schema's "integer" says),
# while "975" stays a wrong type.
def _whole(value: Any) -> Any:
    return int(value) if isinstance(value, float) and value.is_integer() else value


WholeNumber = Annotated[int, BeforeValidator(_whole)]
# No source file a record points into runs to ten million lines (JAX's longest are some
# thousands); a larger number is a mistake, and no integer column could hold 10**30.
MAX_LINE_NUMBER = 10**7
# The bound before the validator: after it, pydantic writes it into the JSON Schema as "le",
# a word JSON Schema does not know, and the documented body allowed any number.
LineNumber = Annotated[int, Field(le=MAX_LINE_NUMBER), BeforeValidator(_whole)]


class ErrorRecord(BaseModel):
    """One error record, camelCase as in the dataset."""

    model_config = ConfigDict(extra="allow", strict=True, use_attribute_docstrings=True)

    id: str = Field(pattern=RECORD_ID_PATTERN, examples=["225d0e9c2ee22311"])
    errorMessage: str = Field(min_length=1, max_length=MAX_MESSAGE_CHARS)
    # Fields copied into columns are bounded as the columns are (PostgreSQL enforces them).
    repo: str | None = Field(default=None, max_length=200)
    slug: str | None = Field(default=None, max_length=MAX_SLUG_CHARS)
    errorCode: str | None = None
    messagePattern: str | None = Field(
        default=None,
        max_length=MAX_PATTERN_CHARS,
        json_schema_extra={"format": "regex"},
        description="RE2 syntax; derived from errorMessage when absent.",
    )
    errorType: str | None = None
    errorClass: str | None = Field(default=None, max_length=200)
    httpStatus: WholeNumber | None = None
    severity: str | None = Field(default=None, max_length=50)
    filePath: str | None = Field(default=None, max_length=500)
    lineNumber: LineNumber | None = None
    sourceCode: str | None = None
    sourceCodeStart: LineNumber | None = None
    sourceCodeEnd: LineNumber | None = None
    githubUrl: str | None = None
    documentation: str | None = None
    triggerScenarios: str | None = None
    commonSituations: str | None = None
    solutions: list[str] = Field(default_factory=list)
    exampleFix: str | None = None
    handlingStrategy: str | None = None
    validationCode: str | None = None
    typeGuard: str | None = None
    tryCatchPattern: str | None = None
    preventionTips: list[str] = Field(default_factory=list)
    tags: list[Annotated[str, Field(max_length=200)]] = Field(default_factory=list)
    backgroundTag: str | None = Field(default=None, max_length=200)
    analyzedSha: str | None = Field(default=None, max_length=64)
    analyzedAt: str | None = None
    schemaVersion: WholeNumber | None = None
    relatedErrors: list[str] = Field(default_factory=list)
    retired: bool = False
    rule: str | None = Field(
        default=None, max_length=100, description="The catalog rule (MGPU-…) it documents."
    )
    operations: list[str] = Field(default_factory=list)
    olderWordings: list[OlderWording] = Field(default_factory=list)
    calledBy: list[Caller] = Field(default_factory=list)
    """For an error Python raises when JAX calls the user's function (a kernel given more refs
    than it takes): the functions of JAX's that make the call. The record matches only a
    traceback whose innermost frame of JAX's, past the wrappers of `calledThrough`, is one of
    them, with no frame of the user's after it; never a message alone."""
    calledThrough: list[Caller] = Field(
        default_factory=list,
        description="JAX's wrappers that a `calledBy` function's call goes through to the "
        "user's function (`wrap_with_transforms`), which may stand after it in a traceback.",
    )
    calledUnder: list[Annotated[str, Field(pattern=r"^[A-Za-z_]\w*$", max_length=200)]] = Field(
        default_factory=list
    )
    """Functions of JAX's API under which the call is made where JAX hides all of its frames
    (`fori_loop`): the record matches too where the user's last frame, with no frame of JAX's
    after it, shows a call of one of them that passes the function Python's message names."""
    calledAs: list[Annotated[str, Field(pattern=r"^[A-Za-z_][\w.]*$", max_length=200)]] = Field(
        default_factory=list
    )
    """For an error Python raises at the user's call of one of Pallas's public functions (a
    keyword it does not take): how code spells the function (`pl.pallas_call`). The record
    matches only where no frame of JAX's follows the user's last, and that frame's line, if
    shown, calls it."""
    raisedIn: list[Annotated[str, Field(pattern=RELEASE_PATTERN)]] = Field(
        default_factory=list,
        description="The JAX releases that raise it (a call some releases refuse).",
    )
    missingIn: list[Annotated[str, Field(pattern=RELEASE_PATTERN)]] = Field(
        default_factory=list,
        description="The JAX releases without the public name whose reading raises it.",
    )
    saidBy: SaidBy | None = None
    """For a message that no JAX source holds (a compiler's under JAX, a runtime's, MLIR's
    verifier's): who prints it, and how a paste is read for it. Such a record is never
    matched by its pattern alone: the reading of compilers' messages names it, and answers
    with its documentation followed by its solutions, as one text."""


class Caller(BaseModel):
    """A function of JAX's that calls user code, as a traceback's frame names it."""

    model_config = ConfigDict(extra="forbid", strict=True)

    file: str = Field(
        max_length=500,
        pattern=r"^jax(?:lib)?/[\w/.-]+\.py$",
        examples=["jax/_src/pallas/core.py"],
    )
    function: str = Field(max_length=200, pattern=r"^[A-Za-z_]\w*$", examples=["__call__"])


class OlderWording(BaseModel):
    """A wording JAX used before; pastes from older versions still say it."""

    model_config = ConfigDict(extra="allow", strict=True)

    text: str
    pattern: str | None = Field(
        default=None, max_length=MAX_PATTERN_CHARS, json_schema_extra={"format": "regex"}
    )
    until: str | None = None


# Each reading of a compiler's message: the field it needs, and the fields it may have.
_READINGS = (
    ("whole", "words", ()),
    ("wrapped", None, ("workOut",)),
    ("verifier", "op", ()),
)
_READING_FIELDS = ("words", "op", "workOut")


def _reading(reading: str, needed: str | None, allowed: tuple[str, ...]) -> dict[str, Any]:
    """A reading's branch of the schema: the field it needs, and null for other readings'."""
    others = [name for name in _READING_FIELDS if name != needed and name not in allowed]
    branch: dict[str, Any] = {
        "properties": {"reading": {"const": reading}, **{n: {"type": "null"} for n in others}}
    }
    if needed is not None:
        branch["required"] = [needed]
        branch["properties"][needed] = {"type": "string"}
    return branch


class SaidBy(BaseModel):
    """Which compiler or runtime under JAX prints a message, and how a paste is read for it."""

    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        use_attribute_docstrings=True,
        # The document says what the validator below checks: each reading's own fields.
        json_schema_extra={"oneOf": [_reading(*fields) for fields in _READINGS]},
    )

    compiler: str = Field(min_length=1, max_length=200, examples=["libtpu (Mosaic's TPU compiler)"])
    reading: Literal["whole", "wrapped", "verifier"] = Field()
    """`whole`: printed whole, with no wrapper of JAX's: the record's pattern is looked for
    anywhere in a paste, and read from the start of what a compiler's wrapper says, where the
    message names itself; `wrapped`: libtpu's, behind Mosaic's TPU wrapper (`Mosaic failed to
    compile TPU kernel: …`), read from the message's start; `verifier`: MLIR verifier's
    diagnostic of the upstream op `op`, read from the op's quoted name on."""
    order: WholeNumber = Field(
        ge=1,
        description="The records of one reading are tried in this order: a message that two "
        "of their patterns read is the first's.",
    )
    words: str | None = Field(
        default=None,
        min_length=1,
        description="`whole` only: words every such message holds, looked for before the pattern.",
    )
    op: str | None = Field(
        default=None,
        pattern=r"^[a-z_]\w*\.[\w.]+$",
        examples=["vector.shape_cast"],
        description="`verifier` only: the op whose diagnostic it is.",
    )
    workOut: Literal["misalignedBlock", "misalignedSlice", "legalization"] | None = None
    """`wrapped` only: what the figures printed on the lines after the message work out, added
    to the answer: E2002's block that fits the tiling (`misalignedBlock`), a ref's slice that
    does (`misalignedSlice`), the op and dtype a chip cannot lower (`legalization`)."""
    sameFixAs: str | None = Field(default=None, pattern=RECORD_ID_PATTERN)
    """The record whose solutions answer this message (a symptom of the error it records,
    such as a version skew): the answer is this record's documentation, then that record's
    solutions, and names that record."""

    @model_validator(mode="after")
    def _fields_of_its_reading(self) -> SaidBy:
        needed = {"words": "whole", "op": "verifier", "workOut": "wrapped"}
        for field, reading in needed.items():
            given = getattr(self, field) is not None
            if given and self.reading != reading:
                raise ValueError(f"{field} is for a reading of {reading!r} only")
            if not given and self.reading == reading and field != "workOut":
                raise ValueError(f"a reading of {reading!r} needs {field}")
        return self


class Correction(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)

    field: str
    problem: str
    correction: str


class Annotation(BaseModel):
    """errata's knowledge about a record it does not own; served beside it, never inside it."""

    model_config = ConfigDict(extra="allow", strict=True)

    recordId: str = Field(pattern=RECORD_ID_PATTERN)
    rule: str | None = Field(default=None, max_length=100)
    operations: list[str] = Field(default_factory=list)
    olderWordings: list[OlderWording] = Field(default_factory=list)
    relatedErrors: list[str] = Field(default_factory=list)
    corrections: list[Correction] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


class RecordEnvelope(BaseModel):
    """What ``GET /api/errors/{id}`` returns: the dataset's own envelope."""

    model_config = ConfigDict(extra="allow")

    record: dict[str, Any] = Field(description="The record, every field as imported.")
    datasetVersion: str | None = Field(default=None, max_length=MAX_DATASET_VERSION_CHARS)
    annotation: dict[str, Any] | None = Field(
        default=None, description="errata's notes and corrections (only with ?annotated=true)."
    )


class SnippetPart(BaseModel):
    text: str
    match: bool = Field(description="Whether it is one of the query's words or phrases.")


SnippetField = Literal["errorMessage", "documentation", "solutions"]


class Snippet(BaseModel):
    """Where a record shows the words searched for: plain text in parts, the matched ones
    marked, for a page to highlight without reading any markup."""

    field: SnippetField = Field(
        description="The record's field it is cut from: the first holding the most words."
    )
    parts: list[SnippetPart] = Field(
        description="In order; their texts joined are the snippet, with … where it was cut."
    )


class RecordSummary(BaseModel):
    id: str
    slug: str
    errorMessage: str
    errorClass: str | None
    repo: str | None
    severity: str | None
    tags: list[str]
    retired: bool
    snippet: Snippet | None = Field(
        default=None,
        description="With `q`: the query's words where the record shows them; null where"
        " only its tags, class or slug hold them.",
    )


class RecordPage(BaseModel):
    items: list[RecordSummary]
    total: int
    nextCursor: str | None = Field(
        description="Pass as `cursor` for the next page; null at the end."
    )


class RelatedRecord(BaseModel):
    id: str
    slug: str
    errorMessage: str
    reasons: list[str] = Field(
        description="Why it is related: listed, next:<c>, before:<c>, construct:<c>, function,"
        " filePath, module, rule, backgroundTag, errorClass, tag:<t>, word:<w>."
    )


class RelatedRecords(BaseModel):
    items: list[RelatedRecord] = Field(
        description="Best first: listed by the record, then by the rarity of the features"
        " shared (see the guide); then by id."
    )
    total: int = Field(description="How many records are related, on every page.")
    nextCursor: str | None = Field(
        description="Pass as `cursor` for the next page; null at the end."
    )
    unresolved: list[str] = Field(description="Listed related errors that match no known record.")


class ImportIssue(BaseModel):
    source: str
    location: str | None
    field: str | None
    message: str


class ImportSummaryOut(BaseModel):
    added: int
    updated: int
    unchanged: int
    failed: int
    errors: list[ImportIssue]


def documented_schema(model: type[BaseModel], *, optional: tuple[str, ...] = ()) -> dict[str, Any]:
    """``model``'s JSON schema, self-contained (its ``$defs`` inlined), for request bodies
    that the endpoint reads itself; ``optional``: required fields the request may leave out."""
    schema = model.model_json_schema()
    definitions = schema.pop("$defs", {})

    def inline(node: Any) -> Any:
        if isinstance(node, dict):
            reference = node.get("$ref", "")
            if reference.startswith("#/$defs/"):
                return inline(definitions[reference.removeprefix("#/$defs/")])
            return {key: inline(value) for key, value in node.items()}
        if isinstance(node, list):
            return [inline(item) for item in node]
        return node

    schema = cast(dict[str, Any], inline(schema))
    schema["required"] = [name for name in schema.get("required", []) if name not in optional]
    return schema


class RecordWrite(BaseModel):
    """What ``PUT /api/errors/{id}`` takes: the envelope as GET returns it; the record's id
    may be left out (the path names it)."""

    model_config = ConfigDict(extra="allow")

    record: Annotated[
        dict[str, Any], WithJsonSchema(documented_schema(ErrorRecord, optional=("id",)))
    ] = Field(description="The record; set retired to retire it.")
    datasetVersion: str | None = Field(default=None, max_length=MAX_DATASET_VERSION_CHARS)


def import_body_schema() -> dict[str, Any]:
    """The JSON documents ``POST /api/import`` takes: a record, an envelope, an annotation,
    or an array of them."""
    record = documented_schema(ErrorRecord)
    one = {
        "anyOf": [
            {
                "type": "object",
                "properties": {
                    "record": record,
                    "datasetVersion": RecordWrite.model_json_schema()["properties"][
                        "datasetVersion"
                    ],
                },
                "required": ["record"],
            },
            {
                "type": "object",
                "properties": {"annotation": documented_schema(Annotation)},
                "required": ["annotation"],
                "additionalProperties": False,
            },
            record,
        ]
    }
    return {"anyOf": [one, {"type": "array", "items": one}]}
