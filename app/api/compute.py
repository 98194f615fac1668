"""Compute API routes: thin wrappers over the compute service.

A case the engine answered before is answered on the event loop; the engine's first run of
a case, a batch and a sweep (milliseconds of CPU and more) run in a worker thread, one at a
time per process (see ``app/api/offload.py``).
"""

from __future__ import annotations

import json

from fastapi import APIRouter, Request, Response

from app.answers.cards import compute_answer
from app.answers.compute import ComputeService, run_smem_budget, run_sweep
from app.answers.tpu_cards import tpu_compute_answer
from app.answers.tpu_compute import answer_tpu
from app.api.answers import MARKDOWN_ANSWER, links_for, markdown_response
from app.api.bodies import json_body, parse_json, post_request_route
from app.api.deps import CatalogDep, get_catalog
from app.api.offload import cpu_bound, on_loop_unless_engine
from app.rendering.negotiation import prefers_markdown
from app.schemas.answers import SmemBudgetOut
from app.schemas.compute import (
    BatchRequest,
    BatchResponse,
    ComputeRequest,
    ComputeResponse,
    RawBatch,
    SmemBudgetRequest,
    SweepRequest,
    SweepResponse,
)
from app.schemas.tpu_compute import TpuComputeRequest

router = APIRouter(prefix="/api/compute", tags=["compute"])


@post_request_route(
    router,
    "",
    response_model=ComputeResponse,
    summary="Verdict and verified fixes for one case (Mosaic GPU; TPU with backend: tpu)",
    responses=MARKDOWN_ANSWER,
    openapi_extra=json_body(ComputeRequest),
)
async def compute(http: Request) -> Response:
    """The busiest endpoint reads its body itself and answers with JSON serialized once per
    case (see ``app/api/bodies.py`` and ``ComputeService.answer``). A body with
    ``"backend": "tpu"`` is a ``TpuComputeRequest``, answered by the Pallas TPU engine."""
    body = await http.body()
    catalog = await get_catalog(http)
    if _asks_for_tpu(body):
        tpu = parse_json(TpuComputeRequest, body)
        answered = await cpu_bound(http, lambda: answer_tpu(tpu, catalog))
        if prefers_markdown(http.headers.get("accept")):
            return markdown_response([tpu_compute_answer(answered)])
        return Response(answered.model_dump_json(), media_type="application/json")
    request = parse_json(ComputeRequest, body)
    answer = await on_loop_unless_engine(
        http, lambda run_engine: ComputeService(catalog, run_engine=run_engine).answer(request)
    )
    if prefers_markdown(http.headers.get("accept")):
        return markdown_response([compute_answer(answer.response, links_for(http))])
    return Response(answer.json, media_type="application/json")


def _asks_for_tpu(body: bytes) -> bool:
    """Whether the body names the TPU backend (checked before parsing: a GPU request, the
    busiest kind, is parsed once)."""
    if b'"backend"' not in body:
        return False
    try:
        parsed = json.loads(body)
    except ValueError:
        return False
    return isinstance(parsed, dict) and parsed.get("backend") == "tpu"


@router.post(
    "/batch",
    response_model=BatchResponse,
    summary="Many cases at once; a bad case gets its own problem, the others their answers",
    openapi_extra=json_body(BatchRequest),
)
async def compute_batch(catalog: CatalogDep, http: Request) -> BatchResponse:
    batch = parse_json(RawBatch, await http.body())
    service = ComputeService(catalog)
    return await cpu_bound(http, lambda: service.batch(batch.cases))


@router.post(
    "/smem-budget",
    response_model=SmemBudgetOut,
    summary="A kernel's SMEM as JAX counts it, the GPU's limit, and the depth and blocks that fit",
)
async def compute_smem_budget(request: SmemBudgetRequest, http: Request) -> SmemBudgetOut:
    return await cpu_bound(http, lambda: run_smem_budget(request))


@router.post("/sweep", response_model=SweepResponse, summary="Valid sizes of one block dimension")
async def compute_sweep(request: SweepRequest, http: Request) -> SweepResponse:
    return await cpu_bound(http, lambda: run_sweep(request))
