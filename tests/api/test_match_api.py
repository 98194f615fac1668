"""/api/match over HTTP: real JAX tracebacks in, records, typed values and fixes out."""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx
import pytest

from app.jaxref.releases import release_commits
from app.jaxref.scope import backend_of
from tests.api.test_records_api import assert_problem

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
RECORDS = Path(__file__).resolve().parents[2] / "data" / "records"
TRACEBACKS = FIXTURES / "tracebacks"
SAFE_ZIP_RECORD = "75054f2533d302a4"  # data/records/pallas-safe-zip-length.json
SAFE_MAP_RECORD = "70e5cd726730fb78"  # data/records/pallas-safe-map-length.json
PIPELINE = "jax/_src/pallas/mosaic_gpu/pipeline.py"


def match(client: httpx.Client, text: str, **extra: object) -> dict:  # type: ignore[type-arg]
    response = client.post("/api/match", json={"text": text, **extra})
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


@pytest.mark.parametrize("variant", ["", "-verbose", "-formatted"])
def test_int4_copy_traceback_gives_the_seed_values_and_a_verified_fix(
    client: httpx.Client, variant: str
) -> None:
    body = match(client, (TRACEBACKS / f"MGPU-COPY-INTEGER-BYTES{variant}.txt").read_text())
    assert len(body["matches"]) == 1  # JAX prints the message twice: still one match
    found = body["matches"][0]
    assert (found["errorId"], found["rule"], found["chainPosition"]) == (
        "225d0e9c2ee22311",
        "MGPU-COPY-INTEGER-BYTES",
        0,
    )
    assert found["values"]["shape"] == [7]
    assert found["values"]["dtype"] == "int4"
    assert (found["values"]["bitwidth"], found["values"]["bits"]) == (4, 28)
    assert found["operation"] == "copy_gmem_to_smem"
    fix = found["fix"]
    assert (
        fix["firstViolation"]["message"] == "Can only transfer integer bytes (shape=[7], dtype=i4)"
    )
    assert fix["fixes"][0]["shape"] == [256] and fix["fixes"][0]["verified"]


def test_plain_text_body_and_the_quickstart_error(client: httpx.Client) -> None:
    text = (TRACEBACKS / "MGPU-WGSTRIDED-ELEMENT-MULTIPLE.txt").read_text()
    response = client.post("/api/match", content=text, headers={"Content-Type": "text/plain"})
    found = response.json()["matches"][0]
    assert found["rule"] == "MGPU-WGSTRIDED-ELEMENT-MULTIPLE"
    assert (found["values"]["shape"], found["values"]["dtype"]) == ([32], "float32")
    assert found["operation"] == "pallas_call"
    assert found["fix"]["fixes"][0]["shape"] == [128]


def test_a_github_issue_about_a_copy_to_gmem_gets_that_constructs_fix(
    client: httpx.Client,
) -> None:
    """Markdown as an issue puts it: the block's shape in a code fence, the traceback in a
    folded one, the versions under System info. The copy runs SMEM to GMEM, and the fix is
    that construct's (the record's constructs once left it out: no fix at all)."""
    tail = (TRACEBACKS / "MGPU-TMA-LASTDIM-128BITS.txt").read_text().splitlines()[-25:]
    issue = "\n".join(
        [
            "### Description",
            "Lowering my kernel for H100 fails. Repro:",
            "```python",
            "smem = plgpu.SMEM((3,), jnp.float32)",
            "```",
            "<details><summary>Traceback</summary>",
            "",
            "```",
            *tail,
            "```",
            "</details>",
            "",
            "### System info",
            "jax: 0.10.2",
        ]
    )
    [found] = match(client, issue)["matches"]
    assert (found["rule"], found["operation"]) == ("MGPU-TMA-LASTDIM-128BITS", "copy_smem_to_gmem")
    assert (found["values"]["shape"], found["values"]["dtype"]) == ([3], "float32")
    assert found["fix"]["firstViolation"]["message"].endswith("divisible by 128, but got 96")
    fix = found["fix"]["fixes"][0]
    assert (fix["shape"], fix["dtype"], fix["verified"]) == ([4], "float32", True)


def test_a_message_cut_short_in_an_older_wording_dates_the_paste_by_it(
    client: httpx.Client,
) -> None:
    """jax-ml/jax#31876 and #32551 quote Triton's unimplemented primitive without the "Please
    file an issue" that ends it. Its opening is 0.4.15-0.10.0's: from 0.10.1 JAX says
    "Pallas Triton lowering". The paste is dated so, by the words it shows, and linked to
    0.10.0's line; a cut that today's wording opens dates nothing."""
    older = match(
        client, "NotImplementedError: Unimplemented primitive in Pallas GPU lowering: scatter."
    )
    [found] = older["matches"]
    assert found["why"]["truncated"] and found["captures"] == {"name": "scatter"}
    assert older["release"]["span"] == "0.4.15–0.10.0"
    [wording] = older["release"]["evidence"]
    assert (wording["kind"], wording["text"]) == (
        "wording",
        "Unimplemented primitive in Pallas GPU lowering: ",
    )
    assert found["source"]["release"] == "0.10.0"
    today = match(
        client, "NotImplementedError: Unimplemented primitive in Pallas Triton lowering: scatter."
    )
    assert today["matches"][0]["errorId"] == found["errorId"]
    assert today["release"] is None


def test_a_fix_unavailable_in_the_release_says_why(client: httpx.Client) -> None:
    """The async store's wording read in a release older than the async store: no fix, and
    the answer says what the engine knows of that release instead of only that it has none."""
    line = "ValueError: Can only transfer integer bytes (shape=(7,), dtype=int4)"
    older = match(client, line, jaxVersion="0.7.2")["matches"][0]
    assert older["rule"] == "MGPU-ASYNC-STORE-INTEGER-BYTES" and older["fix"] is None
    assert older["fixUnavailable"] == (
        "for shape [7] and int4 the engine does not reproduce this error in async_store"
        " (async_store exists from JAX 0.10.1 on, not in 0.7.2)"
    )
    current = match(client, line, jaxVersion="0.10.2")["matches"][0]
    assert current["fixUnavailable"] is None and current["fix"]["fixes"][0]["verified"]


def test_seed_pattern_lazy_group_still_captures_the_whole_number(client: httpx.Client) -> None:
    line = (
        "NotImplementedError: Only copies transferring a number of bytes divisible by the "
        "warpgroup size are supported. Got bytes=96 but warpgroup size is 128"
    )
    found = match(client, line)["matches"][0]
    assert found["errorId"] == "ffb598de9e3ff51b"
    assert found["captures"]["bytes"] == "96"
    assert found["values"]["numbers"]["warpgroup_size"] == 128
    assert found["fix"] is None and "shape" in found["fixUnavailable"]


def test_an_old_wording_maps_to_the_same_record(client: httpx.Client) -> None:
    found = match(client, "NotImplementedError: Only aligned copies are supported")["matches"]
    assert found[0]["errorId"] == "ffb598de9e3ff51b"
    assert found[0]["variant"] != "current"


def test_rule_7_and_rule_1_are_told_apart(client: httpx.Client) -> None:
    async_store = match(
        client, "ValueError: Can only transfer integer bytes (shape=(3, 5), dtype=int4)"
    )
    copy = match(client, "ValueError: Can only transfer integer bytes (shape=[3, 5], dtype=i4)")
    assert async_store["matches"][0]["rule"] == "MGPU-ASYNC-STORE-INTEGER-BYTES"
    assert copy["matches"][0]["rule"] == "MGPU-COPY-INTEGER-BYTES"


def test_a_site_no_release_mined_is_linked_by_its_records_own_url(client: httpx.Client) -> None:
    """The safe_zip check raises inside JAX's util, under a Pallas line that is no mined
    site: the record's pinned link is the source shown."""
    record = json.loads((RECORDS / "pallas-safe-zip-length.json").read_text())["record"]
    paste = "ValueError: safe_zip() argument 1 has length 3 but argument 0 has length 2"
    [found] = match(client, paste)["matches"]
    assert found["errorId"] == record["id"]
    assert found["sourceUrl"] == record["githubUrl"]


def test_distractors_match_nothing(client: httpx.Client) -> None:
    body = match(client, (FIXTURES / "pastes" / "distractors-tpu-triton.txt").read_text())
    assert body["matches"] == []
    assert len(body["exceptions"]) == 8


def test_a_message_sharing_a_few_words_is_no_close_suggestion(client: httpx.Client) -> None:
    """Words a record shares by chance ("Can only transfer … integer bytes") score low: the
    share of words in common weighs the word sets' overlap, which said 0.62 here."""
    unrelated = match(client, "ValueError: Can only transfer whole pixels to the GPU canvas")
    assert unrelated["matches"] == []
    assert all(each["score"] < 0.5 for each in unrelated["suggestions"])


def test_a_message_reworded_in_one_place_suggests_its_record_first(
    client: httpx.Client,
) -> None:
    """A word of the message changed (another release's wording, a hurried copy): no pattern
    matches, and its record is the first suggestion, well ahead of the next."""
    reworded = (
        "NotImplementedError: Only copies moving a number of bytes divisible by the warpgroup"
        " size are supported. Got bytes=32 but warpgroup size is 128"
    )
    body = match(client, reworded)
    assert body["matches"] == []
    first, second, *_ = body["suggestions"]
    assert "divisible by the warpgroup size" in first["errorMessage"]
    assert first["score"] >= 0.8 > second["score"] + 0.2


def test_a_tpu_or_triton_error_is_offered_no_mosaic_gpu_record(client: httpx.Client) -> None:
    offered = 0
    for text, backend in (
        ((FIXTURES / "pastes" / "distractors-tpu-triton.txt").read_text(), {"tpu", "triton"}),
        (
            "jaxlib.mosaic.MosaicError: INTERNAL: Mosaic failed to compile TPU kernel: memref"
            " shape must be aligned to tiling (8, 128)",
            {"tpu"},
        ),
        (
            "ValueError: Triton TMA descriptors require the inner dimension in bytes to be a"
            " multiple of 16 bytes",
            {"triton"},
        ),
        (  # tpu-dma-bool's words, another way round
            "NotImplementedError: DMAs of bool dtypes are unsupported on TPU",
            {"tpu"},
        ),
    ):
        suggestions = match(client, text)["suggestions"]
        offered += len(suggestions)
        for suggestion in suggestions:
            record = client.get(f"/api/errors/{suggestion['errorId']}").json()["record"]
            assert backend_of(record["filePath"]) in backend, record["errorMessage"]
    assert offered  # records of their own backend read enough alike to be offered


def test_bad_pastes(client: httpx.Client) -> None:
    assert_problem(client.post("/api/match", json={"text": ""}), 422, "text")
    binary = client.post(
        "/api/match", content=b"\x00\x01\x02junk", headers={"Content-Type": "text/plain"}
    )
    assert_problem(binary, 422, "text")
    not_utf8 = client.post(
        "/api/match", content=b"\xff\xfeValueError", headers={"Content-Type": "text/plain"}
    )
    assert_problem(not_utf8, 422, "text: not UTF-8 text (byte 0 is 0xff)")
    assert_problem(client.post("/api/match", json={"text": "\x00\x01\x02" * 10}), 422, "text")
    too_big = "x" * (1024 * 1024 + 10)
    assert_problem(
        client.post("/api/match", content=too_big, headers={"Content-Type": "text/plain"}), 413
    )
    assert_problem(client.post("/api/match", json={"txt": "typo"}), 422, "text")
    malformed = client.post(
        "/api/match", content=b'{"text": ', headers={"Content-Type": "application/json"}
    )
    assert_problem(malformed, 422)


def test_a_source_line_too_deep_for_pythons_parser_is_read_as_no_statement(
    client: httpx.Client,
) -> None:
    """Under a JAX frame, as a bare assert's source line and as a raise shown as source."""
    deep = "assert " + "-" * 100_000 + "1"
    paste = (
        "Traceback (most recent call last):\n"
        '  File "/x/site-packages/jax/_src/pallas/mosaic_gpu/core.py", line 705, in '
        f"transform_type\n    {deep}\nAssertionError\n\n    {deep}\n"
        "ValueError: Can only transfer integer bytes (shape=[7], dtype=i4)\n"
    )
    body = match(client, paste)
    assert [found["rule"] for found in body["matches"]] == ["MGPU-COPY-INTEGER-BYTES"]


def test_the_jax_version_comes_from_the_body_else_from_the_query(client: httpx.Client) -> None:
    """The fix is the engine's for the JAX version the paste came from: JAX 0.7.0 worded the
    warpgroup check that follows differently."""
    text = (TRACEBACKS / "MGPU-COPY-INTEGER-BYTES.txt").read_text()
    old = {"jaxVersion": "0.7.0"}
    answers = [
        client.post("/api/match", params=old, content=text, headers={"Content-Type": "text/plain"}),
        client.post("/api/match", params=old, json={"text": text}),
        client.post("/api/match", params=old, json={"text": text, "jaxVersion": "0.10.2"}),
        client.post("/api/match", json={"text": text}),
    ]
    fixes = [answer.json()["matches"][0]["fix"] for answer in answers]
    assert [fix["jaxVersion"] for fix in fixes] == ["0.7.0", "0.7.0", "0.10.2", "0.10.2"]
    assert fixes[0]["violations"][1]["message"] == "Only aligned copies are supported"
    assert fixes[2]["violations"][1]["message"].endswith("Got bytes=3 but warpgroup size is 128")
    too_long = client.post("/api/match", params={"jaxVersion": "0." * 21}, json={"text": text})
    assert_problem(too_long, 422, "jaxVersion")


def test_a_record_added_through_the_api_is_matched_at_once(
    client: httpx.Client, curator: httpx.Client
) -> None:
    record = {
        "id": "widget-overflow-1",
        "errorMessage": "Widget overflow at slot {slot} of {total}",
    }
    assert curator.put("/api/errors/widget-overflow-1", json={"record": record}).status_code in (
        200,
        201,
    )
    found = match(client, "RuntimeError: Widget overflow at slot 12 of 40")["matches"]
    assert found[0]["errorId"] == "widget-overflow-1"
    assert found[0]["captures"] == {"slot": "12", "total": "40"}
    curator.put("/api/errors/widget-overflow-1", json={"record": {**record, "retired": True}})
    assert match(client, "RuntimeError: Widget overflow at slot 12 of 40")["matches"] == []


def test_a_jax_version_the_engine_does_not_model_is_read_as_the_users_release(
    client: httpx.Client,
) -> None:
    """0.4.38 is a release errata reads pastes of (from 0.4.15), though the engine models
    0.7.0 on: the match follows it, says where the paste disagrees, and computes no fix for
    it, saying why; /api/compute refuses it."""
    text = (TRACEBACKS / "MGPU-COPY-INTEGER-BYTES.txt").read_text()
    answer = client.post("/api/match", json={"text": text, "jaxVersion": "0.4.38"})
    assert answer.status_code == 200, answer.text
    release = answer.json()["release"]
    assert release["given"] == release["used"] == "0.4.38"
    assert release["contradiction"] == "jaxVersion 0.4.38 but the paste reads 0.10.2"
    [found] = answer.json()["matches"]
    assert found["fix"] is None
    assert found["fixUnavailable"].startswith("JAX 0.4.38 is not modelled; errata models JAX 0.7.0")
    compute = {"operation": "copy_gmem_to_smem", "shape": [7], "dtype": "int4"}
    refused = client.post("/api/compute", json={**compute, "jaxVersion": "0.4.38"})
    assert_problem(refused, 422, "jaxVersion", "not modelled")


@pytest.mark.parametrize(
    ("version", "words"),
    [("banana", "cannot read JAX version"), ("0.4.x", "cannot read JAX version")],
)
def test_a_jax_version_that_names_no_release_is_a_422(
    client: httpx.Client, version: str, words: str
) -> None:
    """The same rule as /api/compute's, wherever the version comes from."""
    text = (TRACEBACKS / "MGPU-COPY-INTEGER-BYTES.txt").read_text()
    refused = [
        client.post("/api/match", params={"jaxVersion": version}, json={"text": text}),
        client.post("/api/match", json={"text": text, "jaxVersion": version}),
        client.post(
            "/api/match",
            params={"jaxVersion": version},
            content=text,
            headers={"Content-Type": "text/plain"},
        ),
        client.post(
            "/api/compute",
            json={
                "operation": "copy_gmem_to_smem",
                "shape": [7],
                "dtype": "int4",
                "jaxVersion": version,
            },
        ),
    ]
    details = {assert_problem(response, 422, "jaxVersion", words)["detail"] for response in refused}
    assert len(details) == 1, details


def test_the_answer_uses_the_users_frame_and_the_dtype_written_in_it(
    client: httpx.Client,
) -> None:
    library = '  File "/usr/lib/python3.11/site-packages/jax/_src/pallas/mosaic_gpu/primitives.py"'
    tma = match(
        client,
        "Traceback (most recent call last):\n"
        '  File "kernel.py", line 3, in <module>\n'
        "    out = run_kernel(jnp.float32)\n"
        f"{library}, line 459, in copy_smem_to_gmem\n"
        "    copy_smem_to_gmem_p.bind(\n"
        "ValueError: Async copies require the number of bits copied along the last dimension"
        " to be divisible by 128, but got 96\n",
    )["matches"][0]
    assert tma["userFrame"] == {
        "file": "kernel.py",
        "line": 3,
        "source": "out = run_kernel(jnp.float32)",
    }
    assert (tma["values"]["dtype"], tma["values"]["inferred"]) == (
        "float32",
        ["dtype", "bit_width"],
    )
    assert tma["fixUnavailable"] == "the paste shows the dtype (float32) but not the block's shape"
    copy = match(
        client,
        "Traceback (most recent call last):\n"
        '  File "kernel.py", line 3, in <module>\n'
        "    smem = plgpu.SMEM((7,), jnp.int4)\n"
        f"{library}, line 459, in copy_gmem_to_smem\n"
        "    copy_gmem_to_smem_p.bind(\n"
        "ValueError: Can only transfer integer bytes (shape=[7], dtype=i4)\n",
    )["matches"][0]
    befores = {fix["code"]["before"] for fix in copy["fix"]["fixes"]}
    assert befores == {"# kernel.py, line 3\nsmem = plgpu.SMEM((7,), jnp.int4)"}
    # No frame dates the paste: its words are those of every release from 0.6.0, so the fix
    # holds in each the engine models. 0.12.0.1 alone (Warpgroup by default) would take 16
    # bytes; Lane, the default up to 0.10.2, asks a multiple of 128.
    assert copy["fix"]["jaxVersion"] == "0.12.0.1"
    checked = {(each["jaxVersion"], each["loweringSemantics"]) for each in copy["fix"]["checkedIn"]}
    assert {("0.7.0", "Lane"), ("0.10.2", "Lane"), ("0.11.0", "Warpgroup")} <= checked
    assert len(checked) == 19
    assert copy["fix"]["fixes"][0]["code"]["after"] == (
        "# kernel.py, line 3\nsmem = plgpu.SMEM((256,), jnp.int4)"
    )
    computed = client.post(
        "/api/compute",
        json={
            "operation": "copy_gmem_to_smem",
            "shape": [7],
            "dtype": "int4",
            "jaxVersion": "0.12.0.1",
        },
    ).json()
    assert computed["fixes"][0]["code"]["after"] == "plgpu.SMEM((32,), jnp.int4)"
    assert computed["fixes"][0]["code"]["before"] == "plgpu.SMEM((7,), jnp.int4)", "not shared"


USERS_ZEROS = (
    "Traceback (most recent call last):\n"
    '  File "/home/me/kernel.py", line 12, in main\n'
    "    x = jnp.zeros([7], dtype=jnp.int4)\n"
    '  File "/usr/lib/python3.11/site-packages/jax/_src/pallas/mosaic_gpu/primitives.py",'
    " line 459, in copy_gmem_to_smem\n"
    "    copy_gmem_to_smem_p.bind(\n"
    "ValueError: Can only transfer integer bytes (shape=[7], dtype=i4)\n"
)


def test_the_answer_leads_with_a_diff_of_the_users_own_line_that_passes(
    client: httpx.Client,
) -> None:
    """Do this is a diff of the line the paste shows, in the user's own spelling (a list
    here); the shape and dtype it writes after the change pass every check."""
    found = match(client, USERS_ZEROS, jaxVersion="0.10.2")
    [answer, *_] = found["answers"]
    assert answer["kind"] == "match"
    assert answer["headline"].startswith("ValueError: Can only transfer integer bytes")
    diff = answer["doThis"]["diff"].splitlines()
    assert diff[0] == " # /home/me/kernel.py, line 12"
    assert diff[1] == "-x = jnp.zeros([7], dtype=jnp.int4)"
    assert diff[2] == "+x = jnp.zeros([256], dtype=jnp.int4)"
    for step in (answer["doThis"], *answer["alternatives"]):
        added = next(line for line in step["diff"].splitlines() if line.startswith("+"))
        written = re.fullmatch(r"\+x = jnp\.zeros\(\[(\d+)\], dtype=jnp\.(\w+)\)", added)
        assert written, added
        verdict = client.post(
            "/api/compute",
            json={
                "operation": "copy_gmem_to_smem",
                "shape": [int(written[1])],
                "dtype": written[2],
                "jaxVersion": "0.10.2",
            },
        ).json()
        assert verdict["ok"], (added, verdict["firstViolation"])


def test_an_error_only_lane_raises_is_computed_under_lane_in_a_warpgroup_release(
    client: httpx.Client,
) -> None:
    """0.12.0.1 lowers with Warpgroup semantics by default, where a copy needs no 128-byte
    multiple: a paste of that error shows the kernel asked for Lane, and is answered so."""
    text = (
        "Traceback (most recent call last):\n"
        '  File "kernel.py", line 3, in <module>\n'
        "    smem = plgpu.SMEM((8,), jnp.bfloat16)\n"
        "NotImplementedError: Only copies transferring a number of bytes divisible by the"
        " warpgroup size are supported. Got bytes=16 but warpgroup size is 128\n"
    )
    [found] = match(client, text, jaxVersion="0.12.0.1")["matches"]
    fix = found["fix"]
    assert (fix["jaxVersion"], fix["loweringSemantics"]) == ("0.12.0.1", "Lane")
    assert fix["firstViolation"]["rule"] == found["rule"] == "MGPU-COPY-WARPGROUP-BYTES"
    default = client.post(
        "/api/compute",
        json={
            "operation": fix["operation"],
            "shape": fix["shape"],
            "dtype": fix["dtype"],
            "jaxVersion": "0.12.0.1",
        },
    ).json()
    assert default["loweringSemantics"] == "Warpgroup"
    assert default["firstViolation"] != fix["firstViolation"]


def test_the_release_is_read_from_the_frames_with_its_evidence(client: httpx.Client) -> None:
    text = (TRACEBACKS / "MGPU-COPY-INTEGER-BYTES.txt").read_text()
    body = match(client, text)
    release = body["release"]
    assert (release["span"], release["used"], release["contradiction"]) == (
        "0.10.2",
        "0.10.2",
        None,
    )
    raising = [e for e in release["evidence"] if e["kind"] == "frame"]
    assert raising and "_copy_gmem_to_smem_lowering" in raising[-1]["text"]
    assert text.splitlines()[raising[-1]["lineNumber"] - 1].strip().startswith("File ")
    commit = release_commits()["0.10.2"]
    assert body["matches"][0]["sourceUrl"].startswith(
        f"https://github.com/jax-ml/jax/blob/{commit}/"
    )
    asked = match(client, text, jaxVersion="0.8.1")["release"]
    assert asked["used"] == "0.8.1"
    assert asked["contradiction"] == "jaxVersion 0.8.1 but the paste reads 0.10.2"


def test_a_nightly_newer_than_every_mined_release_is_said_and_the_newest_followed(
    client: httpx.Client,
) -> None:
    newest = list(release_commits())[-1]
    message = "ValueError: Can only transfer integer bytes (shape=[7], dtype=i4)"
    text = f"jax: 0.99.1.dev20260814\n{message}"
    body = match(client, text)
    release = body["release"]
    assert (release["releases"], release["used"]) == ([], newest)
    assert release["outside"] == (
        f"the paste names jax 0.99.1.dev20260814, newer than {newest}, the newest release "
        f"mined; the answer follows {newest}"
    )
    assert release["evidence"] == [
        {"kind": "version", "lineNumber": 1, "text": "jax 0.99.1.dev20260814", "releases": []}
    ]
    found = body["matches"][0]
    commit = release_commits()[newest]
    assert found["sourceUrl"].startswith(f"https://github.com/jax-ml/jax/blob/{commit}/")
    assert found["fix"] is not None and found["fix"]["jaxVersion"] == newest


def test_a_release_the_engine_does_not_model_still_picks_the_source_link(
    client: httpx.Client,
) -> None:
    from app.answers.compute import checked_jax_version
    from app.errors import ProblemError
    from tests.matching.test_frames import copy_site, traceback_at

    facts = copy_site()
    oldest = facts["releases"][0]
    text = traceback_at(facts["filePath"], oldest["lineNumber"], facts["site"]["function"])
    body = match(client, text)
    used = body["release"]["used"]
    assert oldest["release"] in body["release"]["releases"]
    with pytest.raises(ProblemError):  # the engine has no rules for it
        checked_jax_version(used)
    [line] = [e["lineNumber"] for e in facts["releases"] if e["release"] == used]
    found = body["matches"][0]
    assert found["source"] == {"filePath": facts["filePath"], "line": line, "release": used}
    commit = release_commits()[used]
    assert found["sourceUrl"].startswith(f"https://github.com/jax-ml/jax/blob/{commit}/")


def test_a_bare_assertion_error_names_its_site_over_http(client: httpx.Client) -> None:
    from tests.matching.test_raise_points import real_tiling_assert, tiling_site

    body = match(client, real_tiling_assert())
    assert body["matches"] == []
    first = body["raisePoints"][0]
    assert first["errorId"] == tiling_site()["id"]
    assert first["filePath"] == "jax/_src/pallas/mosaic_gpu/core.py"
    # Pinned to the release the frames read, on its line there.
    [shown] = [e for e in tiling_site()["releases"] if e["release"] == body["release"]["used"]]
    pinned = shown["githubUrl"].split("#")[0]
    assert first["sourceUrl"] == f"{pinned}#L{shown['lineNumber']}-L{shown['lineNumber']}"


def test_a_traceback_cut_before_its_message_names_its_site_and_advice(
    client: httpx.Client,
) -> None:
    """The lowering traceback alone, cut after its last frame's ``raise ValueError(``: its
    site's record, with the record's advice on the page; no guesses at similar messages."""
    lines = (TRACEBACKS / "MGPU-COPY-INTEGER-BYTES.txt").read_text().splitlines()
    header = max(n for n, line in enumerate(lines) if line.startswith("Traceback"))
    whole = match(client, "\n".join(lines))["matches"][0]
    body = match(client, "\n".join(lines[header:-1]))
    assert body["matches"] == [] and body["suggestions"] == []
    first = body["raisePoints"][0]
    assert (first["errorId"], first["via"]) == (whole["errorId"], "cut")
    assert first["line"] == whole["source"]["line"]
    assert first["sourceUrl"] == whole["sourceUrl"]
    assert body["release"]["used"] == whole["source"]["release"]
    # With the staging trace before it, whose message matched, the cut frame adds nothing.
    staged = match(client, "\n".join(lines[:-1]))
    assert [m["errorId"] for m in staged["matches"]] == [whole["errorId"]]
    assert staged["raisePoints"] == []


@pytest.mark.parametrize(
    ("paste", "variant"),
    [
        ("safe-zip-gpu-pipeline.txt", "current"),  # JAX 0.10.2's own tracebacks
        ("safe-zip-tpu-pipeline.txt", "current"),
        ("safe-zip-0.8.0-longer.txt", "older wording (0.9.1)"),
        ("safe-zip-0.5.0-shorter.txt", "older wording (0.9.1)"),
    ],
)
def test_a_pipeline_safe_zip_mismatch_is_matched_in_every_wording_jax_printed(
    client: httpx.Client, paste: str, variant: str
) -> None:
    """safe_zip lives in jaxlib's C++, outside the mined paths: its curated record is the
    only one that knows it, in each release's wording and from either pipeline."""
    found = match(client, (FIXTURES / "pastes" / paste).read_text())["matches"]
    assert [(f["errorId"], f["variant"]) for f in found] == [(SAFE_ZIP_RECORD, variant)]


@pytest.mark.parametrize(
    ("paste", "called_by"),
    [
        # JAX 0.10.2's own tracebacks: an input's index map, then an output's.
        ("safe-map-gpu-pipeline-input.txt", f"{PIPELINE}:124 compute_gmem_slice"),
        ("safe-map-gpu-pipeline-output.txt", f"{PIPELINE}:398 loop_body"),
        # JAX 0.8.2's, where an output's indices went through compute_gmem_slice too.
        ("safe-map-0.8.2-output.txt", f"{PIPELINE}:114 compute_gmem_slice"),
    ],
)
def test_a_pipeline_index_map_safe_map_mismatch_is_matched_and_its_caller_named(
    client: httpx.Client, paste: str, called_by: str
) -> None:
    """safe_map lives in jaxlib's C++, outside the mined paths, and has printed the same
    words in every release: its curated record is the only one that knows it. The frame of
    JAX's that called it, which says which two lists were mapped, is named and linked."""
    found = match(client, (FIXTURES / "pastes" / paste).read_text())["matches"]
    assert [(f["errorId"], f["variant"]) for f in found] == [(SAFE_MAP_RECORD, "current")]
    assert found[0]["why"]["calledBy"] == called_by
    path, line = called_by.split(" ")[0].split(":")
    assert (found[0]["source"]["filePath"], found[0]["source"]["line"]) == (path, int(line))
    assert f"/{path}#L{line}" in found[0]["sourceUrl"]


def test_a_safe_map_message_alone_is_its_record_but_pythons_strict_map_is_not(
    client: httpx.Client,
) -> None:
    """jax-ml/jax#21557's words, with no frame to name the caller: the record, as current
    (safe_map never changed its words), and the record's pinned link as the source. Python
    3.14's map(..., strict=True) prints its own words, as any Python code may: not the
    record's."""
    record = json.loads((RECORDS / "pallas-safe-map-length.json").read_text())["record"]
    paste = "ValueError: safe_map() argument 3 is shorter than argument 1"
    [found] = match(client, paste)["matches"]
    assert (found["errorId"], found["variant"]) == (record["id"], "current")
    assert found["captures"] == {"argument": "3", "comparison": "shorter"}
    assert found["sourceUrl"] == record["githubUrl"]
    strict = (
        "Traceback (most recent call last):\n"
        '  File "train.py", line 12, in <module>\n'
        "    scaled = list(map(operator.mul, weights, values, strict=True))\n"
        "ValueError: map() argument 2 is shorter than argument 1\n"
    )
    assert record["id"] not in [f["errorId"] for f in match(client, strict)["matches"]]


def test_pythons_own_strict_zip_error_is_not_read_as_safe_zip(client: httpx.Client) -> None:
    """JAX 0.6.1's safe_zip printed what every zip(..., strict=True) prints: not this error."""
    paste = (
        "Traceback (most recent call last):\n"
        '  File "train.py", line 12, in <module>\n'
        "    pairs = list(zip(names, values, strict=True))\n"
        "ValueError: zip() argument 2 is shorter than argument 1\n"
    )
    assert SAFE_ZIP_RECORD not in [f["errorId"] for f in match(client, paste)["matches"]]


@pytest.mark.parametrize(
    ("paste", "record_id", "called_by"),
    [
        (
            "kernel-given-more-refs-0.5.0.txt",
            "55680b56dfb441e2",
            "jax/_src/pallas/pallas_call.py:1415 _trace_kernel_to_jaxpr",
        ),
        (
            "kernel-missing-ref-0.5.0-unfiltered.txt",
            "cd74ab1e53186b20",
            "jax/_src/pallas/pallas_call.py:1415 _trace_kernel_to_jaxpr",
        ),
        (
            "index-map-given-more-indices-0.5.0-unfiltered.txt",
            "1a76475e93593be9",
            "jax/_src/pallas/core.py:440 to_block_mapping",
        ),
        (
            "index-map-missing-index-0.5.0.txt",
            "52298c751508dd25",
            "jax/_src/pallas/core.py:440 to_block_mapping",
        ),
        (
            "kernel-given-more-refs-0.4.30.txt",
            "55680b56dfb441e2",
            "jax/_src/pallas/pallas_call.py:911 _trace_to_jaxpr",
        ),
        # Here the function that traces the kernel stands further out: the innermost call
        # tells which of the user's functions Pallas called.
        (
            "index-map-given-more-indices-0.4.30.txt",
            "1a76475e93593be9",
            "jax/_src/pallas/core.py:182 compute_index",
        ),
    ],
)
def test_pythons_error_at_pallas_call_of_user_code_is_named_with_the_call(
    client: httpx.Client, paste: str, record_id: str, called_by: str
) -> None:
    """JAX 0.5.0's and 0.4.30's tracebacks, filtered as by default and not: the record bound
    to the function of Pallas that called the kernel or index map, and that call's line
    linked in the release the paste comes from (for 0.5.0's index maps, 0.6.0 fits the
    frames too, but has a ``raise`` on core.py's line 440, from which no call goes on)."""
    release = paste.removesuffix(".txt").removesuffix("-unfiltered").rsplit("-", 1)[1]
    body = match(client, (FIXTURES / "pastes" / paste).read_text())
    [found] = body["matches"]
    assert found["errorId"] == record_id
    assert found["why"]["calledBy"] == called_by
    file, line = called_by.split(" ")[0].split(":")
    assert found["source"] == {"filePath": file, "line": int(line), "release": release}
    pinned = f"{release_commits()[release]}/{file}#L{line}-L{line}"
    assert found["sourceUrl"].endswith(pinned)


@pytest.mark.parametrize(
    "paste",
    [
        "TypeError: kernel() takes 2 positional arguments but 3 were given\n",
        "Traceback (most recent call last):\n"
        '  File "/home/dev/kernels/copy.py", line 9, in <module>\n'
        "    kernel(x_ref, y_ref, o_ref)\n"
        "TypeError: kernel() takes 2 positional arguments but 3 were given\n",
        (FIXTURES / "pastes" / "kernel-given-more-refs-0.5.0.txt")
        .read_text()
        .replace("pallas/primitives.py", "pallas/helpers.py")
        .replace("_trace_kernel_to_jaxpr", "_trace_body"),
    ],
    ids=["the message alone", "the user's own call", "under no function that calls a kernel"],
)
def test_pythons_call_error_is_no_pallas_record_where_pallas_made_no_call(
    client: httpx.Client, paste: str
) -> None:
    """Nor is it offered as similar: every call of the wrong arity reads like them."""
    bound = {
        document["record"]["id"]
        for path in RECORDS.glob("*.json")
        if (document := json.loads(path.read_text()))["record"].get("calledBy")
    }
    assert len(bound) == 14
    body = match(client, paste)
    assert not {found["errorId"] for found in body["matches"]} & bound
    assert not {found["errorId"] for found in body["suggestions"]} & bound


@pytest.mark.parametrize(
    ("paste", "variant", "release"),
    [
        ("dynamic-slice-size-0.9.1.txt", "older wording (0.9.2)", "0.9.1"),
        (None, "current", None),
    ],
)
def test_a_slice_of_traced_size_is_named_in_the_wording_of_its_release(
    client: httpx.Client, paste: str | None, variant: str, release: str | None
) -> None:
    """The bare assert of JAX's tracer prints the block's aval: short in 0.9.1 and 0.9.2,
    as ``DShapedArray(...)`` since; each is read as the curated record. JAX's frames date
    the paste of 0.9.1; the message alone, of a record without a mined site, does not."""
    if paste is None:
        text = (
            "Traceback (most recent call last):\n"
            '  File "/home/dev/kernels/prefix.py", line 12, in kernel\n'
            "    o_ref[pl.ds(0, n), :] = x_ref[pl.ds(0, n), :]\n"
            "AssertionError: DShapedArray(shape=(ShapedArray(int32[]), 128), dtype=float32,"
            " weak_type=False)\n"
        )
    else:
        text = (FIXTURES / "pastes" / paste).read_text()
    body = match(client, text)
    [found] = body["matches"]
    assert (found["errorId"], found["variant"]) == ("2e313c69be09d2a0", variant)
    assert found["values"]["dtype"] == "float32"
    assert (body["release"] or {}).get("used") == release
