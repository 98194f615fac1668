"""What every answering route shares: the links an answer carries, and its Markdown form."""

from __future__ import annotations

from collections.abc import Sequence

from fastapi import Request, Response

from app.answers.answer import Answer
from app.answers.links import Links
from app.config import Settings
from app.rendering.markdown import MEDIA_TYPE, markdown


def links_for(request: Request) -> Links:
    settings: Settings = request.app.state.settings
    return Links.choose(settings.public_base_url, str(request.base_url))


MARKDOWN_ANSWER: dict[int | str, dict[str, object]] = {
    200: {"content": {"text/markdown": {"schema": {"type": "string"}}}}
}


def markdown_response(answers: Sequence[Answer]) -> Response:
    """The API's answer for ``Accept: text/markdown``: every answer, every step."""
    return Response(markdown(answers), media_type=MEDIA_TYPE, headers={"Vary": "Accept"})
