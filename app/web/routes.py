"""Web routes: thin, like the API's; they call the same services and render cards as HTML."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import APIRouter, Query, Request
from pydantic import ValidationError
from starlette.datastructures import FormData
from starlette.responses import HTMLResponse

from app.alignment import DTYPES, OPERATIONS
from app.api.deps import CatalogDep, MatchServiceDep, StoreDep
from app.api.offload import cpu_bound
from app.errors import NotFound, ProblemError
from app.matching import MAX_PASTE_BYTES, paste_end
from app.records.store import RecordFilters
from app.rendering.cards import Card, compute_card, match_cards
from app.rendering.links import RELATIVE
from app.rendering.records import find_record
from app.rendering.text import validation_problem
from app.services.compute import ComputeRequest, ComputeService
from app.services.match import MatchRequest
from app.web.pages import page
from app.web.record_page import record_page

router = APIRouter(include_in_schema=False)
SEARCH_PAGE_SIZE = 50


@dataclass(frozen=True)
class ComputeForm:
    operation: str = ""
    shape: str = ""
    dtype: str = ""
    targetDtype: str = ""
    jaxVersion: str = ""


@dataclass(frozen=True)
class Outcome:
    """A result section: cards, or the problem that kept them from being made."""

    cards: list[Card]
    problem: str | None = None
    status: int = 200
    note: str | None = None


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
    Matching (and the engine, when a case needs it) runs in the process's CPU worker.

    The form is read here, up to the body limit, rather than by FastAPI, whose parser
    refuses a field over 1 MiB: a paste that long is read from its end, and stays in the box.
    """
    form = await http.form(max_part_size=http.app.state.settings.max_body_bytes)
    text, jax_version = _field(form, "text"), _field(form, "jaxVersion")
    end = paste_end(text)
    note = None
    if end is not None:
        note = (
            f"The paste is over {MAX_PASTE_BYTES // 1024 // 1024} MiB: only its last "
            f"{len(end):,} characters were read, where a traceback ends with its error."
        )
    try:
        request = MatchRequest(text=end or text, jaxVersion=jax_version.strip() or None)
        cards = await cpu_bound(
            http,
            lambda: match_cards(service.match(request), service.catalog.records, RELATIVE),
        )
        outcome = Outcome(cards, note=note)
    except ValidationError:
        outcome = Outcome([], "Paste a traceback or an error message first.", 422)
    except ProblemError as exc:
        outcome = Outcome([], exc.detail, exc.status)
    if fragment:
        return page("_match_result.html", outcome.status, match=outcome)
    return _home(paste=text, paste_jax=jax_version, match=outcome)


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
) -> HTMLResponse:
    """The compute form, by GET so that a verdict has a link of its own."""
    form = ComputeForm(operation, shape, dtype, target_dtype, jax_version)
    if not (operation or shape or dtype):
        return _home(form=form)
    try:
        request = ComputeRequest(
            operation=operation or None,
            shape=shape,
            dtype=dtype.strip() or None,
            targetDtype=target_dtype.strip() or None,
            jaxVersion=jax_version.strip() or None,
        )
        card = await cpu_bound(
            http, lambda: compute_card(ComputeService(catalog).compute(request), RELATIVE)
        )
        outcome = Outcome([card])
    except ValidationError as exc:
        outcome = Outcome([], validation_problem(exc), 422)
    except ProblemError as exc:
        outcome = Outcome([], exc.detail, exc.status)
    return _home(form=form, computed=outcome)


@router.get("/docs")
def docs(http: Request) -> HTMLResponse:
    """The OpenAPI document in Swagger UI, served from this service alone: GPU clusters are
    often cut off from the internet, and a CDN's copy would leave the page blank."""
    return page("docs.html", openapi_url=http.app.openapi_url)


@router.get("/search")
def search(
    store: StoreDep,
    q: Annotated[str, Query(max_length=500)] = "",
    cursor: Annotated[str | None, Query(max_length=200)] = None,
) -> HTMLResponse:
    try:
        found = store.search(RecordFilters(q=q or None), limit=SEARCH_PAGE_SIZE, cursor=cursor)
    except ProblemError as exc:
        return page("search.html", exc.status, q=q, found=None, problem=exc.detail)
    return page("search.html", q=q, found=found, problem=None)


@router.get("/errors/{key}")
def record(store: StoreDep, key: str) -> HTMLResponse:
    try:
        row = find_record(store, key)
    except NotFound as exc:
        return page("error.html", 404, title="No such error record", detail=exc.detail)
    return page("record.html", view=record_page(store, row))
