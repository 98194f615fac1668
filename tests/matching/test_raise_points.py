"""An exception no message identifies, named by the JAX frame that raised it: a bare
``AssertionError`` by its frame's source line, a message built at run time or printed by an
unmined release by the frame's file and function; and a message several sites raise, by the
frame on one of their lines."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import traceback
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

from app.jaxref.releases import newest_release, release_key
from app.knowledge.python_source import spelled_as_class
from app.matching.frames import Frame, FrameIndex, Site
from app.matching.matcher import match_paste
from app.matching.normalize import normalize
from app.matching.raise_points import MIN_QUOTED, RaisePoint, quoted_sites, raise_points
from app.matching.tracebacks import read_exceptions

from .catalog import (
    PYTEST_LONG,
    TRACEBACKS,
    catalog_index,
    everything,
    mined_records,
    mined_sites,
)

INSTALLED = jax.__version__  # the release the real tracebacks here come from


def real_tiling_assert() -> str:
    """What JAX 0.10.2 prints for a block that its tiling does not divide."""
    try:
        plgpu.TilingTransform((8, 64)).transform_type(jax.core.ShapedArray((12, 64), jnp.float32))
    except AssertionError:
        return traceback.format_exc()
    raise AssertionError("JAX accepted a (12, 64) block tiled by (8, 64)")


def tiling_site() -> dict[str, Any]:
    """The site of transform_type's tiling assert, which a curated record took."""
    [site] = [
        r
        for r in mined_sites()
        if r["site"]["function"] == "TilingTransform.transform_type"
        and r["site"]["kind"] == "assert"
        and "tiled_dims" in r["site"]["condition"]
    ]
    return site


def test_a_bare_assertion_error_is_named_by_its_frames_source_line() -> None:
    paste = real_tiling_assert()
    assert paste.rstrip().endswith("\nAssertionError")  # nothing for a message to match
    report = match_paste(paste, catalog_index(), None, FrameIndex.load())
    assert report.matches == ()
    first = report.raise_points[0]
    assert first.record_id == tiling_site()["id"]
    assert first.function == "transform_type"
    assert "0.10.2" in first.releases
    assert "source line is this assert's condition" in first.reason
    assert paste.splitlines()[first.paste_line - 1].lstrip().startswith("File ")


def test_an_unmined_release_is_still_named_by_the_assert_it_prints() -> None:
    """A line no mined release has the site on (a newer JAX): the condition still tells."""
    paste = real_tiling_assert()
    line = next(e["lineNumber"] for e in tiling_site()["releases"] if e["release"] == INSTALLED)
    moved = paste.replace(f"line {line}, in transform_type", "line 9999, in transform_type")
    assert moved != paste
    report = match_paste(moved, catalog_index(), None, FrameIndex.load())
    [point] = report.raise_points
    assert point.record_id == tiling_site()["id"]
    assert point.releases == ()
    newest = tiling_site()["releases"][-1]
    site = FrameIndex.load().source_site(point.record_id, None)
    assert site is not None and (site.release, site.line) == (
        newest["release"],
        newest["lineNumber"],
    )


def real_bare_raise() -> str:
    """What JAX 0.10.2 prints lowering a reversed scan in a TPU kernel: ``if reverse: raise
    NotImplementedError``, the class alone for a message."""

    def kernel(x_ref: Any, o_ref: Any) -> None:
        carry, _ = jax.lax.scan(lambda c, _: (c + 1.0, None), x_ref[...], None, 4, reverse=True)
        o_ref[...] = carry

    block = jax.ShapeDtypeStruct((8, 128), jnp.float32)
    call = pl.pallas_call(kernel, out_shape=block)
    try:
        jax.jit(call).trace(block).lower(lowering_platforms=("tpu",))
    except Exception:
        return traceback.format_exc()
    raise AssertionError("JAX lowered a reversed scan in a TPU kernel")


def scan_sites() -> list[dict[str, Any]]:
    """The TPU scan lowering's raises without a message, one per guard."""
    return [
        r
        for r in mined_sites()
        if r["filePath"] == "jax/_src/pallas/mosaic/lowering.py"
        and r["site"]["function"] == "_scan_lowering_rule"
        and r["site"]["kind"] == "raise"
        and r["errorClass"] == "NotImplementedError"
    ]


def test_a_raise_without_a_message_is_named_by_its_frame_and_guard() -> None:
    paste = real_bare_raise()
    assert "if reverse: raise NotImplementedError\n" in paste
    report = match_paste(paste, catalog_index(), None, FrameIndex.load())
    bare = next(f for f in report.exceptions if f.message == "")
    assert bare.short_class == "NotImplementedError"
    first = report.raise_points[0]
    [reversed_scan] = [r for r in scan_sites() if r["site"]["condition"] == "reverse"]
    assert first.record_id == reversed_scan["id"]
    assert "0.10.2" in first.releases
    assert "under `if reverse:`" in first.reason


def test_a_frame_of_an_older_release_is_named_by_its_function_and_guard() -> None:
    """jax#21190: ``_scan_lowering_rule`` at line 1516, where 0.5.0 has another function's
    raise; the frame's function and the guard it prints name the ``num_extensive`` site, on
    that line in the releases the report can come from."""
    paste = real_bare_raise()
    line = re.search(r"line (\d+), in _scan_lowering_rule", paste)
    assert line is not None
    others = [
        r
        for r in mined_records()
        if r["filePath"] == "jax/_src/pallas/mosaic/lowering.py"
        and any(release["lineNumber"] == 1516 for release in r["releases"])
        and r["site"]["function"] != "_scan_lowering_rule"
    ]
    assert others  # the line alone would name another function's site
    old = paste.replace(
        f"line {line[1]}, in _scan_lowering_rule", "line 1516, in _scan_lowering_rule"
    )
    old = old.replace("if reverse: raise", "if num_extensive: raise")
    report = match_paste(old, catalog_index(), None, FrameIndex.load())
    [extensive] = [r for r in scan_sites() if r["site"]["condition"] == "num_extensive"]
    on_the_line = tuple(r["release"] for r in extensive["releases"] if r["lineNumber"] == 1516)
    assert on_the_line
    assert [p.record_id for p in report.raise_points] == [extensive["id"]]
    assert report.raise_points[0].releases == on_the_line


def test_a_site_raising_another_class_than_the_frame_shows_is_not_on_its_line() -> None:
    """The frame's line holds a ``ValueError`` site in some release, but the source line
    it prints raises ``NotImplementedError``: that release is not the paste's."""
    by_function: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for record in mined_records():
        if record["site"]["kind"] == "raise":
            by_function[(record["filePath"], record["site"]["function"])].append(record)
    bare, other = next(
        (b, o)
        for group in by_function.values()
        for b in group
        for o in group
        if b["errorClass"] == "NotImplementedError"
        and not b["matchPattern"]
        and b["errorMessage"].startswith("(a ")
        and o["errorClass"] == "ValueError"
        and "." not in o["site"]["function"]
    )
    function = other["site"]["function"]
    paste = (
        "Traceback (most recent call last):\n"
        + frame(other["filePath"], other["releases"][-1]["lineNumber"], function)
        + "    raise NotImplementedError\n"
        "NotImplementedError\n"
    )
    points = match_paste(paste, everything(), None, FrameIndex.load()).raise_points
    assert bare["id"] in {p.record_id for p in points}
    assert other["id"] not in {p.record_id for p in points}
    classes = {r["id"]: r["errorClass"] for r in mined_records()}
    assert {classes[p.record_id] for p in points} == {"NotImplementedError"}


def test_a_raise_through_a_helper_is_not_taken_for_another_class() -> None:
    """``raise _unsupported_lowering_error("gpu")`` raises the ``ValueError`` its helper
    builds: the name on the line is no class to hold against the site's."""

    def statement(record: dict[str, Any]) -> str:
        lines = record["sourceCode"].split("\n")
        return lines[record["lineNumber"] - record["sourceCodeStart"]].strip()

    site = next(
        r
        for r in mined_records()
        if r["site"]["kind"] == "raise"
        and r["errorClass"][:1].isupper()
        and re.match(r"raise _[a-z]\w*\(", statement(r))
        and r["releases"][-1]["release"] == newest_release()
    )
    function = site["site"]["function"].rsplit(".", 1)[-1]
    paste = (
        "Traceback (most recent call last):\n"
        + frame(site["filePath"], site["lineNumber"], function)
        + f"    {statement(site)}\n"
        + f"{site['errorClass']}: whatever it said\n"
    )
    points = match_paste(paste, everything(), None, FrameIndex.load()).raise_points
    assert points[0].record_id == site["id"]
    assert newest_release() in points[0].releases


def frame(file: str, line: int, function: str) -> str:
    return f'  File "/usr/lib/python3.11/site-packages/{file}", line {line}, in {function}\n'


def test_a_message_built_at_run_time_is_named_by_the_raising_frame() -> None:
    """A raise whose message has too little literal text to match (``raise ValueError(msg)``)."""
    site = next(
        r
        for r in mined_records()
        if not r["matchPattern"]
        and r["site"]["kind"] == "raise"
        and r["errorClass"] == "ValueError"
        and r["releases"][-1]["release"] == newest_release()
    )
    function = site["site"]["function"].rsplit(".", 1)[-1]
    line = site["releases"][-1]["lineNumber"]
    paste = (
        "Traceback (most recent call last):\n"
        '  File "/home/me/kernel.py", line 3, in <module>\n'
        + frame(site["filePath"], line, function)
        + "    raise ValueError(msg)\n"
        "ValueError: block 3 of kernel 'mine' does not fit\n"
    )
    report = match_paste(paste, everything(), None, FrameIndex.load())
    assert [p.record_id for p in report.raise_points][:1] == [site["id"]]
    assert newest_release() in report.raise_points[0].releases


def test_the_frames_jax_says_staged_the_operation_name_no_site() -> None:
    """jax#21557: only the staging trace was pasted; its last JAX frame (``bind``) raises
    nothing. The lowering traceback after it, had it been pasted, would name the site."""
    real = (TRACEBACKS / "MGPU-COPY-INTEGER-BYTES.txt").read_text().splitlines()
    announced = next(
        n for n, line in enumerate(real) if "JaxStackTraceBeforeTransformation" in line
    )
    unknown = "ValueError: block 3 of kernel 'mine' does not fit"
    staged = [*real[:announced], real[announced].split("ValueError: ")[0] + unknown]
    assert FrameIndex.load().frames(staged, range(len(staged)))  # JAX frames, with sites
    report = match_paste("\n".join(staged), everything(), None, FrameIndex.load())
    assert report.matches == () and report.raise_points == ()
    raised = [*real[:-1], unknown]  # the lowering traceback, raised at its last frame
    report = match_paste("\n".join(raised), everything(), None, FrameIndex.load())
    assert report.raise_points


def shared_message() -> list[dict[str, Any]]:
    """Sites in different functions raising the same message with the same class."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for record in mined_records():
        if record["matchPattern"] and record["releases"][-1]["release"] == "0.10.2":
            groups[(record["matchPattern"], record["errorClass"])].append(record)
    for group in groups.values():
        if len({r["site"]["function"].rsplit(".", 1)[-1] for r in group}) == len(group) > 1:
            return group
    raise AssertionError("no message is raised by sites in two functions")


def test_a_message_several_sites_raise_is_given_the_site_of_its_frame() -> None:
    group = shared_message()
    # The shared template with a value in its placeholder ("... type: {type(dim)}").
    line = f"{group[0]['errorClass']}: {group[0]['errorMessage'].split('{', 1)[0]}thing"
    for site in group:
        function = site["site"]["function"].rsplit(".", 1)[-1]
        paste = (
            "Traceback (most recent call last):\n"
            + frame(site["filePath"], site["releases"][-1]["lineNumber"], function)
            + "    raise it\n"
            + f"{line}\n"
        )
        chosen = match_paste(paste, everything(), None, FrameIndex.load()).matches[0]
        assert chosen.record_id == site["id"]
        assert {r["id"] for r in group} - {site["id"]} <= set(chosen.alternatives)
    without_frames = match_paste(line, everything()).matches[0]
    assert {without_frames.record_id, *without_frames.alternatives} >= {r["id"] for r in group}


def test_a_message_several_sites_raise_is_given_the_site_of_the_release_given() -> None:
    """Without frames, the site the user's jaxVersion has: Mosaic TPU's ``Can't change
    bitwidth during a relayout`` was raised by the Python pass up to 0.4.23, then by the C++
    pass at one line up to 0.7.1 and at another from 0.7.2. Each of the messages that sites
    of different releases raise in the same words is given, in a release only one of them
    has, that one's site; and the other sites stay its alternatives."""
    by_message: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in mined_records():
        if record["matchPattern"] and "{" not in record["errorMessage"]:
            by_message[record["errorMessage"]].append(record)
    cases = []
    for message, group in by_message.items():
        for record in group:
            others = {r["release"] for o in group if o is not record for r in o["releases"]}
            alone = [r["release"] for r in record["releases"] if r["release"] not in others]
            if len(group) > 1 and alone:
                line = f"{record['errorClass']}: {message}"
                cases.append((line, alone[len(alone) // 2], record, group))
    assert len(cases) >= 100
    assert any("Can't change bitwidth" in line for line, *_ in cases)
    for line, release, record, group in cases:
        chosen = match_paste(line, everything(), release, FrameIndex.load()).matches[0]
        assert chosen.record_id == record["id"], (line, release)
        assert {other["id"] for other in group} - {record["id"]} <= set(chosen.alternatives)


TILING_TEST = """\
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu


def test_tiling():
    plgpu.TilingTransform((8, 64)).transform_type(jax.core.ShapedArray((12, 64), jnp.float32))
"""


def test_a_bare_assertion_error_in_a_pytest_report_is_named_by_the_line_pytest_marked(
    tmp_path: Path,
) -> None:
    """pytest prints the frame that raised after its source and E lines, naming its file
    and line but not its function, which its printed source names."""
    (tmp_path / "test_tiling.py").write_text(TILING_TEST)
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "test_tiling.py"]
    environment = {**os.environ, "JAX_PLATFORMS": "cpu"}
    done = subprocess.run(command, cwd=tmp_path, env=environment, capture_output=True, text=True)
    paste = done.stdout
    assert done.returncode == 1 and "AssertionError" in paste
    report = match_paste(paste, catalog_index(), None, FrameIndex.load())
    assert report.matches == ()
    first = report.raise_points[0]
    assert (first.record_id, first.function) == (tiling_site()["id"], "transform_type")
    assert "source line is this assert's condition" in first.reason
    assert paste.splitlines()[first.paste_line - 1].endswith(f".py:{first.line}: AssertionError")


def raise_points_of(report: str) -> list[RaisePoint]:
    """The raise points of a pytest report's one exception, the frame read where the
    reader found pytest printed it."""
    paste = normalize(report)
    reading = read_exceptions(paste.lines)
    [record] = reading.exceptions
    assert record.raised_at is not None
    assert paste.lines[record.raised_at].endswith("primitives.py:820: ValueError")
    first = record.message_line_numbers[0]
    return raise_points(
        FrameIndex.load(),
        paste.lines,
        reading.structure,
        first,
        record.short_class,
        record.raised_at,
    )


def test_the_frame_pytest_prints_after_its_e_lines_is_the_function_its_source_begins() -> None:
    """Not a function defined inside it, whose ``def`` comes nearer the failing line."""
    report = PYTEST_LONG.replace(
        "      if bits % 8:", "      def nested():\n        pass\n      if bits % 8:"
    )
    point = raise_points_of(report)[0]
    assert (point.record_id, point.function, point.line) == (
        "225d0e9c2ee22311",
        "_copy_gmem_to_smem_lowering",
        820,
    )


def test_the_frame_pytest_prints_after_its_e_lines_without_its_source_is_known_by_its_line() -> (
    None
):
    """pytest prints ``???`` where it cannot read a frame's source: the line still names the
    site."""
    start = PYTEST_LONG.index("    def _copy_gmem_to_smem_lowering")
    end = PYTEST_LONG.index("E       ValueError")
    [point] = raise_points_of(PYTEST_LONG[:start] + ">   ???\n" + PYTEST_LONG[end:])
    assert (point.record_id, point.line, point.function) == ("225d0e9c2ee22311", 820, "")


def installed_statement(record: dict[str, Any]) -> str:
    """The record's ``raise`` as the installed JAX's source has it, over all its lines."""
    [entry] = [e for e in record["releases"] if e["release"] == jax.__version__]
    source = (Path(jax.__file__).parent.parent / record["filePath"]).read_text(encoding="utf-8")
    [statement] = [
        node
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Raise) and node.lineno == entry["lineNumber"]
    ]
    return ast.get_source_segment(source, statement, padded=True) or ""


def quotable_site() -> dict[str, Any]:
    """A raise of the installed release spelled over several lines, with a long message of
    its own (no other site raises it)."""
    by_message: dict[tuple[str, str], int] = defaultdict(int)
    for record in mined_records():
        by_message[(record["errorClass"], record["errorMessage"])] += 1
    return next(
        record
        for record in mined_records()
        if record["site"]["kind"] == "raise"
        and record["filePath"].endswith(".py")
        and by_message[(record["errorClass"], record["errorMessage"])] == 1
        and len(record["errorMessage"]) > 40
        and "{" not in record["errorMessage"]
        and any(e["release"] == jax.__version__ for e in record["releases"])
        and installed_statement(record).count("\n") >= 1
    )


def test_a_raise_quoted_in_a_code_block_names_its_site() -> None:
    """An issue quoting the statement that refuses the user's kernel, not its error."""
    record = quotable_site()
    statement = installed_statement(record)
    paste = f"Why does my kernel hit this?\n\n```python\n{statement}\n```\n"
    report = match_paste(paste, everything(), None, FrameIndex.load())
    assert report.matches == ()
    [point] = report.raise_points
    assert (point.record_id, point.via) == (record["id"], "quote")
    assert point.file == record["filePath"]
    assert jax.__version__ in point.releases
    assert point.paste_line == 4  # the line the raise starts on
    assert point.reason.startswith("JAX ") and point.reason.endswith(" has this raise")
    # With its error printed after it, the message is the answer, and the quote says no more.
    printed = f"{paste}\n{record['errorClass']}: {record['errorMessage']}\n"
    report = match_paste(printed, everything(), None, FrameIndex.load())
    assert [m.record_id for m in report.matches] == [record["id"]]
    assert report.raise_points == ()


def test_an_assert_quoted_as_an_older_release_wrote_it_names_its_site_there() -> None:
    """marin#3043 quoted ``assert env.grid_context is not None`` over a bare AssertionError,
    as JAX 0.8 wrote the assert that later releases write ``assert grid_context is not
    None``: the quote names the site, with the releases that assert what it quotes."""
    conditions: dict[str, set[str]] = defaultdict(set)
    for record in mined_records():
        if record["site"]["kind"] == "assert":
            conditions[record["site"]["condition"]].add(record["id"])
            for entry in record["releases"]:
                conditions[entry.get("condition", record["site"]["condition"])].add(record["id"])
    record, older = next(
        (record, entry["condition"])
        for record in mined_records()
        for entry in record["releases"]
        if record["site"]["kind"] == "assert"
        and len(entry.get("condition") or "") >= MIN_QUOTED
        and conditions[entry["condition"]] == {record["id"]}
    )
    asserting = {e["release"] for e in record["releases"] if e.get("condition") == older}
    paste = f"```\nassert {older}\nAssertionError\n```\n"
    points = match_paste(paste, everything(), None, FrameIndex.load()).raise_points
    assert [(p.record_id, p.via) for p in points] == [(record["id"], "quote")]
    assert set(points[0].releases) == asserting
    newest = [e for e in record["releases"] if e["release"] == max(asserting, key=release_key)]
    assert points[0].line == newest[0]["lineNumber"]


def test_a_short_raise_in_a_code_block_may_be_anybodys() -> None:
    short = next(
        r
        for r in mined_records()
        if r["site"]["kind"] == "raise"
        and r["filePath"].endswith(".py")
        and 0 < len(r["errorMessage"]) < MIN_QUOTED
        and "{" not in r["errorMessage"]
    )
    paste = f"```python\nraise {short['errorClass']}({short['errorMessage']!r})\n```\n"
    assert quoted_sites(FrameIndex.load(), paste.splitlines())  # JAX's statement, to the letter
    assert match_paste(paste, everything(), None, FrameIndex.load()).raise_points == ()


def test_a_quoted_raise_no_release_has_still_names_its_record_by_its_words() -> None:
    """jax#40081 quoted a newer JAX's statement, its message since given values: no mined
    site has that statement, and the words it shares with the older message name it."""
    record = quotable_site()
    reworded = (
        f"raise {record['errorClass']}(\n"
        f"    {record['errorMessage'] + ', '!r}\n"
        '    f"{layout} vs {shape}"\n'
        ")"
    )
    paste = f"In the newest JAX:\n\n```python\n{reworded}\n```\n"
    assert quoted_sites(FrameIndex.load(), paste.splitlines()) == frozenset()
    report = match_paste(paste, everything(), None, FrameIndex.load())
    assert [(m.record_id, m.found_in) for m in report.matches] == [(record["id"], "line")]
    assert report.raise_points == ()


def cut_before_message(text: str) -> tuple[list[str], list[RaisePoint]]:
    """A real paste's last traceback, cut before its exception line; and the sites the
    whole paste's frame points its exception at."""
    lines = normalize(text).lines
    reading = read_exceptions(lines)
    last = reading.exceptions[-1]
    pointed = raise_points(
        FrameIndex.load(),
        lines,
        reading.structure,
        last.first_line,
        last.short_class,
        last.raised_at,
    )
    header = max(n for n in range(last.line) if lines[n].startswith("Traceback"))
    return list(lines[header : last.line]), pointed


def test_a_traceback_cut_before_its_message_is_named_by_its_last_frame() -> None:
    """Every real traceback here (each raised on a JAX site's line), its exception line cut
    (and the staging trace before it, which repeats the message): the site its last frame
    is on is named, as the whole paste's frame named it."""
    real = [path for path in sorted(TRACEBACKS.glob("*.txt")) if "pytest" not in path.name]
    assert len(real) >= 30
    for path in real:
        cut, pointed = cut_before_message(path.read_text())
        sites = [point.record_id for point in pointed if point.record_id is not None]
        assert sites, path.name  # the whole paste's frame is on a site
        report = match_paste("\n".join(cut), everything(), None, FrameIndex.load())
        assert report.matches == (), path.name
        first = report.raise_points[0]
        assert (first.record_id, first.via) == (sites[0], "cut"), path.name
        assert first.reason.startswith("the traceback ends at this frame"), path.name
        assert INSTALLED in first.releases


def test_a_traceback_cut_above_its_last_frame_names_no_site() -> None:
    """Cut one frame higher, the last frame shown is a call: JAX raised deeper, so neither
    that frame's function's sites nor anything else is named."""
    for path in sorted(TRACEBACKS.glob("*.txt")):
        if "pytest" in path.name:
            continue
        cut, _ = cut_before_message(path.read_text())
        last_frame = max(n for n, line in enumerate(cut) if line.lstrip().startswith("File "))
        report = match_paste("\n".join(cut[:last_frame]), everything(), None, FrameIndex.load())
        assert report.raise_points == (), path.name


PYTHON_PASS = "jaxlib/mosaic/python/apply_vector_layout.py"


def test_a_message_of_mosaics_python_pass_is_that_passs_where_its_frames_show_it() -> None:
    """Up to 0.4.20 Pallas ran Mosaic TPU's passes in Python by default: a 2023 paste's
    ``unsupported layout change`` is raised there, not by the C++ pass that printed the same
    words in 0.4.16-0.4.19 and was linked to it before the Python pass was mined."""
    [site] = [
        r
        for r in mined_records()
        if r["filePath"] == PYTHON_PASS and r["errorMessage"].startswith("unsupported layout")
    ]
    line = next(e["lineNumber"] for e in site["releases"] if e["release"] == "0.4.20")
    path = f"/usr/local/lib/python3.10/site-packages/{PYTHON_PASS}"
    paste = (
        "Traceback (most recent call last):\n"
        '  File "/home/me/kernel.py", line 40, in <module>\n'
        "    out = matmul(x, y)\n"
        '  File "/usr/local/lib/python3.10/site-packages/jax/_src/tpu_custom_call.py", '
        "line 347, in _lower_tpu_kernel\n"
        "    apply_vector_layout.apply(module, hardware_generation)\n"
        f'  File "{path}", line 1628, in apply\n'
        "    apply_layout_func(ctx, f)\n"
        f'  File "{path}", line 1535, in apply_layout_func\n'
        "    apply_layout_block(ctx, entry_block)\n"
        f'  File "{path}", line 1541, in apply_layout_block\n'
        "    apply_layout_op(ctx, op)\n"
        f'  File "{path}", line 1590, in apply_layout_op\n'
        "    new_v = relayout(\n"
        f'  File "{path}", line {line}, in relayout\n'
        "    raise NotImplementedError(\n"
        "NotImplementedError: unsupported layout change for vector<8x128xf32>: "
        "VectorLayout(bitwidth=32, offsets=(0, 0), tiling=(8, 128), implicit_dim=None) -> "
        "VectorLayout(bitwidth=32, offsets=(None, 0), tiling=(8, 128), implicit_dim=None)\n"
    )
    report = match_paste(paste, everything(), None, FrameIndex.load())
    [found] = report.matches
    assert found.record_id == site["id"]
    assert report.release is not None and report.release.releases == ("0.4.20",)


def sites_in_turn(index: FrameIndex, kind: str, told_by: Callable[[Site], str]) -> list[Any]:
    """Lines of a function that two sites of ``kind`` held in turn, in releases apart, told
    apart by ``told_by`` (an assert's condition, a raise's class): each as (file, line,
    function, the site shown, its releases there, the other), both ways round."""
    places = {
        (record["filePath"], entry["lineNumber"], entry.get("function", record["site"]["function"]))
        for record in mined_records()
        if record["site"]["kind"] == kind and record["site"]["function"]
        for entry in record["releases"]
    }
    found = []
    for file, line, function in sorted(places):
        short = function.rsplit(".", 1)[-1]
        here = index.sites_at(Frame(file, line, short, 0))
        if len(here) == 2 and {site.kind for site, _ in here} == {kind}:
            (first, first_mask), (second, second_mask) = here
            if (
                not first_mask & second_mask
                and first.record_id != second.record_id
                and told_by(first) != told_by(second)
            ):
                found.append((file, line, short, first, first_mask, second))
                found.append((file, line, short, second, second_mask, first))
    return found


def test_a_line_two_asserts_held_in_turn_is_the_one_its_frames_source_line_shows() -> None:
    """An assert moved down a line in some release and the one above it took its line (in
    ragged paged attention's ``broadcast_to_shape``, 0.6.2-0.7.0 against 0.7.1 on): the
    frame's source line tells which the paste's release had there. The other is no raise
    point, and the paste is dated by the releases of the one shown."""
    index = FrameIndex.load()
    cases = sites_in_turn(index, "assert", lambda site: site.condition)
    assert len(cases) >= 1000  # lines that held one assert, then another, are common
    for file, line, function, shown, mask, other in cases:
        paste = (
            "Traceback (most recent call last):\n"
            + frame(file, line, function)
            + f"    assert {shown.condition}\n"
            "AssertionError\n"
        )
        report = match_paste(paste, everything(), None, index)
        points = [point.record_id for point in report.raise_points]
        assert points[0] == shown.record_id, (paste, points)
        assert other.record_id not in points, paste
        assert report.release is not None
        assert report.release.releases == index.names(mask), paste


def test_a_line_two_raises_held_in_turn_dates_the_paste_by_the_class_its_source_raises() -> None:
    """The same for a line that raised one class in some releases and another in others:
    ``raise NotImplementedError`` on the frame's source line is of the releases whose site
    there raises that class."""
    index = FrameIndex.load()
    cases = [
        case
        for case in sites_in_turn(index, "raise", lambda site: site.error_class)
        if spelled_as_class(case[3].error_class) and "." not in case[3].error_class
    ]
    assert len(cases) >= 1000  # and as common
    for file, line, function, shown, mask, other in cases:
        paste = (
            "Traceback (most recent call last):\n"
            + frame(file, line, function)
            + f"    raise {shown.error_class}\n"
            f"{shown.error_class}\n"
        )
        report = match_paste(paste, everything(), None, index)
        assert report.release is not None
        assert report.release.releases == index.names(mask), paste
        assert other.record_id not in [point.record_id for point in report.raise_points], paste
