"""Match API: paste a traceback (JSON or plain text), get the known errors and their fixes."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request, Response
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool

from app.api.chatops import MARKDOWN_ANSWER, links_for, markdown_response
from app.api.deps import MatchServiceDep
from app.errors import InvalidInput
from app.observability.metrics import count_match
from app.rendering.cards import match_cards
from app.rendering.negotiation import prefers_markdown
from app.services.match import MatchRequest, MatchResponse

router = APIRouter(prefix="/api", tags=["match"])


@router.post(
    "/match",
    response_model=MatchResponse,
    summary="Find known errors in a pasted traceback",
    responses=MARKDOWN_ANSWER,
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {"schema": MatchRequest.model_json_schema()},
                "text/plain": {"schema": {"type": "string"}},
            },
        }
    },
)
async def match(
    service: MatchServiceDep,
    request: Request,
    jax_version: Annotated[str | None, Query(alias="jaxVersion", max_length=40)] = None,
) -> MatchResponse | Response:
    body = await request.body()
    content_type = request.headers.get("content-type", "")
    try:
        if content_type.startswith("application/json"):
            payload = MatchRequest.model_validate_json(body)
        else:
            payload = MatchRequest(text=_text(body), jaxVersion=jax_version)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(part) for part in error["loc"]) or "body"
        raise InvalidInput(
            f"{field}: {error['msg']}", errors=[{"field": field, "message": error["msg"]}]
        ) from None
    result = await run_in_threadpool(service.match, payload)  # CPU work off the event loop
    count_match(bool(result.matches))
    if prefers_markdown(request.headers.get("accept")):
        return markdown_response(match_cards(result, service.catalog.records, links_for(request)))
    return result


def _text(body: bytes) -> str:
    if b"\x00" in body:
        raise InvalidInput("text: binary data, not a paste")
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInput("text: not UTF-8 text") from None
