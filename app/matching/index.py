"""Many message patterns, one pass over the paste.

Each pattern's longest required literal goes into one Aho-Corasick automaton; a scan of the
text yields the few patterns whose literal occurs, and only those run through RE2 for their
groups. The answers are those of running every pattern on every text, only faster:
patterns without a usable literal are verified on every text (a small, capped bucket).

RE2 ``Set`` is not used as the index: it stops compiling at ~1,250 patterns, returns no
groups, and reports a DFA out of memory as "no match".
"""

from __future__ import annotations

import bisect
import copy
import re
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any, overload

import ahocorasick_rs

from app.jaxref.regex_syntax import (
    SyntaxUnsupported,
    extend_trailing_lazy,
    leading_literal,
    parse,
    prefix_pattern,
    render,
    required_literals,
)
from app.jaxref.templates import PatternError, compile_bounded, compile_pattern
from app.matching.scan import line_starts
from app.packed import PackedSequence

# A literal shorter than this would make its pattern a candidate for nearly every line.
MIN_LITERAL = 4
# Any stretch of a required literal is required too; a bounded key keeps the automaton small.
MAX_KEY = 32
# Patterns without a usable literal run on every text; more than this many is refused.
MAX_UNINDEXED = 256
# A truncated message must still show the first literal of at least MIN_HEAD characters,
# up to HEAD_CHARS of it.
MIN_HEAD, HEAD_CHARS = 12, 16
COMPILED_CACHE_SIZE = 4096
_ENDS_LAZY = re.compile(r"[*+?}]\?\)*\Z")
_TEXT_ANCHOR = re.compile(r"\\[Az]")


@dataclass(frozen=True)
class PatternEntry:
    """One wording of one record's message: several entries may share a record."""

    record_id: str
    pattern: str
    variant: str = "current"  # or ``older_wording(until)``, or "older" when undated
    metadata: Mapping[str, str] = field(default_factory=dict)
    # Python's own message at JAX's call of user code: read only where that call raised it.
    called_by: CalledBy | None = None
    # Python's own message at the user's call of one of JAX's public functions, by the names
    # a call spells it with (``copy_gmem_to_smem``): read only where the user's code called it.
    call_of: frozenset[str] = frozenset()


@dataclass(frozen=True)
class CalledBy:
    """Where a record of Python's own error at JAX's call of user code stands: the functions
    of JAX's that make the call, and JAX's wrappers between them and the user's function
    (``wrap_with_transforms``), each as a traceback names it, by (file, function); and the
    functions of JAX's API under which the call is made where JAX hides all its frames
    (``fori_loop``), as the user's own line calls them."""

    callers: frozenset[tuple[str, str]]
    through: frozenset[tuple[str, str]] = frozenset()
    under: frozenset[str] = frozenset()


def call_names(spellings: Iterable[str]) -> frozenset[str]:
    """``PatternEntry.call_of`` from a record's ``calledAs``: ``copy_gmem_to_smem`` for
    ``plgpu.copy_gmem_to_smem``, as a call of it is written after its module's name."""
    return frozenset(spelled.rsplit(".", 1)[-1] for spelled in spellings)


_OLDER_WORDING = "older wording ({})"
_OLDER_WORDING_UNTIL = re.compile(r"older wording \((?P<until>\d+(?:\.\d+){2,3})\)")


def older_wording(until: str) -> str:
    """The variant of a wording that JAX printed until the release ``until``."""
    return _OLDER_WORDING.format(until)


def wording_until(variant: str) -> str | None:
    """The last release that printed the wording a variant names, if it says."""
    found = _OLDER_WORDING_UNTIL.fullmatch(variant)
    return found["until"] if found else None


@dataclass(frozen=True)
class Hit:
    """Pattern ``entry`` matched ``texts[text]``; captures keyed by group name or number."""

    entry: int
    text: int
    captures: dict[str, str]
    start: int
    end: int
    truncated: bool = False
    coverage: float = 1.0  # share of the pattern's literal text present (truncated hits)


@dataclass(frozen=True)
class SkippedEntry:
    entry: PatternEntry
    reason: str


EntryLike = PatternEntry | tuple[Any, ...]


@dataclass(frozen=True)
class _Prepared:
    pattern: str  # what actually runs: the entry's pattern, trailing lazy group extended
    literals: tuple[str, ...]
    head: str | None  # the first long literal, lowercased and cut to HEAD_CHARS
    key: str  # the longest literal, lowercased and cut to MAX_KEY: what the index looks for

    @property
    def indexed(self) -> bool:
        return len(self.key) >= MIN_LITERAL


@dataclass(frozen=True)
class _Prefix:
    pattern: Any  # matches the end of a text that is the start of a match
    # The literal text the pattern starts with, up to the head's length: a cut that shows
    # the head shows this, as the pattern spells it.
    opening: str


class PatternIndex:
    """Build once per set of records with ``PatternIndex.build``; safe to share between threads.

    Patterns are compiled on first use and kept in a bounded cache, so a large index costs
    only what its matched patterns need.
    """

    def __init__(
        self,
        entries: Sequence[PatternEntry],
        prepared: Sequence[_Prepared],
        literals: _Keys,
        heads: _Keys,
        unindexed: tuple[int, ...],
        skipped: tuple[SkippedEntry, ...],
    ) -> None:
        self.entries = entries
        self.skipped = skipped
        self._prepared = prepared
        self._literals = literals
        self._heads = heads
        self._unindexed = unindexed
        self._start_caches()
        # Built with the index (off the request path), for overlays that hide records.
        by_record: dict[str, list[int]] = {}
        for number, entry in enumerate(entries):
            by_record.setdefault(entry.record_id, []).append(number)
        self._by_record = {key: tuple(value) for key, value in by_record.items()}

    def _start_caches(self) -> None:
        """What the index works out on use: empty when built, and when unpickled."""
        self._compiled: OrderedDict[int, Any] = OrderedDict()
        self._prefixes: dict[int, _Prefix | None] = {}
        self._by_opening: dict[int, dict[str, tuple[tuple[int, _Prefix], ...]]] = {}
        self._multiline: dict[int, Any] = {}  # unindexed entries, with ^ and $ per line
        self._lock = threading.Lock()
        self.broken: dict[int, str] = {}  # entries RE2 refused when first needed

    def __getstate__(self) -> dict[str, Any]:
        """A pickle keeps the entries and their analysis, not what is worked out on use."""
        return {name: self.__dict__[name] for name in _PICKLED}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._start_caches()

    def packed(self) -> PatternIndex:
        """A copy holding its entries and their analysis packed (``app.packed``), to be
        pickled: unpickled, it reads only the entries whose keys a paste holds."""
        copied = copy.copy(self)
        copied.entries = PackedSequence.pack(self.entries)
        copied._prepared = PackedSequence.pack(self._prepared)
        return copied

    @classmethod
    def build(cls, entries: Iterable[EntryLike]) -> PatternIndex:
        """Index ``entries`` (``PatternEntry`` or ``(record_id, pattern[, variant[, meta]])``)."""
        kept: list[PatternEntry] = []
        prepared: list[_Prepared] = []
        skipped: list[SkippedEntry] = []
        keys: dict[str, list[int]] = {}
        heads: dict[str, list[int]] = {}
        unindexed: list[int] = []
        for item in entries:
            entry = item if isinstance(item, PatternEntry) else PatternEntry(*item)
            ready = _prepare(entry.pattern)
            if not ready.indexed and len(unindexed) >= MAX_UNINDEXED:
                reason = f"no literal text of {MIN_LITERAL}+ characters to index it by"
                skipped.append(SkippedEntry(entry, reason))
                continue
            number = len(kept)
            kept.append(entry)
            prepared.append(ready)
            if ready.indexed:
                keys.setdefault(ready.key, []).append(number)
            else:
                unindexed.append(number)
            if ready.head:
                heads.setdefault(ready.head, []).append(number)
        return cls(
            tuple(kept),
            prepared,
            _Keys(keys),
            _Keys(heads),
            tuple(unindexed),
            tuple(skipped),
        )

    def __len__(self) -> int:
        return len(self.entries)

    def entries_of(self, record_id: str) -> tuple[int, ...]:
        """The numbers of a record's entries."""
        return self._by_record.get(record_id, ())

    def search(self, texts: Sequence[str]) -> list[Hit]:
        """Every (entry, text) where the entry's pattern matches, ordered by text then entry."""
        hits: list[Hit] = []
        unindexed = self._present_unindexed(texts)
        candidates = self._candidates(texts)
        for number in range(len(texts)) if unindexed else sorted(candidates):
            text = texts[number]
            for entry in sorted(candidates.get(number, set()).union(unindexed)):
                compiled = self._compile(entry)
                found = _search(compiled, text) if compiled is not None else None
                if found is not None:
                    hits.append(Hit(entry, number, _captures(found), found.start(), found.end()))
        return hits

    def search_truncated(self, text: str) -> list[Hit]:
        """Entries of which the end of ``text`` is the start of a match, cut off early.

        Only patterns whose first long literal shows in ``text`` are tried, and only if
        that literal lies inside the cut-off match, so a cut must leave enough of the
        message to be sure.
        """
        return self.search_truncated_in([text])

    def search_truncated_in(self, texts: Sequence[str]) -> list[Hit]:
        """``search_truncated`` of each text, with one automaton pass over them all. The
        entries sharing a head are tried by the opening each shows: records of one message
        share both, and a text without it is passed once for them all."""
        heads: dict[int, set[int]] = {}
        for number, head in self._heads.hits(texts):
            heads.setdefault(number, set()).add(head)
        hits: list[Hit] = []
        for number in sorted(heads):
            text = texts[number]
            lowered = text.lower()
            shown: dict[int, _Prefix] = {}
            for head in heads[number]:
                for opening, prefixed in self._openings(head).items():
                    if opening in text:
                        shown.update(prefixed)
            for entry in sorted(shown):
                hit = self._truncated_hit(entry, shown[entry], number, text, lowered)
                if hit is not None:
                    hits.append(hit)
        return hits

    def _truncated_hit(
        self, entry: int, prefix: _Prefix, number: int, text: str, lowered: str
    ) -> Hit | None:
        """The cut-off match of ``entry`` in ``text``, which shows the pattern's opening.
        The cheap test comes first: a text without the entry's key (an entry with a head
        has one) holds no whole match."""
        full = self._compile(entry)
        ready = self._prepared[entry]
        if full is None or (ready.key in lowered and _search(full, text) is not None):
            return None
        found = _search(prefix.pattern, text)
        if found is None:
            return None
        seen = text[found.start() :]
        if ready.head is None or ready.head not in seen.lower():
            return None
        captures = {k: v for k, v in _captures(found).items() if v}
        coverage = _coverage(ready.literals, seen)
        return Hit(entry, number, captures, found.start(), len(text), True, coverage)

    def holding_a_head(self, texts: Sequence[str]) -> set[int]:
        """The numbers of the texts holding the first long literal of some pattern: the
        start of a message, which a text cut or broken after it still shows."""
        return {number for number, _ in self._heads.hits(texts)}

    def literals(self, entry: int) -> tuple[str, ...]:
        """The literal runs every text the entry matches must hold, in pattern order."""
        return self._prepared[entry].literals

    def opening(self, entry: int) -> str:
        """The literal text every match of the entry begins with; none where a value does."""
        with suppress(SyntaxUnsupported, RecursionError):
            return leading_literal(parse(self._prepared[entry].pattern))
        return ""

    def group_names(self, entry: int) -> tuple[str, ...]:
        """The pattern's named groups, in pattern order (empty if RE2 refused it)."""
        compiled = self._compile(entry)
        if compiled is None:
            return ()
        return tuple(key for key in _capture_keys(compiled) if not key.isdigit())

    def pattern(self, entry: int) -> str:
        """The pattern as it runs (a trailing lazy group extended to the end of the line)."""
        return self._prepared[entry].pattern

    def specificity(self, entry: int) -> tuple[int, int]:
        """Orders entries matching the same text: more literal text, then fewer wildcards."""
        prepared = self._prepared[entry]
        return sum(map(len, prepared.literals)), -len(prepared.pattern)

    def _candidates(self, texts: Sequence[str]) -> dict[int, set[int]]:
        """The entries whose key occurs in each text that holds any, by the text's number."""
        found: dict[int, set[int]] = {}
        for number, key_id in set(self._literals.hits(texts)):
            found.setdefault(number, set()).update(self._literals.entries[key_id])
        return found

    def _present_unindexed(self, texts: Sequence[str]) -> set[int]:
        """Patterns without a literal that match somewhere: one search each, not one per text."""
        if not self._unindexed:
            return set()
        joined = "\n".join(texts)
        return {entry for entry in self._unindexed if self._matches_somewhere(entry, joined)}

    def _matches_somewhere(self, entry: int, joined: str) -> bool:
        """Whether the entry matches some line of ``joined`` (``^``/``$`` at each line break)."""
        if self._compile(entry) is None:
            return False
        pattern = self._prepared[entry].pattern
        if _TEXT_ANCHOR.search(pattern):
            return True  # \A and \z still mean the whole text: try it on every line
        with self._lock:
            multiline = self._multiline.get(entry)
        if multiline is None:
            multiline = compile_bounded("(?m)" + pattern)
            with self._lock:
                self._multiline[entry] = multiline
        return _search(multiline, joined) is not None

    def _compile(self, entry: int) -> Any:
        with self._lock:
            compiled = self._compiled.get(entry)
            if compiled is not None:
                self._compiled.move_to_end(entry)
                return compiled
            if entry in self.broken:
                return None
        try:
            compiled = compile_pattern(self._prepared[entry].pattern)
        except PatternError as exc:
            with self._lock:
                self.broken[entry] = str(exc)
            return None
        with self._lock:
            self._compiled[entry] = compiled
            if len(self._compiled) > COMPILED_CACHE_SIZE:
                self._compiled.popitem(last=False)
        return compiled

    def _prefix(self, entry: int) -> _Prefix | None:
        with self._lock:
            if entry in self._prefixes:
                return self._prefixes[entry]
        ready = self._prepared[entry]
        try:
            tree = parse(ready.pattern)
            compiled = compile_bounded(f"(?:{prefix_pattern(tree)})\\z")
            prefix = _Prefix(compiled, leading_literal(tree)[: len(ready.head or "")])
        except (SyntaxUnsupported, PatternError, RecursionError):
            prefix = None
        with self._lock:
            self._prefixes[entry] = prefix
        return prefix

    def _openings(self, head: int) -> dict[str, tuple[tuple[int, _Prefix], ...]]:
        """The entries of a head with a cut-off pattern, by the opening they start with."""
        with self._lock:
            grouped = self._by_opening.get(head)
        if grouped is not None:
            return grouped
        by_opening: dict[str, list[tuple[int, _Prefix]]] = {}
        for entry in self._heads.entries[head]:
            prefix = self._prefix(entry)
            if prefix is not None:
                by_opening.setdefault(prefix.opening, []).append((entry, prefix))
        grouped = {opening: tuple(group) for opening, group in by_opening.items()}
        with self._lock:
            self._by_opening[head] = grouped
        return grouped


@lru_cache(maxsize=1 << 18)
def _prepare(pattern: str) -> _Prepared:
    """Analyse one pattern; cached, since a rebuilt index mostly holds the same patterns."""
    if _ENDS_LAZY.search(pattern):
        with suppress(SyntaxUnsupported):
            pattern = render(extend_trailing_lazy(parse(pattern)))
    try:
        literals = tuple(required_literals(pattern))
    except SyntaxUnsupported:
        literals = ()
    head = next((run for run in literals if len(run) >= MIN_HEAD), None)
    key = max(literals, key=len, default="")[:MAX_KEY].lower()
    return _Prepared(pattern, literals, head[:HEAD_CHARS].lower() if head else None, key)


# What a pickled index keeps (``PatternIndex.__getstate__``).
_PICKLED = ("entries", "skipped", "_prepared", "_literals", "_heads", "_unindexed", "_by_record")


class _Keys:
    """Literal keys, each with the entries it stands for, found by one Aho-Corasick pass."""

    def __init__(self, keys: Mapping[str, Sequence[int]]) -> None:
        self.keys = tuple(keys)  # kept for a pickle: the automaton cannot be pickled
        self.entries = [tuple(numbers) for numbers in keys.values()]
        self._automaton = ahocorasick_rs.AhoCorasick(list(keys)) if keys else None

    def __reduce__(self) -> tuple[Any, ...]:
        return (_Keys, (dict(zip(self.keys, self.entries, strict=True)),))

    def hits(self, texts: Sequence[str]) -> Iterator[tuple[int, int]]:
        """(text number, key id) for each occurrence of a key in the texts, lowercased."""
        if self._automaton is None or not texts:
            return
        joined = "\n".join(texts).lower()
        pieces = texts
        if len(joined) != sum(map(len, texts)) + len(texts) - 1:  # "İ" lowers to two
            pieces = [text.lower() for text in texts]
            joined = "\n".join(pieces)
        starts = line_starts(pieces)
        for key_id, _, end in self._automaton.find_matches_as_indexes(joined, overlapping=True):
            yield bisect.bisect_right(starts, end - 1) - 1, key_id


def _search(compiled: Any, text: str) -> Any:
    """``compiled.search(text)``, ASCII text searched as its bytes, whose offsets are its
    characters': for ``str``, RE2's Python wrapper maps every offset between characters and
    UTF-8 bytes, which cost six times the search. ``_captures`` decodes the groups."""
    return compiled.search(text.encode("ascii") if text.isascii() else text)


def _captures(found: Any) -> dict[str, str]:
    """Named groups by name, unnamed ones by number (``"1"``); unmatched groups left out."""
    return {
        key: value.decode("ascii") if isinstance(value, bytes) else value
        for key, value in zip(_capture_keys(found.re), found.groups(), strict=True)
        if value is not None
    }


@lru_cache(maxsize=COMPILED_CACHE_SIZE)
def _capture_keys(compiled: Any) -> tuple[str, ...]:
    """Each group's key in ``_captures``, by group number; worked out once per pattern, as
    RE2's wrapper builds its name table anew on every call."""
    names = {index: name for name, index in compiled.groupindex.items()}
    return tuple(names.get(index, str(index)) for index in range(1, compiled.groups + 1))


def _coverage(literals: Sequence[str], seen: str) -> float:
    """Share of the pattern's literal text visible in ``seen``, up to where it was cut."""
    total = sum(len(run) for run in literals)
    present = 0
    for run in literals:
        if run in seen:
            present += len(run)
            continue
        present += max((k for k in range(len(run), 0, -1) if seen.endswith(run[:k])), default=0)
        break
    return present / total if total else 0.0


class OverlaidIndex:
    """A built index with some records' patterns replaced, without rebuilding it.

    The base's entries of ``replaced`` records are left out and ``overlay``'s entries (a
    small index of the records written since the base was built) are numbered after the
    base's. Answers are those of one index built over the same entries: replacing one
    record of 100,000 costs an index of its own few patterns.
    """

    def __init__(self, base: PatternIndex, overlay: PatternIndex, replaced: frozenset[str]):
        self.base = base
        self.overlay = overlay
        self.replaced = replaced
        self._offset = len(base.entries)
        self._hidden = frozenset(
            number for record_id in replaced for number in base.entries_of(record_id)
        )
        self.entries: Sequence[PatternEntry] = _Joined(base.entries, overlay.entries)

    def __len__(self) -> int:
        return len(self.base) - len(self._hidden) + len(self.overlay)

    def packed(self) -> OverlaidIndex:
        """``PatternIndex.packed`` of the base; the overlay is small."""
        return OverlaidIndex(self.base.packed(), self.overlay, self.replaced)

    def search(self, texts: Sequence[str]) -> list[Hit]:
        hits = self._merge(self.base.search(texts), self.overlay.search(texts))
        return sorted(hits, key=lambda hit: (hit.text, hit.entry))

    def search_truncated_in(self, texts: Sequence[str]) -> list[Hit]:
        hits = self._merge(
            self.base.search_truncated_in(texts), self.overlay.search_truncated_in(texts)
        )
        return sorted(hits, key=lambda hit: (hit.text, hit.entry))

    def holding_a_head(self, texts: Sequence[str]) -> set[int]:
        """Texts holding a head of the base (a hidden record's head only makes a text worth
        trying; the entries tried there are filtered) or of the overlay."""
        return self.base.holding_a_head(texts) | self.overlay.holding_a_head(texts)

    def entries_of(self, record_id: str) -> tuple[int, ...]:
        if record_id in self.replaced:
            return tuple(n + self._offset for n in self.overlay.entries_of(record_id))
        return self.base.entries_of(record_id)

    def literals(self, entry: int) -> tuple[str, ...]:
        if entry < self._offset:
            return self.base.literals(entry)
        return self.overlay.literals(entry - self._offset)

    def opening(self, entry: int) -> str:
        if entry < self._offset:
            return self.base.opening(entry)
        return self.overlay.opening(entry - self._offset)

    def group_names(self, entry: int) -> tuple[str, ...]:
        if entry < self._offset:
            return self.base.group_names(entry)
        return self.overlay.group_names(entry - self._offset)

    def pattern(self, entry: int) -> str:
        if entry < self._offset:
            return self.base.pattern(entry)
        return self.overlay.pattern(entry - self._offset)

    def specificity(self, entry: int) -> tuple[int, int]:
        if entry < self._offset:
            return self.base.specificity(entry)
        return self.overlay.specificity(entry - self._offset)

    def _merge(self, base: list[Hit], overlay: list[Hit]) -> list[Hit]:
        kept = [hit for hit in base if hit.entry not in self._hidden]
        return kept + [replace(hit, entry=hit.entry + self._offset) for hit in overlay]


AnyIndex = PatternIndex | OverlaidIndex


class _Joined(Sequence[PatternEntry]):
    """Two tuples of entries read as one, without copying the larger."""

    def __init__(self, first: Sequence[PatternEntry], second: Sequence[PatternEntry]) -> None:
        self._first = first
        self._second = second

    def __len__(self) -> int:
        return len(self._first) + len(self._second)

    @overload
    def __getitem__(self, index: int) -> PatternEntry: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[PatternEntry]: ...
    def __getitem__(self, index: int | slice) -> PatternEntry | Sequence[PatternEntry]:
        if isinstance(index, slice):
            return (*self._first, *self._second)[index]
        if index < 0:
            index += len(self)
        if index < len(self._first):
            return self._first[index]
        return self._second[index - len(self._first)]
