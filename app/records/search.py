"""Full-text search of the records: the words indexed, what a query means, and the snippet
shown with each result.

Both databases index the words this module cuts (runs of letters and digits, lowercased),
and both read a query as this module parses it, so SQLite's FTS5 and PostgreSQL's text
search find the same records: PostgreSQL's own parser would read `mgpu.warpgroup_barrier`
as one host name and `jax/_src/…/primitives.py` as one file, and find neither word in them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from sqlalchemy import (
    BigInteger,
    ColumnElement,
    Select,
    bindparam,
    case,
    cast,
    func,
    literal_column,
    table,
)
from sqlalchemy import text as sql
from sqlalchemy.orm import Session

from app.errors import invalid_field
from app.records.models import RecordRow
from app.records.schema import Snippet, SnippetField, SnippetPart

# Words or quoted phrases of one query: each is looked up in the index, and together they
# must all match.
MAX_QUERY_TERMS = 10
# Characters of a field indexed: PostgreSQL refuses a tsvector past 1 MB, and a curated
# record may carry megabytes of documentation.
MAX_INDEXED_CHARS = 100_000
# A last word typed without a space after it is also read as the start of a longer word;
# shorter than this, it would be the start of too many to tell anything.
MIN_PARTIAL_CHARS = 3
# A snippet's length, the text kept before its first matched word, and how far into a field
# words are looked for: a page of 200 results reads 200 documents at most this far.
SNIPPET_CHARS = 200
SNIPPET_LEAD_CHARS = 60
SNIPPET_SCAN_CHARS = 20_000
# How each part of a record counts in its relevance: the message most, then its names
# (class, tags, a slug's own words), then what people wrote about it (documentation,
# solutions). With these, `warpgroup` finds first the record of copies whose bytes must be
# divisible by the warpgroup size, on both databases, among JAX's mined records.
MESSAGE_WEIGHT = 1.0
NAMES_WEIGHT = 0.4
BODY_WEIGHT = 0.1
# What the longer words a last partial word starts count for in PostgreSQL's ranking,
# against the word itself, so that a record holding the word typed comes first.
PARTIAL_SHARE = 0.1
# Relevance is compared in steps of 1/RANK_STEPS of a score: records whose scores agree that
# far are equally relevant, and then the curated ones come first.
RANK_STEPS = 10_000

_WORD = re.compile(r"[^\W_]+")
# ASCII text, nearly every record's, is cut into the same words 3.5 times faster by bytes:
# its letters and digits kept, every other byte a space.
_ASCII_SPACES = bytes(byte if chr(byte).isalnum() else 0x20 for byte in range(256))
# A quoted phrase (its closing quote optional) and a `*` after it, or a run of anything else.
_TERM = re.compile(r'"(?P<phrase>[^"]*)"?(?P<star>\*?)|(?P<bare>[^\s"]+)')
_SPACE = re.compile(r"\s+")
_ELLIPSIS = "…"
_FTS = table("record_search")  # SQLite's index: migration 0007
_ROWID: ColumnElement[int] = literal_column("records.rowid")
_WORD_COLUMNS = "search_message, search_names, search_body"
_INDEX = sql(
    f"INSERT INTO record_search(rowid, {_WORD_COLUMNS})"
    f" SELECT rowid, {_WORD_COLUMNS} FROM records WHERE id IN :ids"
).bindparams(bindparam("ids", expanding=True))
_UNINDEX = sql(
    f"INSERT INTO record_search(record_search, rowid, {_WORD_COLUMNS})"
    f" SELECT 'delete', rowid, {_WORD_COLUMNS} FROM records WHERE id IN :ids"
).bindparams(bindparam("ids", expanding=True))
# PostgreSQL's: migration 0007
_VECTOR: ColumnElement[Any] = literal_column("records.search_vector")
# ts_rank's weights of the labels D, C, B, A: the vector labels message A, names B, body C.
_LABEL_WEIGHTS = f"'{{0, {BODY_WEIGHT}, {NAMES_WEIGHT}, {MESSAGE_WEIGHT}}}'::float4[]"


class Ending(Enum):
    """How a term's last word matches."""

    WORD = "word"  # as a whole word
    PREFIX = "prefix"  # as the start of a word: `warpgr*`
    PARTIAL = "partial"  # either: the last word of a query, perhaps still being typed


@dataclass(frozen=True)
class Term:
    """A word, or a phrase: words that stand next to each other, in order."""

    words: tuple[str, ...]
    ending: Ending = Ending.WORD


def words(text: str) -> list[str]:
    """The words both databases index and look up: one tokenizer, so they agree."""
    text = text.lower()
    if text.isascii():
        return text.encode().translate(_ASCII_SPACES).decode().split()
    return _WORD.findall(text)


def search_columns(document: dict[str, Any]) -> dict[str, str]:
    """The words of a record each part of the index reads, by column. Of its slug, only the
    words its message lacks: a slug is most often the message's start, and its words again
    would count a short message's words twice."""
    message = _indexed(document.get("errorMessage") or "")
    in_message = set(message.split())
    slug = [word for word in words(document.get("slug") or "") if word not in in_message]
    names = [*slug, document.get("errorClass") or "", *_texts(document, "tags")]
    body = [document.get("documentation") or "", *_texts(document, "solutions")]
    return {
        "search_message": message,
        "search_names": _indexed(" ".join(names)),
        "search_body": _indexed("\n".join(body)),
    }


def _texts(document: dict[str, Any], field: str) -> list[str]:
    return [item for item in document.get(field) or [] if isinstance(item, str)]


def _indexed(text: str) -> str:
    return " ".join(words(text[:MAX_INDEXED_CHARS]))


def index_records(session: Session, record_ids: list[str]) -> None:
    """SQLite's index takes in the words of these records' rows (PostgreSQL's is a column
    generated with the row). One statement for them all: a trigger per row, as FTS5 writes
    out its pending words at every statement's savepoint, made an import four times slower."""
    if session.get_bind().dialect.name == "sqlite":
        session.execute(_INDEX, {"ids": record_ids})


def unindex_records(session: Session, record_ids: list[str]) -> None:
    """SQLite's index forgets these records' rows, before they are deleted: an index over
    another table's rows removes a row's entries by the words it was given."""
    if session.get_bind().dialect.name == "sqlite":
        session.execute(_UNINDEX, {"ids": record_ids})


def parse_query(q: str) -> list[Term]:
    """The terms of ``q``: its words, its quoted phrases, and a run of words joined by
    punctuation (`copy_gmem_to_smem`, `jax-ml/jax#30104`) as a phrase. A term ending in `*`
    is a prefix. No term where ``q`` holds no letter or digit."""
    found = list(_TERM.finditer(q))
    terms: list[Term] = []
    for number, match in enumerate(found, start=1):
        text = match["bare"] if match["phrase"] is None else match["phrase"]
        term_words = tuple(words(text))
        if not term_words:
            continue
        ending = Ending.WORD
        if match["star"] or (match["bare"] or "").endswith("*"):
            ending = Ending.PREFIX
        elif (
            number == len(found)
            and match["bare"] is not None
            and match.end() == len(q)
            and len(term_words[-1]) >= MIN_PARTIAL_CHARS
        ):
            ending = Ending.PARTIAL
        terms.append(Term(term_words, ending))
    if len(terms) > MAX_QUERY_TERMS:
        raise invalid_field("q", f"at most {MAX_QUERY_TERMS} words or quoted phrases")
    return terms


def ranked(
    query: Select[RecordRow], terms: Sequence[Term], dialect: str
) -> tuple[Select[RecordRow], ColumnElement[int]]:
    """``query`` narrowed to the records holding every term, and their relevance: a whole
    number, higher first, whose last bit is 1 for a curated record. SQLite scores by BM25
    (FTS5's ``bm25``), PostgreSQL by ``ts_rank``, each field weighted as this module says."""
    score: ColumnElement[float]
    if dialect == "postgresql":
        matched = _to_tsquery(tsquery(terms))
        query = query.where(_VECTOR.op("@@")(matched))
        score = _ts_rank(matched)
        if any(term.ending is Ending.PARTIAL for term in terms):
            # ts_rank counts each word a prefix starts in full ("warpgroups" and "warpgroup",
            # twice "warpgroup" alone): the word typed ranks, the longer ones add a share.
            # (SQLite's query names both the word and the prefix: BM25 counts the word twice.)
            score = _ts_rank(_to_tsquery(tsquery(terms, whole_words=True))) + score * PARTIAL_SHARE
    else:
        # The index's rowid behind a unary + : offered the rowid, SQLite walked every live
        # record (by the index on retired) and ran the whole search again for each, 4 s.
        query = query.join(_FTS, literal_column("+record_search.rowid") == _ROWID).where(
            sql("record_search MATCH :terms").bindparams(terms=fts5_query(terms))
        )
        weights = (MESSAGE_WEIGHT, NAMES_WEIGHT, BODY_WEIGHT)
        score = -func.bm25(literal_column("record_search"), *weights)
    steps = cast(func.round(score * RANK_STEPS), BigInteger)
    return query, steps * 2 + case((RecordRow.curated, 1), else_=0)


def _to_tsquery(text: str) -> ColumnElement[Any]:
    return func.to_tsquery(literal_column("'simple'::regconfig"), text)


def _ts_rank(tsquery: ColumnElement[Any]) -> ColumnElement[float]:
    return func.ts_rank(literal_column(_LABEL_WEIGHTS), _VECTOR, tsquery)


def fts5_query(terms: Sequence[Term]) -> str:
    """SQLite FTS5's query: every term's words quoted, so none is read as its syntax."""
    rendered = []
    for term in terms:
        phrase = '"' + " ".join(term.words) + '"'
        if term.ending is Ending.PREFIX:
            phrase += "*"
        elif term.ending is Ending.PARTIAL:
            phrase = f"({phrase} OR {phrase}*)"
        rendered.append(phrase)
    return " AND ".join(rendered)


def tsquery(terms: Sequence[Term], *, whole_words: bool = False) -> str:
    """PostgreSQL's ``to_tsquery`` text: words quoted, phrases joined by ``<->``, prefixes
    ``:*``. A last partial word is a prefix, or with ``whole_words`` the word itself.
    (``websearch_to_tsquery`` has no prefixes.)"""
    rendered = []
    for term in terms:
        quoted = [f"'{word}'" for word in term.words]
        if term.ending is Ending.PREFIX or (term.ending is Ending.PARTIAL and not whole_words):
            quoted[-1] += ":*"
        rendered.append(f"({' <-> '.join(quoted)})")
    return " & ".join(rendered)


def snippet(terms: Sequence[Term], document: dict[str, Any]) -> Snippet | None:
    """A piece of the record's first field holding the most of the query's terms (the
    message, the documentation, a solution), cut around the first of them, the terms
    marked; None where no field shows one (a tag matched)."""
    fields: list[tuple[SnippetField, str]] = [("errorMessage", document.get("errorMessage") or "")]
    if isinstance(documentation := document.get("documentation"), str):
        fields.append(("documentation", documentation))
    fields += [("solutions", text) for text in _texts(document, "solutions")]
    best: tuple[int, SnippetField, str, list[tuple[int, int]]] | None = None
    for field, text in fields:
        text = _SPACE.sub(" ", text[:SNIPPET_SCAN_CHARS]).strip()
        found = [(match.group().lower(), match.span()) for match in _WORD.finditer(text)]
        spans: list[tuple[int, int]] = []
        shown = 0
        for term in terms:
            at = _occurrences(term, [word for word, _ in found])
            spans += [
                (found[start][1][0], found[start + len(term.words) - 1][1][1]) for start in at
            ]
            shown += bool(at)
        if shown and (best is None or shown > best[0]):
            best = (shown, field, text, sorted(spans))
    if best is None:
        return None
    _, field, text, spans = best
    return Snippet(field=field, parts=_parts(text, spans, _window(text, spans[0])))


def _occurrences(term: Term, found: list[str]) -> list[int]:
    """Where in ``found`` (a text's words) the term's words stand, one after the other."""
    *whole, last = term.words
    starts = []
    for start in range(len(found) - len(whole)):
        if found[start : start + len(whole)] != whole:
            continue
        word = found[start + len(whole)]
        if word == last or (term.ending is not Ending.WORD and word.startswith(last)):
            starts.append(start)
    return starts


def _window(text: str, first: tuple[int, int]) -> tuple[int, int]:
    """Where a snippet of ``text`` starts and ends: at most ``SNIPPET_CHARS`` from a little
    before its first matched word, cut at spaces where there are some."""
    start = 0
    if len(text) > SNIPPET_CHARS and first[0] > SNIPPET_LEAD_CHARS:
        lead = first[0] - SNIPPET_LEAD_CHARS
        space = text.find(" ", lead, first[0])
        start = space + 1 if space >= 0 else lead
    end = len(text)
    if end - start > SNIPPET_CHARS:
        space = text.rfind(" ", start, start + SNIPPET_CHARS)
        end = space if space > first[1] else start + SNIPPET_CHARS
    return start, end


def _parts(text: str, spans: list[tuple[int, int]], window: tuple[int, int]) -> list[SnippetPart]:
    """The window of ``text`` as plain and matched parts, an ellipsis where it was cut."""
    start, end = window
    parts: list[SnippetPart] = []
    plain = _ELLIPSIS if start else ""
    at = start
    for span_start, span_end in spans:
        if span_start < at or span_end > end:  # overlaps the one before, or cut off
            continue
        plain += text[at:span_start]
        if plain:
            parts.append(SnippetPart(text=plain, match=False))
        parts.append(SnippetPart(text=text[span_start:span_end], match=True))
        plain, at = "", span_end
    plain += text[at:end] + (_ELLIPSIS if end < len(text) else "")
    if plain:
        parts.append(SnippetPart(text=plain, match=False))
    return parts
