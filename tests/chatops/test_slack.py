"""POST /chatops/slack on a real server: signatures first, then each command, within limits."""

from __future__ import annotations

import time

import httpx
import pytest

from app.chatops.answers import SEARCH_HITS
from app.chatops.commands import MAX_PASTE_CHARS
from app.chatops.slack import HEADER_LIMIT, MAX_BLOCKS, SECTION_LIMIT
from tests.api.test_records_api import assert_problem, records_sharing_a_slug
from tests.chatops.chat import block_texts, slack, slack_body, slack_headers, traceback
from tests.conftest import PUBLIC_BASE_URL

INT4_SLUG = "can-only-transfer-integer-bytes-shape-dst-ty-sha"
INT4_ID = "225d0e9c2ee22311"


def test_a_signed_help_command_is_answered_privately(client: httpx.Client) -> None:
    response = slack(client, "help")
    assert response.status_code == 200
    message = response.json()
    assert message["response_type"] == "ephemeral"
    assert message["blocks"][0]["type"] == "header"
    texts = block_texts(message)
    assert "/errata pad shape=[7] dtype=int4 op=copy_gmem_to_smem" in texts
    assert "copy_gmem_to_smem, copy_smem_to_gmem, pallas_call" in texts


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"X-Slack-Signature": None, "X-Slack-Request-Timestamp": None}, "unsigned"),
        ({"X-Slack-Signature": "v0=" + "0" * 64}, "bad signature"),
        ({"X-Slack-Signature": "v1=abc"}, "malformed signature"),
        ({"X-Slack-Request-Timestamp": "yesterday"}, "malformed timestamp"),
    ],
)
def test_requests_without_a_valid_signature_are_refused(
    client: httpx.Client, change: dict[str, str | None], why: str
) -> None:
    body = slack_body("help")
    headers = {**slack_headers(body), **change}
    sent = {name: value for name, value in headers.items() if value is not None}
    response = client.post("/chatops/slack", content=body, headers=sent)
    assert_problem(response, 401, "Slack signature")


def test_a_signature_by_another_secret_is_refused(client: httpx.Client) -> None:
    body = slack_body("help")
    response = client.post(
        "/chatops/slack", content=body, headers=slack_headers(body, secret="not-the-secret")
    )
    assert_problem(response, 401)


def test_a_stale_request_is_refused_even_when_signed(client: httpx.Client) -> None:
    body = slack_body("help")
    six_minutes_ago = int(time.time()) - 6 * 60
    response = client.post(
        "/chatops/slack", content=body, headers=slack_headers(body, six_minutes_ago)
    )
    assert_problem(response, 401, "current")


def test_the_signature_covers_the_raw_body(client: httpx.Client) -> None:
    headers = slack_headers(slack_body("help"))
    response = client.post("/chatops/slack", content=slack_body("share help"), headers=headers)
    assert_problem(response, 401)


def test_a_retried_delivery_gets_the_first_answer(client: httpx.Client) -> None:
    body = slack_body(traceback("MGPU-COPY-INTEGER-BYTES"))
    headers = slack_headers(body)
    first = client.post("/chatops/slack", content=body, headers=headers)
    retry = client.post(
        "/chatops/slack",
        content=body,
        headers={**headers, "X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_timeout"},
    )
    assert first.status_code == retry.status_code == 200
    assert retry.json() == first.json()


def test_a_pasted_traceback_gets_the_error_its_values_and_the_best_fix(
    client: httpx.Client,
) -> None:
    message = slack(client, traceback("MGPU-COPY-INTEGER-BYTES")).json()
    blocks = message["blocks"]
    assert blocks[0]["text"]["text"] == (
        "ValueError: Can only transfer integer bytes (shape=[7], dtype=i4)"
        " (7 × 4 bits = 28 bits; 28 mod 8 = 4)"
    )
    # Do this comes straight after the headline, as a diff of the construct.
    do_this = blocks[1]["text"]["text"]
    assert do_this.startswith("*Do this: Pad the block from 7 to 256 elements*")
    assert (
        "```\n-lower('copy_gmem_to_smem', (7,), 'int4', None)\n"
        "+lower('copy_gmem_to_smem', (256,), 'int4', None)\n```"
    ) in do_this
    texts = block_texts(message)
    assert "*shape* `[7]` · *dtype* `int4` · *bit width* `4`" in texts
    assert texts.count("Can only transfer integer bytes") == 1  # the message once
    assert f"<{PUBLIC_BASE_URL}/errors/{INT4_ID}|Record page>" in texts
    assert message["text"].startswith("ValueError: Can only transfer integer bytes")


def test_angle_brackets_slack_escaped_are_read_back(client: httpx.Client) -> None:
    """Slack sends memref&lt;32xf32…&gt;; the matcher needs the real message."""
    message = slack(client, traceback("MGPU-WGSTRIDED-ELEMENT-MULTIPLE")).json()
    assert (
        "must have a number of elements that is a multiple of 128 (got 32)"
        in (message["blocks"][0]["text"]["text"])
    )
    assert message["text"].startswith("ValueError: memref&lt;32xf32"), "escaped on the way out"


def test_share_posts_in_channel(client: httpx.Client) -> None:
    message = slack(client, "share " + traceback("MGPU-COPY-INTEGER-BYTES")).json()
    assert message["response_type"] == "in_channel"
    assert "Can only transfer integer bytes" in message["blocks"][0]["text"]["text"]


@pytest.mark.parametrize("key", [INT4_ID, INT4_SLUG])
def test_a_record_by_id_or_slug_shows_errata_corrected_example(
    client: httpx.Client, key: str
) -> None:
    message = slack(client, key).json()
    texts = block_texts(message)
    assert message["blocks"][0]["text"]["text"] == (
        "ValueError: Can only transfer integer bytes (shape=…, dtype=…)"
    )
    assert "errata corrects this record (Example fix" in texts
    assert "*Example fix, as corrected by errata*" in texts
    assert "x = jnp.pad(x, (0, 256 - 7))" in texts
    assert f"<{PUBLIC_BASE_URL}/errors/{INT4_ID}|Record page>" in texts


def test_a_slug_records_share_gets_each_of_them_by_id(
    client: httpx.Client, curator: httpx.Client
) -> None:
    slug, ids = records_sharing_a_slug(curator, 7)
    texts = block_texts(slack(client, slug).json())
    assert "7 records share that slug" in texts
    linked = [record_id for record_id in ids if f"{PUBLIC_BASE_URL}/errors/{record_id}|" in texts]
    assert len(linked) == SEARCH_HITS
    assert f"<{PUBLIC_BASE_URL}/search?slug={slug}|All 7>" in texts


def test_pad_takes_the_release_and_its_lowering_semantics(client: httpx.Client) -> None:
    asked = "pad shape=[8] dtype=bfloat16 op=copy_gmem_to_smem jax=0.12.0.1"
    default = block_texts(slack(client, asked).json())
    lane = block_texts(slack(client, f"{asked} semantics=Lane").json())
    assert "passes every check" in default and "lowering semantics* `Warpgroup`" in default
    assert "Got bytes=16 but warpgroup size is 128" in lane
    assert "lowering semantics* `Lane`" in lane
    both = block_texts(slack(client, f"{asked} also=0.9.2,0.10.2").json())
    assert "lowers in JAX 0.12.0.1, not in 0.9.2, 0.10.2" in both
    assert "plgpu.SMEM((64,), jnp.bfloat16)" in both


def test_pad_computes_the_verdict_and_fixes(client: httpx.Client) -> None:
    message = slack(client, "pad shape=[7] dtype=int4 op=copy_gmem_to_smem").json()
    texts = block_texts(message)
    assert message["blocks"][0]["text"]["text"] == (
        "ValueError: Can only transfer integer bytes (shape=[7], dtype=i4)"
        " (7 × 4 bits = 28 bits; 28 mod 8 = 4)"
    )
    assert "*operation* `copy_gmem_to_smem` · *shape* `(7,)` · *dtype* `int4`" in texts
    assert "2 more checks fail (MGPU-COPY-WARPGROUP-BYTES, MGPU-TMA-LASTDIM-128BITS)" in texts
    assert "plgpu.SMEM((256,), jnp.int4)" in texts
    assert "3 more fixes: follow All fixes." in texts
    assert f"{PUBLIC_BASE_URL}/compute?operation=copy_gmem_to_smem&shape=%287%2C%29" in texts


@pytest.mark.parametrize(
    ("text", "title", "said"),
    [
        ("ffffffffffffffff", "No record with that id or slug", "try /errata help"),
        ("warpgroup", "No record with that id or slug", "Records that mention it:"),
        ("pad shape=7 dtype=int4 op=nope", "That did not work", "unknown operation 'nope'"),
        ("pad shape=7 dtype=int4", "Not enough to compute", "give one of operation"),
        ("pad shape=7 colour=red", "Unknown compute settings", "colour=red"),
        ("pad shape=7 dtype=int4 op=pallas_call", "ValueError", "verified"),
        ("just some words", "errata knows no error in this paste", "Paste the whole traceback"),
        (
            "NotImplementedError: Only copies moving a number of bytes divisible by the"
            " warpgroup size are supported. Got bytes=32 but warpgroup size is 128",
            "errata knows no error in this paste",
            "closest known errors",
        ),
    ],
)
def test_mistakes_get_friendly_answers(
    client: httpx.Client, text: str, title: str, said: str
) -> None:
    response = slack(client, text)
    assert response.status_code == 200
    message = response.json()
    assert message["blocks"][0]["text"]["text"].startswith(title)
    assert said in block_texts(message)


def test_a_huge_paste_is_read_from_its_end_and_the_answer_fits_slack(
    client: httpx.Client,
) -> None:
    long_line = "ValueError: Can only transfer integer bytes (shape=[7], dtype=i4)" + " ~" * 4000
    noise = "INFO step 1 loss=0.5 shape=(3, 4)\n" * 3000
    paste = noise + long_line
    assert len(paste) > MAX_PASTE_CHARS
    message = slack(client, paste).json()
    blocks = message["blocks"]
    assert len(blocks) <= MAX_BLOCKS
    for block in blocks:
        if block["type"] == "header":
            assert len(block["text"]["text"]) <= HEADER_LIMIT
        if block["type"] == "section":
            assert len(block["text"]["text"]) <= SECTION_LIMIT
    texts = block_texts(message)
    assert "… (truncated)" in texts, "the 8,000-character line is cut, and says so"
    assert f"Only the last {MAX_PASTE_CHARS:,} characters of the paste were read." in texts
    assert "plgpu.SMEM((256,), jnp.int4)" in texts  # for every release the words allow
