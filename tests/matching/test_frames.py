"""The JAX release a paste comes from: read from its JAX frames against the mined sites'
lines in every release, and from the versions it spells out; the user's jaxVersion wins."""

from __future__ import annotations

import ast
import json
from functools import cache
from pathlib import Path
from typing import Any

import jax
import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.jaxref.files import FRAME_INDEX_FILE
from app.jaxref.releases import newest_release, release_key
from app.knowledge.calls import MINED_CALLS
from app.knowledge.frame_index import build_frame_index
from app.knowledge.mining import MINED_SITES
from app.knowledge.public_names import MINED_API
from app.matching.frames import (
    LIBTPU_COMPILER,
    MAX_REMEMBERED,
    FrameIndex,
    nearest,
)
from app.matching.matcher import match_paste
from app.matching.raise_points import SourceLine, quoted_sites
from app.matching.release import MAX_CAPITALS_FOUND, _most_agreed

from .catalog import TRACEBACKS, catalog_index, everything, fixture_text

# Captured from JAX 0.10.2 lowering on the CPU (tests/oracle).
REAL = sorted(TRACEBACKS.glob("*.txt"))
MESSAGE = "ValueError: Can only transfer integer bytes (shape=[7], dtype=i4)"


@cache
def mined_items() -> tuple[dict[str, Any], ...]:
    return tuple(map(json.loads, MINED_SITES.read_text(encoding="utf-8").splitlines()))


@cache
def mined_api_records() -> tuple[dict[str, Any], ...]:
    """The records of Pallas's public API: its names and its functions' calls."""
    lines = [
        line for path in (MINED_API, MINED_CALLS) for line in path.read_text("utf-8").splitlines()
    ]
    return tuple(map(json.loads, lines))


def test_the_committed_index_is_the_one_the_mined_sites_give() -> None:
    committed = json.loads(FRAME_INDEX_FILE.read_text(encoding="utf-8"))
    assert committed == build_frame_index([*mined_items(), *mined_api_records()])


@pytest.mark.parametrize("path", REAL, ids=lambda path: path.name)
def test_a_real_traceback_reads_as_the_release_that_printed_it(path: Path) -> None:
    reading = match_paste(fixture_text(path), catalog_index(), None, FrameIndex.load()).release
    assert reading is not None
    assert reading.used == "0.10.2"
    assert "0.10.2" in reading.releases
    assert reading.frames >= 2
    assert reading.contradiction is None


def copy_site() -> dict[str, Any]:
    """The mined facts of ``_copy_gmem_to_smem_lowering``'s integer-bytes check."""
    [facts] = [
        item["annotation"]["mined"]
        for item in mined_items()
        if "annotation" in item and item["annotation"]["recordId"] == "225d0e9c2ee22311"
    ]
    return facts  # type: ignore[no-any-return]


def traceback_at(file: str, line: int, function: str) -> str:
    return (
        "Traceback (most recent call last):\n"
        '  File "/home/me/kernel.py", line 12, in <module>\n'
        "    out = kernel(x)\n"
        f'  File "/opt/venv/lib/python3.11/site-packages/{file}", line {line}, in {function}\n'
        "    raise ValueError(\n"
        f"{MESSAGE}\n"
    )


def sites_in(file: str, function: str) -> list[dict[str, Any]]:
    """The mined facts of every site of ``function`` in ``file``."""
    found = []
    for item in mined_items():
        facts = item["annotation"]["mined"] if "annotation" in item else item["record"]
        if facts["filePath"] == file and facts["site"]["function"] == function:
            found.append(facts)
    return found


def test_the_raising_frames_line_names_the_releases_with_a_site_there() -> None:
    """Those with a site of the class the frame's source line raises (``raise ValueError(``):
    a line that raised another class in some release (0.6.0's ``NotImplementedError`` where
    0.8.2 raises this ``ValueError``) is not the paste's there."""
    facts = copy_site()
    file, function = facts["filePath"], facts["site"]["function"]
    lines = {entry["lineNumber"] for entry in facts["releases"]}
    assert len(lines) > 3  # the site moved between releases
    for line in lines:
        releases = {
            entry["release"]
            for other in sites_in(file, function)
            for entry in other["releases"]
            if entry["lineNumber"] == line and other["errorClass"] == "ValueError"
        }
        paste = traceback_at(file, line, function)
        report = match_paste(paste, catalog_index(), None, FrameIndex.load())
        assert report.release is not None
        assert set(report.release.releases) == releases
        assert report.release.used == max(releases, key=release_key)
        assert report.release.evidence[0].kind == "frame"
        assert report.release.evidence[0].line == 4  # the frame's line in the paste


def function_raising_nothing() -> tuple[str, ast.FunctionDef]:
    """A function of the installed ``pallas_call.py`` with no site, several lines long."""
    installed = Path(jax.__file__).parent / "_src" / "pallas" / "pallas_call.py"
    file = "jax/_src/pallas/pallas_call.py"
    tree = ast.parse(installed.read_text(encoding="utf-8"))
    function = next(
        node
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
        and not sites_in(file, node.name)
        and node.end_lineno
        and node.end_lineno - node.lineno > 5
    )
    return file, function


def test_a_frame_on_no_sites_line_names_the_releases_whose_function_spans_it() -> None:
    """A call in a function that raises nothing itself (the traceback's frames above the
    one that raised) is placed by where each release defines that function: the installed
    release's own source says where, and a line past the function's end is in none."""
    file, function = function_raising_nothing()
    index = FrameIndex.load()
    inside = traceback_at(file, function.lineno + 2, function.name)
    reading = match_paste(inside, catalog_index(), None, index).release
    assert reading is not None
    assert reading.evidence[0].kind == "function"
    assert newest_release() in reading.releases
    past_the_end = traceback_at(file, 100_000, function.name)
    reading = match_paste(past_the_end, catalog_index(), None, index).release
    assert reading is not None and reading.frames == 0


@pytest.mark.parametrize("linked", [False, True])
def test_an_ipython_7_frame_is_read_at_the_line_its_arrow_marks(linked: bool) -> None:
    """jax#22817, from Colab: IPython 7 prints a library frame as ``path in function(args)``
    and marks its line in the source it lists (``--> 682``); a copy of Colab's rendered
    output keeps the path as a Markdown link. MLIR's verifier refused the kernel's ``swap``
    on a line of JAX's that raises nothing itself."""
    file, function = function_raising_nothing()
    line = function.lineno + 2
    path = f"/usr/local/lib/python3.10/dist-packages/{file}"
    shown = f"[{path}](https://colab.research.google.com/drive/1x#)" if linked else path
    paste = (
        "---------------------------------------------------------------------------\n"
        "MLIRError                                 Traceback (most recent call last)\n"
        f"{shown} in {function.name}(ctx, jaxpr, mosaic_grid_mapping, name)\n"
        f"    {line - 1}   try:\n"
        f"--> {line}     body.func_op.verify()\n"
        f"    {line + 1}   except Exception as e:\n"
        "\n"
        "MLIRError: Verification failed:\n"
        'error: "/swap[tree=PyTreeDef((CustomNode(NDIndexer[(PyTreeDef((*,)), (8,), ())], '
        '[*]),))]"(callsite("iota_kernel"("<ipython-input-18-1144262d6dee>":3:2) at\n'
    )
    report = match_paste(paste, catalog_index(), None, FrameIndex.load())
    assert report.release is not None and report.release.frames == 1
    assert newest_release() in report.release.releases
    [point] = report.raise_points
    assert (point.file, point.function, point.line) == (file, function.name, line)
    assert "MLIR's verifier" in point.reason and "swap equation" in point.reason


def test_jaxlibs_compiled_function_refusing_jaxs_arguments_says_the_builds_differ() -> None:
    """jax#17311: jaxlib's ``to_proto`` refused what Pallas passed it, and pybind11 listed
    the signatures it takes: a jax and a jaxlib of different builds, not the user's value.
    The same words about a function of another module say no more than the class."""
    file, function = function_raising_nothing()

    def refused(signature: str) -> str:
        return (
            "Traceback (most recent call last):\n"
            f'  File "/venv/lib/python3.10/site-packages/{file}", line {function.lineno + 2}, '
            f"in {function.name}\n"
            "    backend_config=zlib.compress(kernel_call.to_proto(serialized_metadata)),\n"
            "TypeError: to_proto(): incompatible function arguments. The following argument "
            f"types are supported:\n    1. (self: {signature}, arg0: str, arg1: str) -> bytes\n"
            "\nInvoked with: <jaxlib.cuda._triton.TritonKernelCall object at 0x7f>, b''\n"
        )

    index = FrameIndex.load()
    report = match_paste(
        refused("jaxlib.cuda._triton.TritonKernelCall"), catalog_index(), None, index
    )
    [point] = report.raise_points
    assert (point.record_id, point.function) == (None, function.name)
    assert "to_proto" in point.reason and "different builds" in point.reason
    report = match_paste(refused("mylib.KernelCall"), catalog_index(), None, index)
    [point] = report.raise_points
    assert "different builds" not in point.reason
    assert point.reason.startswith("Python raised TypeError inside JAX's")


@pytest.mark.parametrize(
    ("line", "release"),
    [
        ("Name: jax Version: 0.7.2 (pip show jax)  -- jax==0.7.2", "0.7.2"),
        ("jaxlib 0.10.0.dev20260101 installed from nightly", "0.10.0"),
        ('  File "/opt/conda/lib/python3.11/site-packages/jax-0.8.1.dist-info/x.py"', "0.8.1"),
        ("jax:    0.9.0.1", "0.9.0.1"),
        (">>> jax.__version__\n'0.8.1'", "0.8.1"),
        (">>> print(jax.__version__)\n0.9.2", "0.9.2"),
        ('pip install -U "jax[cuda12]==0.4.31"', "0.4.31"),
        (
            "jax[tpu]==0.5.0 -f https://storage.googleapis.com/jax-releases/libtpu_releases.html",
            "0.5.0",
        ),
        ("jax (0.4.35)", "0.4.35"),
        ("I'm on JAX 0.4.30 with an H100.", "0.4.30"),
        ("**JAX version:** 0.4.26", "0.4.26"),
        ("Jax 0.4.33, jaxlib the same", "0.4.33"),
        ("JAXLIB_VERSION=0.6.0", "0.6.0"),
    ],
)
def test_an_explicit_version_is_read(line: str, release: str) -> None:
    report = match_paste(f"{line}\n{MESSAGE}\n", catalog_index(), None, FrameIndex.load())
    assert report.release is not None
    assert report.release.releases == (release,)
    evidence = report.release.evidence[0]
    assert evidence.kind == "version"
    assert evidence.text.split()[0] in ("jax", "jaxlib")  # whatever case it was written in
    assert evidence.text.split()[1].startswith(release)


def test_a_version_named_after_many_capitals_is_read() -> None:
    """Past ``MAX_CAPITALS_FOUND`` capital Js, the rest of the paste is searched at once."""
    chatter = " ".join(["JAX"] * (MAX_CAPITALS_FOUND + 10) + ["Jax", "Jupyter"] * 40)
    paste = f"{chatter}\nUpgraded to JAX 0.4.35 today; Jax 0.4.35 it says\n{MESSAGE}\n"
    reading = match_paste(paste, catalog_index(), None, FrameIndex.load()).release
    assert reading is not None and reading.releases == ("0.4.35",)
    assert [e.line for e in reading.evidence] == [2, 2]


@pytest.mark.parametrize(
    "line",
    [
        "jax>=0.4.30",  # a range, not the release installed
        'pip install "jax[cuda12]>=0.4.31"',
        "jax-triton 0.2.0",
        "myjax==1.0.0 and pjax-0.4.30",
        "JAXB 2.3.1 and JAX-WS 2.3.1 come from Java",
        "The JAX operation 0.4.30 times",  # a word between the name and the number
    ],
)
def test_a_version_of_something_else_or_a_range_is_not_read(line: str) -> None:
    report = match_paste(f"{line}\n{MESSAGE}\n", catalog_index(), None, FrameIndex.load())
    assert report.release is None or report.release.releases == ()


def test_the_users_version_wins_and_a_contradiction_is_reported() -> None:
    paste = fixture_text(TRACEBACKS / "MGPU-COPY-INTEGER-BYTES.txt")
    report = match_paste(paste, catalog_index(), "0.8.1", FrameIndex.load())
    assert report.release is not None
    assert report.release.used == "0.8.1"
    assert report.release.contradiction == "jaxVersion 0.8.1 but the paste reads 0.10.2"
    agreeing = match_paste(paste, catalog_index(), "0.10.2", FrameIndex.load()).release
    assert agreeing is not None and agreeing.contradiction is None


def test_a_version_named_against_the_frames_is_reported() -> None:
    paste = "pip: jax==0.5.0\n" + fixture_text(TRACEBACKS / "MGPU-COPY-INTEGER-BYTES.txt")
    reading = match_paste(paste, catalog_index(), None, FrameIndex.load()).release
    assert reading is not None
    assert reading.used == "0.5.0"
    assert reading.contradiction == "the paste names 0.5.0 but its frames read 0.10.2"


@pytest.mark.parametrize(
    ("line", "used", "placing"),
    [
        ("jax: 0.12.1.dev20261120", "0.12.0.1", "newer than 0.12.0.1, the newest release mined"),
        (
            "jaxlib 0.12.0.2.dev20261120",
            "0.12.0.1",
            "newer than 0.12.0.1, the newest release mined",
        ),
        ("jax==0.10.0.1", "0.10.0", "not a release mined"),
        ("jaxlib 0.10.3.dev20261101", "0.10.2", "not a release mined"),
        ("pip: jax==0.4.13", "0.4.15", "older than 0.4.15, the oldest release mined"),
        ("jax==0.9.5", "0.9.2", "not a release mined"),
    ],
)
def test_a_version_no_release_mined_is_said_and_the_nearest_followed(
    line: str, used: str, placing: str
) -> None:
    reading = match_paste(f"{line}\n{MESSAGE}\n", catalog_index(), None, FrameIndex.load()).release
    assert reading is not None
    assert reading.releases == ()
    assert reading.used == used
    version = line.split()[-1].split("==")[-1]
    assert reading.outside == f"the paste names jax {version}, {placing}; the answer follows {used}"
    assert reading.evidence[0].kind == "version" and reading.evidence[0].releases == ()


@pytest.mark.parametrize("line", ["jax==" + "9" * 5000 + ".0.0", "jax==1234567.0.0"])
def test_a_version_no_release_could_number_is_not_read(line: str) -> None:
    """Past Python's 4,300 digits, ``int`` refuses to read a number at all."""
    reading = match_paste(f"{line}\n{MESSAGE}\n", catalog_index(), None, FrameIndex.load()).release
    assert reading is not None
    assert (reading.releases, reading.used, reading.outside) == ((), None, None)


def test_a_newer_nightly_beside_the_frames_keeps_the_frames_release() -> None:
    paste = "jax 0.12.1.dev20261120\n" + fixture_text(TRACEBACKS / "MGPU-COPY-INTEGER-BYTES.txt")
    reading = match_paste(paste, catalog_index(), None, FrameIndex.load()).release
    assert reading is not None
    assert reading.used == "0.10.2" and "0.10.2" in reading.releases
    assert reading.frames >= 2
    assert reading.outside is not None
    assert f"newer than {newest_release()}" in reading.outside


TILING_FAIL = 'raise ValueError(f"Tiling {self.tiles} does not apply to shape {orig_shape}")'


@pytest.mark.parametrize(
    "lines",
    [
        [f"    {TILING_FAIL}"],  # a traceback's source line, a code block
        [f">       {TILING_FAIL}"],  # pytest's failing line
        [f"-      {TILING_FAIL}"],  # a diff
        [  # a statement over several lines, in a diff
            "-      raise ValueError(",
            '-          f"Tiling {self.tiles} does not apply to shape {orig_shape}"',
            "-      )",
        ],
    ],
)
def test_a_raise_shown_as_source_names_the_sites_of_that_statement(lines: list[str]) -> None:
    """Two sites raise the same message from the same template (``Tiling.tile_shape``, renamed
    ``TilingImpl``), two others from ``{shape}``: the statement names the first two only."""
    index = FrameIndex.load()
    quoted = quoted_sites(index, ["Some text", *lines, "ValueError: Tiling ((8,),) ..."])
    sites = [site for site in index.sites if site.record_id in quoted]
    assert {site.function for site in sites} == {
        "Tiling.tile_shape.<locals>.fail",
        "TilingImpl.tile_shape.<locals>.fail",
    }


def test_an_assert_shown_as_source_names_the_asserts_of_its_condition() -> None:
    index = FrameIndex.load()
    line = ">       assert all(d % t == 0 for d, t in zip(tiled_dims, self.tiling))"
    [site] = [site for site in index.sites if site.record_id in quoted_sites(index, [line])]
    assert (site.kind, site.function) == ("assert", "TilingTransform.transform_type")


@pytest.mark.parametrize(
    "line",
    ["raise the block size to 128 and it works", "    raise ValueError(", "assertion failed"],
)
def test_text_that_is_no_whole_statement_names_no_site(line: str) -> None:
    assert quoted_sites(FrameIndex.load(), [line]) == frozenset()


DEEP = ["-" * 600 + "1", "+".join(["a"] * 600), "not " * 600 + "x", "[" * 600 + "]" * 600]


@pytest.mark.parametrize("expression", DEEP, ids=["minus", "plus", "not", "brackets"])
def test_a_statement_deeper_than_pythons_parser_goes_names_no_site(expression: str) -> None:
    """``ast`` raises RecursionError or MemoryError on these: a paste is anybody's text."""
    index = FrameIndex.load()
    assert quoted_sites(index, [f"assert {expression}"]) == frozenset()
    assert quoted_sites(index, [f"raise ValueError({expression})"]) == frozenset()
    shown = SourceLine.read(f"assert {expression}")
    assert not any(shown.shows(site) for site in index.sites if site.kind == "assert")


def test_nothing_in_the_paste_tells_no_release() -> None:
    reading = match_paste(MESSAGE, catalog_index(), None, FrameIndex.load()).release
    assert reading is not None and reading.releases == () and reading.used is None


def test_the_source_link_is_that_releases() -> None:
    facts = copy_site()
    oldest = facts["releases"][0]
    site = FrameIndex.load().source_site("225d0e9c2ee22311", oldest["release"])
    assert site is not None and site.url == oldest["githubUrl"]
    assert (site.file, site.line, site.release) == (
        facts["filePath"],
        oldest["lineNumber"],
        oldest["release"],
    )


def test_every_sites_source_is_linked_as_each_release_shipped_it() -> None:
    """C++ diagnostics too, though no traceback frame stands on their lines."""
    index = FrameIndex.load()
    languages = set()
    for item in mined_items():
        facts = item["annotation"]["mined"] if "annotation" in item else item["record"]
        record_id = item["annotation"]["recordId"] if "annotation" in item else facts["id"]
        languages.add(facts["site"].get("language", "python"))
        for entry in facts["releases"]:
            site = index.source_site(record_id, entry["release"])
            assert site is not None, (record_id, entry["release"])
            # The release's entry may link the lines around the site; the link is the file's.
            assert (site.line, site.release, site.url.partition("#")[0]) == (
                entry["lineNumber"],
                entry["release"],
                entry["githubUrl"].partition("#")[0],
            )
    assert languages == {"python", "cpp"}


def test_a_release_without_the_site_links_the_nearest_release_with_it() -> None:
    index = FrameIndex.load()
    facts = copy_site()
    shipped = [entry["release"] for entry in facts["releases"]]
    before = [r for r in index.releases if release_key(r) < release_key(shipped[0])]
    assert before  # the copy check is younger than the oldest release mined
    for release in before:
        site = index.source_site("225d0e9c2ee22311", release)
        assert site is not None and site.release == shipped[0]
    newest = index.source_site("225d0e9c2ee22311", None)
    assert newest is not None and newest.release == shipped[-1]
    assert index.source_site("no such record", "0.10.2") is None


@given(st.integers(1, (1 << 29) - 1), st.integers(0, 28) | st.none())
def test_the_nearest_release_is_the_newest_older_else_the_oldest_newer(
    releases: int, wanted: int | None
) -> None:
    bits = [bit for bit in range(29) if releases >> bit & 1]
    if wanted is None:
        expected = bits[-1]
    elif wanted in bits:
        expected = wanted
    else:
        older = [bit for bit in bits if bit < wanted]
        expected = older[-1] if older else bits[0]
    assert nearest(releases, 0 if wanted is None else 1 << wanted) == 1 << expected


def test_a_frame_of_a_jax_checkout_is_read_as_jaxs_own() -> None:
    """``~/jax/jax/_src/...``: the checkout's folder is also named ``jax``."""
    facts = copy_site()
    file, function = facts["filePath"], facts["site"]["function"]
    line = facts["releases"][0]["lineNumber"]
    installed = traceback_at(file, line, function)
    checkout = installed.replace("/opt/venv/lib/python3.11/site-packages/", "/home/me/jax/")
    assert checkout != installed
    index = FrameIndex.load()
    read = [
        match_paste(paste, catalog_index(), None, index).release for paste in (installed, checkout)
    ]
    assert read[0] is not None and read[0].frames == 1
    assert read[1] == read[0]


@given(st.lists(st.integers(1, (1 << 29) - 1), max_size=60))
def test_the_releases_most_frames_agree_with_are_counted_exactly(masks: list[int]) -> None:
    counts = {bit: sum(mask >> bit & 1 for mask in masks) for bit in range(29)}
    top = max(counts.values(), default=0)
    expected = sum(1 << bit for bit, count in counts.items() if count == top) if masks else 7
    assert _most_agreed(masks, 7) == (expected, top)


def test_the_release_sets_remembered_stay_bounded() -> None:
    """A paste may name any set of versions; a long-running process must not keep them all."""
    index = FrameIndex(json.loads(FRAME_INDEX_FILE.read_text(encoding="utf-8")))
    for mask in range(1, MAX_REMEMBERED + 100):
        assert index.names(mask) == tuple(
            release for bit, release in enumerate(index.releases) if mask >> bit & 1
        )
    assert len(index._names) <= MAX_REMEMBERED


def test_a_cpp_diagnostic_may_be_printed_by_the_releases_whose_cpp_was_not_read() -> None:
    """Releases mined from their wheels have no C++ read: a diagnostic that stands in the
    newest release whose C++ was read dates a paste of a later release without contradicting
    it; one gone before that release does not."""
    index = FrameIndex.load()
    unread = json.loads(FRAME_INDEX_FILE.read_text(encoding="utf-8"))["cppUnread"]
    assert unread and tuple(unread) == index.releases[-len(unread) :]
    last_read = index.releases[-len(unread) - 1]
    compiled = {
        item["record"]["id"] if "record" in item else item["annotation"]["recordId"]: facts
        for item in mined_items()
        if (facts := item.get("record") or item["annotation"]["mined"])["site"]["language"] == "cpp"
    }
    last = {record_id: f["releases"][-1]["release"] for record_id, f in compiled.items()}
    assert all(release_key(r) <= release_key(last_read) for r in last.values())
    standing = [record_id for record_id, r in last.items() if r == last_read]
    # (Mosaic TPU's compiler aside, whose passes libtpu prints after they left: see
    # test_wording_dates.)
    gone = [
        record_id
        for record_id, r in last.items()
        if r != last_read and not compiled[record_id]["filePath"].startswith(LIBTPU_COMPILER)
    ]
    assert standing and gone
    unread_mask = sum(index.mask(r) for r in unread)
    for record_id in standing:
        assert index.releases_of(record_id)[-1] == last_read  # its source: as last read
        assert index.wording_releases(record_id, None) & unread_mask == unread_mask
    for record_id in gone:
        assert not index.wording_releases(record_id, None) & unread_mask

    # A paste of the newest release printing one, its words whole (no value to read), which
    # no other record's words fit: the diagnostic alone dates it.
    messages = [f["errorMessage"] for f in compiled.values()]
    pastes = {
        record_id: f"jax=={newest_release()}\nerror: {f['errorMessage']}\n"
        for record_id in standing
        if (f := compiled[record_id])["matchPattern"]
        and "{" not in f["errorMessage"]
        and messages.count(f["errorMessage"]) == 1
    }
    reports = {
        record_id: match_paste(paste, everything(), None, index)
        for record_id, paste in list(pastes.items())[:40]
    }
    alone = [
        report
        for record_id, report in reports.items()
        if [m.record_id for m in report.matches] == [record_id]
    ]
    assert len(alone) > 5
    for report in alone:
        assert report.release is not None and report.release.releases == (newest_release(),)
        assert report.release.contradiction is None
