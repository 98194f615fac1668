"""Accept: text/markdown on /api/match and /api/compute: the bots' renderer, for any client."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from app.jaxref.releases import newest_release
from app.rendering.markdown import escape
from tests.chatops.chat import traceback
from tests.conftest import PUBLIC_BASE_URL

MARKDOWN = {"Accept": "text/markdown"}
RECORDS = Path(__file__).resolve().parents[2] / "data" / "records"
ANNOTATIONS = RECORDS.with_name("annotations")
INT4_7 = {"operation": "copy_gmem_to_smem", "shape": [7], "dtype": "int4"}


def test_match_answers_in_markdown_when_asked(client: httpx.Client) -> None:
    response = client.post(
        "/api/match",
        content=traceback("MGPU-COPY-INTEGER-BYTES"),
        headers={**MARKDOWN, "Content-Type": "text/plain"},
    )
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/markdown; charset=utf-8"
    assert "accept" in response.headers["vary"].lower()
    text = response.text
    assert text.startswith("### ValueError: Can only transfer integer bytes")
    assert "**Do this: Pad the block from 7 to 256 elements**" in text
    assert (
        "```diff\n-lower('copy_gmem_to_smem', (7,), 'int4', None)\n"
        "+lower('copy_gmem_to_smem', (256,), 'int4', None)\n```"
    ) in text
    assert "lower('copy_gmem_to_smem', (32,), 'int32', None)" in text, "every fix, not chat's three"
    assert f"({PUBLIC_BASE_URL}/errors/225d0e9c2ee22311)" in text


def test_compute_answers_in_markdown_when_asked(client: httpx.Client) -> None:
    response = client.post("/api/compute", json=INT4_7, headers=MARKDOWN)
    assert response.headers["content-type"] == "text/markdown; charset=utf-8"
    assert response.text.startswith(
        "### ValueError: Can only transfer integer bytes (shape=\\[7\\], dtype=i4) (7 × 4 bits"
    )
    passing = client.post(
        "/api/compute",
        json={"operation": "pallas_call", "shape": [128], "dtype": "float32"},
        headers=MARKDOWN,
    )
    assert passing.text.startswith("### pallas_call: (128,) float32 passes every check")


def test_json_stays_the_default(client: httpx.Client) -> None:
    for accept in ("*/*", "application/json", "application/json, text/markdown;q=0.5"):
        response = client.post("/api/compute", json=INT4_7, headers={"Accept": accept})
        assert response.headers["content-type"] == "application/json", accept
        assert response.json()["ok"] is False


def test_errors_stay_problem_json(client: httpx.Client) -> None:
    response = client.post("/api/compute", json={**INT4_7, "operation": "nope"}, headers=MARKDOWN)
    assert response.status_code == 422
    assert response.headers["content-type"].startswith("application/problem+json")


def test_the_match_card_says_why_the_fix_goes_further_and_why_fixes_rank_so(
    client: httpx.Client,
) -> None:
    matched = client.post(
        "/api/match",
        content=traceback("MGPU-COPY-INTEGER-BYTES"),
        headers={**MARKDOWN, "Content-Type": "text/plain"},
    ).text
    computed = client.post("/api/compute", json=INT4_7, headers=MARKDOWN).text
    for text in (matched, computed):
        assert "Fixing only this is not enough: 2 more checks fail" in text
        assert "MGPU-COPY-WARPGROUP-BYTES" in text
        assert "convert the data to int8 (x.astype(jnp.int8))" in text
        assert "ranked below the fixes that keep your dtypes" in text
        assert "as many bytes as the fix above, which ranks first with the narrower int8" in text


def test_a_match_names_the_jax_release_and_links_the_site_in_its_source(
    client: httpx.Client,
) -> None:
    paste = traceback("MGPU-COPY-INTEGER-BYTES")
    answer = client.post("/api/match", json={"text": paste}).json()
    frames, url = answer["release"]["frames"], answer["matches"][0]["sourceUrl"]
    source = answer["matches"][0]["source"]
    assert source["filePath"] == "jax/_src/pallas/mosaic_gpu/primitives.py"
    assert source["release"] == "0.10.2" and url.endswith(f"#L{source['line']}-L{source['line']}")
    text = client.post("/api/match", json={"text": paste}, headers=MARKDOWN).text
    assert f"JAX release `0.10.2, from {frames} JAX frames`" in text
    label = rf"JAX source: jax/\_src/pallas/mosaic_gpu/primitives.py:{source['line']} (0.10.2)"
    assert f"[{label}]({url})" in text
    nightly = "jax: 0.99.0.dev20261101\n" + paste.splitlines()[-1]
    text = client.post("/api/match", json={"text": nightly}, headers=MARKDOWN).text
    newest = newest_release()
    assert f"JAX release `{newest}, as the paste names it`" in text
    assert f"Release: the paste names jax 0.99.0.dev20261101, newer than {newest}" in text
    asked = client.post("/api/match", json={"text": paste, "jaxVersion": "0.8.1"}, headers=MARKDOWN)
    assert "Release: jaxVersion 0.8.1 but the paste reads 0.10.2." in asked.text


def test_a_message_alone_says_the_releases_its_wording_reads(client: httpx.Client) -> None:
    """The older wording of the partitioning error, pasted alone, tells its releases."""
    record = json.loads((RECORDS / "tpu-automatic-partitioning.json").read_text())
    paste = f"NotImplementedError: {record['record']['olderWordings'][0]['text']}"
    release = client.post("/api/match", json={"text": paste}).json()["release"]
    assert [e["kind"] for e in release["evidence"]] == ["wording"]
    text = client.post("/api/match", json={"text": paste}, headers=MARKDOWN).text
    # The span leads: the newest release, which the links follow, is no claim about the paste.
    assert release["used"] != release["span"]
    told = (
        f"{release['span']}, by the message's wording; the answer's links follow {release['used']}"
    )
    assert f"JAX release `{told}`" in text
    until = record["record"]["olderWordings"][0]["until"]
    assert f"Matched the wording JAX printed until {until}; later releases" in text


def test_an_answer_without_a_computed_fix_says_what_to_do(client: httpx.Client) -> None:
    """The curated advice stands in the answer, errata's correction where it made one."""
    record = json.loads((RECORDS / "tpu-automatic-partitioning.json").read_text())["record"]
    paste = f"NotImplementedError: {record['errorMessage']}"
    text = client.post("/api/match", json={"text": paste}, headers=MARKDOWN).text
    assert f"**Do this: {escape(record['solutions'][0])}**" in text
    assert f"**Or: {escape(record['solutions'][1])}**" in text
    annotation = json.loads((ANNOTATIONS / "ffb598de9e3ff51b.json").read_text())["annotation"]
    [corrected] = [c for c in annotation["corrections"] if c["field"] == "solutions"]
    paste = traceback("MGPU-COPY-WARPGROUP-BYTES")  # its bytes, but not the block's shape
    text = client.post("/api/match", json={"text": paste}, headers=MARKDOWN).text
    assert f"**Do this: {escape(corrected['correction'])}**" in text
    # The engine's fixes for the values pasted say it instead.
    paste = "ValueError: Only byte-aligned shapes are supported. Got shape: int4(7,)"
    text = client.post("/api/match", json={"text": paste}, headers=MARKDOWN).text
    assert "```diff" in text and escape(corrected["correction"]) not in text


def test_pythons_error_at_pallas_call_says_where_jax_called_and_what_to_do(
    client: httpx.Client,
) -> None:
    """JAX 0.4.30's traceback of an index map of one parameter under a two-axis grid."""
    paste = RECORDS.parents[1] / "tests/fixtures/pastes/index-map-given-more-indices-0.4.30.txt"
    text = client.post(
        "/api/match",
        content=paste.read_text(),
        headers={**MARKDOWN, "Content-Type": "text/plain"},
    ).text
    assert text.startswith(f"### TypeError: {escape('<lambda>() takes 1 positional argument')}")
    called = escape("jax/_src/pallas/core.py:182 compute_index")
    assert f"Python raised this where JAX called your code: {called}." in text
    assert "[JAX source: jax/\\_src/pallas/core.py:182 (0.4.30)]" in text
    record = json.loads((RECORDS / "pallas-index-map-given-more-indices.json").read_text())
    assert escape(record["record"]["solutions"][0]) in text
