"""The pages over HTTP: headers, escaping, status codes, and the result fragment."""

from __future__ import annotations

import html
import re
import uuid

import httpx
import pytest
from markupsafe import escape

from app.answers.kinship import MOST_SHARE
from app.web.record_page import RELATED_SHOWN
from tests.api.test_records_api import new_record, records_sharing_a_slug, unlike_record
from tests.chatops.chat import USERS_LINE_FIXED, traceback
from tests.matching.catalog import PASTES, TRACEBACKS, fixture_text

HTML = "text/html; charset=utf-8"
PAGES = [
    "/",
    "/search?q=warpgroup",
    "/compute?operation=copy_gmem_to_smem&shape=7&dtype=int4",
    "/errors/225d0e9c2ee22311",
    "/errors/no-such-record",
    "/docs",
]


@pytest.mark.parametrize("path", PAGES)
def test_every_page_is_sent_with_security_headers(client: httpx.Client, path: str) -> None:
    response = client.get(path)
    assert response.headers["content-type"] == HTML
    policy = response.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "'unsafe-inline'" not in policy
    assert "frame-ancestors 'none'" in policy
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["referrer-policy"] == "same-origin"
    assert '<meta name="viewport"' in response.text
    assert "<script>" not in response.text and " style=" not in response.text
    assert re.search(r'<html lang="en">', response.text)


def test_an_unknown_record_is_a_404_page(client: httpx.Client) -> None:
    response = client.get("/errors/no-such-record")
    assert response.status_code == 404
    assert "<h1>No such error record</h1>" in response.text
    assert "No error record with slug or id &#39;no-such-record&#39;." in response.text


def test_a_record_is_found_by_slug_and_by_id(client: httpx.Client) -> None:
    by_id = client.get("/errors/ffb598de9e3ff51b")
    by_slug = client.get("/errors/only-copies-transferring-a-number-of-bytes-divisib")
    assert by_id.status_code == by_slug.status_code == 200
    assert by_id.text == by_slug.text
    assert 'id="correction-exampleFix"' in by_id.text


def test_a_slug_records_share_lists_them_each_linked_by_id(
    client: httpx.Client, curator: httpx.Client
) -> None:
    slug, ids = records_sharing_a_slug(curator, 2)
    listing = client.get(f"/errors/{slug}")
    assert listing.status_code == 200
    assert f"Records sharing the slug “{slug}”" in listing.text
    for record_id in ids:
        message = escape(client.get(f"/api/errors/{record_id}").json()["record"]["errorMessage"])
        assert f'<a href="/errors/{record_id}">{message}</a>' in listing.text
        assert message in client.get(f"/errors/{record_id}").text


def test_a_pasted_wrapper_is_answered_with_the_site_of_the_exception_it_wraps(
    client: httpx.Client,
) -> None:
    text = fixture_text(PASTES / "scan-extensive-under-lowering-exception-0.4.23.txt")
    page = client.post("/", data={"text": text}).text
    wrapper = page.index("Exception while lowering eqn")
    site = page.index(
        "Raised by JAX in _scan_lowering_rule (jax/_src/pallas/mosaic/lowering.py:1516)"
    )
    assert site < wrapper  # the site has advice to follow, the wrapper none


def test_a_pasted_traceback_cut_before_its_message_is_answered_with_its_last_frames_site(
    client: httpx.Client,
) -> None:
    lines = fixture_text(TRACEBACKS / "MGPU-COPY-INTEGER-BYTES.txt").splitlines()
    header = max(n for n, line in enumerate(lines) if line.startswith("Traceback"))
    page = html.unescape(client.post("/", data={"text": "\n".join(lines[header:-1])}).text)
    assert "Cut before its message, in JAX's _copy_gmem_to_smem_lowering" in page
    assert "JAX's message there: Can only transfer integer bytes" in page
    assert "Do this: " in page


def test_what_people_type_is_escaped(client: httpx.Client) -> None:
    attack = '<script>alert(1)</script>"'
    searched = client.get("/search", params={"q": attack}).text
    assert "<script>alert(1)</script>" not in searched
    assert "&lt;script&gt;alert(1)&lt;/script&gt;&#34;" in searched
    pasted = client.post("/", data={"text": attack + "\nValueError: " + attack}).text
    assert "<script>alert" not in pasted


def test_a_search_marks_the_words_found_and_escapes_the_rest(
    client: httpx.Client, curator: httpx.Client
) -> None:
    found = client.get("/search", params={"q": "warpgroup"}).text
    first = found[found.index('<ul class="record-list">') :]
    assert first.index('href="/errors/ffb598de9e3ff51b"') < first.index("</li>")
    assert "divisible by the <mark>warpgroup</mark> size" in first[: first.index("</li>")]
    word = f"zq{uuid.uuid4().hex[:8]}"
    advice = f'Wrap it: <b onclick="x()">{word}</b> & <script>alert(1)</script>'
    record = new_record(documentation=advice)
    assert curator.put(f"/api/errors/{record['id']}", json={"record": record}).is_success
    page = client.get("/search", params={"q": word}).text
    assert (
        f"&lt;b onclick=&#34;x()&#34;&gt;<mark>{word}</mark>&lt;/b&gt; &amp; &lt;script&gt;" in page
    )
    assert "<script>" not in page and "<b " not in page
    assert "What it means:" in page  # the field the words were found in


def test_the_paste_form_posts_and_renders_the_result(client: httpx.Client) -> None:
    response = client.post("/", data={"text": traceback("MGPU-COPY-INTEGER-BYTES")})
    assert response.status_code == 200
    assert "<h1>Match a traceback</h1>" in response.text
    assert escape(USERS_LINE_FIXED) in response.text


def test_the_fragment_is_the_result_alone(client: httpx.Client) -> None:
    response = client.post(
        "/", params={"fragment": "true"}, data={"text": traceback("MGPU-COPY-INTEGER-BYTES")}
    )
    assert response.text.lstrip().startswith('<section class="result"')
    assert "<html" not in response.text
    assert escape(USERS_LINE_FIXED) in response.text


def test_problems_are_shown_on_the_page(client: httpx.Client) -> None:
    empty = client.post("/", data={"text": ""})
    assert empty.status_code == 422
    assert "Paste a traceback or an error message first." in empty.text
    bad = client.get("/compute", params={"operation": "nope", "shape": "7", "dtype": "int4"})
    assert bad.status_code == 422
    assert "unknown operation &#39;nope&#39;" in bad.text
    cursor = client.get("/search", params={"cursor": "bogus"})
    assert cursor.status_code == 422
    assert cursor.headers["content-type"] == HTML
    assert (
        '<p class="problem" role="alert">cursor &#39;bogus&#39; is not one this service issued.'
        in cursor.text
    )


def test_static_files_are_served(client: httpx.Client) -> None:
    script = client.get("/static/errata.js")
    assert script.status_code == 200
    assert "javascript" in script.headers["content-type"]
    style = client.get("/static/errata.css")
    assert style.status_code == 200
    assert style.headers["content-type"].startswith("text/css")
    assert ".card {" in style.text and ":root {" in style.text


def test_both_forms_refuse_a_jax_version_they_cannot_take(client: httpx.Client) -> None:
    """The paste form reads any release (pastes are read from 0.4.15), but not text that
    names none; the compute form only the releases the engine models."""
    pasted = client.post(
        "/", data={"text": traceback("MGPU-COPY-INTEGER-BYTES"), "jaxVersion": "banana"}
    )
    computed = client.get(
        "/compute",
        params={"operation": "pallas_call", "shape": "7", "dtype": "int4", "jaxVersion": "0.4.38"},
    )
    assert (pasted.status_code, computed.status_code) == (422, 422)
    assert "jaxVersion: cannot read JAX version &#39;banana&#39;" in pasted.text
    assert "jaxVersion: JAX 0.4.38 is not modelled" in computed.text
    assert pasted.headers["content-type"] == computed.headers["content-type"] == HTML
    older = client.post(
        "/", data={"text": traceback("MGPU-COPY-INTEGER-BYTES"), "jaxVersion": "0.4.38"}
    )
    assert older.status_code == 200
    assert "JAX 0.4.38 is not modelled" in older.text


def test_a_0d_block_is_answered_on_the_compute_page(client: httpx.Client) -> None:
    page = client.get(
        "/compute", params={"operation": "pallas_call", "shape": "()", "dtype": "float32"}
    )
    assert page.status_code == 200
    assert page.headers["content-type"] == HTML
    assert "Got bytes=4 but warpgroup size is 128" in page.text


def test_the_compute_page_asks_for_lowering_semantics_and_keeps_the_choice(
    client: httpx.Client,
) -> None:
    values = {"operation": "copy_gmem_to_smem", "shape": "(8,)", "dtype": "bfloat16"}
    newest = client.get("/compute", params={**values, "jaxVersion": "0.12.0.1"})
    lane = client.get(
        "/compute", params={**values, "jaxVersion": "0.12.0.1", "loweringSemantics": "Lane"}
    )
    fact = "<dt>lowering semantics</dt><dd><code>{}</code></dd>"
    assert "passes every check" in newest.text and fact.format("Warpgroup") in newest.text
    assert "Got bytes=16 but warpgroup size is 128" in lane.text
    assert fact.format("Lane") in lane.text
    assert "<option selected>Lane</option>" in lane.text
    refused = client.get("/compute", params={**values, "loweringSemantics": "Lanes"})
    assert refused.status_code == 422
    assert "loweringSemantics" in refused.text


def test_an_undated_pastes_fixes_hold_in_every_release_and_its_link_shows_the_same(
    client: httpx.Client,
) -> None:
    """The message alone reads every release from 0.6.0: the fix holds in each the engine
    models, and the page's link to all fixes asks for those releases, not 0.12.0.1 alone."""
    paste = "ValueError: Can only transfer integer bytes (shape=[7], dtype=i4)"
    answer = client.post("/", data={"text": paste}, headers={"Accept": BROWSER_ACCEPT}).text
    assert (
        "Every fix passes every check in JAX 0.7.0–0.10.2 (Lane semantics) and "
        "0.11.0–0.12.0.1 (Warpgroup semantics)." in answer
    )
    assert "plgpu.SMEM((256,), jnp.int4)" in answer  # no code in the paste: the construct
    [link] = re.findall(r'href="(/compute\?[^"]*)"', answer)
    page = client.get(html.unescape(link)).text
    assert "plgpu.SMEM((256,), jnp.int4)" in page
    assert "0.11.0–0.12.0.1 (Warpgroup semantics)" in page
    assert 'name="alsoJaxVersions" value="0.12.0,' in page


BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"


def test_a_paste_over_the_limit_is_read_from_its_end_and_stays_in_the_box(
    client: httpx.Client,
) -> None:
    noise = "".join(f"log line {number}: nothing to see here\n" for number in range(40_000))
    paste = noise + traceback("MGPU-COPY-INTEGER-BYTES")
    assert len(paste.encode()) > 1 << 20
    response = client.post("/", data={"text": paste}, headers={"Accept": BROWSER_ACCEPT})
    assert response.status_code == 200
    assert response.headers["content-type"] == HTML
    assert "The paste is over 1 MiB: only its last" in response.text
    assert "Can only transfer integer bytes (shape=[7], dtype=i4)" in response.text
    assert "log line 0: nothing to see here" in response.text  # the whole paste, to edit


@pytest.mark.parametrize(
    ("method", "path", "body", "status"),
    [
        ("GET", "/no-such-page", None, 404),
        ("GET", "/search?q=" + "w" * 600, None, 422),
        ("POST", "/", "text=" + "x" * (5 << 20), 413),
    ],
)
def test_a_browser_is_answered_with_a_page_and_a_program_with_a_problem(
    client: httpx.Client, method: str, path: str, body: str | None, status: int
) -> None:
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    for accept, kind in ((BROWSER_ACCEPT, HTML), ("*/*", "application/problem+json")):
        response = client.request(method, path, content=body, headers={**form, "Accept": accept})
        assert (response.status_code, response.headers["content-type"]) == (status, kind)
    page = client.request(method, path, content=body, headers={**form, "Accept": BROWSER_ACCEPT})
    assert re.search(r"<h1>[^<]+</h1>", page.text)
    assert '<p class="problem">' in page.text
    assert page.headers["content-security-policy"]


def test_the_api_answers_problems_as_json_to_a_browser_too(client: httpx.Client) -> None:
    response = client.get("/api/no-such-route", headers={"Accept": BROWSER_ACCEPT})
    assert response.status_code == 404
    assert response.headers["content-type"] == "application/problem+json"


def test_related_errors_are_few_and_related_for_a_reason(client: httpx.Client) -> None:
    page = client.get("/errors/225d0e9c2ee22311").text
    section = page[
        page.index('id="related-title"') : page.index(
            "</section>", page.index('id="related-title"')
        )
    ]
    items = re.findall(
        r'<li><a href="[^"]+">[^<]+</a> <span class="meta">([^<]+)</span></li>', section
    )
    assert 1 <= len(items) <= 6
    tags = {
        tag
        for reasons in items
        for reason in reasons.split("; ")
        if reason.startswith("tags ")
        for tag in reason.removeprefix("tags ").split(", ")
    }

    # A tag relates records only where few carry it: at most a quarter of the live records
    # of the catalog the page was read from (the tests before may have written more).
    def carrying(tag: str | None) -> int:
        params = {"limit": 1} | ({"tag": tag} if tag else {})
        return int(client.get("/api/errors", params=params).json()["total"])

    live = carrying(None)
    assert carrying("jax") > MOST_SHARE * live  # so it must never be listed
    assert "jax" not in tags
    assert all(carrying(tag) <= MOST_SHARE * live for tag in tags), tags
    assert any("checked next in copy_gmem_to_smem" in reasons for reasons in items)


def test_the_compute_form_names_every_invalid_field_at_once(client: httpx.Client) -> None:
    response = client.get(
        "/compute", params={"operation": "nope", "shape": "x", "dtype": "int5", "targetDtype": "zz"}
    )
    assert response.status_code == 422
    problem = re.search(r'<p class="problem" role="alert">([^<]+)</p>', response.text)
    assert problem is not None
    for field in ("operation:", "shape:", "dtype:", "targetDtype:"):
        assert field in problem.group(1)


def test_a_compilers_message_has_a_page_naming_who_prints_it(client: httpx.Client) -> None:
    page = client.get("/errors/target-does-not-support-this-comparison")
    assert page.status_code == 200
    assert str(escape("said by libtpu (Mosaic's TPU compiler), not by JAX’s source")) in page.text
    assert str(escape("Compare in float32: x.astype(jnp.float32)")) in page.text  # a solution
    assert "As JAX’s source writes it" not in page.text
    envelope = client.get("/api/errors/by-slug/target-does-not-support-this-comparison").json()
    listed = client.get("/search", params={"q": "jax-ml/jax#30104"}).text
    assert f'href="/errors/{envelope["record"]["id"]}"' in listed


def test_a_record_page_says_what_to_do_before_the_source(client: httpx.Client) -> None:
    page = client.get("/errors/225d0e9c2ee22311").text
    sections = ["meaning", "message", "solutions", "example", "source", "related"]
    at = [page.index(f'<h2 id="{section}-title">') for section in sections]
    assert at == sorted(at)
    assert "Compute the fixes for" in page[at[-1] :]  # and what to try last


def test_a_record_page_shows_a_few_related_and_links_to_them_all(
    curator: httpx.Client, client: httpx.Client
) -> None:
    folder = uuid.uuid4().hex
    where = f"jax/_src/{folder}/{folder}.py"  # a file and a folder no other record has
    target = unlike_record(filePath=where)
    relatives = [unlike_record(filePath=where) for _ in range(RELATED_SHOWN + 2)]
    for record in [target, *relatives]:
        assert curator.put(f"/api/errors/{record['id']}", json={"record": record}).is_success
    page = client.get(f"/errors/{target['id']}").text
    section = page[
        page.index('id="related-title"') : page.index(
            "</section>", page.index('id="related-title"')
        )
    ]
    assert len(re.findall(r"<li><a href=", section)) == RELATED_SHOWN
    more = re.search(r'<a href="([^"]+)">All (\d+) related records</a>', section)
    assert more is not None and int(more.group(2)) == len(relatives)
    listed = client.get(html.unescape(more.group(1)))
    assert listed.status_code == 200
    ids = set(re.findall(r'<li><a href="/errors/([^"]+)">', listed.text))
    assert ids == {record["id"] for record in relatives}
    assert "same source file" in listed.text
    assert client.get(f"/errors/{target['id']}/related", params={"cursor": "x"}).status_code == 422
