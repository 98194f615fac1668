"""Compute API routes: thin wrappers over the compute service.

A case answered before is answered on the event loop; the engine's first run of a case
(milliseconds of CPU) and anything reading the database go to the thread pool.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request, Response
from starlette.concurrency import run_in_threadpool

from app.api.chatops import MARKDOWN_ANSWER, links_for, markdown_response
from app.api.deps import CatalogDep
from app.rendering.cards import compute_card
from app.rendering.negotiation import prefers_markdown
from app.services.compute import (
    BatchRequest,
    BatchResponse,
    ComputeRequest,
    ComputeResponse,
    ComputeService,
    SweepRequest,
    SweepResponse,
    run_sweep,
)

router = APIRouter(prefix="/api/compute", tags=["compute"])


async def get_compute_service(catalog: CatalogDep) -> ComputeService:
    return ComputeService(catalog)


ComputeServiceDep = Annotated[ComputeService, Depends(get_compute_service)]


@router.post(
    "",
    response_model=ComputeResponse,
    summary="Verdict and verified fixes for one case",
    responses=MARKDOWN_ANSWER,
)
async def compute(
    service: ComputeServiceDep, request: ComputeRequest, http: Request
) -> ComputeResponse | Response:
    result = service.answer_from_memory(request)
    if result is None:
        result = await run_in_threadpool(service.compute, request)
    if prefers_markdown(http.headers.get("accept")):
        return markdown_response([compute_card(result, links_for(http))])
    return result


@router.post("/batch", response_model=BatchResponse, summary="Many cases at once")
def compute_batch(service: ComputeServiceDep, request: BatchRequest) -> BatchResponse:
    return BatchResponse(
        results=[
            service.compute(case, field_prefix=f"cases.{index}.")
            for index, case in enumerate(request.cases)
        ]
    )


@router.post("/sweep", response_model=SweepResponse, summary="Valid sizes of one block dimension")
def compute_sweep(request: SweepRequest) -> SweepResponse:
    return run_sweep(request)
