"""Just enough of RE2's syntax to reason about a pattern without running it.

The index needs three things from a pattern it has never seen: the literal text any match
must contain (for the Aho-Corasick prefilter), a version whose trailing lazy group runs to
the end of the line, and a version that also accepts a match cut off part-way (a truncated
paste). All three come from one small parse tree that keeps each node's source text, so
rewritten patterns reuse the author's own syntax. Anything the parser does not understand
raises ``SyntaxUnsupported``; callers then fall back to running the pattern as it is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

MAX_NODES = 2000


class SyntaxUnsupported(ValueError):
    """A pattern this module cannot take apart (RE2 may still accept it)."""


@dataclass(frozen=True)
class Literal:
    """Known text: one or more characters, each matched as itself."""

    chars: str
    text: str  # as written: "a.b" is written "a\\.b"


@dataclass(frozen=True)
class Atom:
    """Anything matching text that is not one known character: ``.``, ``\\d``, ``[a-z]``."""

    text: str
    zero_width: bool = False  # anchors and ``\\b``


@dataclass(frozen=True)
class Flags:
    text: str  # "(?i)"


@dataclass(frozen=True)
class Group:
    opening: str  # "(", "(?:", "(?P<name>", "(?i:"
    body: Node
    name: str | None

    @property
    def captures(self) -> bool:
        return not self.opening.startswith("(?") or self.name is not None


@dataclass(frozen=True)
class Repeat:
    node: Node
    low: int
    high: int | None
    quantifier: str  # as written: "*", "+?", "{2,5}"

    @property
    def lazy(self) -> bool:
        return self.quantifier.endswith("?") and len(self.quantifier) > 1


@dataclass(frozen=True)
class Sequence:
    items: tuple[Node, ...]


@dataclass(frozen=True)
class Alternation:
    branches: tuple[Node, ...]


Node = Literal | Atom | Flags | Group | Repeat | Sequence | Alternation

_QUANTIFIER = r"(?:[*+?]|\{\d+(?:,\d*)?\})\??"
_STARTS_QUANTIFIER = re.compile(r"[*+?]|\{\d+(?:,\d*)?\}")
_ESCAPE = r"\\(?:x\{[0-9A-Fa-f]+\}|x[0-9A-Fa-f]{2}|[pP]\{[^}]*\}|[pP]\w|.)"
_CLASS = r"\[\^?\]?(?:\[:\^?[a-z]+:\]|\\.|[^\]\\])*\]"
# All tokens in one regex, so each step is a single ``lastgroup`` dispatch; a run of plain
# characters is one token, which keeps message patterns (mostly literal text) cheap.
_SCAN = re.compile(
    rf"(?P<run>[^\\\[\](){{}}|*+?.^$]+)"
    rf"|(?P<repeated>(?>{_ESCAPE}|{_CLASS}|\.){_QUANTIFIER})"  # ends a run
    rf"|(?P<quantifier>{_QUANTIFIER})"
    r"|(?P<quote>\\Q.*?(?:\\E|\Z))"
    rf"|(?P<cls>{_CLASS})"
    r"|(?P<flags>\(\?[imsU-]+\))"
    r"|(?P<open>\((?:\?P?<\w+>|\?[imsU-]*:)?)"
    rf"|(?P<close>\)(?:{_QUANTIFIER})?)"
    r"|(?P<bar>\|)"
    rf"|(?P<escape>{_ESCAPE})"
    r"|(?P<anchor>[\^$])"
    r"|(?P<other>.)",
    re.DOTALL,
)


_QUANTIFIER_PARTS = re.compile(r"(?:([*+?])|\{(\d+)(,(\d*))?\})\??")
_ATOM = re.compile(rf"(?>{_ESCAPE}|{_CLASS}|\.)")
_ESCAPED_CHARS = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v", "a": "\a"}
_SPECIAL = frozenset("\\.^$|?*+()[]{}")
_ZERO_WIDTH = frozenset({"^", "$", "\\b", "\\B", "\\A", "\\z"})


def parse(pattern: str) -> Node:
    """Parse ``pattern``, or raise ``SyntaxUnsupported``."""
    tokens = list(_SCAN.finditer(pattern))
    if len(tokens) > MAX_NODES:
        raise SyntaxUnsupported("pattern is too long to analyse")
    parser = _Parser(tokens)
    node = parser.alternation()
    if parser.pos != len(tokens):
        raise SyntaxUnsupported("unbalanced ')'")
    return node


class _Parser:
    def __init__(self, tokens: list[re.Match[str]]) -> None:
        self.tokens = tokens
        self.pos = 0

    def alternation(self) -> Node:
        branches = [self.sequence()]
        while self._peek() == "bar":
            self.pos += 1
            branches.append(self.sequence())
        return branches[0] if len(branches) == 1 else Alternation(tuple(branches))

    def sequence(self) -> Node:
        items: list[Node] = []
        while self._peek() not in ("bar", "close", None):
            token = self.tokens[self.pos]
            self.pos += 1
            if token.lastgroup == "quantifier":
                items.append(self._repeat(items, token[0], token.start()))
            elif token.lastgroup == "repeated":
                atom = _ATOM.match(token[0])
                assert atom is not None  # the token regex guarantees it
                items.append(_leaf("atom", atom[0]))
                items.append(self._repeat(items, token[0][atom.end() :], token.start()))
            elif token.lastgroup == "open":
                items.append(self._group(token))
            else:
                items.append(_leaf(token.lastgroup, token[0]))
        return items[0] if len(items) == 1 else Sequence(tuple(items))

    def _group(self, token: re.Match[str]) -> Node:
        opening = token[0]
        body = self.alternation()
        if self._peek() != "close":
            raise SyntaxUnsupported(f"missing ')' for the group at {token.start()}")
        closing = self.tokens[self.pos]
        self.pos += 1
        name = (
            opening[3:-1].lstrip("<")
            if opening.startswith("(?P<") or opening.startswith("(?<")
            else None
        )
        group: list[Node] = [Group(opening, body, name)]
        if len(closing[0]) > 1:
            return self._repeat(group, closing[0][1:], closing.start())
        return group[0]

    def _repeat(self, items: list[Node], quantifier: str, at: int) -> Node:
        if not items or isinstance(items[-1], Flags | Repeat):
            raise SyntaxUnsupported(f"nothing to repeat at {at}")
        node = items.pop()
        if isinstance(node, Atom) and node.zero_width:
            raise SyntaxUnsupported(f"repetition of an anchor at {at}")
        if isinstance(node, Literal) and len(node.chars) > 1:
            # A quantifier binds to the last character of a run only.
            items.append(Literal(node.chars[:-1], node.text[:-1]))
            node = Literal(node.chars[-1], node.text[-1])
        parts = _QUANTIFIER_PARTS.fullmatch(quantifier)
        assert parts is not None  # the token regex guarantees it
        if parts[1]:
            low, high = {"*": (0, None), "+": (1, None), "?": (0, 1)}[parts[1]]
        else:
            low = int(parts[2])
            high = low if parts[3] is None else int(parts[4]) if parts[4] else None
        return Repeat(node, low, high, quantifier)

    def _peek(self) -> str | None:
        return self.tokens[self.pos].lastgroup if self.pos < len(self.tokens) else None


def _leaf(kind: str | None, text: str) -> Node:
    if kind == "run":
        return Literal(text, text)
    if kind == "quote":
        quoted = text[2:].removesuffix("\\E")
        return Literal(quoted, "".join(_escape_char(c) for c in quoted))
    if kind == "flags":
        return Flags(text)
    if kind == "anchor":
        return Atom(text, zero_width=True)
    if kind == "escape" or (kind == "atom" and text.startswith("\\")):
        return _escape(text)
    if kind in ("cls", "atom") or text == ".":
        return Atom(text)
    if text in ("{", "}", "]"):
        return Literal(text, text)
    raise SyntaxUnsupported(f"unexpected {text!r}")


def _escape(text: str) -> Node:
    char = text[1]
    if text in _ZERO_WIDTH:
        return Atom(text, zero_width=True)
    if char in "dDwWsSpP":
        return Atom(text)
    if char == "x":
        return Literal(chr(int(text[2:].strip("{}"), 16)), text)
    if char in _ESCAPED_CHARS and len(text) == 2:
        return Literal(_ESCAPED_CHARS[char], text)
    if char.isalnum() or len(text) != 2:
        raise SyntaxUnsupported(f"escape {text!r} is not supported")
    return Literal(char, text)


def _escape_char(char: str) -> str:
    return "\\" + char if char in _SPECIAL else char


# --- rendering ----------------------------------------------------------------------------


def render(node: Node, capture: bool = True) -> str:
    """Pattern text for ``node``; with ``capture=False`` every group is non-capturing."""
    match node:
        case Literal(text=text) | Atom(text=text) | Flags(text=text):
            return text
        case Group(opening=opening, body=body):
            if not capture and node.captures:
                opening = "(?:"
            return opening + render(body, capture) + ")"
        case Repeat(node=inner, quantifier=quantifier):
            return render(inner, capture) + quantifier
        case Sequence(items=items):
            return "".join(render(item, capture) for item in items)
        case Alternation(branches=branches):
            return "|".join(render(branch, capture) for branch in branches)
    raise TypeError(node)


# --- what the index needs -----------------------------------------------------------------


def required_literals(pattern: str) -> list[str]:
    """Runs of literal text that every match of ``pattern`` contains.

    Scans tokens instead of building the tree, since the index calls it for every pattern
    it holds. Runs inside an optional or alternated group are dropped when the group
    closes; a group boundary, a class or a repetition ends a run.
    """
    runs: list[str] = []
    current: list[str] = []
    opened: list[int] = []  # len(runs) when each open group started
    alternated = [False]
    for token in _SCAN.finditer(pattern):
        kind = token.lastgroup
        text = token[0]
        if kind == "run":
            # A quantifier after a run binds to its last character only.
            quantified = _STARTS_QUANTIFIER.match(pattern, token.end()) is not None
            current.append(text[:-1] if quantified else text)
            if not quantified:
                continue
        elif kind == "escape" or kind == "quote" or kind == "other":
            node = _leaf(kind, text)
            if isinstance(node, Literal):
                current.append(node.chars)
                continue
        elif kind == "anchor" or kind == "flags":
            continue  # consumes nothing: the text on both sides stays adjacent
        if current:
            runs.append("".join(current))
            current.clear()
        if kind == "open":
            opened.append(len(runs))
            alternated.append(False)
        elif kind == "close":
            if not opened:
                raise SyntaxUnsupported("unbalanced ')'")
            start = opened.pop()
            if alternated.pop() or text[1:2] in ("*", "?") or text.startswith("){0"):
                del runs[start:]
        elif kind == "bar":
            alternated[-1] = True
            del runs[opened[-1] if opened else 0 :]
    if current:
        runs.append("".join(current))
    if opened:
        raise SyntaxUnsupported("missing ')'")
    return [] if alternated[0] else runs


def extend_trailing_lazy(node: Node) -> Node:
    """Make a lazy repetition at the very end greedy.

    A pattern ending in ``(.+?)`` captures one character, since nothing after it forces
    more; run against a single line, the greedy form captures to the end of that line,
    which is what the author meant.
    """
    match node:
        case Repeat(node=inner, quantifier=quantifier) if node.lazy:
            return replace(node, node=inner, quantifier=quantifier[:-1])
        case Group(body=body):
            return replace(node, body=extend_trailing_lazy(body))
        case Sequence(items=items) if items:
            return Sequence((*items[:-1], extend_trailing_lazy(items[-1])))
    return node


def leading_literal(node: Node) -> str:
    """The literal text every match starts with, as written (case and all)."""
    items = node.items if isinstance(node, Sequence) else (node,)
    leading = []
    for item in items:
        if not isinstance(item, Literal):
            break
        leading.append(item.chars)
    return "".join(leading)


def prefix_pattern(node: Node) -> str:
    """A pattern matching every prefix of what ``node`` matches, the empty one included.

    Captures survive where the cut falls after a whole group; a group the cut runs through
    is matched without capturing, because its value would be cut short too.
    """
    return _prefix(node, capture=True)


def _prefix(node: Node, capture: bool) -> str:
    match node:
        case Literal() | Atom():
            return _prefix_of_items(_characters(node), capture)
        case Flags(text=text):
            return text
        case Group(opening=opening, body=body):
            if node.captures:
                opening = "(?:"
            return opening + _prefix(body, capture=False) + ")"
        case Repeat(node=inner, high=high):
            lazy = "?" if node.lazy else ""
            upto = "*" if high is None else ("?" if high == 1 else f"{{0,{high}}}")
            return f"(?:{render(inner, capture)}{upto}{lazy}{_prefix(inner, capture=False)})"
        case Alternation(branches=branches):
            return "(?:" + "|".join(_prefix(branch, capture) for branch in branches) + ")"
        case Sequence(items=items):
            return _prefix_of_items(items, capture)
    raise TypeError(node)


def _characters(node: Node) -> tuple[Node, ...]:
    """A literal run as one node per character, so a cut can fall inside it."""
    if isinstance(node, Literal) and len(node.chars) > 1:
        return tuple(Literal(c, _escape_char(c)) for c in node.chars)
    return (node,)


def _prefix_of_items(items: tuple[Node, ...], capture: bool) -> str:
    if not items:
        return ""
    head, rest = items[0], items[1:]
    if isinstance(head, Literal) and len(head.chars) > 1:
        return _prefix_of_items(_characters(head) + rest, capture)
    if isinstance(head, Literal | Atom):
        return f"(?:{render(head)}{_prefix_of_items(rest, capture)})?"
    if not rest:
        return _prefix(head, capture)
    whole_then_more = render(head, capture) + _prefix_of_items(rest, capture)
    # Leftmost-first: prefer taking ``head`` whole, so its captures are kept.
    return f"(?:{whole_then_more}|{_prefix(head, capture=False)})"
