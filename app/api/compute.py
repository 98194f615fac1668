"""Compute API routes: thin wrappers over the compute service."""

from __future__ import annotations

from fastapi import APIRouter

from app.api.deps import StoreDep
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


@router.post("", response_model=ComputeResponse, summary="Verdict and verified fixes for one case")
def compute(store: StoreDep, request: ComputeRequest) -> ComputeResponse:
    return ComputeService(store).compute(request)


@router.post("/batch", response_model=BatchResponse, summary="Many cases at once")
def compute_batch(store: StoreDep, request: BatchRequest) -> BatchResponse:
    service = ComputeService(store)
    return BatchResponse(
        results=[
            service.compute(case, field_prefix=f"cases.{index}.")
            for index, case in enumerate(request.cases)
        ]
    )


@router.post("/sweep", response_model=SweepResponse, summary="Valid sizes of one block dimension")
def compute_sweep(request: SweepRequest) -> SweepResponse:
    return run_sweep(request)
