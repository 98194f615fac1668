"""The ``errata`` command as a user runs it: real processes, a fresh SQLite file each."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from app.config import REPO_ROOT, SEED_PATHS
from app.db import make_engine, make_session_factory
from app.jaxref.releases import release_commits
from app.records.store import RecordStore
from tests.conftest import CURATED_SEEDS_ENV, SEED_DIR
from tests.matching.catalog import PASTES

TRACEBACKS = Path(__file__).parent / "fixtures" / "tracebacks"


def cli_env(tmp_path: Path) -> dict[str, str]:
    """A user's environment with a fresh SQLite file and a cache folder of the test's own."""
    env = {
        **os.environ,
        **CURATED_SEEDS_ENV,
        "ERRATA_DATABASE_URL": f"sqlite:///{tmp_path / 'cli.sqlite3'}",
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
    }
    env.pop("FORCE_COLOR", None)
    return env


@pytest.fixture
def errata(tmp_path: Path):  # type: ignore[no-untyped-def]
    env = cli_env(tmp_path)

    def run(
        *args: str | bytes, stdin: bytes = b"", **extra_env: str
    ) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [sys.executable, "-m", "app", *args],
            env={**env, **extra_env},
            input=stdin,
            capture_output=True,
            timeout=120,
        )
        output, errors = done.stdout.decode(), done.stderr.decode()
        return subprocess.CompletedProcess(done.args, done.returncode, output, errors)

    return run


def test_import_twice_then_show(errata) -> None:  # type: ignore[no-untyped-def]
    first = errata("import", str(SEED_DIR))
    assert first.returncode == 0, first.stderr
    assert "added 4, updated 0, unchanged 0, failed 0" in first.stdout
    second = errata("import", str(SEED_DIR))
    assert "added 0, updated 0, unchanged 4, failed 0" in second.stdout
    shown = errata("show", "--json", "225d0e9c2ee22311")
    assert json.loads(shown.stdout) == json.loads(
        (SEED_DIR / "000_3bebb9c19a64106a.txt").read_text()
    )


def test_a_bad_file_fails_alone_with_a_nonzero_exit(errata, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    bad = tmp_path / "bad.json"
    bad.write_text('[{"id": "fine-one", "errorMessage": "m"}, {"id": "x", "lineNumber": 3}]')
    good = tmp_path / "good.json"
    good.write_text('{"id": "good-one", "errorMessage": "m"}')
    result = errata("import", str(bad), str(good))
    assert result.returncode == 1
    assert "record 2" in result.stderr and "errorMessage" in result.stderr
    assert "added 1, updated 0, unchanged 0, failed 1" in result.stdout
    good_one = errata("show", "--json", "good-one")
    assert good_one.returncode == 0
    record = json.loads(good_one.stdout)["record"]
    assert (record["id"], record["errorMessage"]) == ("good-one", "m")
    missing = errata("show", "fine-one")
    assert missing.returncode == 2 and "fine-one" in missing.stderr


def test_db_upgrade_with_seed(errata, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert errata("admin", "db", "upgrade", "--seed").returncode == 0
    shown = errata("show", "--json", "19b6a360721eb407")
    assert shown.returncode == 0
    engine = make_engine(f"sqlite:///{tmp_path / 'cli.sqlite3'}")
    try:
        with make_session_factory(engine)() as session:
            row = RecordStore(session).get("19b6a360721eb407")
            stored = {"record": row.document, "datasetVersion": row.dataset_version}
    finally:
        engine.dispose()
    assert json.loads(shown.stdout) == stored
    assert stored["record"]["id"] == "19b6a360721eb407" and stored["record"]["errorMessage"]


def test_match_reads_a_file_or_stdin(errata, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    traceback = Path(__file__).parent / "fixtures" / "tracebacks" / "MGPU-COPY-INTEGER-BYTES.txt"
    readable = errata("match", str(traceback))
    assert readable.returncode == 0, readable.stderr
    title, _, do_this = readable.stdout.splitlines()[:3]
    # The headline: JAX's message for the paste's values, and why they fail.
    assert title == (
        "ValueError: Can only transfer integer bytes (shape=[7], dtype=i4)"
        " (7 × 4 bits = 28 bits; 28 mod 8 = 4)"
    )
    assert do_this == "Do this: Pad the block from 7 to 256 elements"
    assert readable.stdout.count("Can only transfer integer bytes") == 1  # the message once
    facts = next(line for line in readable.stdout.splitlines() if line.startswith("line: "))
    assert "shape: [7] · dtype: int4 · " in facts  # the values the paste gives
    assert "\nRecord page → errata show 225d0e9c2ee22311\n" in readable.stdout
    best = readable.stdout.split("\nDo this: ")[1].split("\nOr: ")[0]
    assert (  # the line of the paste's code that writes the block
        "    -lower('copy_gmem_to_smem', (7,), 'int4', None)\n"
        "    +lower('copy_gmem_to_smem', (256,), 'int4', None)\n"
    ) in best
    as_json = json.loads(errata("match", "--json", str(traceback)).stdout)
    assert as_json["matches"][0]["values"]["shape"] == [7]
    line = as_json["matches"][0]["lineNumber"]
    assert f"line: {line} of the paste · " in readable.stdout
    nothing = tmp_path / "nothing.txt"
    nothing.write_text("RuntimeError: the coffee machine is empty\n")
    missed = errata("match", str(nothing))
    assert missed.returncode == 1
    assert missed.stdout.startswith("errata knows no error in this paste\n")


def test_match_names_the_release_the_source_and_a_bare_asserts_site(  # type: ignore[no-untyped-def]
    errata, tmp_path: Path
) -> None:
    from tests.matching.test_raise_points import real_tiling_assert, tiling_site

    commit = release_commits()["0.10.2"]
    found = errata("match", str(TRACEBACKS / "MGPU-COPY-INTEGER-BYTES.txt")).stdout
    assert re.search(r"(^| · )JAX release: 0\.10\.2, from \d+ JAX frames$", found, re.M)
    source = re.escape(f"https://github.com/jax-ml/jax/blob/{commit}/jax/_src/pallas/")
    assert re.search(rf"^JAX source: jax/_src/pallas/\S+:\d+ \(0\.10\.2\) → {source}", found, re.M)
    paste = tmp_path / "assert.txt"
    paste.write_text(real_tiling_assert())
    bare = errata("match", str(paste))
    assert bare.returncode == 0  # no message matched, but the frame names the site
    [site] = [each for each in tiling_site()["releases"] if each["release"] == "0.10.2"]
    title = bare.stdout.splitlines()[0]
    assert title == (
        f"Raised by JAX in transform_type (jax/_src/pallas/mosaic_gpu/core.py:{site['lineNumber']})"
    )
    assert "\nJAX's frame points at this site: " in bare.stdout
    assert f"\nJAX source → {site['githubUrl']}\n" in bare.stdout
    assert site["githubUrl"].startswith(f"https://github.com/jax-ml/jax/blob/{commit}/")


# The end of what JAX 0.10.2 prints for a batched jnp.matmul in a Triton kernel.
BATCHED_DOT_ON_TRITON = """\
Traceback (most recent call last):
  File "/home/me/venv/lib/python3.12/site-packages/jax/_src/pallas/triton/lowering.py", \
line 437, in lower_jaxpr_to_triton_ir
    outvals: Any = rule(rule_ctx, *invals, **eqn.params)
                   ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/home/me/venv/lib/python3.12/site-packages/jax/_src/pallas/triton/lowering.py", \
line 2348, in _dot_general_lowering
    assert batch_dims == ((), ())
AssertionError
"""


def test_a_bare_asserts_site_is_told_with_its_curated_advice(  # type: ignore[no-untyped-def]
    errata, tmp_path: Path
) -> None:
    record = json.loads((REPO_ROOT / "data/records/triton-dot-batch-dimensions.json").read_text())
    paste = tmp_path / "batched.txt"
    paste.write_text(BATCHED_DOT_ON_TRITON)
    found = errata("match", str(paste))
    assert found.returncode == 0  # no message matched, but the frame names the site
    title = found.stdout.splitlines()[0]
    assert title.endswith(" (jax/_src/pallas/triton/lowering.py:2348)")
    assert f"\nRecord page → errata show {record['record']['id']}\n" in found.stdout
    first, second = record["record"]["solutions"][:2]
    assert f"\nDo this: {first}\n\nOr: {second[:1].upper()}{second[1:]}\n" in found.stdout


def test_match_names_the_site_of_an_exception_no_message_matched_beside_the_matches(  # type: ignore[no-untyped-def]
    errata,
) -> None:
    """JAX's LoweringException is matched; the bare NotImplementedError it wraps is named by
    its frame."""
    paste = PASTES / "scan-extensive-under-lowering-exception-0.4.23.txt"
    seeds = ",".join(map(str, SEED_PATHS))  # JAX's wrapper is a mined site, curated by nobody
    found = errata("match", str(paste), ERRATA_SEED_PATHS=seeds)
    assert found.returncode == 0, found.stdout
    # The site has curated advice and the wrapper none: the answer with a step leads.
    pointed, matched = re.split(r"\n\n[─-]+\n\n", found.stdout)
    assert matched.startswith("LoweringException: Exception while lowering eqn:\n")
    assert pointed.startswith(
        "Raised by JAX in _scan_lowering_rule (jax/_src/pallas/mosaic/lowering.py:1516)\n"
    )
    assert "\nJAX's frame points at this site: " in pointed


def test_match_names_the_site_a_traceback_cut_before_its_message_ends_at(  # type: ignore[no-untyped-def]
    errata, tmp_path: Path
) -> None:
    """The lowering traceback alone, its exception line cut: the site, JAX's message there
    and the record's advice, as an answer (exit 0)."""
    real = TRACEBACKS / "MGPU-COPY-INTEGER-BYTES.txt"
    lines = real.read_text().splitlines()
    header = max(n for n, line in enumerate(lines) if line.startswith("Traceback"))
    whole = json.loads(errata("match", "--json", str(real)).stdout)
    matched = whole["matches"][0]
    paste = tmp_path / "cut.txt"
    paste.write_text("\n".join(lines[header:-1]) + "\n")
    found = errata("match", str(paste))
    assert found.returncode == 0, found.stdout
    title = found.stdout.splitlines()[0]
    place = f"{matched['source']['filePath']}:{matched['source']['line']}"
    assert title.startswith("Cut before its message, in JAX's ") and title.endswith(f" ({place})")
    assert f"JAX release: {matched['source']['release']}, from " in found.stdout
    assert "\nJAX's message there: Can only transfer integer bytes (shape=" in found.stdout
    assert f"\nRecord page → errata show {matched['errorId']}\n" in found.stdout
    assert "\nDo this: " in found.stdout and "closest known errors" not in found.stdout


def test_match_says_what_to_do_where_the_engine_computes_no_fix(  # type: ignore[no-untyped-def]
    errata, tmp_path: Path
) -> None:
    """A store of the wrong dtype: no construct of the engine's, the record's own advice."""
    record = json.loads((REPO_ROOT / "data/records/pallas-ref-store-dtype.json").read_text())
    paste = tmp_path / "store.txt"
    paste.write_text(
        '  File "kernel.py", line 7, in body\n    o_ref[...] = acc\n'
        "ValueError: Invalid dtype for `swap`. Ref dtype: bfloat16. Value dtype: float32. \n"
    )
    found = errata("match", str(paste)).stdout
    assert found.startswith("ValueError: Invalid dtype for `swap`. Ref dtype: bfloat16.")
    assert f"\nRecord page → errata show {record['record']['id']}\n" in found
    first, second = record["record"]["solutions"][:2]
    assert f"\nDo this: {first}\n\nOr: {second}\n" in found


def test_match_shows_an_unimplemented_primitives_releases_and_rewrite(  # type: ignore[no-untyped-def]
    errata, tmp_path: Path
) -> None:
    """The primitive's own rewrite, as the pages and chat show it, not the record's advice."""
    rewrites = json.loads((REPO_ROOT / "data/primitive-rewrites.json").read_text())["rewrites"]
    [cumsum] = [r for r in rewrites if (r["primitive"], r["backend"]) == ("cumsum", "mosaic_gpu")]
    paste = tmp_path / "cumsum.txt"
    paste.write_text(
        "NotImplementedError: Unimplemented primitive in Pallas Mosaic GPU lowering: cumsum for "
        "lowering semantics LoweringSemantics.Lane and user thread semantics "
        "PrimitiveSemantics.Warpgroup. Please file an issue at "
        "https://github.com/jax-ml/jax/issues/new/choose.\n"
    )
    found = errata("match", str(paste)).stdout
    assert "lowering rule for cumsum" in found or "lowers cumsum" in found
    assert f"\nDo this: Rewrite: {cumsum['summary']}\n" in found
    assert cumsum["after"].strip().splitlines()[0] in found
    assert "Do this: Rewrite" in found  # the rewrite, not the record's advice


def test_match_names_a_compilers_own_message_instead_of_the_closest_records(  # type: ignore[no-untyped-def]
    errata, tmp_path: Path
) -> None:
    """jax#30104, as the pages and bots answer it: libtpu said it, no record is near."""
    paste = tmp_path / "libtpu.txt"
    paste.write_text(
        "XlaRuntimeError: INTERNAL: Mosaic failed to compile TPU kernel: Target does not "
        "support this comparison\n"
    )
    said = errata("match", str(paste))
    assert said.returncode == 0  # what libtpu said is the answer
    assert said.stdout.startswith("libtpu (Mosaic's TPU compiler) rejected the kernel\n")
    assert "\nSaid by libtpu (Mosaic's TPU compiler), not by JAX's source: " in said.stdout
    assert "\nLine 1: Target does not support this comparison\n" in said.stdout
    assert "Closest known errors" not in said.stdout and "errata show" not in said.stdout


def test_match_refuses_a_jax_version_it_cannot_read_and_follows_an_older_one(  # type: ignore[no-untyped-def]
    errata,
) -> None:
    """0.4.38 is a release the paste may come from, which the engine does not model: the
    answer follows it and says why it computes no fix."""
    traceback = Path(__file__).parent / "fixtures" / "tracebacks" / "MGPU-COPY-INTEGER-BYTES.txt"
    refused = errata("match", "--jax-version", "banana", str(traceback))
    assert refused.returncode == 2
    assert refused.stdout == ""
    (line,) = refused.stderr.splitlines()
    assert line.startswith("errata: --jax-version: ") and "cannot read" in line
    older = errata("match", "--jax-version", "0.4.38", str(traceback))
    assert older.returncode == 0, older.stderr
    assert "Release: jaxVersion 0.4.38 but the paste reads 0.10.2." in older.stdout
    assert "computed fix: none: JAX 0.4.38 is not modelled; errata models JAX 0.7.0" in older.stdout


def test_a_file_that_cannot_be_read_is_a_usage_error_in_one_line(errata) -> None:  # type: ignore[no-untyped-def]
    missing = errata("match", "no-such-file.txt")
    assert missing.returncode == 2
    assert (
        missing.stderr.strip() == "errata: cannot read no-such-file.txt: No such file or directory"
    )
    assert missing.stdout == ""


def test_show_explains_a_record_by_slug_or_id_and_prints_it_with_json(errata) -> None:  # type: ignore[no-untyped-def]
    assert errata("admin", "db", "upgrade", "--seed").returncode == 0
    by_slug = errata("show", "can-only-transfer-integer-bytes-shape-dst-ty-sha")
    by_id = errata("show", "225d0e9c2ee22311")
    assert by_slug.returncode == by_id.returncode == 0, by_slug.stderr
    assert by_slug.stdout == by_id.stdout
    prose = by_id.stdout
    assert prose.startswith("ValueError: Can only transfer integer bytes (shape=…, dtype=…)\n")
    assert "the transfer size in bits" in prose  # what it means
    assert "x = jnp.pad(x, (0, 256 - 7))" in prose  # errata's corrected example
    assert "{" not in prose.split("\n")[0] and not prose.lstrip().startswith("{")
    record = json.loads(
        errata("show", "--json", "can-only-transfer-integer-bytes-shape-dst-ty-sha").stdout
    )
    assert record["record"]["id"] == "225d0e9c2ee22311"


def test_show_lists_the_records_a_slug_is_shared_by(errata, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    start = "Widget 0123456789abcdef has no attribute that was asked for: "
    records = [
        {"id": f"00000000000000a{n}", "errorMessage": f"{start}'{name}'"}
        for n, name in enumerate(["spin", "turn"])
    ]
    (tmp_path / "shared.json").write_text(json.dumps(records), encoding="utf-8")
    assert errata("import", str(tmp_path / "shared.json")).returncode == 0
    slug = "widget-0123456789abcdef-has-no-attribute-that-was"
    shown = errata("show", slug)
    assert shown.returncode == 2
    assert f"2 records share the slug '{slug}'; show one by its id:" in shown.stderr
    for record in records:
        assert f"{record['id']}  {record['errorMessage']}" in shown.stderr
    assert "'spin'" in errata("show", "00000000000000a0").stdout


def test_compute_gives_the_verdict_and_fixes_of_the_api(errata) -> None:  # type: ignore[no-untyped-def]
    args = ("compute", "--operation", "copy_gmem_to_smem", "--shape", "7", "--dtype", "int4")
    failing = errata(*args)
    assert failing.returncode == 1, failing.stderr
    assert failing.stdout.startswith(
        "ValueError: Can only transfer integer bytes (shape=[7], dtype=i4) (7 × 4 bits"
    )
    assert "+plgpu.SMEM((256,), jnp.int4)" in failing.stdout
    answer = json.loads(errata(*args, "--json").stdout)
    assert answer["firstViolation"]["rule"] == "MGPU-COPY-INTEGER-BYTES"
    assert answer["fixes"][0]["code"]["after"] == "plgpu.SMEM((256,), jnp.int4)"
    assert all(fix["verified"] for fix in answer["fixes"])
    passing = errata(
        "compute", "--operation", "copy_gmem_to_smem", "--shape", "256", "--dtype", "int4"
    )
    assert passing.returncode == 0 and "passes every check" in passing.stdout
    refused = errata(
        "compute", "--operation", "copy_gmem_to_smem", "--shape", "7", "--dtype", "int5"
    )
    assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1
    assert refused.stderr.startswith("errata: ") and "int5" in refused.stderr


def test_compute_takes_the_lowering_semantics(errata) -> None:  # type: ignore[no-untyped-def]
    args = ("compute", "--operation", "copy_gmem_to_smem", "--shape", "8", "--dtype", "bfloat16")
    newest = errata(*args, "--jax-version", "0.12.0.1")
    assert newest.returncode == 0 and " · lowering semantics: Warpgroup" in newest.stdout
    lane = errata(*args, "--jax-version", "0.12.0.1", "--lowering-semantics", "Lane")
    assert lane.returncode == 1 and "Got bytes=16 but warpgroup size is 128" in lane.stdout
    refused = errata(*args, "--lowering-semantics", "lanes")
    assert refused.returncode == 2 and "loweringSemantics" in refused.stderr


def test_compute_fixes_a_block_for_every_release_asked(errata) -> None:  # type: ignore[no-untyped-def]
    """(8,) bfloat16 lowers in 0.12.0.1 and not in 0.10.2: asked for both, the block fails."""
    args = ("compute", "--operation", "copy_gmem_to_smem", "--shape", "8", "--dtype", "bfloat16")
    both = errata(*args, "--jax-version", "0.12.0.1", "--also-in", "0.10.2")
    assert both.returncode == 1
    assert "(8,) bfloat16 lowers in JAX 0.12.0.1, not in 0.10.2" in both.stdout
    assert "JAX 0.10.2 fails MGPU-COPY-WARPGROUP-BYTES." in both.stdout
    assert (
        "Every fix passes every check in JAX 0.10.2 (Lane semantics) and 0.12.0.1 "
        "(Warpgroup semantics)." in both.stdout
    )
    assert "plgpu.SMEM((64,), jnp.bfloat16)" in both.stdout
    refused = errata(*args, "--also-in", "0.4.30")
    assert refused.returncode == 2 and "alsoJaxVersions" in refused.stderr


def test_match_says_how_many_fixes_it_left_out_and_how_to_see_them(errata) -> None:  # type: ignore[no-untyped-def]
    shown = errata("match", str(TRACEBACKS / "MGPU-COPY-INTEGER-BYTES.txt"))
    lines = shown.stdout.splitlines()
    headings = [line for line in lines if line.startswith(("Do this: ", "Or: "))]
    assert len(headings) == 3 and headings[0].startswith("Do this: ")
    [hidden] = [line for line in lines if " more fix" in line]
    assert hidden.endswith(": follow All fixes.")
    [command] = [
        line.removeprefix("All fixes → ") for line in lines if line.startswith("All fixes")
    ]
    assert command.startswith("errata compute --operation copy_gmem_to_smem")
    every = json.loads(errata(*shlex.split(command)[1:], "--json").stdout)["fixes"]
    assert int(hidden.split()[0]) == len(every) - 3


def test_an_undated_messages_command_for_more_fixes_gives_the_same_fixes(  # type: ignore[no-untyped-def]
    errata, tmp_path: Path
) -> None:
    """The message alone reads every release from 0.6.0: its fixes hold in each the engine
    models, and so do those of the command that lists them all."""
    paste = tmp_path / "message.txt"
    paste.write_text("ValueError: Can only transfer integer bytes (shape=[7], dtype=i4)\n")
    shown = errata("match", str(paste)).stdout
    assert (
        "\nEvery fix passes every check in JAX 0.7.0–0.10.2 (Lane semantics) and "
        "0.11.0–0.12.0.1 (Warpgroup semantics).\n" in shown
    )
    [more] = [line for line in shown.splitlines() if line.startswith("All fixes → ")]
    command = more.removeprefix("All fixes → ")
    listed = json.loads(errata(*shlex.split(command)[1:], "--json").stdout)
    matched = json.loads(errata("match", str(paste), "--json").stdout)["matches"][0]["fix"]
    assert listed["fixes"] == matched["fixes"]
    assert listed["checkedIn"] == matched["checkedIn"]


def test_colour_on_a_terminal_and_plain_when_piped(errata) -> None:  # type: ignore[no-untyped-def]
    traceback = str(TRACEBACKS / "MGPU-COPY-INTEGER-BYTES.txt")
    piped = errata("match", traceback)
    assert piped.returncode == 0 and "\x1b[" not in piped.stdout
    coloured = errata("match", traceback, FORCE_COLOR="1", TERM="xterm-256color")
    assert "\x1b[" in coloured.stdout
    assert re.sub(r"\x1b\[[0-9;]*m", "", coloured.stdout) == piped.stdout


def test_match_and_compute_load_neither_migrations_nor_the_web_stack(tmp_path: Path) -> None:
    """Only serve, import and db prepare the database: a prepared one is read as it is."""
    env = cli_env(tmp_path)
    prepare = [sys.executable, "-m", "app", "admin", "db", "upgrade", "--seed"]
    subprocess.run(prepare, env=env, check=True)
    assert _modules_loaded(env, ("alembic", "fastapi", "uvicorn")) == []


def test_a_match_from_its_snapshot_loads_no_settings_nor_database_code(
    errata, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """The first match builds the snapshot; from then on the settings' and the database's
    modules, and the record schema the compiler records are checked with, stay unloaded."""
    assert errata("match", str(TRACEBACKS / "MGPU-COPY-INTEGER-BYTES.txt")).returncode == 0
    unloaded = ("sqlalchemy", "pydantic_settings", "app.config", "app.records.schema")
    assert _modules_loaded(cli_env(tmp_path), unloaded) == []


def _modules_loaded(env: dict[str, str], modules: tuple[str, ...]) -> list[str]:
    """Which of ``modules`` a match and a compute load, in a process of their own."""
    probe = (
        "import sys\n"
        "from app.cli import cli\n"
        "for args in (['match', sys.argv[1]], ['compute', '--operation', 'pallas_call',"
        " '--shape', '128', '--dtype', 'float32']):\n"
        "    cli(args, standalone_mode=False)\n"
        f"print(sorted(m for m in {modules!r} if m in sys.modules))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe, str(TRACEBACKS / "MGPU-COPY-INTEGER-BYTES.txt")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return list(json.loads(result.stdout.strip().splitlines()[-1].replace("'", '"')))


def test_show_on_a_fresh_database_prepares_it_first(errata) -> None:  # type: ignore[no-untyped-def]
    shown = errata("show", "225d0e9c2ee22311")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("ValueError: Can only transfer integer bytes")


NOT_TEXT = {
    "not UTF-8": (b"\xff\xfeValueError: bad\n", "not UTF-8 text (byte 0 is 0xff)"),
    "a NUL byte": (b"ValueError:\x00 bad\n", "binary data, not a paste"),
    "binary junk": (bytes(range(256)) * 4, "binary data, not a paste"),
}


@pytest.mark.parametrize("kind", NOT_TEXT)
def test_match_refuses_input_that_is_not_text_in_one_line(
    errata, tmp_path: Path, kind: str
) -> None:  # type: ignore[no-untyped-def]
    """From standard input or a file, bytes that are no paste are a usage error (exit 2),
    named in one line, as the API's 422 names them."""
    data, why = NOT_TEXT[kind]
    paste = tmp_path / "paste.txt"
    paste.write_bytes(data)
    for source, said in ((["-"], "standard input"), ([str(paste)], str(paste))):
        refused = errata("match", *source, stdin=data)
        assert refused.returncode == 2
        assert refused.stdout == ""
        assert refused.stderr.splitlines() == [f"errata: {said}: {why}"]


def test_import_refuses_a_file_that_is_not_text_before_importing_any(
    errata, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    good = tmp_path / "good.json"
    good.write_text('{"id": "good-one", "errorMessage": "m"}')
    for name, (data, _) in NOT_TEXT.items():
        bad = tmp_path / f"{name}.json"
        bad.write_bytes(data)
        refused = errata("import", str(good), str(bad))
        assert refused.returncode == 2, refused.stderr
        [line] = refused.stderr.splitlines()
        assert line.startswith(f"errata: {bad}") and ("UTF-8" in line or "binary" in line)
    missing = errata("import", str(tmp_path / "missing.json"))
    assert missing.returncode == 2
    assert missing.stderr.splitlines() == [
        f"errata: {tmp_path / 'missing.json'}: cannot read: No such file or directory"
    ]
    assert errata("show", "good-one").returncode == 2  # nothing was imported


def test_compute_refuses_arguments_that_are_not_text_in_one_line(errata) -> None:  # type: ignore[no-untyped-def]
    """A shell passes any bytes: Python reads those that are not UTF-8 as lone surrogates."""
    args = ("compute", "--operation", "copy_gmem_to_smem", "--dtype", "int4", "--shape")
    refused = errata(*args, b"\xff\xfe")
    assert refused.returncode == 2
    [line] = refused.stderr.splitlines()
    assert line.startswith("errata: shape")


def test_help_lists_the_users_commands_first_and_the_maintainers_under_admin(errata) -> None:  # type: ignore[no-untyped-def]
    shown = errata("--help", COLUMNS="100").stdout
    users, maintainers = shown.split("Maintainer commands")
    named = re.findall(r"^│ (\w[\w-]*) ", users, re.M)
    assert named[-7:] == ["serve", "import", "show", "match", "compute", "run", "mcp"]
    assert re.findall(r"^│ (\w[\w-]*) ", maintainers, re.M) == ["admin"]
    assert "mine" not in shown
    admin = errata("admin", "--help", COLUMNS="100").stdout
    assert re.findall(r"^│ (\w[\w-]*) ", admin, re.M)[-6:] == [
        "mine",
        "mine-releases",
        "mine-api",
        "adopt-curated",
        "mine-xla",
        "db",
    ]
    assert errata("admin", "db", "upgrade", "--help").returncode == 0


def test_help_reads_each_paragraph_as_written_not_broken_where_the_docstring_was(errata) -> None:  # type: ignore[no-untyped-def]
    """A wide terminal shows a paragraph on one line, the first line of a command's help
    alone in the list of commands."""
    shown = errata("match", "--help", COLUMNS="400").stdout
    assert re.search(
        r"^ Reads a file, or standard input\. .* a usage error, exit 2\. *$", shown, re.M
    )
    listed = errata("--help", COLUMNS="400").stdout
    assert re.search(r"^│ match +Find the known errors in a pasted traceback\. +│$", listed, re.M)


def test_match_answers_from_its_snapshot_until_the_database_changes(errata, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """An import changes the database: the snapshot is built again, and answers as a build
    of its own (a fresh cache) does."""
    message = "ValueError: the widget 0123456789abcdef spun 3 times, not 4"
    paste = tmp_path / "widget.txt"
    paste.write_text(f'Traceback (most recent call last):\n  File "k.py", line 1\n{message}\n')
    before = errata("match", "--json", str(paste))
    assert before.returncode == 1 and json.loads(before.stdout)["matches"] == []
    [snapshot] = (tmp_path / "cache" / "errata").glob("catalog-*.pickle")
    written = snapshot.stat().st_mtime_ns
    record = {"id": "00000000000000b1", "errorMessage": message.removeprefix("ValueError: ")}
    (tmp_path / "widget.json").write_text(json.dumps(record | {"errorClass": "ValueError"}))
    assert errata("import", str(tmp_path / "widget.json")).returncode == 0
    after = errata("match", "--json", str(paste))
    assert after.returncode == 0, after.stderr
    assert [found["errorId"] for found in json.loads(after.stdout)["matches"]] == [record["id"]]
    assert snapshot.stat().st_mtime_ns > written  # built again, in its place
    kept = errata("match", "--json", str(paste))
    fresh = errata("match", "--json", str(paste), XDG_CACHE_HOME=str(tmp_path / "fresh"))
    assert kept.stdout == fresh.stdout == after.stdout
    shown, built = (
        errata("match", str(TRACEBACKS / "MGPU-COPY-INTEGER-BYTES.txt"), XDG_CACHE_HOME=cache)
        for cache in (str(tmp_path / "cache"), str(tmp_path / "other"))
    )
    assert shown.stdout == built.stdout and shown.returncode == built.returncode == 0
