"""Match API: paste a traceback (JSON or plain text), get the known errors and their fixes."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Request, Response
from pydantic import Field, TypeAdapter, ValidationError

from app.answers.answer import MatchAnswer
from app.answers.cards import match_answers
from app.answers.match import MatchService
from app.api.answers import MARKDOWN_ANSWER, links_for, markdown_response
from app.api.bodies import invalid_at, invalid_body, json_body, post_request_route
from app.api.deps import get_catalog
from app.api.offload import on_loop_unless_engine
from app.errors import InvalidInput
from app.matching import UnreadablePaste, paste_text
from app.observability.metrics import count_match
from app.rendering.negotiation import prefers_markdown
from app.schemas.match import JAX_VERSION_MAX_LENGTH, MatchRequest

router = APIRouter(prefix="/api", tags=["match"])
# Pastes matched on the event loop: up to about 2 ms of CPU, less than the interpreter's
# 5 ms switch interval, so a worker thread would not give the loop its turn any sooner.
ON_LOOP_PASTE_BYTES = 64 * 1024
_JAX_VERSION: TypeAdapter[str] = TypeAdapter(
    Annotated[str, Field(max_length=JAX_VERSION_MAX_LENGTH)]
)
# The answer as JSON bytes: ``model_dump_json`` decodes them to text, which the response
# encodes again (13 KB for a 20 KB paste's answer).
_ANSWER = TypeAdapter(MatchAnswer)
# Read by the endpoint itself: FastAPI's resolving of a declared query parameter cost more
# than a 20 KB paste's JSON parsing.
_JAX_VERSION_PARAMETER = {
    "name": "jaxVersion",
    "in": "query",
    "required": False,
    "description": "The JAX version the paste came from, where the body does not say it.",
    "schema": _JAX_VERSION.json_schema(),
}


@post_request_route(
    router,
    "/match",
    response_model=MatchAnswer,
    summary="Find known errors in a pasted traceback",
    responses=MARKDOWN_ANSWER,
    openapi_extra={
        **json_body(MatchRequest, {"text/plain": {"schema": {"type": "string", "minLength": 1}}}),
        "parameters": [_JAX_VERSION_PARAMETER],
    },
)
async def match(request: Request) -> Response:
    body = await request.body()
    jax_version = _jax_version(request)
    content_type = request.headers.get("content-type", "")
    try:
        if content_type.startswith("application/json"):
            payload = MatchRequest.model_validate_json(body)
            if payload.jaxVersion is None and jax_version is not None:
                payload = payload.model_copy(update={"jaxVersion": jax_version})
        else:
            payload = MatchRequest(text=_text(body), jaxVersion=jax_version)
    except ValidationError as exc:
        raise invalid_body(exc) from None
    catalog = await get_catalog(request)
    result = await on_loop_unless_engine(
        request,
        lambda run_engine: MatchService(catalog, run_engine=run_engine).match(payload),
        on_loop=len(body) <= ON_LOOP_PASTE_BYTES,
    )
    count_match(bool(result.matches))
    answers = match_answers(result, catalog.records, links_for(request))
    if prefers_markdown(request.headers.get("accept")):
        return markdown_response(answers)
    answered = MatchAnswer.model_construct(**dict(result), answers=answers)
    return Response(_ANSWER.dump_json(answered), media_type="application/json")


def _jax_version(request: Request) -> str | None:
    """The ``jaxVersion`` query parameter, checked as FastAPI checks a declared one."""
    value = request.query_params.get("jaxVersion")
    if value is None:
        return None
    try:
        return _JAX_VERSION.validate_python(value)
    except ValidationError as exc:
        raise invalid_at(("query", "jaxVersion"), exc) from None


def _text(body: bytes) -> str:
    try:
        return paste_text(body)
    except UnreadablePaste as exc:
        raise InvalidInput(f"text: {exc}") from None
