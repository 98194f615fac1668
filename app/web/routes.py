"""Web routes: thin, like the API's; they call the same services and render cards as HTML."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated

from fastapi import APIRouter, Query, Request
from pydantic import ValidationError
from starlette.datastructures import FormData
from starlette.responses import HTMLResponse

from app.answers.answer import Answer
from app.answers.cards import compute_answer, match_answers
from app.answers.compute import ComputeService
from app.answers.links import RELATIVE
from app.answers.match import MatchService
from app.answers.record_text import find_record
from app.api.deps import CatalogDep, MatchServiceDep, StoreDep
from app.api.offload import cpu_bound
from app.engines.mosaic_gpu import (
    DTYPES,
    OPERATIONS,
    SEMANTICS,
    InputValueError,
    parse_dtype,
    parse_shape,
)
from app.engines.mosaic_gpu.engine import get_operation
from app.errors import NotFound, ProblemError, SharedSlug
from app.matching import MAX_PASTE_BYTES, paste_end
from app.records.store import RecordFilters
from app.rendering.text import validation_problem
from app.schemas.compute import ComputeRequest
from app.schemas.match import MatchRequest
from app.web.pages import page
from app.web.permalinks import MAX_LINK_CHARS, decode_paste, encode_paste
from app.web.record_page import record_page, related_list

router = APIRouter(include_in_schema=False)
SEARCH_PAGE_SIZE = 50


@dataclass(frozen=True)
class ComputeForm:
    operation: str = ""
    shape: str = ""
    dtype: str = ""
    targetDtype: str = ""
    jaxVersion: str = ""
    loweringSemantics: str = ""
    alsoJaxVersions: str = ""


@dataclass(frozen=True)
class Outcome:
    """A result section: cards, or the problem that kept them from being made."""

    cards: list[Answer]
    problem: str | None = None
    status: int = 200
    note: str | None = None
    link: str | None = None
    """Where the result can be seen again: a link to share."""


def _home(
    paste: str = "",
    paste_jax: str = "",
    match: Outcome | None = None,
    form: ComputeForm | None = None,
    computed: Outcome | None = None,
) -> HTMLResponse:
    status = (match or computed or Outcome([])).status
    return page(
        "index.html",
        status,
        paste=paste,
        paste_jax=paste_jax,
        match=match,
        form=form or ComputeForm(),
        computed=computed,
        operations=list(OPERATIONS.values()),
        dtypes=list(DTYPES),
        semantics=SEMANTICS,
    )


@router.get("/")
def home() -> HTMLResponse:
    return _home()


@router.post("/")
async def home_match(
    http: Request,
    service: MatchServiceDep,
    fragment: Annotated[bool, Query(description="Only the result, for in-place updates.")] = False,
) -> HTMLResponse:
    """The paste form. Without JavaScript the whole page comes back with the result on it.

    The form is read here, up to the body limit, rather than by FastAPI, whose parser
    refuses a field over 1 MiB: a paste that long is read from its end, and stays in the box.
    """
    form = await http.form(max_part_size=http.app.state.settings.max_body_bytes)
    text, jax_version = _field(form, "text"), _field(form, "jaxVersion")
    outcome = await _match(http, service, text, jax_version)
    if fragment:
        return page("_match_result.html", outcome.status, match=outcome)
    return _home(paste=text, paste_jax=jax_version, match=outcome)


@router.get("/match")
async def shared_match(
    http: Request,
    service: MatchServiceDep,
    paste: Annotated[str, Query(max_length=MAX_LINK_CHARS)] = "",
    jax_version: Annotated[str, Query(alias="jaxVersion", max_length=40)] = "",
) -> HTMLResponse:
    """A result's link: the paste, compressed in the link, is matched again."""
    try:
        text = decode_paste(paste)
    except ProblemError as exc:
        return _home(paste_jax=jax_version, match=Outcome([], exc.detail, exc.status))
    return _home(
        paste=text, paste_jax=jax_version, match=await _match(http, service, text, jax_version)
    )


async def _match(http: Request, service: MatchService, text: str, jax_version: str) -> Outcome:
    """Match a paste (in the process's CPU worker) into a result with a link of its own."""
    end = paste_end(text)
    read = end if end is not None else text
    notes = []
    if end is not None:
        notes.append(
            f"The paste is over {MAX_PASTE_BYTES // 1024 // 1024} MiB: only its last "
            f"{len(end):,} characters were read, where a traceback ends with its error."
        )
    try:
        request = MatchRequest(text=read, jaxVersion=jax_version.strip() or None)
        cards, (encoded, cut) = await cpu_bound(
            http,
            lambda: (
                match_answers(service.match(request), service.catalog.records, RELATIVE),
                encode_paste(read),
            ),
        )
    except ValidationError:
        return Outcome([], "Paste a traceback or an error message first.", 422)
    except ProblemError as exc:
        return Outcome([], exc.detail, exc.status)
    link = None
    if encoded is not None:
        # The fragment scrolls the page to the answer, with or without the script.
        link = RELATIVE.match(paste=encoded, jaxVersion=jax_version.strip() or None) + "#match"
    if cut:
        notes.append(
            "The link to this result holds the paste's last lines only."
            if link
            else "The paste's last line is too long for a link to this result."
        )
    return Outcome(cards, note=" ".join(notes) or None, link=link)


def _field(form: FormData, name: str) -> str:
    value = form.get(name)
    return value if isinstance(value, str) else ""


@router.get("/compute")
async def compute(
    http: Request,
    catalog: CatalogDep,
    operation: str = "",
    shape: str = "",
    dtype: str = "",
    target_dtype: Annotated[str, Query(alias="targetDtype")] = "",
    jax_version: Annotated[str, Query(alias="jaxVersion")] = "",
    lowering_semantics: Annotated[str, Query(alias="loweringSemantics")] = "",
    also_jax_versions: Annotated[str, Query(alias="alsoJaxVersions")] = "",
) -> HTMLResponse:
    """The compute form, by GET so that a verdict has a link of its own."""
    form = ComputeForm(
        operation, shape, dtype, target_dtype, jax_version, lowering_semantics, also_jax_versions
    )
    if not (operation or shape or dtype):
        return _home(form=form)
    problems = _form_problems(form)
    if problems:
        return _home(form=form, computed=Outcome([], "; ".join(problems), 422))
    try:
        request = ComputeRequest.model_validate(  # validated: the semantics is a choice
            {
                "operation": operation or None,
                "shape": shape,
                "dtype": dtype.strip() or None,
                "targetDtype": target_dtype.strip() or None,
                "jaxVersion": jax_version.strip() or None,
                "loweringSemantics": lowering_semantics.strip() or None,
                "alsoJaxVersions": also_jax_versions,
            }
        )
        card = await cpu_bound(
            http, lambda: compute_answer(ComputeService(catalog).compute(request), RELATIVE)
        )
        outcome = Outcome([card])
    except ValidationError as exc:
        outcome = Outcome([], validation_problem(exc), 422)
    except ProblemError as exc:
        outcome = Outcome([], exc.detail, exc.status)
    return _home(form=form, computed=outcome)


def _form_problems(form: ComputeForm) -> list[str]:
    """Every field the engine refuses, each checked alone: the service stops at the first,
    and a form should say everything that needs changing at once."""
    checks: list[tuple[str, Callable[[str], object], str]] = [
        ("operation", get_operation, form.operation),
        ("shape", parse_shape, form.shape),
        ("dtype", parse_dtype, form.dtype),
    ]
    if form.targetDtype.strip():
        checks.append(("targetDtype", parse_dtype, form.targetDtype))
    problems = []
    for field, check, value in checks:
        try:
            check(value.strip())
        except InputValueError as exc:
            problems.append(f"{field}: {exc}")
    return problems


@router.get("/docs")
def docs(http: Request) -> HTMLResponse:
    """The OpenAPI document in Swagger UI, served from this service alone: GPU clusters are
    often cut off from the internet, and a CDN's copy would leave the page blank."""
    return page("docs.html", openapi_url=http.app.openapi_url)


def guide_not_built() -> HTMLResponse:
    """/guide/ where the documentation site was not built: say how to build it."""
    raise NotFound("The guide is not built on this server: make docs builds it into site/.")


@router.get("/search")
def search(
    store: StoreDep,
    q: Annotated[str, Query(max_length=500)] = "",
    cursor: Annotated[str | None, Query(max_length=200)] = None,
    slug: Annotated[str, Query(max_length=200)] = "",
) -> HTMLResponse:
    """Records holding the words ``q``; with ``slug``, the records sharing that slug."""
    filters = RecordFilters(q=q or None, slug=slug or None)
    try:
        found = store.search(filters, limit=SEARCH_PAGE_SIZE, cursor=cursor)
    except ProblemError as exc:
        return page("search.html", exc.status, q=q, slug=slug, found=None, problem=exc.detail)
    return page("search.html", q=q, slug=slug, found=found, problem=None)


@router.get("/errors/{key}")
def record(store: StoreDep, catalog: CatalogDep, key: str) -> HTMLResponse:
    try:
        row = find_record(store, key)
    except NotFound as exc:
        return page("error.html", 404, title="No such error record", detail=exc.detail)
    except SharedSlug:
        return search(store, slug=key)
    return page("record.html", view=record_page(store, catalog, row))


@router.get("/errors/{key}/related")
def related(
    store: StoreDep,
    catalog: CatalogDep,
    key: str,
    cursor: Annotated[str | None, Query(max_length=200)] = None,
) -> HTMLResponse:
    """Every record related to one, a page at a time: the record page shows the best few."""
    try:
        row = find_record(store, key)
        view = related_list(store, catalog, row, cursor)
    except SharedSlug:
        return search(store, slug=key)
    except ProblemError as exc:
        return page("error.html", exc.status, title="No such related records", detail=exc.detail)
    return page("related.html", view=view, key=key)
