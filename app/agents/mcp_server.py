"""``errata mcp``: errata's answers as Model Context Protocol tools, over stdio.

An agent that writes Pallas kernels asks as a person does: ``explain_error`` with a
traceback, ``compute_fix`` with a block's values, ``get_record`` and ``search_records`` for
what errata knows. Each result carries the API's own model as structured content (the
match answer, an Answer, a page of records) and the same in Markdown for the model to
read. A request the service refuses is a tool error whose structured content is the API's
problem detail (RFC 9457: type, title, status, detail, errors), and whose text is that JSON.

Answers are made in this process, from the snapshot ``errata match`` reads and the database
``errata show`` reads (no server is needed). Links lead to ``ERRATA_PUBLIC_BASE_URL``'s
pages where it is set, else they are the commands that show the same.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING, Annotated, Any

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent
from pydantic import BaseModel, Field, ValidationError

from app.answers.answer import Answer, MatchAnswer
from app.answers.links import COMMANDS, Links
from app.errors import InvalidInput, ProblemError, field_errors, fields_detail
from app.records.schema import RecordPage
from app.rendering.markdown import code_span, escape, markdown

if TYPE_CHECKING:
    from sqlalchemy.orm import Session, sessionmaker

# Records a search returns: the API's page size default; an agent reads the first few.
SEARCH_LIMIT = 10


class _Server(MCPServer):
    """The SDK's server, arguments that fail a tool's schema answered as the API answers a
    body that fails its model: a 422 problem naming each field."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                return _invalid(exc.__cause__)
            raise


server = _Server(
    "errata",
    instructions="Known JAX Pallas errors, and fixes computed for your values: give"
    " explain_error a whole traceback.",
)


@server.tool()
def explain_error(
    text: Annotated[str, Field(description="The traceback or error message, whole.")],
    jax_version: Annotated[
        str | None, Field(description="The JAX release that printed it, e.g. 0.10.2.")
    ] = None,
) -> Annotated[CallToolResult, MatchAnswer]:
    """Find the known errors in a traceback: each with its values, the JAX release, the
    source site, and fixes computed for those values and checked against every rule."""

    def answer() -> CallToolResult:
        from app.answers.offline import match_here, prepared

        matched = match_here(prepared(), text, jax_version, _links())
        return _result(matched, markdown(matched.answers))

    return _answered(answer)


@server.tool()
def compute_fix(
    operation: Annotated[str, Field(description="The construct, e.g. copy_gmem_to_smem.")],
    shape: Annotated[str, Field(description="The block's shape: 7, (8, 128), [8,128].")],
    dtype: Annotated[str, Field(description="A numpy / ml_dtypes name, e.g. int4, bfloat16.")],
    target_dtype: Annotated[
        str | None, Field(description="The dtype viewed as (smem_bitcast only).")
    ] = None,
    jax_version: Annotated[str | None, Field(description="The JAX release, e.g. 0.10.2.")] = None,
    also_jax_versions: Annotated[
        list[str] | None, Field(description="Releases every fix must pass in too.")
    ] = None,
    lowering_semantics: Annotated[
        str | None, Field(description="Lane or Warpgroup; the release's default when unset.")
    ] = None,
) -> Annotated[CallToolResult, Answer]:
    """What JAX raises for a block, and the fixes that pass every check, best first: the
    same service as POST /api/compute and errata compute."""

    def answer() -> CallToolResult:
        from app.answers.cards import compute_answer
        from app.answers.compute import ComputeService
        from app.answers.offline import prepared
        from app.schemas.compute import ComputeRequest

        request = ComputeRequest.model_validate(
            {
                "operation": operation,
                "shape": shape,
                "dtype": dtype,
                "targetDtype": target_dtype,
                "jaxVersion": jax_version,
                "alsoJaxVersions": also_jax_versions or [],
                "loweringSemantics": lowering_semantics,
            }
        )
        computed = compute_answer(ComputeService(prepared().catalog).compute(request), _links())
        return _result(computed, markdown([computed]))

    return _answered(answer)


@server.tool()
def get_record(
    key: Annotated[str, Field(description="A record's id or slug.")],
) -> Annotated[CallToolResult, Answer]:
    """One known error in brief: what it means, where JAX raises it, and its example fix."""

    def answer() -> CallToolResult:
        from app.answers.cards import record_answer
        from app.answers.record_text import find_record
        from app.records.store import RecordStore

        with _sessions()() as session:
            store = RecordStore(session)
            row = find_record(store, key)
            found = record_answer(row.document, store.annotation(row.id), _links())
        return _result(found, markdown([found]))

    return _answered(answer)


@server.tool()
def search_records(
    q: Annotated[
        str,
        Field(max_length=500, description='Words to find, all of them; "a phrase" in quotes.'),
    ],
) -> Annotated[CallToolResult, RecordPage]:
    """Search errata's records, the most relevant first, as GET /api/errors?q= does."""

    def answer() -> CallToolResult:
        from app.api.records import summary
        from app.records.store import RecordFilters, RecordStore

        with _sessions()() as session:
            found = RecordStore(session).search(RecordFilters(q=q), limit=SEARCH_LIMIT, cursor=None)
            page = RecordPage(
                items=[summary(row, found.snippets.get(row.id)) for row in found.rows],
                total=found.total,
                nextCursor=found.next_cursor,
            )
        return _result(page, _page_markdown(page, q))

    return _answered(answer)


def _answered(answer: Callable[[], CallToolResult]) -> CallToolResult:
    """``answer()``; a problem the service raises, or a request it cannot validate, as the
    tool error that carries the API's problem detail."""
    try:
        return answer()
    except ValidationError as exc:
        return _invalid(exc)
    except ProblemError as exc:
        return _problem(exc)


def _invalid(exc: ValidationError) -> CallToolResult:
    fields = field_errors(exc.errors())
    return _problem(InvalidInput(fields_detail(fields), errors=fields))


def _problem(exc: ProblemError) -> CallToolResult:
    problem: dict[str, Any] = {
        "type": "about:blank",
        "title": exc.title,
        "status": exc.status,
        "detail": exc.detail,
    }
    if exc.errors:
        problem["errors"] = exc.errors
    text = json.dumps(problem, ensure_ascii=False)
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=problem, is_error=True
    )


def _result(model: BaseModel, text: str) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=model.model_dump(mode="json"),
    )


def _page_markdown(page: RecordPage, q: str) -> str:
    if not page.items:
        return f"No record matches {code_span(q)}.\n"
    lines = [f"{page.total} records match {code_span(q)}; the first {len(page.items)}:", ""]
    lines += [
        f"- {code_span(item.errorMessage)} ({escape(item.errorClass or 'error')}, id"
        f" {code_span(item.id)})"
        for item in page.items
    ]
    return "\n".join(lines) + "\n"


@cache
def _links() -> Links:
    from app.config import load_settings

    base = load_settings().public_base_url
    return Links(base.rstrip("/")) if base else COMMANDS


@cache
def _sessions() -> sessionmaker[Session]:
    """The database's session factory, prepared once (a fresh one gets the seeds)."""
    from app.answers.offline import prepared_database
    from app.config import load_settings

    return prepared_database(load_settings())[1]


def serve() -> None:
    """Answer on stdin and stdout until the client closes them."""
    server.run("stdio")
