"""The importer on each database: formats, idempotence, versions, and all-or-nothing files."""

from __future__ import annotations

import gc
import json
import shutil
import uuid
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from app import collector
from app.jaxref.templates import derive_pattern
from app.records import store as stores
from app.records.importer import ImportFailed, import_paths, import_text
from app.records.models import RecordRow
from app.records.store import Outcome, RecordFilters, RecordStore
from tests.conftest import SEED_DIR

Factory = sessionmaker[Session]


def record(**fields: Any) -> dict[str, Any]:
    base = {"id": f"r{uuid.uuid4().hex[:12]}", "errorMessage": "Got {bytes=} of {WARPGROUP_SIZE}"}
    return {**base, **fields}


def stored(factory: Factory, record_id: str) -> RecordRow | None:
    with factory() as session:
        return session.get(RecordRow, record_id)


def run(factory: Factory, text: str, source: str = "doc") -> dict[str, int]:
    with factory() as session:
        summary = import_text(RecordStore(session), text, source)
        session.commit()
    return {"added": summary.added, "updated": summary.updated, "unchanged": summary.unchanged}


def test_every_format_is_read(session_factory: Factory) -> None:
    envelope, bare, in_array, in_lines = record(), record(), record(), record()
    run(session_factory, json.dumps({"record": envelope, "datasetVersion": "2026-01-01"}))
    run(session_factory, json.dumps(bare))
    run(session_factory, json.dumps([{"record": in_array}]))
    assert (
        run(session_factory, json.dumps(in_lines) + "\n\n" + json.dumps(record()) + "\n")["added"]
        == 2
    )
    for item in (envelope, bare, in_array, in_lines):
        row = stored(session_factory, item["id"])
        assert row is not None and row.document["errorMessage"] == item["errorMessage"]
    assert stored(session_factory, envelope["id"]).dataset_version == "2026-01-01"  # type: ignore[union-attr]


def test_same_file_twice_changes_nothing_and_newer_version_wins(session_factory: Factory) -> None:
    item = record(documentation="first")
    doc = json.dumps({"record": item, "datasetVersion": "2026-02-01T00:00:00Z"})
    assert run(session_factory, doc) == {"added": 1, "updated": 0, "unchanged": 0}
    assert run(session_factory, doc) == {"added": 0, "updated": 0, "unchanged": 1}

    older = json.dumps(
        {"record": {**item, "documentation": "older"}, "datasetVersion": "2026-01-01"}
    )
    assert run(session_factory, older)["unchanged"] == 1
    newer = json.dumps(
        {"record": {**item, "documentation": "newer"}, "datasetVersion": "2026-03-01"}
    )
    assert run(session_factory, newer)["updated"] == 1
    assert stored(session_factory, item["id"]).document["documentation"] == "newer"  # type: ignore[union-attr]


def test_unknown_fields_are_kept(session_factory: Factory) -> None:
    item = record(fromTheFuture={"nested": [1, "two"]}, schemaVersion=3)
    run(session_factory, json.dumps(item))
    assert stored(session_factory, item["id"]).document == {  # type: ignore[union-attr]
        **item,
        "slug": "got-bytes-of-warpgroup-size",
        "messagePattern": derive_pattern(item["errorMessage"]),
    }


def test_a_file_is_written_whole_whatever_the_order_of_its_ids(session_factory: Factory) -> None:
    items = [
        record(
            id=f"batch-{letter}",
            documentation=f"Doc {letter}",
            tags=["pallas", f"t{letter}", "pallas"],
            retired=letter == "b",
            huge=2**70,  # past 64 bits: kept whole
        )
        for letter in "cab"
    ]
    run(session_factory, "\n".join(json.dumps(item) for item in items))
    with session_factory() as session:
        store = RecordStore(session)
        for item in items:
            row = store.get(item["id"])
            assert row.document["huge"] == 2**70
            assert row.retired is item["retired"]
            assert sorted(tag.tag for tag in row.tags) == sorted({"pallas", *item["tags"]})
            # The words the index reads: the slug's are the message's, so not named again.
            assert row.search_message == "got bytes of warpgroup size"
            assert row.search_names == f"pallas t{item['id'][-1]} pallas"
            assert row.search_body == f"doc {item['id'][-1]}"
            assert row.curated is True
            assert row.slug == "got-bytes-of-warpgroup-size"
            assert row.store_version == store.version()
            assert row.updated_at is not None


def test_a_changed_record_replaces_its_row_and_its_tags(session_factory: Factory) -> None:
    item = record(tags=["old", "kept"], severity="error")
    untouched = record(tags=["old"])
    run(session_factory, "\n".join(json.dumps(each) for each in (item, untouched)))
    changed = {**item, "tags": ["kept", "new"], "severity": "warning"}
    assert run(session_factory, "\n".join(json.dumps(each) for each in (changed, untouched))) == {
        "added": 0,
        "updated": 1,
        "unchanged": 1,
    }
    with session_factory() as session:
        store = RecordStore(session)
        row = store.get(item["id"])
        assert sorted(tag.tag for tag in row.tags) == ["kept", "new"]
        assert (row.severity, row.document["severity"]) == ("warning", "warning")
        assert [tag.tag for tag in store.get(untouched["id"]).tags] == ["old"]


def test_a_file_longer_than_a_lookup_chunk_is_read_and_replaced_chunk_by_chunk(
    session_factory: Factory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(stores, "LOOKUP_CHUNK", 2)
    monkeypatch.setattr(stores, "COPY_ROWS", 2)
    items = [record(id=f"chunk-{n}", tags=[f"t{n}"]) for n in range(5)]
    mined = {"site": {"function": "_copy", "backend": "mosaic_gpu"}, "releases": []}
    annotations = [{"annotation": {"recordId": item["id"], "mined": mined}} for item in items]
    run(session_factory, "\n".join(json.dumps(each) for each in annotations))
    assert run(session_factory, "\n".join(json.dumps(item) for item in items))["added"] == 5
    changed = [{**item, "tags": [f"u{n}"]} if n else item for n, item in enumerate(items)]
    assert run(session_factory, "\n".join(json.dumps(item) for item in changed)) == {
        "added": 0,
        "updated": 4,
        "unchanged": 1,
    }
    with session_factory() as session:
        store = RecordStore(session)
        for item in changed:
            row = store.get(item["id"])
            assert [tag.tag for tag in row.tags] == item["tags"]
            assert (row.function, row.backend) == ("_copy", "mosaic_gpu")
        ids = [item["id"] for item in items]
        assert session.scalar(select(func.count()).where(RecordRow.id.in_(ids))) == 5
        # The search index holds each chunk's rows as they are now.
        found = store.search(RecordFilters(q="u3"), limit=10, cursor=None)
        assert [row.id for row in found.rows] == ["chunk-3"]
        assert store.search(RecordFilters(q="t3"), limit=10, cursor=None).total == 0


def test_the_garbage_collector_waits_for_every_import_and_runs_again_after_them(
    session_factory: Factory, monkeypatch: pytest.MonkeyPatch
) -> None:
    collecting: list[bool] = []
    upsert_many = RecordStore.upsert_many

    def watched(store: RecordStore, *args: Any, **kwargs: Any) -> list[Outcome]:
        collecting.append(gc.isenabled())
        return upsert_many(store, *args, **kwargs)

    monkeypatch.setattr(RecordStore, "upsert_many", watched)
    assert gc.isenabled()
    run(session_factory, json.dumps(record()))
    assert collecting == [False] and gc.isenabled()
    with collector.paused():  # another import, under way until this block ends
        run(session_factory, json.dumps(record()))
        assert not gc.isenabled()
    assert collecting == [False, False] and gc.isenabled()
    with pytest.raises(ImportFailed):
        run(session_factory, json.dumps(record(id="bad id!")))
    assert gc.isenabled()


def test_missing_pattern_is_derived_with_named_groups(session_factory: Factory) -> None:
    item = record()
    run(session_factory, json.dumps(item))
    pattern = stored(session_factory, item["id"]).document["messagePattern"]  # type: ignore[union-attr]
    assert "bytes=(?P<bytes>" in pattern


@pytest.mark.parametrize(
    ("text", "location", "field"),
    [
        ('{"record": {"id": "a", "errorMessage": "m"', "line 1 column", None),
        ('[{"id": "ok1", "errorMessage": "m"}, {"errorMessage": "m"}]', "record 2", "id"),
        ('[{"id": "ok2", "errorMessage": "m"}, {"id": "x"}]', "record 2", "errorMessage"),
        ('{"id": "ok3", "errorMessage": "m", "lineNumber": "12"}', "record 1", "lineNumber"),
        ('{"id": "ok4", "errorMessage": "m", "solutions": "not a list"}', "record 1", "solutions"),
        (
            '{"id": "ok5", "errorMessage": "m", "messagePattern": "(?<=x)y"}',
            "record 1",
            "messagePattern",
        ),
        (
            '{"id": "ok6", "errorMessage": "m"}\n{"id": "bad id!", "errorMessage": "m"}',
            "line 2",
            "id",
        ),
        (
            '{"record": {"id": "ok7", "errorMessage": "m"}, "datasetVersion": 7}',
            "record 1",
            "datasetVersion",
        ),
        (  # a caller is a function of JAX's, as a traceback prints its file
            '{"id": "ok8", "errorMessage": "m", "calledBy": [{"file": "a.py", "function": "f"}]}',
            "record 1",
            "calledBy.0.file",
        ),
        (  # how code spells a public function, read by the matcher
            '{"id": "ok9", "errorMessage": "m", "calledAs": 5}',
            "record 1",
            "calledAs",
        ),
        (
            '{"id": "ok9", "errorMessage": "m", "calledAs": ["pl.pallas_call()"]}',
            "record 1",
            "calledAs.0",
        ),
        (  # releases, copied out for ?release=
            '{"id": "ok9", "errorMessage": "m", "raisedIn": "0.10.2"}',
            "record 1",
            "raisedIn",
        ),
        (
            '{"id": "ok9", "errorMessage": "m", "missingIn": ["banana"]}',
            "record 1",
            "missingIn.0",
        ),
        ("jax-ml/jax · error · ValueError\n\nno sections at all\n", "page", "id"),
        ("[1, 2]", "record 1", None),
    ],
)
def test_bad_documents_name_the_place_and_write_nothing(
    session_factory: Factory, text: str, location: str, field: str | None
) -> None:
    with session_factory() as session:
        before = session.scalars(select(RecordRow.id)).all()
        with pytest.raises(ImportFailed) as failure:
            import_text(RecordStore(session), text, "bad.json")
        session.rollback()
    issue = failure.value.issue
    assert issue.source == "bad.json"
    assert location in (issue.location or "")
    if field is not None:
        assert issue.field == field
    with session_factory() as session:
        assert session.scalars(select(RecordRow.id)).all() == before


def test_folders_import_each_file_alone(session_factory: Factory, tmp_path: Path) -> None:
    good, bad_partner = record(), record()
    (tmp_path / "a-good.json").write_text(json.dumps(good))
    (tmp_path / "b-bad.jsonl").write_text(json.dumps(bad_partner) + "\n{broken\n")
    summary = import_paths(session_factory, [tmp_path])
    assert (summary.added, summary.failed) == (1, 1)
    assert summary.issues[0].source.endswith("b-bad.jsonl")
    assert summary.issues[0].location == "line 2 column 2"
    assert stored(session_factory, good["id"]) is not None
    assert stored(session_factory, bad_partner["id"]) is None


def test_pages_resolve_short_shas_whatever_the_file_order(
    tmp_path: Path, session_factory: Factory
) -> None:
    for name in ("004_8cdedc0b03030c8e.txt", "000_3bebb9c19a64106a.txt"):
        shutil.copy(SEED_DIR / name, tmp_path / name)
    import_paths(session_factory, [tmp_path])
    page = stored(session_factory, "19b6a360721eb407")
    assert page is not None
    assert page.document["analyzedSha"] == "1e1c6a8fc06dfcd1247076ec5cae4640cea5d7bb"


def test_annotations_sit_beside_records_and_name_their_rule(session_factory: Factory) -> None:
    item = record()
    note = {
        "annotation": {
            "recordId": item["id"],
            "rule": f"MGPU-TEST-{item['id']}",
            "corrections": [{"field": "validationCode", "problem": "p", "correction": "c"}],
        }
    }
    # the annotation may come first; the record itself stays exactly as imported
    assert run(session_factory, json.dumps(note))["added"] == 1
    assert run(session_factory, json.dumps(note))["unchanged"] == 1
    run(session_factory, json.dumps(item))
    with session_factory() as session:
        store = RecordStore(session)
        assert store.annotation(item["id"]) == note["annotation"]
        found = store.record_for_rule(f"MGPU-TEST-{item['id']}")
        assert found is not None and found.id == item["id"]
        assert "rule" not in found.document


def test_the_miners_part_and_the_curators_part_of_an_annotation_are_written_apart(
    session_factory: Factory,
) -> None:
    item = record()
    curated = {"recordId": item["id"], "rule": "MGPU-TEST", "notes": ["checked by hand"]}
    mined = {
        "site": {"function": "_copy_lowering", "backend": "mosaic_gpu"},
        "releases": [{"release": "0.9.2"}, {"release": "0.10.2"}],
    }
    run(session_factory, json.dumps(item))
    run(session_factory, json.dumps({"annotation": curated}))
    assert (
        run(session_factory, json.dumps({"annotation": {"recordId": item["id"], "mined": mined}}))[
            "updated"
        ]
        == 1
    )
    newer = {**curated, "notes": ["checked again"]}
    run(session_factory, json.dumps({"annotation": newer}))
    with session_factory() as session:
        store = RecordStore(session)
        assert store.annotation(item["id"]) == {**newer, "mined": mined}
        row = store.get(item["id"])
        assert (row.function, row.backend, row.releases) == (
            "_copy_lowering",
            "mosaic_gpu",
            " 0.9.2 0.10.2 ",
        )
        assert "site" not in row.document  # the record itself stays as imported
        assert store.record_for_rule("MGPU-TEST") is not None


def test_bad_annotations_are_refused(session_factory: Factory) -> None:
    bad = {"annotation": {"recordId": "x", "corrections": [{"field": "f"}]}}
    with session_factory() as session, pytest.raises(ImportFailed) as failure:
        import_text(RecordStore(session), json.dumps(bad), "notes.json")
    assert failure.value.issue.field == "corrections.0.problem"


def test_the_store_version_moves_with_every_write_and_only_then(session_factory: Factory) -> None:
    def version() -> int:
        with session_factory() as session:
            return RecordStore(session).version()

    item = record()
    start = version()
    run(session_factory, json.dumps(item))
    after_add = version()
    run(session_factory, json.dumps(item))
    assert after_add > start
    assert version() == after_add  # unchanged import, same version
    run(session_factory, json.dumps({**item, "documentation": "changed"}))
    assert version() > after_add
