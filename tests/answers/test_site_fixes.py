"""A bare AssertionError from TilingTransform.transform_type, pasted with the script that
raised it (captured from JAX 0.10.2): the curated record answers, led by fixes computed for
the values the script writes."""

from __future__ import annotations

from pathlib import Path

from app.answers.cards import match_answers
from app.answers.catalog import Catalog
from app.answers.links import Links
from app.answers.match import MatchService
from app.schemas.match import MatchRequest

PASTE = Path(__file__).parent.parent / "fixtures" / "pastes" / "mgpu-bare-tiling-assert.txt"
TILING_RECORD = "054ee89b15485d92"  # data/records/mgpu-tilingtransform-divisibility.json


def test_the_site_is_the_curated_record_and_its_fixes_lead(catalog: Catalog) -> None:
    response = MatchService(catalog).match(MatchRequest(text=PASTE.read_text()))
    assert response.matches == []
    [point] = response.raisePoints
    assert (point.errorId, point.function, point.line) == (TILING_RECORD, "transform_type", 705)
    assert point.failure == "The tiling (8, 32) does not divide the ref's (16, 48): 48 % 32 = 16"
    assert [fix.title for fix in point.fixes] == [
        "Tile by (8, 24) instead of (8, 32)",
        "Pad the ref from (16, 48) to (16, 64)",
    ]
    [answer, *_] = match_answers(response, catalog.records, Links("https://errata.example"))
    assert (answer.kind, answer.headline) == ("site", point.failure)
    assert answer.doThis is not None and answer.doThis.diff == (
        "-tiling = plgpu.TilingTransform((8, 32))\n+tiling = plgpu.TilingTransform((8, 24))"
    )
    pad = answer.alternatives[0].diff or ""
    assert "+x = jnp.zeros((16, 64), jnp.float16)" in pad
    assert "+out_shape=jax.ShapeDtypeStruct((16, 64), jnp.float16)," in pad
    advice = catalog.records[TILING_RECORD].solutions[0]
    assert any(step.title == advice for step in answer.alternatives)
    assert any("transform_type" in note for note in answer.notes)


def test_without_the_code_the_record_still_answers_with_its_advice(catalog: Catalog) -> None:
    traceback = PASTE.read_text().split("$ python repro.py\n")[1]
    response = MatchService(catalog).match(MatchRequest(text=traceback))
    [point] = response.raisePoints
    assert point.errorId == TILING_RECORD and point.failure is None and point.fixes == []
    [answer, *_] = match_answers(response, catalog.records, Links("https://errata.example"))
    assert answer.doThis is not None
    assert answer.doThis.title == catalog.records[TILING_RECORD].solutions[0]
