"""The mined records as a user meets them: loaded on first start, served, filtered, matched."""

from __future__ import annotations

import builtins
import json
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import httpx
import pytest
import re2
from sqlalchemy.orm import Session, sessionmaker

from app.answers.cards import release_told
from app.answers.catalog_cache import CatalogCache
from app.answers.match import MatchService
from app.config import load_settings
from app.db import make_engine, make_session_factory
from app.jaxref.files import XLA_ERRORS_FILE
from app.jaxref.releases import RELEASE_PATTERN, newest_release, release_key
from app.jaxref.scope import backend_of
from app.jaxref.templates import (
    MIN_MATCHABLE_LITERAL,
    Placeholder,
    derive_pattern,
    split_template,
)
from app.knowledge.calls import MINED_CALLS
from app.knowledge.mining import MINED_SITES, curated_records
from app.knowledge.public_names import MINED_API
from app.migrate import upgrade
from app.records.seeding import prepare_database
from app.records.version_watch import VersionWatch
from app.rendering.markdown import escape
from app.schemas.match import MatchRequest
from tests.conftest import SEED_DIR, Backend, LiveServer, start_server, stop_server
from tests.matching.catalog import mined_sites
from tests.matching.test_raise_points import (
    installed_statement,
    quotable_site,
    real_tiling_assert,
)

ANNOTATIONS = SEED_DIR.parent / "annotations"
# A value of each kind a placeholder can hold, as JAX prints it.
SAMPLES = {
    "shape": "(8, 128)",
    "tuple_shape": "(8, 128)",
    "dtype": "float32",
    "number": "7",
    "memref": "memref<8x128xf32, #gpu.address_space<workgroup>>",
    "text": "sample",
}


CURATED = Path(__file__).resolve().parents[2] / "data" / "records"


def staged_at(line: int, error: str) -> str:
    """A traceback whose only JAX frame is ``pallas_call``'s ``wrapped`` on ``line``,
    staging the operation that then failed with ``error``, as JAX prints it."""
    return (
        "Traceback (most recent call last):\n"
        '  File "/home/me/kernel.py", line 40, in <module>\n'
        "    out = kernel(x)\n"
        '  File "/opt/venv/lib/python3.11/site-packages/jax/_src/pallas/pallas_call.py",'
        f" line {line}, in wrapped\n"
        "    out_flat = pallas_call_p.bind(\n"
        f"jax._src.source_info_util.JaxStackTraceBeforeTransformation: {error}\n"
    )


@cache
def mined_records() -> list[dict[str, Any]]:
    lines = MINED_SITES.read_text(encoding="utf-8").splitlines()
    return [item["record"] for item in map(json.loads, lines) if "record" in item]


def render(template: str) -> str:
    """The message with a sample value in each placeholder (``{bytes=}`` → ``bytes=7``)."""
    return "".join(
        piece if not isinstance(piece, Placeholder) else _sample(piece)
        for piece in split_template(template)
    )


def _sample(placeholder: Placeholder) -> str:
    value = SAMPLES[placeholder.kind]
    return placeholder.expression + value if placeholder.self_documenting else value


@pytest.fixture(scope="module")
def full_server(backend: Backend, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """``errata serve`` on an empty database, loading everything ``make serve`` loads."""
    everything = ",".join(map(str, load_settings().seed_paths))  # curated, then mined
    server = start_server(
        {"ERRATA_DATABASE_URL": backend.new_database(), "ERRATA_SEED_PATHS": everything},
        tmp_path_factory.mktemp("full") / "server.log",
        ready_within=600,
    )
    yield server
    stop_server(server)


@pytest.fixture(scope="module")
def client(full_server: LiveServer) -> Iterator[httpx.Client]:
    with full_server.client() as client:
        yield client


def test_first_start_loads_every_mined_record_beside_the_curated_ones(
    client: httpx.Client,
) -> None:
    total = client.get("/api/errors", params={"limit": 1}).json()["total"]
    curated = curated_records(load_settings().seed_paths[:-1])
    assert len(curated) >= 25
    # Pallas's public names, and its functions' calls
    api = [
        line for path in (MINED_API, MINED_CALLS) for line in path.read_text("utf-8").splitlines()
    ]
    # XLA's error codes that no curated record holds
    xla = [line for line in XLA_ERRORS_FILE.read_text("utf-8").splitlines() if '"record"' in line]
    assert len(xla) == 7
    assert total == len(mined_records()) + len(api) + len(curated) + len(xla)


def test_xla_error_codes_are_served_and_a_code_alone_is_answered(client: httpx.Client) -> None:
    """E3000's record is the catalogue's, pinned to XLA's page; E2003's is the curated one,
    annotated with the catalogue's facts; "hit E2003 again" reaches it."""
    e3000 = client.get("/api/errors/115af7fa78ea3dfd").json()["record"]
    assert e3000["errorMessage"] == "E3000: CompileTimeSparseCoreAllocationFailure"
    assert e3000["catalogue"]["docsUrl"] == "https://openxla.org/xla/errors/error_3000"
    e2003 = client.get("/api/errors/aa3acc483ca34283", params={"annotated": "true"}).json()
    assert e2003["annotation"]["catalogue"]["name"] == (
        "CompileTimeMosaicUnprovenMemoryAccessAlignment"
    )
    answer = client.post("/api/match", json={"text": "hit E2003 again"}).json()
    [said] = answer["compilerMessages"]
    assert (said["message"], said["compiler"]) == ("E2003", "libtpu (Mosaic's TPU compiler)")
    assert "pl.multiple_of" in said["why"] and "error_2003" in said["why"]


def test_a_seed_is_served_as_shipped_with_its_mined_facts_beside_it(
    client: httpx.Client,
) -> None:
    seed = json.loads((SEED_DIR / "000_3bebb9c19a64106a.txt").read_text())
    plain = client.get("/api/errors/225d0e9c2ee22311").json()
    assert plain["record"] == seed["record"]
    annotated = client.get("/api/errors/225d0e9c2ee22311", params={"annotated": "true"}).json()
    mined = annotated["annotation"]["mined"]
    assert mined["releases"][-1]["release"] == newest_release()
    assert mined["site"]["function"] == "_copy_gmem_to_smem_lowering"
    assert annotated["annotation"]["rule"]  # errata's curated notes are still there


def test_filters_by_backend_function_file_and_release(client: httpx.Client) -> None:
    page = client.get(
        "/api/errors", params={"backend": "triton", "release": "0.4.31", "limit": 200}
    ).json()
    assert page["total"] > 0
    for item in page["items"]:
        answer = client.get(f"/api/errors/{item['id']}", params={"annotated": "true"}).json()
        # a mined record's own facts, or a curated record's, beside it in its annotation
        facts = answer["record"] if "site" in answer["record"] else answer["annotation"]["mined"]
        assert facts["site"]["backend"] == "triton"
        assert "0.4.31" in [entry["release"] for entry in facts["releases"]]
    by_function = client.get(
        "/api/errors", params={"function": "_copy_gmem_to_smem_lowering", "limit": 200}
    ).json()
    ids = {item["id"] for item in by_function["items"]}
    assert "225d0e9c2ee22311" in ids  # a seed, through its annotation's mined facts
    assert len(ids) > 3
    in_file = client.get(
        "/api/errors",
        params={"filePath": "jax/_src/pallas/mosaic_gpu/primitives.py", "limit": 1},
    ).json()
    assert in_file["total"] > 50


def test_a_release_lists_the_errors_of_pallas_api_it_raises(client: httpx.Client) -> None:
    """``pallas_call(backend=…)`` is refused from 0.9.1 on; ``pltpu.TPUCompilerParams`` is
    missing from 0.7.2 on (and before 0.4.31)."""
    backend = "pallas_call() got an unexpected keyword argument 'backend'"
    old_name = "module 'jax.experimental.pallas.tpu' has no attribute 'TPUCompilerParams'"

    def listed(release: str, words: str) -> set[str]:
        params = {"release": release, "q": words, "limit": 200}
        page = client.get("/api/errors", params=params).json()
        return {item["errorMessage"] for item in page["items"]}

    assert backend in listed("0.10.2", "pallas_call backend")
    assert backend not in listed("0.9.0.1", "pallas_call backend")
    assert old_name in listed("0.10.2", "TPUCompilerParams")
    assert old_name not in listed("0.6.0", "TPUCompilerParams")


@pytest.mark.parametrize(
    "params",
    [{"release": "banana"}, {"backend": "cuda"}, {"release": "0.10.2\x00"}],
)
def test_bad_filters_are_named(client: httpx.Client, params: dict[str, str]) -> None:
    answer = client.get("/api/errors", params=params)
    assert answer.status_code == 422
    assert answer.headers["content-type"] == "application/problem+json"
    assert next(iter(params)) in answer.json()["detail"]


def source_only_record() -> dict[str, Any]:
    """A mined record no curated record documents, from a file that holds a curated one."""
    [record] = [
        r for r in mined_records() if r["errorMessage"].startswith("Unsupported sharding context")
    ]
    return record


def test_a_mined_message_pasted_is_matched_over_http(client: httpx.Client) -> None:
    record = source_only_record()
    paste = f"{record['errorClass']}: {render(record['errorMessage'])}\n"
    found = client.post("/api/match", json={"text": paste}).json()["matches"]
    assert record["id"] in [match["errorId"] for match in found]


def test_suggestions_read_like_the_message_not_like_placeholder_names(
    client: httpx.Client,
) -> None:
    """``NotImplementedError(eqn.primitive)`` is mined as the message ``{eqn.primitive}``:
    the name of its placeholder is no word JAX prints, so it is offered for nothing."""
    assert any(r["errorMessage"] == "{eqn.primitive}" for r in mined_records())
    paste = "NotImplementedError: MLIR translation rule for primitive 'sin' not found"
    suggestions = client.post("/api/match", json={"text": paste}).json()["suggestions"]
    assert suggestions
    for suggestion in suggestions:
        words = re.sub(r"\{[^{}]*\}", "", suggestion["errorMessage"])
        assert re.search(r"[A-Za-z]{3,}", words), suggestion["errorMessage"]


def test_the_curated_neighbours_of_a_mined_error_are_of_its_own_backend(
    matcher: MatchService,
) -> None:
    """jax#21999's Mosaic TPU diagnostic (curated since) was offered Mosaic GPU's bitcast
    records; jax#24243's, known only from source, is offered TPU's (as jax#24415's was,
    curated since too)."""
    paste = (
        "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: Mosaic failed to compile TPU kernel:"
        " Can't change bitwidth during a relayout\n"
    )
    [found] = matcher.match(MatchRequest(text=paste)).matches
    assert found.sourceOnly is not None and found.sourceOnly.closest
    records = matcher.catalog.records
    assert records[found.errorId].backend == "tpu"
    assert {records[near.errorId].backend for near in found.sourceOnly.closest} <= {"tpu", "core"}


def test_a_helpers_error_is_called_from_the_frame_of_jaxs_that_raised_it(
    matcher: MatchService,
) -> None:
    """jaxlib's ``safe_zip`` raises under the frame of JAX's that called it, the Triton
    lowering's, which the answer names and links; a staging trace above JAX's
    ``JaxStackTraceBeforeTransformation`` (jax#23495) called nothing that raised."""
    record = json.loads((CURATED / "pallas-safe-zip-length.json").read_text())["record"]
    message = (
        "ValueError: safe_zip() argument 1 has length 6 but argument 0 has length 5. "
        "All lengths: (5, 6)"
    )
    lowering = "jax/_src/pallas/triton/lowering.py"
    lowered = (
        "Traceback (most recent call last):\n"
        f'  File "/opt/venv/lib/python3.11/site-packages/{lowering}", line 413, in '
        "lower_jaxpr_to_triton_ir\n"
        "    for invar, block_info in zip(jaxpr.invars, block_infos):\n"
        f"{message}\n"
    )
    [found] = matcher.match(MatchRequest(text=lowered)).matches
    assert found.errorId == record["id"]
    assert found.why.calledBy == f"{lowering}:413 lower_jaxpr_to_triton_ir"
    assert found.sourceUrl is not None and f"/{lowering}#L413-" in found.sourceUrl
    [found] = matcher.match(MatchRequest(text=staged_at(1106, message))).matches
    assert found.errorId == record["id"]
    assert found.why.calledBy is None
    assert found.sourceUrl == record["githubUrl"]


def test_a_pallas_call_without_a_backend_in_an_old_release_says_what_to_install(
    matcher: MatchService,
) -> None:
    """jax-triton#219 (2023): JAX 0.4.15-0.4.20 had no pallas_call lowering without
    jax-triton, and JAX's core said so for any primitive; errata says it for pallas_call."""
    record = json.loads((CURATED / "pallas-call-no-lowering-before-0-4-21.json").read_text())
    paste = staged_at(
        353,
        "NotImplementedError: MLIR translation rule for primitive 'pallas_call' not found for"
        " platform cuda",
    )
    answer = matcher.match(MatchRequest(text=paste))
    [found] = answer.matches
    assert found.errorId == record["record"]["id"]
    assert found.captures == {"platform": "cuda"}
    assert found.sourceUrl == record["record"]["githubUrl"]
    assert answer.release is not None and answer.release.used is not None
    assert release_key(answer.release.used) <= release_key("0.4.20")
    other = (
        "NotImplementedError: MLIR translation rule for primitive 'sin' not found for platform cpu"
    )
    assert matcher.match(MatchRequest(text=other)).matches == []


def test_a_curated_wording_dated_by_commit_is_dated_by_release_from_the_mined_history(
    matcher: MatchService,
) -> None:
    """Seed 001 dates its older wordings by the commit that changed them (no release); the
    mined history of its site says which releases printed that very text."""
    [history] = [
        item["annotation"]["mined"]["messageHistory"]
        for item in map(json.loads, MINED_SITES.read_text(encoding="utf-8").splitlines())
        if item.get("annotation", {}).get("recordId") == "ffb598de9e3ff51b"
    ]
    worded = next(w for w in history[:-1] if "{" not in w["errorMessage"])
    paste = f"NotImplementedError: {worded['errorMessage']}\n"
    answer = matcher.match(MatchRequest(text=paste))
    [found] = answer.matches
    assert (found.errorId, found.variant) == (
        "ffb598de9e3ff51b",
        f"older wording ({worded['until']})",
    )
    assert answer.release is not None and answer.release.releases
    first, last = release_key(worded["from"]), release_key(worded["until"])
    assert all(first <= release_key(r) <= last for r in answer.release.releases)


def linked_cpp_site(client: httpx.Client, text: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The match of ``text``, a diagnostic of Mosaic's C++, and its site's mined facts; the
    match links the site's line in the newest release that has it."""
    found = client.post("/api/match", json={"text": text}).json()["matches"][0]
    [facts] = [site for site in mined_sites() if site["id"] == found["errorId"]]
    assert facts["site"]["language"] == "cpp"
    newest = facts["releases"][-1]
    assert found["source"] == {
        "filePath": facts["filePath"],
        "line": newest["lineNumber"],
        "release": newest["release"],
    }
    return found, facts


def test_a_cpp_diagnostic_is_linked_and_explained_from_its_source(client: httpx.Client) -> None:
    """Mosaic's C++ serializer asked for a version newer than its own: a site known only
    from JAX's source is linked and explained from it."""
    found, facts = linked_cpp_site(
        client,
        "MLIRError: Failure while executing pass pipeline:\n"
        "error: unknown: The highest supported version is 15 but requested serialization at "
        "version 16",
    )
    explained = found["sourceOnly"]
    assert (explained["kind"], explained["condition"]) == ("diagnostic", facts["site"]["condition"])
    assert explained["function"] == facts["site"]["function"]


def test_a_curated_cpp_diagnostic_is_linked_to_its_source(client: httpx.Client) -> None:
    """pytorch/xla#9614: libtpu's Mosaic refused a module serialized by a newer JAX. Its
    site's record is curated now: linked to its source, explained by hand."""
    found, _ = linked_cpp_site(
        client,
        "ValueError: Failed to deserialize the Mosaic module: INTERNAL: Unsupported version: "
        "expected <= 7 but got 8",
    )
    assert found["errorId"] == "144a0fcebaf68edb"
    assert found["sourceOnly"] is None


def test_a_tpu_compilers_own_message_is_named_as_libtpus(client: httpx.Client) -> None:
    """jax#30104: no release of JAX holds the message, and the thread says what to do;
    jax#24415's, under the same wrapper, is jaxlib/mosaic's, and its match explains it."""
    wrapper = "XlaRuntimeError: INTERNAL: Mosaic failed to compile TPU kernel: "
    closed = wrapper + "Target does not support this comparison"
    answer = client.post("/api/match", json={"text": closed}).json()
    assert answer["matches"] == []
    [said] = answer["compilerMessages"]
    assert (said["lineNumber"], said["message"]) == (1, "Target does not support this comparison")
    assert said["compiler"] == "libtpu (Mosaic's TPU compiler)"
    markdown = {"Accept": "text/markdown"}
    text = client.post("/api/match", json={"text": closed}, headers=markdown).text
    assert text.startswith("### libtpu (Mosaic's TPU compiler) rejected the kernel")
    assert "Said by libtpu (Mosaic's TPU compiler), not by JAX's source: libtpu's Mosaic" in text
    assert "Compare in float32" in text  # what the report's thread says to do
    opened = wrapper + "Not implemented: Non-trivial layouts unsupported"
    answer = client.post("/api/match", json={"text": opened}).json()
    assert answer["matches"][0]["source"]["filePath"].startswith("jaxlib/mosaic/")
    assert answer["compilerMessages"] == []


def test_mlirs_verifier_is_named_where_no_record_says_its_message(client: httpx.Client) -> None:
    """jax#23884: the verifier rejected an upstream MLIR op, which no release of JAX holds;
    an op of Mosaic GPU's own dialect (jax#38987's form) is a mined site's and matches."""
    verifier = "jaxlib.mlir._mlir_libs._site_initialize.<locals>.MLIRError: Verification failed:\n"
    upstream = verifier + (
        "error: loc(unknown): 'vector.shape_cast' op operand #0 must be vector of any type "
        "values, but got 'i32'\n"
    )
    answer = client.post("/api/match", json={"text": upstream}).json()
    assert answer["matches"] == []
    [said] = answer["compilerMessages"]
    assert (said["lineNumber"], said["compiler"]) == (1, "MLIR's verifier")
    assert said["message"].startswith("'vector.shape_cast' op operand #0")
    markdown = {"Accept": "text/markdown"}
    text = client.post("/api/match", json={"text": upstream}, headers=markdown).text
    assert "Said by MLIR's verifier, not by JAX's source" in text
    # As Pallas re-raises it, the diagnostic two lines below the verifier's words.
    mosaic = (
        "Pallas encountered an internal verification error. Please file a bug at\n"
        "https://github.com/jax-ml/jax/issues. Error details:\n"
        "'mosaic_gpu.tmem_alloc' op The number of allocated columns must be less than or "
        "equal to 512 but got: 1024\n"
    )
    answer = client.post("/api/match", json={"text": mosaic}).json()
    assert answer["matches"][0]["source"]["filePath"] == "jaxlib/mosaic/dialect/gpu/mosaic_gpu.cc"
    assert answer["compilerMessages"] == []


def test_a_memory_report_with_its_figures_is_read_and_without_them_is_named(
    client: httpx.Client,
) -> None:
    """vllm-project/tpu-inference#2803 gives the figures: a memory report, nothing more;
    #508 does not: the compiler's message, with what to do."""
    error = "jax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED: Ran out of memory in memory space vmem"
    figures = client.post(
        "/api/match", json={"text": error + ". Used 76.58M of 64.00M vmem. Exceeded vmem capacity"}
    ).json()
    assert [m["memory"] for m in figures["memory"]] == ["VMEM"]
    assert figures["compilerMessages"] == []
    bare = client.post("/api/match", json={"text": error}).json()
    assert bare["memory"] == []
    [said] = bare["compilerMessages"]
    assert said["message"] == "Ran out of memory in memory space vmem"
    assert "vmem_limit_bytes" in said["why"]


def test_a_tpu_smem_report_says_what_smem_holds(client: httpx.Client) -> None:
    """AI-Hypercomputer/maxtext#4929: SMEM's advice, not VMEM's."""
    paste = (
        "RESOURCE_EXHAUSTED: Allocation (size=2097152) would exceed memory (size=1048576)\n"
        ":: #allocation3 [shape = 'u8[2097152]{0}', space=smem, size = 0x200000, scoped,\n"
        "   tag = 'prefetched SMEM operand 0'] :: splash_mha_fwd_segmented_residuals.3\n"
    )
    [memory] = client.post("/api/match", json={"text": paste}).json()["memory"]
    assert (memory["backend"], memory["memory"], memory["overBytes"]) == ("tpu", "SMEM", 1048576)
    assert "scalar-prefetch operands" in memory["advice"][0]
    assert not any("vmem_limit_bytes" in advice for advice in memory["advice"])


def test_a_message_raised_at_several_sites_leads_with_the_curated_record(
    client: httpx.Client,
) -> None:
    """RefUnion's check runs again when the union is unflattened, at a site of its own known
    only from JAX's source: a paste without frames gets the record with advice and a fix,
    and the source-only sites of the same message as alternatives."""
    line = "kernel B fails with Only byte-aligned shapes are supported. Got shape: int4(3,)"
    [found] = client.post("/api/match", json={"text": line}).json()["matches"]
    assert found["rule"] == "MGPU-REFUNION-BYTE-ALIGNED-SHAPES"
    assert found["sourceOnly"] is None
    assert found["fix"]["fixes"][0]["verified"]
    message = client.get(f"/api/errors/{found['errorId']}").json()["record"]["errorMessage"]
    others = [client.get(f"/api/errors/{i}").json()["record"] for i in found["alternatives"]]
    assert {record["documentationSource"] for record in others} == {"derived"}
    assert message in [record["errorMessage"] for record in others]


def test_an_exception_no_message_matches_is_answered_with_the_site_that_raised_it(
    client: httpx.Client, full_server: LiveServer
) -> None:
    """A bare AssertionError, in Markdown as the bots answer: the site its frame points at,
    its record and its source."""
    paste = real_tiling_assert()
    point = client.post("/api/match", json={"text": paste}).json()["raisePoints"][0]
    text = client.post("/api/match", json={"text": paste}, headers={"Accept": "text/markdown"}).text
    title = f"Raised by JAX in transform_type ({point['filePath']}:{point['line']})"
    assert text.startswith(f"### {escape(title)}\n")
    assert "JAX's frame points at this site: the frame" in text
    assert re.search(r"\*\*Exception on line \d+:\*\* `AssertionError`\n", text)
    assert f"[JAX source]({point['sourceUrl']})" in text
    assert f"[Record page]({full_server.base_url}/errors/{point['errorId']})" in text


def test_a_quoted_statement_is_answered_with_its_site(client: httpx.Client) -> None:
    """The chat and page answer to an issue quoting JAX's ``raise`` rather than its error."""
    record = quotable_site()
    paste = f"This line refuses my kernel:\n```python\n{installed_statement(record)}\n```\n"
    [point] = client.post("/api/match", json={"text": paste}).json()["raisePoints"]
    assert (point["errorId"], point["via"], point["lineNumber"]) == (record["id"], "quote", 3)
    text = client.post("/api/match", json={"text": paste}, headers={"Accept": "text/markdown"}).text
    title = f"JAX raises this in {point['function']} ({point['filePath']}:{point['line']})"
    assert text.startswith(f"### {escape(title)}\n")
    assert f"The paste quotes a statement of JAX's source: {point['why']}." in text
    assert point["why"].endswith(" has this raise")
    assert f"[JAX source]({point['sourceUrl']})" in text


@pytest.fixture(scope="module")
def matcher(tmp_path_factory: pytest.TempPathFactory) -> MatchService:
    """The match service over a catalog of everything ``make serve`` loads (SQLite)."""
    settings = load_settings(data_dir=tmp_path_factory.mktemp("mined-catalog"))
    engine = make_engine(settings.resolved_database_url)
    upgrade(settings, engine)
    factory: sessionmaker[Session] = make_session_factory(engine)
    prepare_database(settings, engine, factory)
    return MatchService(CatalogCache(factory, VersionWatch()).current())


def test_every_matchable_mined_message_rendered_with_values_is_matched(
    matcher: MatchService,
) -> None:
    """Each record's message, with sample values, pasted as its exception line, is matched
    to that record, or to one whose wording reads the same line as well (a message several
    sites share, or a curated record's older wording)."""
    wordings = wordings_by_id()
    missed = []
    tried = 0
    for record in mined_records():
        if not record["matchPattern"]:
            continue
        tried += 1
        line = render(record["errorMessage"])
        found = matcher.match(MatchRequest(text=f"{record['errorClass']}: {line}\n")).matches
        ids = [match.errorId for match in found]
        if record["id"] in ids:
            continue
        if not _worded_alike(ids, line.split("\n", 1)[0], wordings):
            missed.append((record["id"], line))
    assert tried > 2000
    assert missed == []


def test_a_message_several_lowerings_raise_goes_to_the_module_its_class_names(
    matcher: MatchService,
) -> None:
    """A message raised alike in several files (each Pallas lowering's "Exception while
    lowering eqn:") is told apart by the module of the class it is printed with:
    ``jax._src.pallas.triton.lowering.TritonLoweringException`` is Triton's."""
    by_message: dict[str, list[dict[str, Any]]] = {}
    for record in mined_records():
        if record["matchPattern"]:
            by_message.setdefault(record["errorMessage"].split("\n", 1)[0], []).append(record)
    tried = []
    for records in by_message.values():
        if len({record["filePath"] for record in records}) < 2:
            continue
        for record in records:
            if not record["filePath"].endswith(".py") or hasattr(builtins, record["errorClass"]):
                continue  # a builtin class is printed without a module
            module = record["filePath"].removesuffix(".py").replace("/", ".")
            paste = f"{module}.{record['errorClass']}: {render(record['errorMessage'])}\n"
            [found] = matcher.match(MatchRequest(text=paste)).matches
            tried.append((record["filePath"], matcher.catalog.records[found.errorId].file))
    assert len(tried) >= 5
    assert [leading for leading, _ in tried] == [file for _, file in tried]


def test_a_real_triton_lowering_report_gets_the_triton_record(matcher: MatchService) -> None:
    """In the form jax#19453 reports it: the class is Triton's own, whose name the mined
    sites of 0.4.31 on do not share (they raise LoweringError), and two other lowerings
    raise the same message."""
    paste = (
        "Traceback (most recent call last):\n"
        '  File "/home/user/attention.py", line 88, in <module>\n'
        "    out = mha(q, k, v)\n"
        "jax._src.pallas.triton.lowering.TritonLoweringException: Exception while lowering "
        "eqn:\n  a:f32[64,64] = dot_general[dimension_numbers=(([1], [0]), ([], []))] b c\n"
    )
    [found] = matcher.match(MatchRequest(text=paste)).matches
    assert matcher.catalog.records[found.errorId].file == "jax/_src/pallas/triton/lowering.py"
    others = {matcher.catalog.records[other].file for other in found.alternatives}
    assert "jax/_src/pallas/mosaic/lowering.py" in others


def test_a_lowering_class_printed_from_outside_jax_still_names_its_lowering(
    matcher: MatchService,
) -> None:
    """jax-triton#202 (2023): Pallas still lived in jax_triton, whose module printed its
    Triton lowering's class; no module of JAX's names it, but the class itself does."""
    paste = (
        "E         jax_triton.pallas.triton_lowering.TritonLoweringException: Exception while"
        " lowering eqn:\n"
        "E           a:i32[6] = scan[length=6 reverse=False unroll=1] b c\n"
    )
    [found] = matcher.match(MatchRequest(text=paste)).matches
    assert found.errorClass == "TritonLoweringException"
    assert matcher.catalog.records[found.errorId].file == "jax/_src/pallas/triton/lowering.py"


def test_a_raise_quoted_above_its_message_picks_the_sites_of_that_statement(
    matcher: MatchService,
) -> None:
    """A message several sites raise from different templates, pasted below the ``raise``
    statement that printed it (a report's code block): a site of that statement leads, the
    statement is no second error, and the answer links the site in JAX's source. Every such
    message of the catalog is tried."""
    by_pattern: dict[str, list[dict[str, Any]]] = {}
    for record in mined_records():
        if record["matchPattern"] and record["site"]["kind"] == "raise":
            by_pattern.setdefault(record["matchPattern"], []).append(record)
    tried = []
    for records in by_pattern.values():
        templates = {record["errorMessage"] for record in records}
        for record in records:
            template = record["errorMessage"]
            if len(templates) < 2 or any(c in template for c in '"\\\n'):
                continue  # one template, or none that reads back as one f-string line
            statement = f'raise {record["errorClass"]}(f"{template}")'
            paste = (
                f"It fails here:\n\n```python\n    {statement}\n```\n\n"
                f"{record['errorClass']}: {render(template)}\n"
            )
            [found] = matcher.match(MatchRequest(text=paste)).matches
            leading = next(r for r in mined_sites() if r["id"] == found.errorId)
            tried.append((template, leading["errorMessage"]))
            assert found.sourceUrl is not None and leading["filePath"] in found.sourceUrl
    assert len(tried) >= 50
    assert [leading for _, leading in tried] == [template for template, _ in tried]


def test_a_frame_of_a_function_that_raises_nothing_dates_the_paste_with_the_message(
    matcher: MatchService,
) -> None:
    """jax#18388 (2023): the only JAX frame is the ``pallas_call`` wrapper's call of
    ``bind``, on line 383 of ``wrapped``, a function which raised nothing until 0.4.31. It
    is placed where 0.4.16-0.4.20 define ``wrapped``, which agrees with the releases that
    printed the message; read as the releases where ``wrapped`` raises, it contradicted it."""
    paste = staged_at(
        383,
        "RuntimeError: Internal TPU kernel compiler error: unsupported operand shapes or layouts",
    )
    answer = matcher.match(MatchRequest(text=paste))
    [found] = answer.matches
    assert answer.release is not None and answer.release.contradiction is None
    assert [e.kind for e in answer.release.evidence] == ["function", "wording"]
    assert "0.4.20" in answer.release.releases
    shipped = {
        entry["release"]
        for record in mined_sites()  # its record is curated now (jax#18388's advice)
        if record["id"] in (found.errorId, *found.alternatives)
        for entry in record["releases"]
    }
    assert set(answer.release.releases) <= shipped


def test_a_report_of_an_old_release_is_named_by_where_its_site_stood_then(
    matcher: MatchService,
) -> None:
    """jax#20908 (2024): in 0.4.26-0.4.28 ``_pallas_call_lowering`` raised the TPU site's
    message itself; later releases moved it into ``tpu_lowering``, and a GPU site raises the
    same message. The frame names the site by its place in those releases."""
    paste = (
        "Traceback (most recent call last):\n"
        '  File "/home/user/test_kernel.py", line 9, in <module>\n'
        "    pl.pallas_call(kernel, out_shape=x)(x)\n"
        '  File "/home/user/venv/lib/python3.12/site-packages/jax/_src/pallas/pallas_call.py",'
        " line 544, in _pallas_call_lowering\n"
        "    raise _unsupported_lowering_error(platform)\n"
        "ValueError: Cannot lower pallas_call on platform: tpu. To use Pallas on GPU, install"
        " jaxlib GPU 0.4.24 or newer. To use Pallas on TPU, install jaxlib TPU and libtpu. See"
        " https://jax.readthedocs.io/en/latest/installation.html.\n"
    )
    function = "_pallas_call_lowering"
    [(site, there)] = [
        (record, on_the_line)
        for record in mined_sites()  # its record is curated now (jax#20908's advice)
        if record["filePath"] == "jax/_src/pallas/pallas_call.py"
        and record["site"]["function"] != function
        and (
            on_the_line := [
                e["release"]
                for e in record["releases"]
                if e["lineNumber"] == 544 and e.get("function") == function
            ]
        )
    ]
    answer = matcher.match(MatchRequest(text=paste))
    [found] = answer.matches
    assert found.errorId == site["id"]
    assert answer.release is not None and answer.release.releases == there
    assert found.source is not None
    assert (found.source.line, found.source.release) == (544, there[-1])


def test_an_older_wording_with_nothing_else_to_date_it_dates_the_paste_and_the_link(
    matcher: MatchService,
) -> None:
    """No frame and no version: the wording itself dates the paste (jax#20010, ``…Please
    file an issue on https://github.com/google/jax/issues.``): the release reads as the
    releases that printed it, and the site is shown as the last of them shipped it, not as
    the newest. Every curated record's dated older wording is tried."""
    tried = []
    for record in curated_records(load_settings().seed_paths[:-1]):
        for wording in record.get("olderWordings") or []:
            if not re.fullmatch(RELEASE_PATTERN, wording.get("until") or ""):
                continue  # undated, or dated in words ("jax 0.8.2 (0.8.1 is the last …)")
            message = render(wording["text"])
            others = [w for w in record["olderWordings"] if w is not wording]
            patterns = [record["matchPattern"], *(w["pattern"] for w in others if "pattern" in w)]
            if any(re.search(pattern, message) for pattern in patterns):
                continue  # another wording reads the same text: it dates it too
            paste = f"{record['errorClass']}: {message}\n"
            answer = matcher.match(MatchRequest(text=paste))
            found = next(iter(answer.matches), None)
            if found is None or found.errorId != record["id"] or found.variant == "current":
                continue  # all placeholder, or another wording or record reads it as well
            if found.source is None:
                continue  # no mined site (the safe_zip record)
            tried.append(wording["until"])
            release = answer.release
            assert release is not None and release.used is not None
            assert [e.kind for e in release.evidence] == ["wording"]
            assert release_key(release.used) <= release_key(wording["until"])
            assert release.used == release.releases[-1] == found.source.release
    assert len(tried) >= 10


def test_a_frame_and_an_older_wording_narrow_the_release_together(
    matcher: MatchService,
) -> None:
    """A JAX frame on a line a reworded site kept across its rewording reads every release
    with the site there; the message's older wording keeps those that printed it."""
    tried = 0
    for site in mined_records():
        history = site["messageHistory"]
        for wording in history[:-1]:
            first, last = release_key(wording["from"]), release_key(wording["until"])
            for line in {entry["lineNumber"] for entry in site["releases"]}:
                there = [
                    e["release"]
                    for e in site["releases"]
                    if e["lineNumber"] == line and "filePath" not in e and "function" not in e
                ]
                worded = [r for r in there if first <= release_key(r) <= last]
                if not worded or len(worded) == len(there):
                    continue  # the line does not outlast the wording
                message = render(wording["errorMessage"])
                if any(
                    re.search(other["messagePattern"], message)
                    for other in history
                    if other["errorMessage"] != wording["errorMessage"]
                ):
                    continue  # another wording reads the same text
                paste = (
                    "Traceback (most recent call last):\n"
                    f'  File "/venv/site-packages/{site["filePath"]}", line {line}, in '
                    f"{site['site']['function'].rsplit('.', 1)[-1]}\n"
                    f"{site['errorClass']}: {message}\n"
                )
                answer = matcher.match(MatchRequest(text=paste))
                found = next(iter(answer.matches), None)
                if found is None or found.errorId != site["id"] or found.alternatives:
                    continue  # another record reads the message as well
                release = answer.release
                assert release is not None
                assert [e.kind for e in release.evidence] == ["frame", "wording"], paste
                assert set(release.releases) == set(worded), paste
                told = release_told(release).facts[0][1]
                # The releases read lead; the newest of several only picks the links.
                assert told.startswith(
                    f"{release.span}, from 1 JAX frame and the message's wording"
                )
                tried += 1
                break
        if tried >= 5:
            break
    assert tried >= 5


# MLIR's words before an op's diagnostic: the op's name, or a placeholder for it.
_OP = re.compile(r"'(?:[\w.]+|\{[^{}]*\})' op ")


def test_an_ops_diagnostic_is_matched_as_mosaic_tpu_prints_it(matcher: MatchService) -> None:
    """Mosaic TPU's compiler prints an op's diagnostic without MLIR's ``'<op>' op `` words
    (the op comes after, under "The MLIR operation involved"), as real reports show: every
    mined one whose message without them is still matchable is matched so, a TPU one before
    any record of another backend that words it alike (Mosaic GPU's Python)."""
    wordings = wordings_by_id()
    backends = {record["id"]: backend_of(record["filePath"]) for record in mined_records()}
    missed, foreign_first = [], []
    tried = 0
    for record in mined_records():
        template = record["errorMessage"].split("\n", 1)[0]
        op = _OP.match(template)
        if op is None or not record["matchPattern"]:
            continue
        rest = split_template(template[op.end() :])
        if len("".join(p for p in rest if isinstance(p, str)).strip()) < MIN_MATCHABLE_LITERAL:
            continue
        tried += 1
        message = render(template[op.end() :])
        paste = (
            f"MosaicError: INTERNAL: Mosaic failed to compile TPU kernel: {message}\n\n"
            'The MLIR operation involved:\n  %7 = "tpu.iota"() : () -> vector<8xi32>\n'
        )
        ids = [match.errorId for match in matcher.match(MatchRequest(text=paste)).matches]
        theirs = ("tpu", "core")
        if backends[record["id"]] == "tpu" and ids and backends.get(ids[0], "core") not in theirs:
            foreign_first.append((record["id"], ids[0], message))
        if record["id"] in ids:
            continue
        if not _worded_alike(ids, message, wordings):
            missed.append((record["id"], message))
    assert tried > 1000
    assert missed == []
    assert foreign_first == []


def test_a_message_is_dated_by_the_records_that_read_as_much_of_it(
    matcher: MatchService,
) -> None:
    """jax#24415: every bare "Not implemented" of Mosaic's C++ fits "Not implemented:
    Non-trivial layouts unsupported" too, some of them in later releases; the one site that
    reads the whole message dates the paste."""
    paste = (
        "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: Mosaic failed to compile TPU kernel: "
        "Not implemented: Non-trivial layouts unsupported\n"
    )
    answer = matcher.match(MatchRequest(text=paste))
    [match] = answer.matches
    assert len(match.alternatives) > 1
    # its record is curated now (jax#24415's advice)
    [record] = [r for r in mined_sites() if r["id"] == match.errorId]
    assert "Non-trivial layouts unsupported" in record["errorMessage"]
    assert answer.release is not None
    assert answer.release.releases == [shipped["release"] for shipped in record["releases"]]


def _worded_alike(ids: list[str], line: str, wordings: dict[str, list[str]]) -> bool:
    """Whether a wording of one of the records ``ids`` reads ``line`` as well."""
    return any(
        re2.search(derive_pattern(wording.split("\n", 1)[0]), line)
        for other in ids
        for wording in wordings.get(other, [])
    )


def wordings_by_id() -> dict[str, list[str]]:
    """Every wording of every record (mined and curated), by record id."""
    wordings: dict[str, list[str]] = {}
    documents = [*mined_records(), *curated_records(load_settings().seed_paths[:-1])]
    for document in documents:
        older = document.get("olderWordings", [])
        texts = [document["errorMessage"], *(w["text"] for w in older)]
        wordings.setdefault(document["id"], []).extend(texts)
    for path in ANNOTATIONS.glob("*.json"):
        note = json.loads(path.read_text())["annotation"]
        wordings.setdefault(note["recordId"], []).extend(
            w["text"] for w in note.get("olderWordings", [])
        )
    return wordings


def test_the_mined_file_is_what_the_seeding_loads() -> None:
    assert Path(MINED_SITES).parent in load_settings().seed_paths


def test_a_mined_records_page_says_where_jax_checks_it(client: httpx.Client) -> None:
    """A record known only from source says so, and links the curated records nearest it,
    one from its own file first."""
    curated = {r["id"]: r for r in curated_records(load_settings().seed_paths[:-1])}
    record = source_only_record()
    assert record["filePath"] in {r["filePath"] for r in curated.values()}
    page = client.get(f"/errors/{record['id']}", headers={"Accept": "text/html"})
    assert page.status_code == 200
    html = page.text
    assert "Where JAX checks it" in html
    assert f"<code>{record['site']['function']}</code>" in html
    first, last = record["releases"][0]["release"], record["releases"][-1]["release"]
    count = len(record["releases"])
    assert f"JAX {first}–{last} ({count} release{'s' if count > 1 else ''})" in html
    assert "nobody has added advice for this error yet" in html
    assert record["releases"][-1]["githubUrl"] in html
    nearest = html[html.index('aria-label="Nearest curated records"') :].split("</ul>")[0]
    linked = re.findall(r'href="/errors/([^"]+)"', nearest)
    assert linked and set(linked) <= set(curated), linked
    assert "same file" in nearest.split("</li>")[0]


def test_a_seeds_page_shows_its_mined_facts_and_its_curated_advice(client: httpx.Client) -> None:
    html = client.get("/errors/225d0e9c2ee22311", headers={"Accept": "text/html"}).text
    assert "Where JAX checks it" in html
    assert "<code>bits % 8</code>" in html
    assert "nobody has added advice" not in html
