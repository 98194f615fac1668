"""Search by words on each database, over what a fresh ``errata serve`` loads (the curated
records and the 11,000 mined from JAX's source): relevance, phrases, prefixes, snippets,
pages, hostile queries, and the index kept with every write."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.orm import Session, sessionmaker

from app.config import SEED_PATHS, load_settings
from app.db import make_engine, make_session_factory, transaction
from app.errors import InvalidInput
from app.migrate import upgrade
from app.records.importer import import_paths, import_text
from app.records.search import (
    MAX_QUERY_TERMS,
    SNIPPET_CHARS,
    Ending,
    Term,
    fts5_query,
    parse_query,
    snippet,
    tsquery,
)
from app.records.store import CURSOR_PATTERN, MAX_PAGE_SIZE, Page, RecordFilters, RecordStore
from tests.conftest import Backend

Factory = sessionmaker[Session]
WARPGROUP_SIZE = "ffb598de9e3ff51b"  # copies must move bytes divisible by the warpgroup size
BODY = "Raised when the widget table is full and nothing can be evicted from it."


def _record(record_id: str, message: str, **fields: Any) -> str:
    record = {"id": record_id, "errorMessage": message, "errorClass": "ValueError", **fields}
    return json.dumps({"record": record})


# One word in the message of one record, the tags of another and the documentation of a
# third; and two records alike but for being curated, the mined one first by id.
OWN_RECORDS = "\n".join(
    [
        _record("weigh-message", "Quillwort table overflow", tags=["widgets"], documentation=BODY),
        _record("weigh-tags", "Table overflow again", tags=["quillwort"], documentation=BODY),
        _record(
            "weigh-body",
            "Table overflow once more",
            tags=["widgets"],
            documentation=f"Quillwort! {BODY}",
        ),
        _record("a-mined-twin", "Zinnwaldite kernel stalled", documentationSource="derived"),
        _record("z-curated-twin", "Zinnwaldite kernel stalled"),
    ]
)


@pytest.fixture(scope="module")
def shipped(backend: Backend) -> Iterator[Factory]:
    """A database of what a fresh server loads, and this module's own records."""
    settings = load_settings(database_url=backend.new_database())
    engine = make_engine(settings.resolved_database_url)
    upgrade(settings, engine)
    factory = make_session_factory(engine)
    import_paths(factory, [path for path in SEED_PATHS if path.exists()])
    with transaction(factory) as session:
        import_text(RecordStore(session), OWN_RECORDS, "own")
    yield factory
    engine.dispose()


def search(factory: Factory, q: str, limit: int = MAX_PAGE_SIZE, **fields: Any) -> Page:
    with factory() as session:
        return RecordStore(session).search(RecordFilters(q=q, **fields), limit=limit, cursor=None)


def ids(factory: Factory, q: str, **fields: Any) -> list[str]:
    return [row.id for row in search(factory, q, **fields).rows]


def marked(page: Page, record_id: str) -> list[str]:
    found = page.snippets[record_id]
    return [part.text for part in found.parts if part.match]


def test_warpgroup_ranks_the_warpgroup_size_record_first(shipped: Factory) -> None:
    page = search(shipped, "warpgroup")
    assert page.total > 100  # every record naming warpgroups, mined ones by the hundred
    assert page.rows[0].id == WARPGROUP_SIZE
    assert page.snippets[WARPGROUP_SIZE].field == "errorMessage"
    assert marked(page, WARPGROUP_SIZE) == ["warpgroup", "warpgroup", "WARPGROUP"]


def test_the_message_weighs_most_then_class_and_tags_then_documentation(
    shipped: Factory,
) -> None:
    assert ids(shipped, "quillwort") == ["weigh-message", "weigh-tags", "weigh-body"]
    page = search(shipped, "quillwort")
    assert marked(page, "weigh-message") == ["Quillwort"]
    assert "weigh-tags" not in page.snippets  # only its tags hold the word
    assert page.snippets["weigh-body"].field == "documentation"


def test_at_equal_relevance_curated_records_come_first(shipped: Factory) -> None:
    assert ids(shipped, "zinnwaldite stalled") == ["z-curated-twin", "a-mined-twin"]


def test_every_word_must_be_found(shipped: Factory) -> None:
    assert ids(shipped, "quillwort overflow again") == ["weigh-tags"]
    assert ids(shipped, "quillwort zinnwaldite") == []


def test_a_quoted_phrase_is_found_only_in_its_order(shipped: Factory) -> None:
    found = search(shipped, '"divisible by the warpgroup size"')
    assert found.rows[0].id == WARPGROUP_SIZE
    for row in found.rows:  # the record's message, and others' advice that quotes it
        assert "divisible by the warpgroup size" in [w.lower() for w in marked(found, row.id)]
    assert ids(shipped, '"the warpgroup by divisible"') == []
    # Words joined by punctuation are a phrase too: an identifier, a path, an issue.
    assert WARPGROUP_SIZE in ids(shipped, "WARPGROUP_SIZE")
    assert ids(shipped, "overflow_quillwort") == []


def test_a_starred_word_and_the_last_word_typed_are_prefixes(shipped: Factory) -> None:
    assert WARPGROUP_SIZE in ids(shipped, "warpgr*")
    assert WARPGROUP_SIZE in ids(shipped, "copies transferring a number of bytes divisi")
    assert ids(shipped, "quillw") == ["weigh-message", "weigh-tags", "weigh-body"]
    assert ids(shipped, "quillw ") == []  # a space after it: the word as typed
    assert ids(shipped, "qu") == []  # too short to stand for the words it starts
    # The word typed itself first, then the longer words it starts.
    assert ids(shipped, "warpgroup")[0] == WARPGROUP_SIZE


def test_pages_of_a_search_follow_each_other_without_gaps_or_repeats(shipped: Factory) -> None:
    whole = ids(shipped, "warpgroup")
    assert len(whole) > 100
    walked: list[str] = []
    cursor = None
    with shipped() as session:
        store = RecordStore(session)
        while True:
            page = store.search(RecordFilters(q="warpgroup"), limit=7, cursor=cursor)
            assert page.total == len(whole)
            walked += [row.id for row in page.rows]
            if page.next_cursor is None:
                break
            assert re.match(CURSOR_PATTERN, page.next_cursor)
            cursor = page.next_cursor
    assert walked == whole


def test_a_search_narrowed_by_filters_pages_alike(shipped: Factory) -> None:
    whole = ids(shipped, "warpgroup", error_class="NotImplementedError")
    assert WARPGROUP_SIZE in whole
    with shipped() as session:
        store = RecordStore(session)
        first = store.search(
            RecordFilters(q="warpgroup", error_class="NotImplementedError"), limit=2, cursor=None
        )
        second = store.search(
            RecordFilters(q="warpgroup", error_class="NotImplementedError"),
            limit=MAX_PAGE_SIZE,
            cursor=first.next_cursor,
        )
    assert [row.id for row in first.rows + second.rows] == whole


HOSTILE = [
    '"',
    '""',
    "*",
    "**warpgroup**",
    "warpgroup*:*",
    "NEAR(warpgroup size)",
    "warpgroup OR NOT size AND",
    "{search_message}: warpgroup",
    "search_body:warpgroup",
    "^warpgroup",
    "'; DROP TABLE records; --",
    "x & y | !z <-> w:*",
    "(((warpgroup",
    "!!!",
    "-",
    "…",
    "ß 🚀 ½",
    "\\",
    "w" * 500,
    "warpgroup " * 10,
]


@pytest.mark.parametrize("q", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_queries_find_words_or_nothing(shipped: Factory, q: str) -> None:
    page = search(shipped, q)
    assert page.total == len(page.rows)


@pytest.mark.parametrize(
    ("q", "why"),
    [
        ("a\x00b", "NUL"),
        ("w " * 250, f"at most {MAX_QUERY_TERMS} words"),
        ('"a" ' * (MAX_QUERY_TERMS + 1), f"at most {MAX_QUERY_TERMS} words"),
    ],
    ids=["nul", "many-words", "many-phrases"],
)
def test_a_query_past_its_limits_is_a_problem_naming_q(shipped: Factory, q: str, why: str) -> None:
    with pytest.raises(InvalidInput) as raised:
        search(shipped, q)
    assert raised.value.detail.startswith("q: ")
    assert why in raised.value.detail


def test_only_punctuation_finds_nothing_and_only_spaces_lists_all(shipped: Factory) -> None:
    assert search(shipped, "?!").total == 0
    with shipped() as session:
        everything = RecordStore(session).search(RecordFilters(), limit=5, cursor=None)
    blank = search(shipped, "   ", limit=5)
    assert (blank.total, [row.id for row in blank.rows]) == (
        everything.total,
        [row.id for row in everything.rows],
    )


def test_the_index_follows_every_write(shipped: Factory, backend: Backend) -> None:
    write = _record("rewritten", "Obsidian spindle jammed")
    with transaction(shipped) as session:
        import_text(RecordStore(session), write, "write")
    assert ids(shipped, "obsidian") == ["rewritten"]
    changed = _record("rewritten", "Basalt spindle jammed", tags=["quartzite"])
    with transaction(shipped) as session:
        import_text(RecordStore(session), changed, "change")
    assert ids(shipped, "obsidian") == []
    assert ids(shipped, "basalt quartzite") == ["rewritten"]
    retired = _record("rewritten", "Basalt spindle jammed", retired=True)
    with transaction(shipped) as session:
        import_text(RecordStore(session), retired, "retire")
    assert ids(shipped, "basalt") == []
    assert ids(shipped, "basalt", include_retired=True) == ["rewritten"]
    if backend.name == "sqlite":
        with shipped() as session:
            check = "INSERT INTO record_search(record_search, rank) VALUES ('integrity-check', 1)"
            session.execute(text(check))  # raises where the index and the rows disagree


# --- reading a query, cutting a snippet: no database -----------------------------------------


def test_a_query_is_read_as_words_phrases_and_prefixes() -> None:
    assert parse_query('copy "warpgroup size" jax-ml/jax#301* warpgr') == [
        Term(("copy",)),
        Term(("warpgroup", "size")),
        Term(("jax", "ml", "jax", "301"), Ending.PREFIX),
        Term(("warpgr",), Ending.PARTIAL),
    ]
    assert parse_query("warpgroup size ") == [Term(("warpgroup",)), Term(("size",))]
    assert parse_query('"unclosed phrase') == [Term(("unclosed", "phrase"))]
    assert parse_query('" * ! -') == []


def test_each_database_gets_the_query_with_its_words_quoted() -> None:
    terms = parse_query('NOT "a b"* c_d warpgr')
    assert fts5_query(terms) == '"not" AND "a b"* AND "c d" AND ("warpgr" OR "warpgr"*)'
    assert tsquery(terms) == "('not') & ('a' <-> 'b':*) & ('c' <-> 'd') & ('warpgr':*)"
    assert tsquery(terms, whole_words=True).endswith("& ('warpgr')")


def test_a_snippet_is_cut_around_the_words_and_keeps_the_text_as_written() -> None:
    words = " ".join(f"word{n}" for n in range(100))
    document = {
        "errorMessage": "Nothing here",
        "documentation": f"{words} The <b>warpgroup</b> & more {words}",
    }
    found = snippet(parse_query("warpgroup"), document)
    assert found is not None and found.field == "documentation"
    text = "".join(part.text for part in found.parts)
    assert text.startswith("…") and text.endswith("…")
    assert len(text) <= SNIPPET_CHARS + 2
    assert "The <b>warpgroup</b> & more" in text
    assert [part.text for part in found.parts if part.match] == ["warpgroup"]
    assert snippet(parse_query("absent"), document) is None
