"""/api/compute with ``"backend": "tpu"`` over HTTP: the Pallas TPU engine's verdicts in
JAX's words, fixes that pass when asked again, the VMEM budget, and bad input as 422s."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.api.test_records_api import assert_problem

BLOCK_100 = {
    "backend": "tpu",
    "operation": "pallas_call",
    "arrayShape": [256, 256],
    "blockShape": [100, 100],
    "dtype": "float32",
    "chip": "v5e",
    "jaxVersion": "0.10.2",
}
BUDGET = {
    "backend": "tpu",
    "operation": "vmem_budget",
    "chip": "v5e",
    "blocks": [
        {"blockShape": [2048, 1024], "dtype": "float32", "arrayShape": [8192, 1024]},
        {
            "blockShape": [2048, 1024],
            "dtype": "float32",
            "role": "output",
            "arrayShape": [8192, 1024],
        },
    ],
}


def test_an_unaligned_block_gets_jax_words_and_a_block_that_tiles(client: httpx.Client) -> None:
    body = client.post("/api/compute", json=BLOCK_100).json()
    assert body["ok"] is False and body["backend"] == "tpu"
    first = body["firstViolation"]
    assert first["errorClass"] == "ValueError"
    assert first["message"].startswith(
        "The Pallas TPU lowering currently requires that the last two dimensions of your "
        "block shape are divisible by 8 and 128 respectively"
    )
    assert (
        "(Blocked(block_size=100), Blocked(block_size=100)), array shape (256, 256)"
        in (first["message"])
    )
    best = body["fixes"][0]
    assert best["shape"] == [128, 128] and best["kind"] == "block"
    assert best["code"]["before"].startswith("grid=(3, 3)")
    assert best["code"]["after"].startswith("grid=(2, 2)")


def test_the_users_code_is_named_as_the_paste_names_it(client: httpx.Client) -> None:
    context = {"origin": "x_ref", "kernel": "add at k.py:3", "indexMap": "{ lambda ; a:i32[]. }"}
    message = client.post("/api/compute", json={**BLOCK_100, **context}).json()["firstViolation"]
    assert "Block spec for x_ref in pallas_call add at k.py:3 has" in message["message"]
    assert "and index_map { lambda ; a:i32[]. }, in memory space" in message["message"]


def test_every_fix_passes_when_asked_again(client: httpx.Client) -> None:
    for case in (BLOCK_100, {**BLOCK_100, "arrayShape": [1000], "blockShape": [100]}):
        for fix in client.post("/api/compute", json=case).json()["fixes"]:
            again = client.post("/api/compute", json={**case, "blockShape": fix["shape"]}).json()
            assert again["ok"] is True, fix


def test_a_passing_block_is_ok_with_no_fixes(client: httpx.Client) -> None:
    body = client.post("/api/compute", json={**BLOCK_100, "blockShape": [128, 128]}).json()
    assert body["ok"] is True and body["fixes"] == [] and body["firstViolation"] is None


def test_vmem_over_the_default_limit(client: httpx.Client) -> None:
    body = client.post("/api/compute", json=BUDGET).json()
    assert body["ok"] is False
    assert body["vmem"]["totalBytes"] == 32 * 2**20
    assert body["vmem"]["limitIsDefault"] is True
    assert body["firstViolation"]["errorClass"] == "CompileTimeScopedVmemOom"
    assert body["firstViolation"]["message"] == (
        "Scoped allocation with size 32.00M and limit 16.00M exceeded scoped vmem limit by 16.00M"
    )
    kinds = [fix["kind"] for fix in body["fixes"]]
    assert "vmem_limit" in kinds and "block" in kinds


def test_gpu_requests_are_unchanged(client: httpx.Client) -> None:
    case = {"operation": "pallas_call", "shape": [128], "dtype": "float32"}
    plain = client.post("/api/compute", json=case).json()
    named = client.post("/api/compute", json={**case, "backend": "mosaic_gpu"}).json()
    assert plain == named and plain["ok"] is True and "backend" not in plain


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({**BLOCK_100, "arrayShape": [2**62, 2**62]}, "arrayShape"),
        ({**BLOCK_100, "arrayShape": [0, 256]}, "arrayShape"),
        ({**BLOCK_100, "blockShape": [-1, 128]}, "blockShape"),
        ({**BLOCK_100, "chip": "v9z"}, "chip"),
        ({**BLOCK_100, "jaxVersion": "0.4.20"}, "jaxVersion"),
        ({**BLOCK_100, "dtype": "int5"}, "dtype"),
        ({**BLOCK_100, "operation": "copy"}, "operation"),
        ({**BLOCK_100, "dtype": None}, "dtype"),
        ({**BUDGET, "blocks": [{"blockShape": [8, 128], "dtype": "int5"}]}, "blocks.0.dtype"),
        ({**BUDGET, "vmemLimitBytes": 0}, "vmemLimitBytes"),
        ({**BUDGET, "blocks": []}, "blocks"),
    ],
)
def test_bad_input_is_a_422_naming_the_field(
    client: httpx.Client, payload: dict[str, Any], field: str
) -> None:
    body = assert_problem(client.post("/api/compute", json=payload), 422)
    assert field in body["detail"], body


def test_a_tpu_case_answers_in_markdown_as_the_gpu_ones_do(client: httpx.Client) -> None:
    response = client.post(
        "/api/compute",
        json=BLOCK_100,
        headers={"Accept": "text/markdown"},
    )
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/markdown")
    text = response.text
    assert "The block's last dimension is 100 against the array's 256" in text
    assert "Use blocks of (128, 128) with grid (2, 2)" in text
    assert "+grid=(2, 2), in_specs=[pl.BlockSpec((128, 128)" in text
