"""Bot-facing routes: Slack's and Mattermost's /errata slash command, and Markdown answers.

Both chats post form-encoded bodies. Slack's is checked against its signature before it is
parsed; Mattermost's carries its token inside the form. Pasted text is never logged.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Annotated, Any
from urllib.parse import parse_qs

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse

from app.api.answers import links_for
from app.api.deps import CatalogDep, StoreDep
from app.api.offload import cpu_bound
from app.api.openapi import problem_responses
from app.api.tokens import token_allowed
from app.chatops.answers import Answerer
from app.chatops.commands import DEFAULT_SLASH
from app.chatops.mattermost import mattermost_message
from app.chatops.replays import ReplayCache
from app.chatops.slack import (
    SIGNATURE_PATTERN,
    TIMESTAMP_PATTERN,
    SlackSignature,
    command_text,
    slack_message,
)
from app.config import Settings
from app.errors import Forbidden, InvalidInput, ServiceUnavailable, Unauthorized

router = APIRouter(prefix="/chatops", tags=["chat-ops"])
log = logging.getLogger(__name__)
MAX_FORM_FIELDS = 100
FORM = "application/x-www-form-urlencoded"
# The fields each command reads; the chats send more, which are kept and ignored.
_TEXT = {"type": "string", "description": "What the user typed after the command."}
_COMMAND = {"type": "string", "description": "The slash command (/errata when absent)."}


def _form_body(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    """The OpenAPI ``requestBody`` of a slash command: a form, its first value of each field
    read (``MAX_FORM_FIELDS`` fields at most)."""
    schema = {"type": "object", "properties": properties, "required": required}
    return {"required": True, "content": {FORM: {"schema": schema}}}


SLACK_REQUEST: dict[str, Any] = {
    "requestBody": _form_body({"text": _TEXT, "command": _COMMAND}, []),
    "parameters": [
        {
            "name": "X-Slack-Request-Timestamp",
            "in": "header",
            "required": True,
            "description": "When Slack sent the command (Unix seconds, within five minutes).",
            "schema": {"type": "string", "pattern": f"^{TIMESTAMP_PATTERN}$"},
        },
        {
            "name": "X-Slack-Signature",
            "in": "header",
            "required": True,
            "description": "HMAC-SHA256 of v0:{timestamp}:{raw body} with the signing secret.",
            "schema": {"type": "string", "pattern": f"^{SIGNATURE_PATTERN}$"},
        },
    ],
}
MATTERMOST_REQUEST: dict[str, Any] = {
    "requestBody": _form_body(
        {
            "token": {"type": "string", "description": "One of ERRATA_MATTERMOST_TOKENS."},
            "text": _TEXT,
            "command": _COMMAND,
        },
        ["token"],
    )
}


@dataclass(frozen=True)
class SlackDelivery:
    form: dict[str, str]
    key: tuple[str, str]
    """Timestamp and signature: the same for every delivery of one command."""


async def verified_slack_delivery(request: Request) -> SlackDelivery:
    """The command, once its signature over the raw body checks out (401 otherwise)."""
    secret = request.app.state.settings.slack_signing_secret
    if secret is None:
        raise ServiceUnavailable("Slack commands are off: ERRATA_SLACK_SIGNING_SECRET is not set.")
    body = await request.body()
    timestamp = request.headers.get("x-slack-request-timestamp", "")
    signature = request.headers.get("x-slack-signature", "")
    if not SlackSignature(secret.get_secret_value()).verify(body, timestamp, signature):
        raise Unauthorized("The request has no valid, current Slack signature.")
    return SlackDelivery(_form(body), (timestamp, signature))


async def authenticated_mattermost_form(request: Request) -> dict[str, str]:
    """The command's form, when its token is one of ERRATA_MATTERMOST_TOKENS."""
    settings: Settings = request.app.state.settings
    if not settings.mattermost_tokens:
        raise ServiceUnavailable("Mattermost commands are off: ERRATA_MATTERMOST_TOKENS is empty.")
    form = _form(await request.body())
    token = form.get("token", "")
    if not token:
        raise Unauthorized("The command carries no token.")
    if not token_allowed(token, settings.mattermost_tokens):
        raise Forbidden("The command's token is not one this service accepts.")
    return form


@router.post(
    "/slack",
    summary="Slack's /errata slash command (signed, form-encoded)",
    openapi_extra=SLACK_REQUEST,
    responses=problem_responses(
        {
            401: "No valid, current Slack signature of the body",
            503: "Slack commands are off (no signing secret), or the database is unreachable",
        }
    ),
)
async def slack_command(
    delivery: Annotated[SlackDelivery, Depends(verified_slack_delivery)],
    request: Request,
    store: StoreDep,
    catalog: CatalogDep,
) -> JSONResponse:
    """Repeated deliveries of one command (Slack retries carry X-Slack-Retry-Num) get the
    answer the first one got, from memory, so the user sees one answer either way.

    The answer (the store's reads, matching, the engine) is worked out in the process's CPU
    worker, like the API's matches and computes."""
    replays: ReplayCache = request.app.state.slack_replays
    message = replays.get(delivery.key)
    if message is None:
        answerer = Answerer(store, catalog, links_for(request))
        text = command_text(delivery.form.get("text", ""))
        slash = delivery.form.get("command") or DEFAULT_SLASH
        message = await cpu_bound(request, lambda: slack_message(answerer.reply(text, slash)))
        replays.put(delivery.key, message)
    else:
        log.info("repeated Slack delivery (retry %s)", request.headers.get("x-slack-retry-num"))
    return JSONResponse(message)


@router.post(
    "/mattermost",
    summary="Mattermost's /errata slash command (token, form-encoded)",
    openapi_extra=MATTERMOST_REQUEST,
    responses=problem_responses(
        {
            401: "The form carries no token",
            403: "The form's token is not one this service accepts",
            503: "Mattermost commands are off (no tokens), or the database is unreachable",
        }
    ),
)
async def mattermost_command(
    form: Annotated[dict[str, str], Depends(authenticated_mattermost_form)],
    request: Request,
    store: StoreDep,
    catalog: CatalogDep,
) -> JSONResponse:
    answerer = Answerer(store, catalog, links_for(request))
    text, slash = form.get("text", ""), form.get("command") or DEFAULT_SLASH
    message = await cpu_bound(request, lambda: mattermost_message(answerer.reply(text, slash)))
    return JSONResponse(message)


def _form(body: bytes) -> dict[str, str]:
    """A form-encoded body's fields, first value of each."""
    try:
        fields = parse_qs(
            body.decode("utf-8", errors="replace"),
            keep_blank_values=True,
            max_num_fields=MAX_FORM_FIELDS,
        )
    except ValueError:
        raise InvalidInput(f"The form has more than {MAX_FORM_FIELDS} fields.") from None
    return {name: values[0] for name, values in fields.items()}
