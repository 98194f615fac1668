"""``errata mcp`` driven by the MCP SDK's own client over stdio, as an agent's host runs it."""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from app.config import REPO_ROOT
from tests.surfaces.conftest import DIFF, DO_THIS, FORMATTED, HEADLINE, process_env

TOOLS = {"explain_error", "compute_fix", "get_record", "search_records"}


def with_server(
    offline_env: dict[str, str], talk: Callable[[ClientSession], Awaitable[Any]]
) -> Any:
    """``talk`` to a fresh ``errata mcp`` process, and what it returned."""
    parameters = StdioServerParameters(
        command=sys.executable,
        args=["-m", "app", "mcp"],
        env=process_env(offline_env),
        cwd=REPO_ROOT,
    )

    async def session() -> Any:
        async with stdio_client(parameters) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            return await talk(client)

    # A thread of its own: an earlier test of the session (a sync Playwright browser, a
    # kernel client) may leave an event loop running in this one.
    with ThreadPoolExecutor(max_workers=1) as thread:
        return thread.submit(anyio.run, session).result()


def test_the_tools_answer_with_the_answer_model_and_markdown(offline_env: dict[str, str]) -> None:
    async def talk(client: ClientSession) -> dict[str, Any]:
        listed = await client.list_tools()
        called = {
            "explain_error": await client.call_tool(
                "explain_error", {"text": FORMATTED.read_text(), "jax_version": "0.10.2"}
            ),
            "compute_fix": await client.call_tool(
                "compute_fix",
                {"operation": "copy_gmem_to_smem", "shape": "7", "dtype": "int4"},
            ),
            "get_record": await client.call_tool("get_record", {"key": "225d0e9c2ee22311"}),
            "search_records": await client.call_tool("search_records", {"q": "integer bytes"}),
        }
        return {"tools": listed.tools, **called}

    got = with_server(offline_env, talk)
    tools = {tool.name: tool for tool in got["tools"]}
    assert set(tools) == TOOLS
    assert all(tool.output_schema for tool in tools.values())  # each says what it returns
    assert "jax_version" in tools["explain_error"].input_schema["properties"]

    explained = got["explain_error"]
    assert not explained.is_error
    answer = explained.structured_content["answers"][0]
    assert answer["headline"] == HEADLINE
    assert all(line in answer["doThis"]["diff"] for line in DIFF)
    assert explained.structured_content["matches"][0]["rule"] == "MGPU-COPY-INTEGER-BYTES"
    text = explained.content[0].text
    assert text.startswith("### ValueError: Can only transfer integer bytes")
    assert f"\n\n**{DO_THIS}** — verified against every check" in text
    assert "```diff\n" in text and DIFF[1] in text

    computed = got["compute_fix"].structured_content
    assert computed["kind"] == "compute"
    assert computed["doThis"]["title"] == "Pad the block from 7 to 256 elements"

    record = got["get_record"].structured_content
    assert record["kind"] == "record"
    assert "Can only transfer integer bytes" in record["headline"]

    page = got["search_records"].structured_content
    assert "225d0e9c2ee22311" in [item["id"] for item in page["items"]]
    assert "`225d0e9c2ee22311`" in got["search_records"].content[0].text


def test_a_refused_request_is_a_tool_error_with_the_apis_problem(
    offline_env: dict[str, str],
) -> None:
    async def talk(client: ClientSession) -> list[Any]:
        return [
            await client.call_tool(
                "compute_fix", {"operation": "copy_gmem_to_smem", "shape": "7", "dtype": "int3"}
            ),
            await client.call_tool("get_record", {"key": "no-such-record"}),
            await client.call_tool("explain_error", {"text": "x", "jax_version": "not a release"}),
            await client.call_tool("compute_fix", {"operation": "copy_gmem_to_smem"}),
        ]

    bad_dtype, missing, bad_release, unsaid = with_server(offline_env, talk)
    for result in (bad_dtype, missing, bad_release, unsaid):
        assert result.is_error
        assert json.loads(result.content[0].text) == result.structured_content
    assert bad_dtype.structured_content["status"] == 422
    assert bad_dtype.structured_content["errors"][0]["field"] == "dtype"
    assert missing.structured_content == {
        "type": "about:blank",
        "title": "Not found",
        "status": 404,
        "detail": "No error record with slug or id 'no-such-record'.",
    }
    assert bad_release.structured_content["status"] == 422
    assert "jaxVersion" in bad_release.structured_content["detail"]
    # Arguments the tool's schema refuses: a 422 naming each field, as the API's.
    assert unsaid.structured_content["status"] == 422
    fields = {error["field"] for error in unsaid.structured_content["errors"]}
    assert fields == {"shape", "dtype"}
    assert unsaid.structured_content["detail"] == "shape: Field required; dtype: Field required"
