"""Carry out a chat command and say the result as cards, whichever chat it came from.

Every failure a user can cause becomes a friendly card, never an error status: a chat shows a
failed slash command as a bare "failed with the error …", which helps nobody.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import ValidationError

from app.answers.answer import Answer, Link, Quote
from app.answers.cards import compute_answer, match_answers, record_answer
from app.answers.catalog import Catalog
from app.answers.compute import ComputeService
from app.answers.links import Links
from app.answers.match import MatchService
from app.answers.record_text import find_record
from app.chatops.commands import (
    DEFAULT_SLASH,
    MAX_PASTE_CHARS,
    Command,
    Compute,
    Help,
    Lookup,
    Paste,
    parse_command,
)
from app.engines.mosaic_gpu import OPERATIONS
from app.errors import NotFound, ProblemError, SharedSlug
from app.records.store import RecordFilters, RecordStore
from app.rendering.text import validation_problem
from app.schemas.compute import ComputeRequest
from app.schemas.match import MatchRequest

MAX_MATCHES = 3
SEARCH_HITS = 5
_EXAMPLE = "{slash} pad shape=[7] dtype=int4 op=copy_gmem_to_smem"


@dataclass(frozen=True)
class Reply:
    cards: list[Answer]
    share: bool


class Answerer:
    """Answers chat commands from the store, the catalog and the engine."""

    def __init__(self, store: RecordStore, catalog: Catalog, links: Links) -> None:
        self.store = store
        self.catalog = catalog
        self.links = links

    def reply(self, text: str, slash: str = DEFAULT_SLASH) -> Reply:
        parsed = parse_command(text)
        try:
            cards = self._cards(parsed.command, slash)
        except ProblemError as exc:
            cards = [_notice("That did not work", Quote(label="Problem", text=exc.detail))]
        return Reply(cards, parsed.share)

    def _cards(self, command: Command, slash: str) -> list[Answer]:
        match command:
            case Help():
                return [help_card(slash)]
            case Lookup(key):
                return [self._lookup(key, slash)]
            case Compute():
                return [self._compute(command, slash)]
            case Paste(text, clipped):
                return self._match(text, clipped)

    def _lookup(self, key: str, slash: str) -> Answer:
        try:
            row = find_record(self.store, key)
        except NotFound:
            return self._not_found(key, slash)
        except SharedSlug:
            return self._shared_slug(key)
        return record_answer(row.document, self.store.annotation(row.id), self.links)

    def _shared_slug(self, slug: str) -> Answer:
        page = self.store.search(RecordFilters(slug=slug), limit=SEARCH_HITS, cursor=None)
        hits = [Link(label=row.error_message, url=self.links.record(row.id)) for row in page.rows]
        if page.total > len(hits):
            hits.append(Link(label=f"All {page.total}", url=self.links.search(slug=slug)))
        return _notice(
            f"{page.total} records share that slug",
            Quote(label="You asked for", text=slug),
            "Their messages begin alike: pick one by its message.",
            links=tuple(hits),
        )

    def _not_found(self, key: str, slash: str) -> Answer:
        page = self.store.search(RecordFilters(q=key), limit=SEARCH_HITS, cursor=None)
        hits = tuple(
            Link(label=row.error_message, url=self.links.record(row.id)) for row in page.rows
        )
        advice = (
            "Records that mention it:"
            if hits
            else f"Paste the traceback or the error message, or try {slash} help."
        )
        return _notice(
            "No record with that id or slug",
            Quote(label="You asked for", text=key),
            advice,
            links=hits,
        )

    def _compute(self, command: Compute, slash: str) -> Answer:
        if command.unknown:
            known = ", ".join(f"{key}=" for key in ("shape", "dtype", "op", "target", "jax"))
            return _notice(
                "Unknown compute settings",
                Quote(label="Not understood", text=" ".join(command.unknown)),
                f"Give {known} — for example {_EXAMPLE.format(slash=slash)}",
            )
        try:
            request = ComputeRequest.model_validate(command.fields)
        except ValidationError as exc:
            problem = validation_problem(exc)
            return _notice(
                "Not enough to compute",
                Quote(label="Problem", text=problem),
                f"Operations: {', '.join(OPERATIONS)}.",
            )
        return compute_answer(ComputeService(self.catalog).compute(request), self.links)

    def _match(self, text: str, clipped: bool) -> list[Answer]:
        service = MatchService(self.catalog)
        response = service.match(MatchRequest(text=text))
        cards = match_answers(response, service.catalog.records, self.links)
        notes = []
        if clipped:
            notes.append(f"Only the last {MAX_PASTE_CHARS:,} characters of the paste were read.")
        if len(cards) > MAX_MATCHES:
            notes.append(f"{len(cards) - MAX_MATCHES} more matched errors are not shown.")
        if notes:
            about = Answer(kind="notice", headline="About this answer", notes=tuple(notes))
            cards = [*cards[:MAX_MATCHES], about]
        return cards


def _notice(
    headline: str, quote: Quote | None = None, note: str = "", links: tuple[Link, ...] = ()
) -> Answer:
    """A reply that is no error's answer: a problem with the command, or where to look."""
    return Answer(
        kind="notice",
        headline=headline,
        quotes=(quote,) if quote else (),
        notes=(note,) if note else (),
        links=links,
    )


def help_card(slash: str) -> Answer:
    return Answer(
        kind="notice",
        headline="errata: JAX Pallas / Mosaic GPU alignment errors, matched and fixed",
        notes=(
            f"{slash} <traceback or error message> — the known error, its values and the best fix.",
            f"{slash} <record id or slug> — what a known error means and how to fix it.",
            f"{_EXAMPLE.format(slash=slash)} — JAX's verdict and verified fixes "
            f"(operations: {', '.join(OPERATIONS)}); add jax=0.10.2, semantics=Lane or "
            "also=0.9.2,0.12.0.1 (releases every fix must pass in too).",
            f"{slash} share … — post the answer to the channel; answers are private otherwise.",
        ),
    )
