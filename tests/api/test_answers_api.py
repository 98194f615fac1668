"""The computed answers over HTTP: the SMEM budget operation, and the parts a match shows."""

from __future__ import annotations

import httpx
import pytest

from tests.answers.test_computed_answers import LANE_WORDING, SMEM_PASTE, SMEM_RECORD
from tests.api.test_records_api import assert_problem

SUM_BLOCKS = [
    {"shape": [128, 128], "dtype": "float16", "role": "input"},
    {"shape": [128, 128], "dtype": "float16", "role": "input"},
    {"shape": [128, 128], "dtype": "float16", "role": "output"},
]


def test_smem_budget_counts_as_jax_and_says_what_fits(client: httpx.Client) -> None:
    response = client.post(
        "/api/compute/smem-budget",
        json={"buffers": SUM_BLOCKS, "maxConcurrentSteps": 4, "sequentialSteps": 8},
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert (body["smemBytes"], body["maxSmemBytes"], body["fits"]) == (393248, 232448, False)
    assert (body["overBytes"], body["overPercent"]) == (160800, 69.2)
    assert body["gpu"] == {
        "name": "H100 / H200",
        "computeCapability": "9.0",
        "maxSmemBytes": 232448,
    }
    assert (body["fittingDepth"], body["barrierBytes"]) == (2, 32)
    assert [fit["newShape"] for fit in body["fittingBlocks"]] == [[64, 128], [128, 64]]


def test_smem_budget_on_an_a100_and_a_depth_capped_by_the_grid(client: httpx.Client) -> None:
    body = client.post(
        "/api/compute/smem-budget",
        json={"buffers": SUM_BLOCKS, "maxConcurrentSteps": 4, "sequentialSteps": 1, "gpu": "A100"},
    ).json()
    assert (body["maxConcurrentSteps"], body["smemBytes"], body["fits"]) == (1, 98312, True)
    assert body["maxSmemBytes"] == 163 * 1024 and body["fittingBlocks"] == []


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"buffers": [{"shape": [128], "dtype": "float99"}]}, "buffers.0.dtype"),
        ({"buffers": [{"shape": [128], "dtype": "float16"}], "gpu": "Voodoo3"}, "gpu"),
        ({"buffers": [{"shape": "[x]", "dtype": "float16"}]}, "buffers.0.shape"),
        ({"buffers": []}, "buffers"),
        ({"buffers": [{"shape": [8], "dtype": "int8", "role": "spare"}]}, "buffers.0.role"),
    ],
)
def test_smem_budget_refuses_bad_input_naming_the_field(
    client: httpx.Client, payload: dict[str, object], field: str
) -> None:
    body = assert_problem(client.post("/api/compute/smem-budget", json=payload), 422)
    assert field in {error["field"] for error in body["errors"]}, body


def test_match_answer_and_its_markdown_show_the_budget(client: httpx.Client) -> None:
    body = client.post("/api/match", json={"text": SMEM_PASTE}).json()
    assert [found["errorId"] for found in body["matches"]] == [SMEM_RECORD]
    [memory] = body["memory"]
    assert (memory["overBytes"], memory["overPercent"], memory["fittingDepth"]) == (160800, 69.2, 2)
    markdown = client.post(
        "/api/match",
        content=SMEM_PASTE,
        headers={"Content-Type": "text/plain", "Accept": "text/markdown"},
    ).text
    assert "SMEM over the limit by 160,800 bytes (69.2%)" in markdown
    assert "max_concurrent_steps=2" in markdown and "(64, 128)" in markdown
    assert "Lower max_concurrent_steps" in markdown
    record = client.get(f"/api/errors/{SMEM_RECORD}").json()  # the curated advice, served
    record = record.get("record", record)
    assert record["documentationSource"] == "curated" and len(record["solutions"]) == 3
    assert "smem_bytes=393248" in record["exampleFix"]


def test_match_markdown_names_the_release_that_lowers_the_primitive(client: httpx.Client) -> None:
    markdown = client.post(
        "/api/match",
        content=LANE_WORDING.format(name="abs"),
        headers={"Content-Type": "text/plain", "Accept": "text/markdown"},
    ).text
    assert "Upgrade to JAX 0.9.0 or later" in markdown
    assert "jnp.where(x < 0, -x, x)" in markdown
