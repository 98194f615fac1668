"""The pages in a real browser: paste, compute, search and read records, with and without JS."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, Page, Route, expect

from app.jaxref.releases import release_commits
from tests.chatops.chat import USERS_LINE, USERS_LINE_FIXED, traceback
from tests.conftest import LiveServer

PASTES = Path(__file__).parent.parent / "fixtures" / "pastes"

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
        " (7 × 4 bits = 28 bits; 28 mod 8 = 4)"
    )
    expect(page).to_have_url("/")  # matched in place, without leaving the page
    expect(result.get_by_role("heading", name="Result")).to_be_focused()
    best = result.locator(".do-this").first
    expect(best.get_by_role("heading")).to_have_text(
        "Do this: Pad the block from 7 to 256 elements"
    )
    expect(best.locator("del")).to_have_text("-" + USERS_LINE)
    expect(best.locator("ins")).to_have_text("+" + USERS_LINE_FIXED)
    expect(best.get_by_role("button", name=re.compile("^Copy the changed code"))).to_be_visible()
    facts = result.locator(".facts").first
    expect(facts).to_be_hidden()  # the details are folded
    result.get_by_text("Details: the values").first.click()
    expect(facts).to_contain_text("shape[7]")
    expect(facts).to_contain_text("dtypeint4")
    expect(facts).to_contain_text(re.compile(r"JAX release0\.10\.2, from \d+ JAX frames"))
    commit = release_commits()["0.10.2"]
    # Playwright hands the pattern to the page as JavaScript, where a slash ends it.
    source = re.compile(
        r"^JAX source: jax\/_src\/pallas\/mosaic_gpu\/primitives\.py:\d+ \(0\.10\.2\)$"
    )
    expect(result.get_by_role("link", name=source)).to_have_attribute(
        "href", re.compile(rf"^https://github\.com/jax-ml/jax/blob/{commit}/jax/_src/pallas/")
    )
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
    expect(plain_page).to_have_url(re.compile(r"/#match$"))  # the answer scrolled into view
    expect(plain_page.locator(".do-this ins").first).to_have_text(
        "+lower('pallas_call', (128,), 'float32', None)"  # the traceback's script's line
    )
    # The paste folds to one line, and stays in the box to edit and send again.
    box = plain_page.get_by_label("Traceback, log or error message")
    expect(box).to_be_hidden()
    plain_page.locator("#paste-box > summary").click()
    expect(box).to_contain_text("multiple of 128 (got 32)")
    expect(plain_page.get_by_role("button", name=re.compile("^Copy"))).to_have_count(0)


def test_a_record_page_says_what_it_means_then_errata_corrections_without_javascript(
    plain_page: Page,
) -> None:
    plain_page.goto(WARPGROUP_RECORD)
    headings = plain_page.get_by_role("heading", level=2).all_inner_texts()
    assert headings[:3] == ["What it means", "errata’s corrections", "Error message"]
    # What to do comes before the source around the raise.
    shown = ["Solutions", "Example fix", "Source", "Defensive patterns", "Related errors"]
    assert [heading for heading in headings if heading in shown] == shown
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
    expect(link.first.locator("mark").first).to_have_text("warpgroup")  # the word, marked
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
    page.locator("#paste-box > summary").click()  # "edit": the folded paste opens again
    paste.fill(line)
    page.get_by_role("button", name="Find the error").click()
    expect(result.locator(FIRST_RESULT)).to_have_text(f"NotImplementedError: {line}")
    page.goto(WARPGROUP_RECORD)
    title = page.get_by_role("heading", level=1)
    expect(title).to_contain_text("Got bytes=… but warpgroup size is …")
    expect(page).to_have_title(re.compile(r"^[^{}]+$"))
    expect(page.locator("pre.message")).to_contain_text("Got {bytes=} but warpgroup size is")


def test_record_pages_fit_a_phone_without_scrolling_sideways(
    phone_page: Page, client: httpx.Client
) -> None:
    records = client.get("/api/errors", params={"limit": 200}).json()["items"]
    assert len(records) >= 25
    for record in records:
        phone_page.goto(f"/errors/{record['id']}")
        width = phone_page.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, f"/errors/{record['id']} is {width} px wide"


def _luminance(css_colour: str) -> float:
    red, green, blue = (int(part) / 255 for part in re.findall(r"\d+", css_colour)[:3])
    linear = [
        c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in (red, green, blue)
    ]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def _contrast(first: str, second: str) -> float:
    light, dark = sorted((_luminance(first), _luminance(second)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def test_a_dark_system_gets_dark_pages_that_stay_readable(dark_page: Page) -> None:
    dark_page.goto(WARPGROUP_RECORD)
    colours = dark_page.evaluate(
        """() => {
          const style = (selector, property) =>
            getComputedStyle(document.querySelector(selector))[property];
          return {
            background: style("body", "backgroundColor"),
            text: style("body", "color"),
            link: style("main a", "color"),
            boxText: style(".errata-box p", "color"),
            box: style(".errata-box", "backgroundColor"),
            code: style("pre", "backgroundColor"),
            codeText: style("pre code", "color"),
          };
        }"""
    )
    assert _luminance(colours["background"]) < 0.05, colours
    assert _contrast(colours["text"], colours["background"]) >= 7
    assert _contrast(colours["link"], colours["background"]) >= 4.5
    assert _contrast(colours["boxText"], colours["box"]) >= 4.5
    assert _contrast(colours["codeText"], colours["code"]) >= 4.5


def test_copy_buttons_work_without_the_clipboard_api_on_plain_http(page: Page) -> None:
    """On http://host:8000 (not a secure context) browsers give no navigator.clipboard."""
    page.context.add_init_script("delete Navigator.prototype.clipboard;")
    page.goto("/")
    page.get_by_label("Traceback, log or error message").fill(traceback("MGPU-COPY-INTEGER-BYTES"))
    page.get_by_role("button", name="Find the error").click()
    copy = page.locator("#match-result").get_by_role("button", name=re.compile("^Copy")).first
    expect(copy).to_be_visible()
    copy.click()
    selected = page.evaluate("window.getSelection().toString()")
    assert selected == USERS_LINE_FIXED
    expect(page.get_by_role("status").filter(has_text=re.compile("Copied|selected"))).to_have_count(
        1
    )


def test_a_matched_paste_has_a_link_that_shows_the_result_again(page: Page) -> None:
    page.goto("/")
    page.get_by_label("Traceback, log or error message").fill(traceback("MGPU-COPY-INTEGER-BYTES"))
    page.get_by_role("button", name="Find the error").click()
    link = page.get_by_role("link", name="Link to this result")
    href = link.get_attribute("href")
    assert href and href.startswith("/match?paste=") and len(href) < 6100
    page.context.clear_cookies()
    fresh = page.context.new_page()
    fresh.goto(href)
    expect(fresh.locator(FIRST_RESULT)).to_contain_text(
        "ValueError: Can only transfer integer bytes (shape=[7], dtype=i4)"
    )
    expect(fresh.locator(".do-this ins").first).to_have_text("+" + USERS_LINE_FIXED)
    expect(fresh.locator(".paste-summary")).to_contain_text("Can only transfer integer bytes")
    fresh.close()


def test_a_paste_over_the_body_limit_gets_the_problem_page_not_a_page_in_the_result(
    page: Page,
) -> None:
    page.goto("/")
    page.get_by_label("Traceback, log or error message").fill("x" * (5 << 20))
    page.get_by_role("button", name="Find the error").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Payload too large")
    expect(page.locator("header.site-header")).to_have_count(1)


# A TPU paste as JAX 0.10.2 prints it: a float32 block (100, 100) of a (256, 256) array.
TPU_BLOCK = (PASTES / "tpu-block-not-aligned.txt").read_text()


@pytest.mark.parametrize(("width", "height"), [(1280, 900), (390, 844)])
@pytest.mark.parametrize("chip", ["gpu", "tpu"])
def test_do_this_is_in_the_first_screen_after_submit(
    browser: Browser, live_server: LiveServer, width: int, height: int, chip: str
) -> None:
    """The answer leads: its Do this block is in the first viewport and holds a diff, and
    the message (the TPU one's, as the engine words it for the values) shows once above the
    fold."""
    paste = traceback("MGPU-COPY-INTEGER-BYTES") if chip == "gpu" else TPU_BLOCK
    context = browser.new_context(
        base_url=live_server.base_url, viewport={"width": width, "height": height}
    )
    page = context.new_page()
    page.goto("/")
    page.get_by_label("Traceback, log or error message").fill(paste)
    page.get_by_role("button", name="Find the error").click()
    do_this = page.locator("#match-result .do-this").first
    expect(do_this).to_be_visible()
    box = do_this.bounding_box()
    scrolled = page.evaluate("window.scrollY")
    assert box is not None and box["y"] >= 0 and box["y"] + 40 <= height, (box, scrolled)
    expect(do_this.locator("ins")).to_have_count(1)
    if chip == "gpu":
        message = "Can only transfer integer bytes"
    else:
        message = "The block's last dimension is 100 against the array's 256"
    above_fold = page.evaluate(
        """(height) => [...document.querySelectorAll("#match-result *")]
            .filter((node) => node.children.length === 0 && node.checkVisibility())
            .filter((node) => { const r = node.getBoundingClientRect();
                                return r.bottom > 0 && r.top < height; })
            .map((node) => node.textContent).join("\\n")""",
        height,
    )
    assert above_fold.count(message) == 1, above_fold
    context.close()
