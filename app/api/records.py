"""Records API: read, search, relate; curators upsert and import."""

from __future__ import annotations

from typing import Annotated, Any, Literal, cast

from fastapi import APIRouter, Body, Path, Query, Request, Response
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import State

from app.answers.related import related_records
from app.api.deps import CatalogDep, CuratorDep, StoreDep
from app.api.offload import SharedRun
from app.api.openapi import problem_responses
from app.db import transaction
from app.errors import InvalidInput, NotFound, invalid_field
from app.jaxref.releases import RELEASE_PATTERN
from app.records.importer import decode, import_text
from app.records.models import RecordRow
from app.records.schema import (
    RECORD_ID_PATTERN,
    ImportIssue,
    ImportSummaryOut,
    RecordEnvelope,
    RecordPage,
    RecordSummary,
    RecordWrite,
    RelatedRecord,
    RelatedRecords,
    Snippet,
    import_body_schema,
)
from app.records.store import (
    CURSOR_PATTERN,
    MAX_PAGE_SIZE,
    Outcome,
    RecordFilters,
    RecordStore,
)
from app.records.validation import RecordInvalid, check_dataset_version, validate_record
from app.records.version_watch import VersionedLRU

router = APIRouter(prefix="/api/errors", tags=["records"])
import_router = APIRouter(prefix="/api", tags=["records"])

# A document of text (JSON Lines, a rendered page): anything but blank.
NON_EMPTY_TEXT = {"type": "string", "pattern": r"\S"}
RecordId = Annotated[str, Path(pattern=RECORD_ID_PATTERN, examples=["225d0e9c2ee22311"])]
# What a write answers while another holds the store past the wait (``WritesBusy``).
WRITES_BUSY = problem_responses({409: "Another write held the store too long: retry after a while"})


def envelope(row: RecordRow, annotation: dict[str, Any] | None = None) -> RecordEnvelope:
    """The dataset envelope; ``annotation`` is only set (and so only serialized) when asked for."""
    fields: dict[str, Any] = {"record": row.document, "datasetVersion": row.dataset_version}
    if annotation is not None:
        fields["annotation"] = annotation
    return RecordEnvelope(**fields)


def summary(row: RecordRow, snippet: Snippet | None) -> RecordSummary:
    return RecordSummary(
        id=row.id,
        slug=row.slug,
        errorMessage=row.error_message,
        errorClass=row.error_class,
        repo=row.repo,
        severity=row.severity,
        tags=[tag.tag for tag in row.tags],
        retired=row.retired,
        snippet=snippet,
    )


@router.get("", response_model=RecordPage, summary="Search and list records")
def list_records(
    store: StoreDep,
    q: Annotated[
        str | None,
        Query(
            max_length=500,
            description='Words to find, all of them; "a phrase" in quotes; `warpgr*`, or a last'
            " word, as a prefix. The most relevant first: the message weighs most.",
        ),
    ] = None,
    repo: Annotated[str | None, Query(max_length=200)] = None,
    error_class: Annotated[str | None, Query(alias="errorClass", max_length=200)] = None,
    tag: Annotated[str | None, Query(max_length=200)] = None,
    severity: Annotated[str | None, Query(max_length=50)] = None,
    file_path: Annotated[
        str | None,
        Query(alias="filePath", max_length=500, description="Repo-relative source file."),
    ] = None,
    function: Annotated[
        str | None,
        Query(max_length=300, description="The mined site's function (qualified name)."),
    ] = None,
    backend: Annotated[
        Literal["mosaic_gpu", "triton", "tpu", "core"] | None,
        Query(description="The mined site's backend."),
    ] = None,
    release: Annotated[
        str | None,
        Query(
            max_length=20,
            pattern=RELEASE_PATTERN,
            description=(
                "Only errors this JAX release can raise, e.g. 0.8.1: mined sites present in"
                " it, and Pallas's public names it lacks and calls it refuses."
            ),
        ),
    ] = None,
    slug: Annotated[
        str | None,
        Query(max_length=200, description="Records with this slug (messages alike share one)."),
    ] = None,
    include_retired: Annotated[bool, Query(alias="includeRetired")] = False,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE_SIZE)] = 50,
    cursor: Annotated[str | None, Query(max_length=200, pattern=CURSOR_PATTERN)] = None,
) -> RecordPage:
    filters = RecordFilters(
        q=q,
        repo=repo,
        error_class=error_class,
        tag=tag,
        severity=severity,
        file_path=file_path,
        function=function,
        backend=backend,
        release=release,
        slug=slug,
        include_retired=include_retired,
    )
    page = store.search(filters, limit=limit, cursor=cursor)
    return RecordPage(
        items=[summary(row, page.snippets.get(row.id)) for row in page.rows],
        total=page.total,
        nextCursor=page.next_cursor,
    )


@router.get(
    "/by-slug/{slug}",
    response_model=RecordEnvelope,
    response_model_exclude_unset=True,
    summary="A record by its slug",
    responses=problem_responses(
        {409: "Several live records share the slug: the detail says how to list them"}
    ),
)
def get_by_slug(store: StoreDep, slug: Annotated[str, Path(max_length=200)]) -> RecordEnvelope:
    """409 where several live records share the slug: `GET /api/errors?slug=` lists them."""
    return envelope(store.get_by_slug(slug))


@router.get(
    "/{record_id}",
    response_model=RecordEnvelope,
    response_model_exclude_unset=True,
    summary="A record, as the dataset ships it",
)
async def get_record(
    request: Request,
    record_id: RecordId,
    annotated: Annotated[
        bool, Query(description="Add errata's annotation (rule, corrections) beside the record.")
    ] = False,
) -> Response:
    """Records change only through writes, which move the store's version: while it stays,
    the answer is served from memory, without the database or a thread. The requests for
    one record that find the version reading stale together share one run to read it."""
    state = request.app.state
    answers: VersionedLRU[bytes] = state.record_answers
    key = (record_id, annotated)
    body = answers.get(key)
    if body is None:
        refresh: SharedRun = state.record_refresh
        generation = state.version_watch.generation
        body = await refresh.run((generation, key), lambda: _record_answer(state, key))
    return Response(body, media_type="application/json")


def _record_answer(state: State, key: tuple[str, bool]) -> bytes:
    """One record's answer, read in a unit of work of its own, and remembered."""
    record_id, annotated = key
    with transaction(state.session_factory) as session:
        store = RecordStore(session, state.version_watch)
        version = store.version()  # before the record, so the answer is never older
        # The watch's reading had only aged: the version, and so the answer, may not have moved.
        if (known := state.record_answers.get_at(version, key)) is not None:
            return cast(bytes, known)
        row = store.get(record_id)
        annotation = (store.annotation(record_id) or {}) if annotated else None
        body = envelope(row, annotation).model_dump_json(exclude_unset=True).encode()
    state.record_answers.put(version, key, body)
    return body


@router.get("/{record_id}/annotation", summary="errata's notes and corrections for a record")
def get_annotation(store: StoreDep, record_id: RecordId) -> dict[str, Any]:
    store.get(record_id)
    annotation = store.annotation(record_id)
    if annotation is None:
        raise NotFound(f"Record {record_id!r} has no annotation.")
    return annotation


@router.get("/{record_id}/related", response_model=RelatedRecords, summary="Related records")
def get_related(
    store: StoreDep,
    catalog: CatalogDep,
    record_id: RecordId,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE_SIZE, description="Records a page.")] = 50,
    cursor: Annotated[
        str | None,
        Query(
            max_length=200,
            pattern=CURSOR_PATTERN,
            description="A previous page's `nextCursor`: the page after it.",
        ),
    ] = None,
) -> RelatedRecords:
    """Records listed by the record, then those sharing its rarest features (a function, a
    file, words few records say; not the tags nearly every record carries), a page at a
    time; each page names the listed errors no record matches (`unresolved`)."""
    related = related_records(store, catalog, record_id, limit=limit, cursor=cursor)
    return RelatedRecords(
        items=[
            RelatedRecord(
                id=item.id, slug=item.slug, errorMessage=item.message, reasons=item.reasons
            )
            for item in related.items
        ],
        total=related.total,
        nextCursor=related.next_cursor,
        unresolved=related.unresolved,
    )


@router.put(
    "/{record_id}",
    response_model=RecordEnvelope,
    response_model_exclude_unset=True,
    dependencies=[CuratorDep],
    summary="Create or replace a record (curators)",
    responses={201: {"description": "Created", "model": RecordEnvelope}, **WRITES_BUSY},
)
def put_record(
    store: StoreDep,
    response: Response,
    record_id: RecordId,
    body: Annotated[RecordWrite, Body()],
) -> RecordEnvelope:
    record: dict[str, Any] = {"id": record_id, **body.record}
    if record["id"] != record_id:
        raise InvalidInput(
            f"record.id {record['id']!r} does not match the path id {record_id!r}.",
            errors=[{"field": "record.id", "message": "must match the path"}],
        )
    try:
        dataset_version = check_dataset_version(body.datasetVersion)
    except RecordInvalid as exc:
        raise invalid_field("datasetVersion", exc.message) from None
    try:
        valid = validate_record(record)
    except RecordInvalid as exc:
        raise invalid_field(f"record.{exc.field}" if exc.field else "record", exc.message) from None
    if store.upsert(valid, dataset_version, keep_newer=False) is Outcome.ADDED:
        response.status_code = 201
    return envelope(store.get(record_id))


@import_router.post(
    "/import",
    response_model=ImportSummaryOut,
    dependencies=[CuratorDep],
    summary="Import a document in any supported format (curators)",
    responses=WRITES_BUSY,
    openapi_extra={
        "requestBody": {
            "required": True,
            "description": "An envelope, a bare record, a JSON array of either, JSON Lines, "
            "or a rendered text page. One transaction: a bad document writes nothing.",
            "content": {
                "application/json": {"schema": import_body_schema()},
                "application/x-ndjson": {"schema": NON_EMPTY_TEXT},
                "text/plain": {"schema": NON_EMPTY_TEXT},
            },
        }
    },
)
async def import_document(store: StoreDep, request: Request) -> ImportSummaryOut:
    text = decode(await request.body(), "request body")
    # Writes wait on database locks: off the event loop, or one import waiting on another's
    # lock would stop the worker from ever committing that other import.
    result = await run_in_threadpool(import_text, store, text, "request body")
    return ImportSummaryOut(
        added=result.added,
        updated=result.updated,
        unchanged=result.unchanged,
        failed=result.failed,
        errors=[ImportIssue(**vars(issue)) for issue in result.issues],
    )
