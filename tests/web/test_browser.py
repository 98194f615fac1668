"""The pages in a real browser: paste, compute, search and read records, with and without JS."""

from __future__ import annotations

import re

from playwright.sync_api import Page, Route, expect

from tests.chatops.chat import traceback
from tests.conftest import LiveServer

FIRST_RESULT = "#match1-title"
WARPGROUP_RECORD = "/errors/only-copies-transferring-a-number-of-bytes-divisib"
PINNED_SOURCE = re.compile(
    r"^https://github\.com/jax-ml/jax/blob/1e1c6a8fc06dfcd1247076ec5cae4640cea5d7bb/"
    r"jax/_src/pallas/mosaic_gpu/primitives\.py#L\d+"
)


def test_a_pasted_traceback_shows_the_error_its_values_and_fixes(page: Page) -> None:
    page.goto("/")
    page.get_by_label("Traceback, log or error message").fill(traceback("MGPU-COPY-INTEGER-BYTES"))
    page.get_by_role("button", name="Find the error").click()
    result = page.locator("#match-result")
    expect(result.locator(FIRST_RESULT)).to_have_text(
        "ValueError: Can only transfer integer bytes (shape=[7], dtype=i4)"
    )
    expect(page).to_have_url("/")  # matched in place, without leaving the page
    expect(result.get_by_role("heading", name="Result")).to_be_focused()
    facts = result.locator(".facts")
    expect(facts).to_contain_text("shape[7]")
    expect(facts).to_contain_text("dtypeint4")
    said = result.locator(".quote").filter(has_text="JAX says")
    expect(said.locator("code")).to_have_text(
        "Can only transfer integer bytes (shape=[7], dtype=i4)"
    )
    expect(said).to_contain_text("7 × 4 bits = 28 bits; 28 mod 8 = 4")
    best = result.locator(".fix").first
    expect(best.get_by_role("heading")).to_have_text(
        "Best fix: pad the block from 7 to 256 elements"
    )
    expect(best.locator("#match1-fix1-code2")).to_have_text("plgpu.SMEM((256,), jnp.int4)")
    expect(best.get_by_role("button", name="Copy after")).to_be_visible()
    result.get_by_role("link", name="Record page").click()
    expect(page.get_by_role("heading", level=1)).to_contain_text("Can only transfer integer bytes")


def test_without_javascript_the_form_posts_and_the_result_is_on_the_page(
    plain_page: Page,
) -> None:
    plain_page.goto("/")
    plain_page.get_by_label("Traceback, log or error message").fill(
        traceback("MGPU-WGSTRIDED-ELEMENT-MULTIPLE")
    )
    plain_page.get_by_role("button", name="Find the error").click()
    expect(plain_page.locator(FIRST_RESULT)).to_contain_text(
        "must have a number of elements that is a multiple of 128 (got 32)"
    )
    expect(plain_page.locator("#match1-fix1-code2")).to_have_text(
        "jax.ShapeDtypeStruct((128,), jnp.float32)"
    )
    # The paste stays in the box, to edit and send again.
    expect(plain_page.get_by_label("Traceback, log or error message")).to_contain_text(
        "multiple of 128 (got 32)"
    )
    expect(plain_page.get_by_role("button", name="Copy after")).to_be_hidden()


def test_a_record_page_shows_errata_corrections_first_without_javascript(
    plain_page: Page,
) -> None:
    plain_page.goto(WARPGROUP_RECORD)
    headings = plain_page.get_by_role("heading", level=2).all_inner_texts()
    assert headings[:3] == ["errata’s corrections", "Error message", "What it means"]
    for section in ("Source", "Solutions", "Example fix", "Defensive patterns", "Related errors"):
        assert section in headings
    box = plain_page.get_by_role("complementary", name="errata’s corrections")
    expect(box.get_by_role("heading", name="Example fix")).to_be_visible()
    expect(box).to_contain_text("xp = jnp.pad(x, (0, padded - n))")
    plain_page.get_by_role("link", name="errata corrects this example: read the correction").click()
    expect(plain_page).to_have_url(f"{WARPGROUP_RECORD}#correction-exampleFix")
    source = plain_page.get_by_role("link", name="View on GitHub (pinned to 1e1c6a8fc0)")
    expect(source).to_have_attribute("href", PINNED_SOURCE)
    related = plain_page.get_by_role("region", name="Related errors")
    related.get_by_role("link").first.click()
    expect(plain_page).to_have_url(re.compile(r"/errors/[\w.-]+$"))
    expect(plain_page.get_by_role("heading", level=1)).to_be_visible()


def test_the_compute_form_gives_the_verdict_and_verified_fixes(page: Page) -> None:
    page.goto("/")
    page.get_by_label("Operation").select_option("pallas_call")
    page.get_by_label("Shape").fill("8")
    page.get_by_label("dtype", exact=True).fill("float32")
    page.get_by_role("button", name="Compute").click()
    verdict = page.get_by_role("region", name="Verdict")
    expect(verdict.locator(".card-title")).to_contain_text("Got bytes=32 but warpgroup size is 128")
    expect(verdict).to_contain_text("verified against every check")
    expect(page.get_by_label("Shape")).to_have_value("8")


def test_search_lists_records_with_links(plain_page: Page) -> None:
    plain_page.goto("/")
    plain_page.get_by_label("Words from the message or its explanation").fill("warpgroup")
    plain_page.get_by_role("button", name="Search").click()
    expect(plain_page.get_by_role("heading", level=1)).to_have_text("Records matching “warpgroup”")
    link = plain_page.get_by_role("link", name="Only copies transferring a number of bytes")
    link.first.click()
    expect(plain_page.get_by_role("heading", level=1)).to_contain_text("Only copies transferring")


def test_the_api_docs_load_with_no_request_leaving_the_machine(
    page: Page, live_server: LiveServer
) -> None:
    """Swagger UI and everything it loads come from errata itself: on a cluster without
    internet the page is the same. Requests elsewhere are recorded and refused."""
    outside: list[str] = []

    def only_errata(route: Route) -> None:
        url = route.request.url
        if url.startswith((live_server.base_url + "/", "data:")):
            route.continue_()
        else:
            outside.append(url)
            route.abort()

    page.context.route("**/*", only_errata)
    page.goto("/docs")
    expect(page.locator(".swagger-ui .info .title")).to_contain_text("errata")
    expect(page.locator(".opblock-summary-path", has_text="/api/match").first).to_be_visible()
    assert outside == []


def test_an_answer_is_headed_with_the_users_line_and_a_record_with_its_values_elided(
    page: Page,
) -> None:
    paste = page.get_by_label("Traceback, log or error message")
    result = page.locator("#match-result")
    page.goto("/")
    paste.fill(traceback("MGPU-TMA-BOX-256"))
    page.get_by_role("button", name="Find the error").click()
    expect(result.locator(FIRST_RESULT)).to_have_text(
        "ValueError: Async copies only support copying <=256 elements along each dimension,"
        " got (512,)"
    )
    line = (
        "Only copies transferring a number of bytes divisible by the warpgroup size are"
        " supported. Got bytes=32 but warpgroup size is 128"
    )
    paste.fill(line)
    page.get_by_role("button", name="Find the error").click()
    expect(result.locator(FIRST_RESULT)).to_have_text(f"NotImplementedError: {line}")
    page.goto(WARPGROUP_RECORD)
    title = page.get_by_role("heading", level=1)
    expect(title).to_contain_text("Got bytes=… but warpgroup size is …")
    expect(page).to_have_title(re.compile(r"^[^{}]+$"))
    expect(page.locator("pre.message")).to_contain_text("Got {bytes=} but warpgroup size is")
