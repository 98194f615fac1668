"""The errors of code calling a public Pallas function with arguments a release does not take.

``plgpu.copy_gmem_to_smem`` took its barrier by keyword in 0.4.35 and by position after;
``pl.pallas_call`` lost ``backend`` in 0.9.1; ``pl.semaphore_wait``'s ``dec`` became ``value``.
Code written for one release and run on another meets Python's own ``TypeError`` at its call
(``pallas_call() got an unexpected keyword argument 'backend'``), raised before any line of
JAX runs, so no site in JAX's source holds it. From the signatures of each release
(``app.knowledge.signatures``) come a record of each such error: a keyword some releases
refuse, a parameter some require (every required one, so a call that forgets it is answered
too), one positional argument more than some take. Each says in which releases the call
fails, the signature there, the parameter's new name where it was renamed, what the
docstring says of it, and the release to pin or upgrade to.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

from app.jaxref.files import DATA_DIR
from app.jaxref.releases import ids_until, release_key, runs
from app.jaxref.templates import derive_pattern
from app.knowledge.public_names import pin_or_upgrade, release_record, short_name
from app.knowledge.signatures import Signature, Signatures, parameters_of

# A parameter renamed shares this much of its spelling with its new name (difflib's ratio);
# one standing where the old one stood in the positional order needs none.
MIN_RENAME_SIMILARITY = 0.75
SPELLINGS_SHOWN = 4  # of the names a callable goes by, in a record's prose
MINED_CALLS = DATA_DIR / "mined" / "jax-calls.jsonl"
# Each keyword Pallas's public callables take, with the callables and releases taking it.
KEYWORDS_FILE = DATA_DIR / "jax-keywords.json"
# What follows ``takes … positional arguments`` when more are given, keyword-only ones too.
_POSITIONAL_GIVEN = (
    r" but \d+ (?:positional arguments? \(and \d+ keyword-only arguments?\) )?(?:was|were) given"
)


@dataclass(frozen=True)
class _Callable:
    """One public name's signature in each release that has one readable."""

    spellings: tuple[str, ...]  # "plgpu.copy_gmem_to_smem", as the documentation writes it
    signatures: dict[str, Signature]  # release → signature, oldest release first


def call_records(signatures: Signatures) -> list[dict[str, Any]]:
    """A record of each error a call of a public callable meets in some release, in id
    order."""
    records = [record for found in _callables(signatures) for record in _records(found)]
    return sorted(records, key=lambda record: record["id"])


def _callables(signatures: Signatures) -> list[_Callable]:
    """The public names' signatures, one callable per definition: names bound to the same
    ``def`` or ``class`` in some release (``pl.load`` and ``plgpu.load``, or
    ``plt.CompilerParams`` and the ``TritonCompilerParams`` of the removed
    ``jax.experimental.pallas.gpu``) are one callable, with one set of records listing each."""
    order = list(signatures)
    names = sorted({key for found in signatures.values() for key in found})
    group = {name: name for name in names}  # union-find over the names

    def root(name: tuple[str, str]) -> tuple[str, str]:
        while group[name] != name:
            name = group[name]
        return name

    defined_by: dict[tuple[str, str], tuple[str, str]] = {}
    for found in signatures.values():
        for name, signature in found.items():
            first = defined_by.setdefault((signature.path, signature.qualname), name)
            group[root(name)] = root(first)
    merged: dict[tuple[str, str], tuple[list[str], dict[str, Signature]]] = {}
    for name in names:
        spelled, having = merged.setdefault(root(name), ([], {}))
        spelled.append(f"{short_name(name[0])}.{name[1]}")
        having.update((r, found[name]) for r, found in signatures.items() if name in found)
    return [
        _Callable(tuple(spelled), dict(sorted(having.items(), key=lambda i: order.index(i[0]))))
        for spelled, having in merged.values()
    ]


def _records(callable_: _Callable) -> Iterator[dict[str, Any]]:
    signatures = callable_.signatures
    for parameter in parameters_of(signatures):
        if parameter.startswith("_"):
            continue  # private: no caller passes it
        takes = [r for r, s in signatures.items() if s.takes_keyword(parameter)]
        refuses = [r for r, s in signatures.items() if s.refuses_keyword(parameter)]
        if takes and refuses:
            yield from _by_wording(callable_, refuses, takes, _Unexpected(parameter))
        requires = [r for r, s in signatures.items() if s.requires(parameter)]
        if requires:
            optional = [r for r in signatures if r not in requires]
            yield from _by_wording(callable_, requires, optional, _Missing(parameter))
    refusing = [r for r, s in signatures.items() if s.var_keyword is None]
    if refusing:
        taking = [r for r in signatures if r not in refusing]
        yield from _by_wording(callable_, refusing, taking, _UnknownKeyword())
    limits = {r: s.positional_limit() for r, s in signatures.items()}
    widest = max((limit for limit in limits.values() if limit is not None), default=0)
    if None in limits.values():
        widest += 1  # where it takes any number, it takes one more than elsewhere
    fewer = [r for r, limit in limits.items() if limit is not None and limit < widest]
    more = [r for r in signatures if r not in fewer]
    if fewer and more:
        yield from _by_wording(callable_, fewer, more, _TooManyPositional())


def _by_wording(
    callable_: _Callable, raising: list[str], fine: list[str], error: _CallError
) -> Iterator[dict[str, Any]]:
    """One record per wording of the error in the releases raising it: per name Python's
    message gives the callable (a function moved and renamed inside JAX keeps its public
    name), and per kind of the error there (a keyword may be unknown in one release and
    positional-only in another)."""
    wordings: dict[str, list[str]] = {}
    for release in raising:
        wordings.setdefault(error.pattern(callable_.signatures[release]), []).append(release)
    for releases in wordings.values():
        yield _record(_Case(callable_, releases, fine), error)


@dataclass(frozen=True)
class _Case:
    """A callable, the releases raising an error at a call of it, and those that do not."""

    callable_: _Callable
    raising: list[str]
    fine: list[str]  # empty where every release with the callable raises it

    @property
    def newest(self) -> Signature:
        return self.callable_.signatures[self.raising[-1]]

    @property
    def named_by(self) -> Signature:
        """The signature the record's id is derived from: of the newest release raising the
        error up to ``ids_until``, else (first raised after it) of the oldest raising it."""
        until = release_key(ids_until())
        given = [r for r in self.raising if release_key(r) <= until] or self.raising[:1]
        return self.callable_.signatures[given[-1]]

    @property
    def called(self) -> str:
        """Its spellings (``pl.semaphore_wait`` / ``pltpu.semaphore_wait``), a few of them."""
        spellings = self.callable_.spellings
        shown = " / ".join(f"`{spelled}`" for spelled in spellings[:SPELLINGS_SHOWN])
        return shown + (" / …" if len(spellings) > SPELLINGS_SHOWN else "")

    @property
    def there(self) -> str:
        return f"JAX {runs(tuple(self.raising))}"

    @property
    def shown(self) -> str:
        """The signature as the code calls it (``plgpu.SMEM(shape, dtype, *, …)``, not
        ``MemorySpace.__call__``)."""
        called = self.newest.shown(self.callable_.spellings[0])
        return f"In JAX {self.raising[-1]} it is {called}"

    def described(self, parameter: str, releases: list[str]) -> list[str]:
        """What the docstring of the newest of ``releases`` says of ``parameter``."""
        if not releases:
            return []
        said = self.callable_.signatures[releases[-1]].documented.get(parameter)
        return [f'JAX {releases[-1]}\'s docstring: "{parameter}: {said}"'] if said else []


class _CallError:
    """The words of one kind of call error, and what a record of it says."""

    parameter: str | None = None

    def kind(self, signature: Signature) -> str:
        """The error's kind where ``signature`` raises it, as the record's ``callError``."""
        raise NotImplementedError

    def message(self, signature: Signature) -> str:
        raise NotImplementedError

    def pattern(self, signature: Signature) -> str:
        raise NotImplementedError

    def advice(self, case: _Case) -> tuple[str, list[str]]:
        """The record's documentation and solutions."""
        raise NotImplementedError


@dataclass(frozen=True)
class _Unexpected(_CallError):
    parameter: str

    def kind(self, signature: Signature) -> str:
        positional_only = any(
            p.name == self.parameter and p.kind == "positional-only" for p in signature.parameters
        )
        return "positional-only-keyword" if positional_only else "unexpected-keyword"

    def message(self, signature: Signature) -> str:
        if self.kind(signature) == "positional-only-keyword":
            return (
                f"{signature.qualname}() got some positional-only arguments passed as keyword "
                f"arguments: '{self.parameter}'"
            )
        return f"{signature.qualname}() got an unexpected keyword argument '{self.parameter}'"

    def pattern(self, signature: Signature) -> str:
        if self.kind(signature) == "positional-only-keyword":  # Python lists them all
            words = "() got some positional-only arguments passed as keyword arguments: "
            return f"{derive_pattern(signature.qualname + words)}[^\\n]*'{self.parameter}'"
        return derive_pattern(self.message(signature))

    def advice(self, case: _Case) -> tuple[str, list[str]]:
        name = self.parameter
        if self.kind(case.newest) == "positional-only-keyword":
            documentation = (
                f"{case.called} takes `{name}` by keyword in JAX {runs(tuple(case.fine))}; in "
                f"{case.there} it is positional-only, and a call passing {name}=… raises this "
                f"TypeError. {case.shown}."
            )
            solutions = [f"Pass `{name}` by position. {case.shown}."]
            qualname = case.newest.qualname
            solutions += pin_or_upgrade(case.fine, case.raising, f"{qualname} takes {name}=…")
            return documentation, solutions
        documentation = (
            f"{case.called} takes `{name}` in JAX {runs(tuple(case.fine))}, not in "
            f"{case.there}: a call passing {name}=… raises this TypeError there. {case.shown}."
        )
        renamed = _renamed(case.callable_.signatures[case.fine[-1]], case.newest, name)
        qualname = case.newest.qualname
        solutions = (
            [f"{case.there} calls it `{renamed}`: pass {renamed}=… instead."]
            if renamed
            else [f"Leave {name}=… out on {case.there}: its {qualname} has no such parameter."]
        )
        solutions += case.described(name, case.fine)
        solutions += pin_or_upgrade(case.fine, case.raising, f"{qualname} takes `{name}`")
        return documentation, solutions


@dataclass(frozen=True)
class _Missing(_CallError):
    parameter: str

    def kind(self, signature: Signature) -> str:
        return "missing-argument"

    def message(self, signature: Signature) -> str:
        kind = next(p.kind for p in signature.parameters if p.name == self.parameter)
        which = "keyword-only" if kind == "keyword-only" else "positional"
        return f"{signature.qualname}() missing 1 required {which} argument: '{self.parameter}'"

    def pattern(self, signature: Signature) -> str:
        # Python lists every argument missing: "… arguments: 'src', 'dst', and 'barrier'".
        return (
            f"{derive_pattern(f'{signature.qualname}()')} missing \\d+ required "
            f"(?:positional|keyword-only) arguments?: [^\\n]*'{self.parameter}'"
        )

    def advice(self, case: _Case) -> tuple[str, list[str]]:
        name = self.parameter
        if case.fine:
            before = (
                "optional or absent"
                if any(case.callable_.signatures[r].takes_keyword(name) for r in case.fine)
                else "absent"
            )
            documentation = (
                f"{case.called} requires `{name}` in {case.there}; in JAX "
                f"{runs(tuple(case.fine))} it is {before}. A call without it raises this "
                f"TypeError in {case.there}. {case.shown}."
            )
        else:
            documentation = (
                f"{case.called} requires `{name}` in every release that has it ({case.there}): "
                f"a call without it raises this TypeError. {case.shown}."
            )
        solutions = [f"Pass `{name}`. {case.shown}.", *case.described(name, case.raising)]
        qualname = case.newest.qualname
        if case.fine:
            solutions += pin_or_upgrade(
                case.fine, case.raising, f"{qualname} does not require `{name}`"
            )
        return documentation, solutions


@dataclass(frozen=True)
class _UnknownKeyword(_CallError):
    """A keyword no release takes (a typo, another function's parameter): the keyword is
    read from the message, and the service says where it belongs (``keywords_taken``)."""

    def kind(self, signature: Signature) -> str:
        return "unknown-keyword"

    def message(self, signature: Signature) -> str:
        return f"{signature.qualname}() got an unexpected keyword argument '{{keyword}}'"

    def pattern(self, signature: Signature) -> str:
        words = f"{signature.qualname}() got an unexpected keyword argument"
        return f"{derive_pattern(words)} '(?P<keyword>\\w+)'"

    def advice(self, case: _Case) -> tuple[str, list[str]]:
        keywords = [p.name for p in case.newest.parameters if p.kind != "positional-only"]
        documentation = (
            f"{case.called} takes only the keywords of its parameters: in JAX "
            f"{case.raising[-1]}, {', '.join(keywords) or 'none'}. A call passing any other "
            f"raises this TypeError ({case.there}). {case.shown}."
        )
        solutions = [
            f"Pass only the keywords it takes. {case.shown}.",
            "Where the keyword is another function's parameter (a compiler option passed to "
            "the call, a block's option passed to the kernel), pass it there.",
        ]
        return documentation, solutions


@dataclass(frozen=True)
class _TooManyPositional(_CallError):
    def kind(self, signature: Signature) -> str:
        return "too-many-positional"

    def message(self, signature: Signature) -> str:
        return f"{signature.qualname}() {_positional_message(signature)}"

    def pattern(self, signature: Signature) -> str:
        return f"{derive_pattern(f'{signature.qualname}() {_takes(signature)}')}{_POSITIONAL_GIVEN}"

    def advice(self, case: _Case) -> tuple[str, list[str]]:
        limit = case.newest.positional_limit() or 0
        documentation = (
            f"{case.called} takes {limit} positional argument{'s' * (limit != 1)} in "
            f"{case.there}, more in JAX {runs(tuple(case.fine))}: a call passing more raises "
            f"this TypeError in {case.there}. {case.shown}."
        )
        which = f"the arguments after the first {limit}" if limit else "every argument"
        solutions = [f"Pass {which} by keyword. {case.shown}."]
        solutions += pin_or_upgrade(
            case.fine, case.raising, f"{case.newest.qualname} takes more positional arguments"
        )
        return documentation, solutions


def _record(case: _Case, error: _CallError) -> dict[str, Any]:
    newest = case.newest
    documentation, solutions = error.advice(case)
    return release_record(
        _id(case.named_by, error.pattern(newest)),
        "TypeError",
        error.message(newest),
        error.pattern(newest),
        (case.raising[-1], newest.path, newest.window, newest.line),
        documentation,
        solutions,
        {
            "calledAs": list(case.callable_.spellings),
            "callError": error.kind(newest),
            "parameter": error.parameter,
            "raisedIn": case.raising,
            "acceptedIn": case.fine,
            "signatures": _distinct(case.callable_.signatures),
        },
    )


def keyword_index(signatures: Signatures) -> dict[str, list[dict[str, Any]]]:
    """For each keyword a public callable takes, the callables taking it and in which
    releases: what ``keywords_taken`` reads, written to ``KEYWORDS_FILE``."""
    index: dict[str, list[dict[str, Any]]] = {}
    for callable_ in _callables(signatures):
        for parameter in parameters_of(callable_.signatures):
            taking = [r for r, s in callable_.signatures.items() if s.takes_keyword(parameter)]
            if taking and not parameter.startswith("_"):
                index.setdefault(parameter, []).append(
                    {"calledAs": list(callable_.spellings), "releases": taking}
                )
    return dict(sorted(index.items()))


@dataclass(frozen=True)
class KeywordTaker:
    """A public callable taking a keyword, by its spellings, and the releases it does."""

    called_as: tuple[str, ...]
    releases: tuple[str, ...]


@cache
def _keywords() -> dict[str, tuple[KeywordTaker, ...]]:
    index = json.loads(KEYWORDS_FILE.read_text(encoding="utf-8"))
    return {
        keyword: tuple(KeywordTaker(tuple(t["calledAs"]), tuple(t["releases"])) for t in takers)
        for keyword, takers in index.items()
    }


def keywords_taken(keyword: str) -> tuple[KeywordTaker, ...]:
    """The public callables that take ``keyword`` in some release."""
    return _keywords().get(keyword, ())


@cache
def keywords_of(spelled: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The keywords the callable spelled ``spelled`` (``pl.pallas_call``) takes, each with
    the releases it does."""
    return tuple(
        (keyword, taker.releases)
        for keyword, takers in _keywords().items()
        for taker in takers
        if spelled in taker.called_as
    )


def _positional_message(signature: Signature) -> str:
    """Python's words for one positional argument too many."""
    given = (signature.positional_limit() or 0) + signature.bound + 1
    return f"{_takes(signature)} but {given} {'was' if given == 1 else 'were'} given"


def _takes(signature: Signature) -> str:
    """``takes from 1 to 3 positional arguments``, counting ``self`` as Python does."""
    most = (signature.positional_limit() or 0) + signature.bound
    least = signature.bound + sum(
        p.required and p.kind != "keyword-only" for p in signature.parameters
    )
    takes = f"{most}" if least == most else f"from {least} to {most}"
    return f"takes {takes} positional argument{'s' * (not least == most == 1)}"


def _renamed(old: Signature, new: Signature, parameter: str) -> str | None:
    """The name ``parameter`` of ``old`` has in ``new``: the parameter standing at its place
    in the positional order that ``old`` does not have, else one spelled much like it."""
    new_names = [p.name for p in new.parameters if not old.takes_keyword(p.name)]
    positional = [p.name for p in old.parameters if p.kind != "keyword-only"]
    if parameter in positional:
        place = positional.index(parameter)
        at = [p.name for p in new.parameters if p.kind != "keyword-only"]
        if place < len(at) and at[place] in new_names:
            return at[place]
    close = difflib.get_close_matches(parameter, new_names, n=1, cutoff=MIN_RENAME_SIMILARITY)
    return close[0] if close else None


def _distinct(signatures: dict[str, Signature]) -> list[dict[str, Any]]:
    """Each distinct signature as shown, with the releases that have it."""
    by_shown: dict[str, list[str]] = {}
    for release, signature in signatures.items():
        by_shown.setdefault(signature.shown(), []).append(release)
    return [{"signature": shown, "releases": releases} for shown, releases in by_shown.items()]


def _id(signature: Signature, pattern: str) -> str:
    key = f"call:{signature.path}:{pattern}"
    return hashlib.sha256(key.encode()).hexdigest()[:16]
