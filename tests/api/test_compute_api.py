"""/api/compute over HTTP: verdicts in JAX's words, verified fixes, batch, sweep, bad input."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.api.test_records_api import assert_problem

INT4_7 = {"operation": "copy_gmem_to_smem", "shape": [7], "dtype": "int4", "jaxVersion": "0.10.2"}


def test_int4_copy_fails_on_integer_bytes_and_gets_the_smallest_pad(client: httpx.Client) -> None:
    body = client.post("/api/compute", json=INT4_7).json()
    assert body["ok"] is False
    first = body["firstViolation"]
    assert first == {
        "rule": "MGPU-COPY-INTEGER-BYTES",
        "errorId": "225d0e9c2ee22311",
        "errorClass": "ValueError",
        "message": "Can only transfer integer bytes (shape=[7], dtype=i4)",
        "explanation": "7 × 4 bits = 28 bits; 28 mod 8 = 4",
    }
    assert body["violations"][0] == first
    assert [v["rule"] for v in body["violations"]][:2] == [
        "MGPU-COPY-INTEGER-BYTES",
        "MGPU-COPY-WARPGROUP-BYTES",
    ]
    best = body["fixes"][0]
    assert (best["kind"], best["axis"], best["shape"], best["dtype"]) == ("pad", -1, [256], "int4")
    assert best["addedBytes"] == 124.5
    assert all(fix["verified"] for fix in body["fixes"])
    assert "(7,)" in best["code"]["before"] and "(256,)" in best["code"]["after"]
    assert "ml_dtypes.iinfo" in best["code"]["validation"]
    assert "itemsize" not in best["code"]["validation"].split("#")[0]
    added = [fix["addedBytes"] for fix in body["fixes"]]
    assert added == sorted(added)


def test_every_fix_is_confirmed_by_asking_again(client: httpx.Client) -> None:
    for case in (INT4_7, {"operation": "pallas_call", "shape": [8], "dtype": "float32"}):
        for fix in client.post("/api/compute", json=case).json()["fixes"]:
            again = {
                "operation": case["operation"],
                "shape": fix["shape"],
                "dtype": fix["dtype"],
                "targetDtype": fix["targetDtype"],
            }
            assert client.post("/api/compute", json=again).json()["ok"] is True, fix


def test_fixes_for_several_releases_pass_in_each_when_asked_again(client: httpx.Client) -> None:
    """The copy of a (3, 8) bfloat16 block lowers in 0.12.0.1 (Warpgroup by default) and not
    in 0.10.2 or 0.9.2 (Lane asks a multiple of 128 bytes): asked for all three, the answer
    says so, and gives fixes that pass in each, asked again of that release alone."""
    case = {
        "operation": "copy_gmem_to_smem",
        "shape": [3, 8],
        "dtype": "bfloat16",
        "jaxVersion": "0.12.0.1",
        "alsoJaxVersions": "0.10.2, 0.9.2",  # a form's spelling is read too
    }
    body = client.post("/api/compute", json=case).json()
    assert [
        (each["jaxVersion"], each["loweringSemantics"], each["ok"], each["rule"])
        for each in body["checkedIn"]
    ] == [
        ("0.12.0.1", "Warpgroup", True, None),
        ("0.10.2", "Lane", False, "MGPU-COPY-WARPGROUP-BYTES"),
        ("0.9.2", "Lane", False, "MGPU-COPY-WARPGROUP-BYTES"),
    ]
    assert body["fixes"]
    for fix in body["fixes"]:
        for release in ("0.12.0.1", "0.10.2", "0.9.2"):
            again = {**case, "shape": fix["shape"], "dtype": fix["dtype"], "jaxVersion": release}
            del again["alsoJaxVersions"]
            assert client.post("/api/compute", json=again).json()["ok"] is True, (fix, release)
    alone = client.post("/api/compute", json={**case, "alsoJaxVersions": []}).json()
    assert [each["jaxVersion"] for each in alone["checkedIn"]] == ["0.12.0.1"]
    assert (alone["ok"], alone["fixes"]) == (True, [])


def test_a_lowering_case_is_ok_with_no_fixes(client: httpx.Client) -> None:
    body = client.post(
        "/api/compute", json={"operation": "pallas_call", "shape": [128], "dtype": "float32"}
    ).json()
    assert (body["ok"], body["firstViolation"], body["violations"], body["fixes"]) == (
        True,
        None,
        [],
        [],
    )


def test_the_quickstart_sequence(client: httpx.Client) -> None:
    """8 × f32 fails on warpgroup bytes; 32 × f32 on the element multiple; 128 lowers."""

    def first(size: int) -> dict[str, Any] | None:
        case = {"operation": "pallas_call", "shape": [size], "dtype": "float32"}
        return client.post("/api/compute", json=case).json()["firstViolation"]

    assert first(8)["message"].endswith("Got bytes=32 but warpgroup size is 128")  # type: ignore[index]
    assert first(32)["message"] == (  # type: ignore[index]
        "memref<32xf32, strided<[1], offset: ?>, #gpu.address_space<workgroup>> "
        "must have a number of elements that is a multiple of 128 (got 32)"
    )
    assert first(128) is None


def test_error_id_or_rule_implies_the_operation(client: httpx.Client) -> None:
    by_record = client.post(
        "/api/compute", json={"errorId": "ffb598de9e3ff51b", "shape": "(8,)", "dtype": "f32"}
    ).json()
    by_rule = client.post(
        "/api/compute",
        json={"rule": "MGPU-COPY-WARPGROUP-BYTES", "shape": "(8,)", "dtype": "jnp.float32"},
    ).json()
    assert by_record["operation"] == by_rule["operation"] == "copy_gmem_to_smem"
    assert by_record["firstViolation"]["rule"] == "MGPU-COPY-WARPGROUP-BYTES"
    assert by_record["dtype"] == by_rule["dtype"] == "float32"


def test_older_jax_versions_use_their_own_wording(client: httpx.Client) -> None:
    case = {"operation": "copy_gmem_to_smem", "shape": [8], "dtype": "float32"}
    old = client.post("/api/compute", json={**case, "jaxVersion": "0.7.0"}).json()
    new = client.post("/api/compute", json={**case, "jaxVersion": "0.10.2"}).json()
    assert old["firstViolation"]["rule"] == new["firstViolation"]["rule"]
    assert old["firstViolation"]["message"] != new["firstViolation"]["message"]


def test_each_release_answers_with_its_default_lowering_semantics(client: httpx.Client) -> None:
    """From 0.11.0 a kernel lowers with Warpgroup semantics, which ask no 128-byte multiple;
    Lane can still be asked for, and the answer says which semantics it used."""
    case = {"operation": "copy_gmem_to_smem", "shape": [8], "dtype": "bfloat16"}
    lane = client.post("/api/compute", json={**case, "jaxVersion": "0.10.2"}).json()
    warpgroup = client.post("/api/compute", json={**case, "jaxVersion": "0.12.0.1"}).json()
    asked = client.post(
        "/api/compute", json={**case, "jaxVersion": "0.12.0.1", "loweringSemantics": "Lane"}
    ).json()
    assert (lane["loweringSemantics"], lane["firstViolation"]["rule"]) == (
        "Lane",
        "MGPU-COPY-WARPGROUP-BYTES",
    )
    assert (warpgroup["loweringSemantics"], warpgroup["ok"]) == ("Warpgroup", True)
    assert (asked["loweringSemantics"], asked["firstViolation"]) == ("Lane", lane["firstViolation"])
    removed = client.post(
        "/api/compute",
        json={
            "operation": "pallas_call",
            "shape": [128],
            "dtype": "float32",
            "jaxVersion": "0.12.0",
        },
    ).json()
    assert removed["firstViolation"]["errorClass"] == "AssertionError"
    assert (removed["firstViolation"]["message"], removed["fixes"]) == ("", [])


def test_batch_and_sweep(client: httpx.Client) -> None:
    cases = [INT4_7, {"operation": "pallas_call", "shape": [128], "dtype": "float32"}]
    results = client.post("/api/compute/batch", json={"cases": cases}).json()["results"]
    assert [r["ok"] for r in results] == [False, True]
    sweep = client.post(
        "/api/compute/sweep",
        json={"operation": "pallas_call", "dtype": "bfloat16", "start": 1, "stop": 1025},
    ).json()
    assert sweep["validSizes"] == [128, 256]
    for size in (64, 128, 200, 256, 384):
        case = {"operation": "pallas_call", "shape": [size], "dtype": "bfloat16"}
        verdict = client.post("/api/compute", json=case).json()["ok"]
        assert verdict is (size in sweep["validSizes"])


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({**INT4_7, "dtype": "int5"}, "dtype"),
        ({**INT4_7, "operation": "copy_everything"}, "operation"),
        ({**INT4_7, "shape": [-3]}, "shape"),
        ({**INT4_7, "shape": [10**7] * 9}, "shape"),
        ({**INT4_7, "shape": [2**40]}, "shape"),
        ({**INT4_7, "shape": "[3, banana]"}, "shape"),
        ({**INT4_7, "jaxVersion": "not-a-version"}, "jaxVersion"),
        ({"shape": [7], "dtype": "int4"}, "operation"),
        ({**INT4_7, "operation": None, "rule": "MGPU-NOPE"}, "rule"),
        ({"operation": "smem_bitcast", "shape": [6], "dtype": "uint8"}, "targetDtype"),
        ({**INT4_7, "loweringSemantics": "lane"}, "loweringSemantics"),
        ({**INT4_7, "loweringSemantics": "Warpgroup", "jaxVersion": "0.9.2"}, "loweringSemantics"),
        ({**INT4_7, "operation": "pallas_call", "jaxVersion": "0.11.1"}, "jaxVersion"),
        ({**INT4_7, "alsoJaxVersions": ["0.5.0"]}, "alsoJaxVersions"),
        ({**INT4_7, "alsoJaxVersions": ["banana"]}, "alsoJaxVersions"),
        ({**INT4_7, "alsoJaxVersions": ["0.10.2"] * 33}, "alsoJaxVersions"),
        ({**INT4_7, "alsoJaxVersions": 7}, "alsoJaxVersions"),
    ],
)
def test_bad_input_is_a_422_naming_the_field(
    client: httpx.Client, payload: dict[str, Any], field: str
) -> None:
    body = assert_problem(client.post("/api/compute", json=payload), 422)
    assert field in body["detail"], body


def test_a_bad_case_fails_alone_and_names_itself(client: httpx.Client) -> None:
    cases = [
        INT4_7,
        {**INT4_7, "dtype": "int5"},
        {**INT4_7, "shape": "[3, banana]"},
        {"shape": [7]},
        {**INT4_7, "errorId": "ffffffffffffffff", "operation": None},
        {**INT4_7, "shape": []},
    ]
    response = client.post("/api/compute/batch", json={"cases": cases})
    assert response.status_code == 200, response.text
    first, dtype, shape, operation, record, scalar = response.json()["results"]
    assert first == client.post("/api/compute", json=INT4_7).json()
    assert dtype["problem"]["status"] == 422
    assert dtype["problem"]["detail"].startswith("cases.1.dtype: unknown dtype 'int5'")
    assert shape["problem"]["errors"][0]["field"] == "cases.2.shape"
    assert operation["problem"]["detail"].startswith("cases.3")
    assert "operation" in operation["problem"]["detail"]
    assert record["problem"]["status"] == 404
    assert scalar["firstViolation"]["message"] == (
        "Can only transfer integer bytes (shape=[], dtype=i4)"
    )


def test_a_batch_without_cases_is_a_422(client: httpx.Client) -> None:
    for body in ({"cases": []}, {"cases": [INT4_7] * 101}, {}):
        assert_problem(client.post("/api/compute/batch", json=body), 422, "cases")


@pytest.mark.parametrize(
    "operation",
    ["copy_gmem_to_smem", "pallas_call", "ref_union", "smem_alias", "copy_smem_to_gmem"],
)
def test_a_0d_block_is_answered(client: httpx.Client, operation: str) -> None:
    """JAX 0.10.2 runs the same checks on a 0-d ref (tests/oracle lowers them)."""
    case = {"operation": operation, "shape": [], "dtype": "float32"}
    response = client.post("/api/compute", json=case)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["shape"] == [] and body["ok"] is False
    for fix in body["fixes"]:
        again = {**case, "shape": fix["shape"], "dtype": fix["dtype"]}
        assert client.post("/api/compute", json=again).json()["ok"] is True


def test_unknown_error_id_is_a_404(client: httpx.Client) -> None:
    response = client.post(
        "/api/compute", json={"errorId": "ffffffffffffffff", "shape": [7], "dtype": "int4"}
    )
    assert_problem(response, 404, "ffffffffffffffff")


@pytest.mark.parametrize(
    ("case", "record_id"),
    [
        (INT4_7, "225d0e9c2ee22311"),
        ({"operation": "pallas_call", "shape": [8], "dtype": "float32"}, "ffb598de9e3ff51b"),
        ({"operation": "smem_alias", "shape": [7], "dtype": "int4"}, "b6ff9cfce0e99931"),
        (
            {"operation": "smem_bitcast", "shape": [6], "dtype": "uint8", "targetDtype": "float32"},
            "19b6a360721eb407",
        ),
    ],
)
def test_the_seed_rules_answer_with_the_seed_records(
    client: httpx.Client, case: dict[str, Any], record_id: str
) -> None:
    """The store, through the seeds' annotations, says which record documents a rule."""
    assert client.post("/api/compute", json=case).json()["firstViolation"]["errorId"] == record_id
