"""Linking releases: one record per site across releases, ids that never change."""

from __future__ import annotations

import io
import json
from pathlib import Path
from textwrap import dedent

import pytest

from app.jaxref.releases import linking_order
from app.knowledge import dataset
from app.knowledge.history import WINDOW, Track, Wording, source_window

PRIMITIVES = "jax/_src/pallas/mosaic_gpu/primitives.py"


def tree(root: Path, body: str) -> Path:
    """A one-file JAX source tree holding ``body`` as Mosaic GPU's primitives module."""
    file = root / PRIMITIVES
    file.parent.mkdir(parents=True)
    file.write_text(dedent(body))
    return root


def release_trees(tmp_path: Path, *bodies: str) -> list[tuple[Path, str, str]]:
    names = ["0.6.0", "0.7.1", "0.8.2"]
    return [
        (tree(tmp_path / name, body), name, f"{index:040x}")
        for index, (name, body) in enumerate(zip(names, bodies, strict=False), start=1)
    ]


V1 = """
def _copy(ctx, bytes):
  if bytes % 128:
    raise NotImplementedError("Only aligned copies are supported")
  if ctx.x:
    raise ValueError("x is not supported")
"""
V2 = """
def _copy(ctx, bytes):
  # a comment moves the lines
  if bytes % 128:
    raise NotImplementedError(
        "Only copies transferring a number of bytes divisible by the"
        " warpgroup size are supported"
    )
"""
V3 = """
def _copy(ctx, bytes):
  # a comment moves the lines
  if bytes % 128:
    raise NotImplementedError(
        "Only copies transferring a number of bytes divisible by the"
        f" warpgroup size are supported. Got {bytes=} but warpgroup size is 128"
    )
  if ctx.y:
    raise ValueError("y is not supported")
"""


# One site, moved from ``_copy`` into a helper of its own.
RAISED_IN_COPY = """
def _copy(ctx, bytes):
  if bytes % 128:
    raise ValueError("Only aligned copies are supported")
"""
MOVED_TO_PREPARE = """
def _prepare(ctx, bytes):
  if bytes % 128:
    raise ValueError("Only aligned copies are supported")

def _copy(ctx, bytes):
  _prepare(ctx, bytes)
"""


def test_a_reworded_message_stays_one_site_with_its_history(tmp_path: Path) -> None:
    tracks = dataset.build(release_trees(tmp_path, V1, V2, V3))
    [warpgroup] = [t for t in tracks.values() if "aligned" in t.wordings[0].template]
    assert [(w.first, w.last) for w in warpgroup.wordings] == [
        ("0.6.0", "0.6.0"),
        ("0.7.1", "0.7.1"),
        ("0.8.2", "0.8.2"),
    ]
    assert warpgroup.wordings[-1].template.endswith("Got {bytes=} but warpgroup size is 128")
    assert [(a.release, a.line) for a in warpgroup.appearances] == [
        ("0.6.0", 4),
        ("0.7.1", 5),
        ("0.8.2", 5),
    ]


def test_a_site_that_disappears_keeps_its_last_release(tmp_path: Path) -> None:
    tracks = dataset.build(release_trees(tmp_path, V1, V2, V3))
    [gone] = [t for t in tracks.values() if t.site.template == "x is not supported"]
    assert gone.releases == ["0.6.0"]
    [new] = [t for t in tracks.values() if t.site.template == "y is not supported"]
    assert new.releases == ["0.8.2"]
    assert gone.id != new.id


def test_a_site_moved_to_another_function_keeps_its_record(tmp_path: Path) -> None:
    tracks = dataset.build(release_trees(tmp_path, RAISED_IN_COPY, MOVED_TO_PREPARE))
    [moved] = tracks.values()
    assert moved.releases == ["0.6.0", "0.7.1"]
    assert moved.site.function == "_prepare"
    assert [(a.line, a.function) for a in moved.appearances] == [(4, "_copy"), (4, "_prepare")]


def trees_of_files(tmp_path: Path, *releases: dict[str, str]) -> list[tuple[Path, str, str]]:
    """Each release's tree, of the files (path → body) given for it."""
    trees = []
    for index, (name, files) in enumerate(zip(["0.6.0", "0.7.1"], releases, strict=True), start=1):
        (tmp_path / name / "jax" / "_src").mkdir(parents=True)  # what makes it JAX's tree
        for path, body in files.items():
            file = tmp_path / name / path
            file.parent.mkdir(parents=True, exist_ok=True)
            file.write_text(dedent(body))
        trees.append((tmp_path / name, name, f"{index:040x}"))
    return trees


SHORT_CHECK = """
def {function}(x):
  repeats, rem = divmod(x, 128)
  assert rem == 0
"""


@pytest.mark.parametrize(
    ("gone", "new", "moved"),
    [
        # Within jax: a site moved to another module.
        (PRIMITIVES, "jax/_src/pallas/mosaic_gpu/lowering.py", True),
        # jaxlib's Python pass dropped as splash attention, a kernel JAX ships, came.
        (
            "jaxlib/mosaic/python/apply_vector_layout.py",
            "jax/experimental/pallas/ops/tpu/splash_attention/splash_attention_kernel.py",
            False,
        ),
        (PRIMITIVES, "jax/experimental/pallas/ops/tpu/flash_attention.py", False),
    ],
)
def test_a_site_moves_only_within_its_part_of_jax(
    tmp_path: Path, gone: str, new: str, moved: bool
) -> None:
    trees = trees_of_files(
        tmp_path,
        {gone: SHORT_CHECK.format(function="_relayout")},
        {new: SHORT_CHECK.format(function="_apply_mask")},
    )
    tracks = dataset.build(trees)
    assert sorted(t.releases for t in tracks.values()) == (
        [["0.6.0", "0.7.1"]] if moved else [["0.6.0"], ["0.7.1"]]
    )


# Two raises of one message in one function; the second release adds lines above the
# first, which brings it nearer the second's old line than its own.
TWO_CHECKS = """
def _init(ctx):
  result = ctx.device()
  if result:
    raise ValueError("CUDA call failed")
  result = ctx.attribute()
  if result:
    raise ValueError("CUDA call failed")
"""
TWO_CHECKS_SHIFTED = TWO_CHECKS.replace("(ctx):\n", "(ctx):\n  ctx.check()\n  ctx.check()\n")
# The same two, reordered, each under a condition of its own.
TWO_GUARDS = """
def _init(ctx):
  if ctx.device():
    raise ValueError("CUDA call failed")
  if ctx.attribute():
    raise ValueError("CUDA call failed")
"""
TWO_GUARDS_SWAPPED = """
def _init(ctx):
  if ctx.attribute():
    raise ValueError("CUDA call failed")
  if ctx.device():
    raise ValueError("CUDA call failed")
"""


def test_sites_of_one_message_keep_their_order_when_lines_move(tmp_path: Path) -> None:
    tracks = dataset.build(release_trees(tmp_path, TWO_CHECKS, TWO_CHECKS_SHIFTED))
    lines = sorted([(a.release, a.line) for a in t.appearances] for t in tracks.values())
    assert lines == [[("0.6.0", 5), ("0.7.1", 7)], [("0.6.0", 8), ("0.7.1", 10)]]


# An assert, then a second one above it (a site newer than the first, listed after it), then
# the function renamed.
ONE_ASSERT = """
def _checkify_lowering_rule(ctx, exception):
  ctx.unflatten()
  ctx.flatten()
  assert isinstance(exception, Error)
"""
TWO_ASSERTS = """
def _checkify_lowering_rule(ctx, exception):
  assert isinstance(exception, Error)
  ctx.flatten()
  assert isinstance(exception, Error)
"""
TWO_ASSERTS_RENAMED = TWO_ASSERTS.replace("_checkify_lowering_rule", "_check_lowering_rule")


def test_sites_alike_in_a_renamed_function_keep_their_order(tmp_path: Path) -> None:
    """The renamed function's sites are linked as moved, in line order: not in the order
    their records were first made."""
    trees = release_trees(tmp_path, ONE_ASSERT, TWO_ASSERTS, TWO_ASSERTS_RENAMED)
    tracks = dataset.build(trees)
    lines = sorted([(a.release, a.line) for a in t.appearances] for t in tracks.values())
    assert lines == [
        [("0.6.0", 5), ("0.7.1", 5), ("0.8.2", 5)],
        [("0.7.1", 3), ("0.8.2", 3)],
    ]


# Then both of the function's asserts given one message in the next release.
TWO_REWORDED = TWO_ASSERTS.replace(
    "assert isinstance(exception, Error)",
    'assert isinstance(exception, Error), f"not a failed check: {exception}"',
)


def test_sites_alike_reworded_together_keep_their_order(tmp_path: Path) -> None:
    tracks = dataset.build(release_trees(tmp_path, ONE_ASSERT, TWO_ASSERTS, TWO_REWORDED))
    lines = sorted([(a.release, a.line) for a in t.appearances] for t in tracks.values())
    assert lines == [
        [("0.6.0", 5), ("0.7.1", 5), ("0.8.2", 5)],
        [("0.7.1", 3), ("0.8.2", 3)],
    ]


def test_sites_of_one_message_follow_their_conditions_when_reordered(tmp_path: Path) -> None:
    tracks = dataset.build(release_trees(tmp_path, TWO_GUARDS, TWO_GUARDS_SWAPPED))
    by_condition = {
        t.site.condition: [(a.release, a.line) for a in t.appearances] for t in tracks.values()
    }
    assert by_condition == {
        "ctx.device()": [("0.6.0", 4), ("0.7.1", 6)],
        "ctx.attribute()": [("0.6.0", 6), ("0.7.1", 4)],
    }


# tcgen05's ``mma`` in 0.7.0 and 0.7.1: one message's class changed, while under the same
# guard a message of the old class was added.
SCALED_AS_VALUE_ERROR = """
def mma(m, is_scaled):
  if m == 64:
    if is_scaled:
      raise ValueError("MMA with block scaling is not supported for M=64")
"""
SCALED_AS_NOT_IMPLEMENTED = """
def mma(m, is_scaled):
  if m == 64:
    if is_scaled:
      raise NotImplementedError("MMA with block scaling is not supported for M=64")
  else:
    if is_scaled:
      raise ValueError("MMA with this element type does not support block scaling")
"""


def test_a_message_whose_class_changed_is_no_rewording_of_another(tmp_path: Path) -> None:
    tracks = dataset.build(
        release_trees(tmp_path, SCALED_AS_VALUE_ERROR, SCALED_AS_NOT_IMPLEMENTED)
    )
    histories = sorted(
        (t.site.error_class, [w.template for w in t.wordings], t.releases) for t in tracks.values()
    )
    m64 = "MMA with block scaling is not supported for M=64"
    assert histories == [
        ("NotImplementedError", [m64], ["0.7.1"]),
        ("ValueError", [m64], ["0.6.0"]),
        ("ValueError", ["MMA with this element type does not support block scaling"], ["0.7.1"]),
    ]


# Bare raises, which say nothing of their own: one method's removed, another's added.
BARE_IN_UNDO = """
class SwizzleTransform:
  def undo(self, ref):
    raise NotImplementedError
"""
BARE_IN_CHECK = """
class Mesh:
  def check(self):
    raise NotImplementedError
"""


def test_a_bare_raise_is_not_taken_for_another_functions_bare_raise(tmp_path: Path) -> None:
    tracks = dataset.build(release_trees(tmp_path, BARE_IN_UNDO, BARE_IN_CHECK))
    by_function = {t.site.function: t.releases for t in tracks.values()}
    assert by_function == {"SwizzleTransform.undo": ["0.6.0"], "Mesh.check": ["0.7.1"]}


# ``assert False`` holds nowhere: like a bare raise, it says nothing of its own.
ASSERT_FALSE_IN_PARSE = """
class XeinsumSpecParser:
  def parse_axis_name(self):
    assert False
"""
ASSERT_FALSE_IN_SCRATCH = """
class GridSpec:
  def _make_scratch_aval(self, obj):
    assert False
"""


def test_an_assert_false_is_not_taken_for_another_functions(tmp_path: Path) -> None:
    tracks = dataset.build(release_trees(tmp_path, ASSERT_FALSE_IN_PARSE, ASSERT_FALSE_IN_SCRATCH))
    by_function = {t.site.function: t.releases for t in tracks.values()}
    assert by_function == {
        "XeinsumSpecParser.parse_axis_name": ["0.6.0"],
        "GridSpec._make_scratch_aval": ["0.7.1"],
    }


def test_a_bare_raise_moved_to_another_file_keeps_its_record(tmp_path: Path) -> None:
    releases = release_trees(tmp_path, BARE_IN_UNDO, "")
    # The release after holds the primitives module empty and the method in core.py.
    core = PRIMITIVES.replace("primitives.py", "core.py")
    (tmp_path / "0.7.1" / core).write_text(dedent(BARE_IN_UNDO))
    [track] = dataset.build(releases).values()
    assert track.releases == ["0.6.0", "0.7.1"]
    assert [a.file_path for a in track.appearances] == [PRIMITIVES, core]


def test_each_release_links_the_file_its_site_stood_in(tmp_path: Path) -> None:
    """A site that moved to another file: each release's link and place are its own."""
    old_tree = tree(tmp_path / "0.6.0", RAISED_IN_COPY)
    new_tree = tmp_path / "0.7.1"
    moved_to = new_tree / "jax/_src/pallas/mosaic_gpu/lowering.py"
    moved_to.parent.mkdir(parents=True)
    moved_to.write_text(dedent(RAISED_IN_COPY))
    tracks = dataset.build([(old_tree, "0.6.0", "1" * 40), (new_tree, "0.7.1", "2" * 40)])
    [document] = dataset.documents(tracks)
    record = document["record"]
    first, newest = record["releases"]
    assert record["filePath"] == "jax/_src/pallas/mosaic_gpu/lowering.py"
    assert first["filePath"] == PRIMITIVES and f"/{'1' * 40}/{PRIMITIVES}#L4" in first["githubUrl"]
    assert "filePath" not in newest and record["filePath"] in newest["githubUrl"]
    saved = tmp_path / "mined.jsonl"
    with saved.open("w") as out:
        dataset.write(tracks, out)
    [loaded] = dataset.load(saved).values()
    assert [a.file_path for a in loaded.appearances] == [PRIMITIVES, record["filePath"]]


def test_linking_a_new_release_keeps_every_id(tmp_path: Path) -> None:
    trees = release_trees(tmp_path, V1, V2, V3)
    at_once = dataset.build(trees)
    saved = tmp_path / "mined.jsonl"
    with saved.open("w") as out:
        dataset.write(dataset.build(trees[:2]), out)
    step_by_step = dataset.build(trees[2:], dataset.load(saved))
    assert sorted(step_by_step) == sorted(at_once)
    for track_id, track in at_once.items():
        assert step_by_step[track_id].releases == track.releases
        assert step_by_step[track_id].wordings == track.wordings


def test_an_older_release_linked_last_keeps_every_id_and_gives_the_same_history(
    tmp_path: Path,
) -> None:
    """An older release is linked backward, to the sites of the oldest linked so far: the
    ids given before it was mined stay, and the histories are those of linking in order."""
    trees = release_trees(tmp_path, V1, V2, V3)
    before = dataset.build(trees[1:])
    backward = dataset.build([*trees[1:], trees[0]])
    forward = dataset.build(trees)
    assert set(before) <= set(backward)
    assert len(backward) == len(forward) > len(before)

    def histories(tracks: dict[str, Track]) -> list[tuple[list[str], list[Wording], int]]:
        return sorted(
            ((t.releases, t.wordings, t.site.line) for t in tracks.values()),
            key=repr,
        )

    assert histories(backward) == histories(forward)


def test_a_site_that_moved_is_followed_backward_too(tmp_path: Path) -> None:
    old_tree, new_tree = release_trees(tmp_path, RAISED_IN_COPY, MOVED_TO_PREPARE)
    tracks = dataset.build([new_tree, old_tree])
    [moved] = tracks.values()
    assert moved.releases == ["0.6.0", "0.7.1"]
    assert moved.site.function == "_prepare"
    assert moved.first_site is not None and moved.first_site.function == "_copy"
    [document] = dataset.documents(tracks)
    first, newest = document["record"]["releases"]
    assert first["function"] == "_copy" and "function" not in newest


ASSERTED_ON_THE_ENV = """
def axis_frame():
  env = _pallas_tracing_env
  assert env.grid_context is not None
  return env.grid_context
"""
ASSERTED_ON_A_NAME = """
def axis_frame():
  grid_context = _pallas_tracing_env.grid_context
  assert grid_context is not None
  return grid_context
"""


def test_an_assert_rewritten_keeps_what_each_release_asserted(tmp_path: Path) -> None:
    """A release's statement is what a paste quotes: the record keeps an assert's older
    condition with the releases that asserted it, and reads it back from its file."""
    trees = release_trees(tmp_path, ASSERTED_ON_THE_ENV, ASSERTED_ON_A_NAME)
    [document] = dataset.documents(dataset.build(trees))
    older, newest = document["record"]["releases"]
    assert older["condition"] == "env.grid_context is not None" and "condition" not in newest
    saved = tmp_path / "mined.jsonl"
    with saved.open("w") as out:
        dataset.write(dataset.build(trees), out)
    [loaded] = dataset.load(saved).values()
    assert [a.condition for a in loaded.appearances] == [
        "env.grid_context is not None",
        "grid_context is not None",
    ]


def test_a_release_joins_only_at_either_end(tmp_path: Path) -> None:
    first, middle, last = release_trees(tmp_path, V1, V2, V3)
    with pytest.raises(ValueError, match=r"within 0\.6\.0–0\.8\.2"):
        dataset.build([first, last, middle])


def test_a_dataset_read_from_its_file_is_not_linked_backward(tmp_path: Path) -> None:
    """The file keeps each site's newest facts only: older releases are linked from the
    sources, where each site's oldest facts are known."""
    trees = release_trees(tmp_path, V1, V2, V3)
    saved = tmp_path / "mined.jsonl"
    with saved.open("w") as out:
        dataset.write(dataset.build(trees[1:]), out)
    with pytest.raises(ValueError, match="mine-releases"):
        dataset.build(trees[:1], dataset.load(saved))


def test_releases_are_linked_from_the_first_given_ids_then_back(tmp_path: Path) -> None:
    table = tmp_path / "releases.json"
    releases = ["0.4.30", "0.4.15", "0.4.31", "0.10.2", "0.5.0"]
    table.write_text(json.dumps({"idsFrom": "0.4.31", "releases": {}}))
    assert linking_order(releases, table) == ["0.4.31", "0.5.0", "0.10.2", "0.4.30", "0.4.15"]
    table.write_text(json.dumps({"releases": {}}))
    assert linking_order(releases, table) == ["0.4.15", "0.4.30", "0.4.31", "0.5.0", "0.10.2"]


def test_the_dataset_round_trips_through_its_file(tmp_path: Path) -> None:
    tracks = dataset.build(release_trees(tmp_path, V1, V2, V3))
    first, second = io.StringIO(), io.StringIO()
    dataset.write(tracks, first)
    saved = tmp_path / "mined.jsonl"
    saved.write_text(first.getvalue())
    dataset.write(dataset.load(saved), second)
    assert first.getvalue() == second.getvalue()


def test_records_are_shaped_like_the_seeds(tmp_path: Path) -> None:
    tracks = dataset.build(release_trees(tmp_path, V1, V2, V3))
    lines = [json.loads(line) for line in _written(tracks).splitlines()]
    [record] = [line["record"] for line in lines if "warpgroup" in line["record"]["errorMessage"]]
    assert record["lineNumber"] == 5
    assert (record["sourceCodeStart"], record["sourceCodeEnd"]) == (1, 10)  # clipped to file
    assert record["sourceCode"].splitlines()[4].strip() == "raise NotImplementedError("
    assert record["githubUrl"] == (
        f"https://github.com/jax-ml/jax/blob/{3:040x}/{PRIMITIVES}#L1-L10"
    )
    assert record["messagePattern"].endswith(r"supported\. Got (.+?) but warpgroup size is 128")
    assert "(?P<bytes>" in record["matchPattern"]
    assert [w["until"] for w in record["olderWordings"]] == ["0.6.0", "0.7.1"]
    assert [entry["release"] for entry in record["releases"]] == ["0.6.0", "0.7.1", "0.8.2"]
    assert record["site"]["condition"] == "bytes % 128"
    assert record["documentationSource"] == "derived"
    assert "`_copy` when `bytes % 128` is true" in record["documentation"]
    assert "0.6.0–0.8.2" in record["documentation"]


def test_the_source_window_is_the_line_and_18_lines_each_side_as_in_the_seeds() -> None:
    lines = [f"line {number}" for number in range(1, 101)]
    text, start, end = source_window(lines, 975 - 925)  # seed 000: 975 in 957-993
    assert (start, end) == (50 - WINDOW, 50 + WINDOW) == (32, 68)
    assert text.splitlines() == lines[31:68]
    assert text.endswith("line 68\n")


def test_a_curated_records_site_joins_it_as_an_annotation(tmp_path: Path) -> None:
    curated = {
        "id": "ffb598de9e3ff51b",
        "filePath": PRIMITIVES,
        "errorMessage": "Only copies transferring a number of bytes divisible by the warpgroup"
        " size are supported. Got {bytes=} but warpgroup size is 128",
    }
    tracks = dataset.build(release_trees(tmp_path, V1, V2, V3), curated=[curated])
    assert tracks["ffb598de9e3ff51b"].curated
    lines = [json.loads(line) for line in _written(tracks).splitlines()]
    [annotation] = [line["annotation"] for line in lines if "annotation" in line]
    assert annotation["recordId"] == "ffb598de9e3ff51b"
    assert len(annotation["mined"]["messageHistory"]) == 3
    assert not any(
        "warpgroup" in line["record"]["errorMessage"] for line in lines if "record" in line
    )


def test_a_curated_message_written_with_other_names_still_finds_its_site(
    tmp_path: Path,
) -> None:
    body = """
    def _store(ctx, shape, dtype):
      if ctx.bits % 8:
        raise ValueError(f"Can only transfer integer bytes ({shape=}, {dtype=})")
    """
    curated = {
        "id": "mgpu-x",
        "filePath": PRIMITIVES,
        "errorMessage": "Can only transfer integer bytes (shape={shape}, dtype={dtype})",
    }
    tracks = dataset.build(release_trees(tmp_path, body), curated=[curated])
    assert list(tracks) == ["mgpu-x"]


def _written(tracks: dict[str, dataset.Track]) -> str:
    out = io.StringIO()
    dataset.write(tracks, out)
    return out.getvalue()
