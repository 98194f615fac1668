"""The plain-Python side of the bots: command parsing, limits, signatures, replays, Markdown."""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import replace
from typing import Any

import pytest
from slack_sdk.signature import Clock

from app.answers.answer import Answer, Fact, Quote, Step
from app.answers.cards import match_answers, step_heading
from app.answers.catalog import RecordInfo
from app.answers.links import Links
from app.answers.record_text import readable_message
from app.chatops.answers import Reply
from app.chatops.commands import MAX_PASTE_CHARS, Compute, Help, Lookup, Paste, parse_command
from app.chatops.replays import ReplayCache
from app.chatops.slack import (
    HEADER_LIMIT,
    MAX_BLOCKS,
    SECTION_LIMIT,
    SlackSignature,
    command_text,
    slack_message,
)
from app.rendering.markdown import code_block, code_span, escape, markdown
from app.rendering.negotiation import prefers_markdown
from app.rendering.text import clip, clip_line, open_fence
from app.schemas.answers import ClosestOut, SourceOnlyOut
from app.schemas.match import MatchOut, MatchResponse, RaisePointOut, ValuesOut, WhyOut

SECRET = "signing-secret"
NOW = 1_800_000_000


class FixedClock(Clock):
    def __init__(self, now: float) -> None:
        self.time = now

    def now(self) -> float:
        return self.time


def sign(body: bytes, timestamp: int, secret: str = SECRET) -> str:
    base = b"v0:" + str(timestamp).encode() + b":" + body
    return "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()


@pytest.mark.parametrize(
    ("text", "command", "share"),
    [
        ("", Help(), False),
        ("help", Help(), False),
        ("share help", Help(), True),
        ("share\nValueError: x", Paste("ValueError: x"), True),
        ("pad\tshape=7", Compute({"shape": "7"}), False),
        ("225d0e9c2ee22311", Lookup("225d0e9c2ee22311"), False),
        ("share can-only-transfer-integer-bytes", Lookup("can-only-transfer-integer-bytes"), True),
        (
            "pad shape=[8, 512] dtype=float32 op=copy_gmem_to_smem jax=0.10.2",
            Compute(
                {
                    "shape": "[8, 512]",
                    "dtype": "float32",
                    "operation": "copy_gmem_to_smem",
                    "jaxVersion": "0.10.2",
                }
            ),
            False,
        ),
        (
            "pad shape=[8] dtype=bfloat16 op=copy_gmem_to_smem jax=0.12.0.1 semantics=Lane",
            Compute(
                {
                    "shape": "[8]",
                    "dtype": "bfloat16",
                    "operation": "copy_gmem_to_smem",
                    "jaxVersion": "0.12.0.1",
                    "loweringSemantics": "Lane",
                }
            ),
            False,
        ),
        ("pad shape=7 colour=red stray", Compute({"shape": "7"}, ("colour=red", "stray")), False),
        ("pad the block", Paste("pad the block"), False),
        ("ValueError: Can only transfer", Paste("ValueError: Can only transfer"), False),
    ],
)
def test_commands(text: str, command: object, share: bool) -> None:
    parsed = parse_command(text)
    assert (parsed.command, parsed.share) == (command, share)


def test_a_long_paste_keeps_its_end_from_a_line_start() -> None:
    paste = "x" * 100 + "\n" + "noise line\n" * 5000 + "ValueError: the end"
    parsed = parse_command(paste)
    assert isinstance(parsed.command, Paste) and parsed.command.clipped
    assert len(parsed.command.text) <= MAX_PASTE_CHARS
    assert parsed.command.text.startswith("noise line")
    assert parsed.command.text.endswith("ValueError: the end")


def test_slack_escapes_are_undone() -> None:
    assert command_text("memref&lt;32xf32&gt; &amp;lt;") == "memref<32xf32> &lt;"


def test_signature_checks_secret_clock_and_shape() -> None:
    body = b"command=%2Ferrata&text=help"
    signature = SlackSignature(SECRET, FixedClock(NOW))
    assert signature.verify(body, str(NOW), sign(body, NOW))
    assert signature.verify(body, str(NOW - 299), sign(body, NOW - 299))
    assert not signature.verify(body, str(NOW - 360), sign(body, NOW - 360)), "stale"
    assert not signature.verify(body, str(NOW + 360), sign(body, NOW + 360)), "from the future"
    assert not signature.verify(body, str(NOW), sign(body, NOW, "another-secret"))
    assert not signature.verify(body + b"x", str(NOW), sign(body, NOW)), "body changed"
    assert not signature.verify(body, "not-a-number", sign(body, NOW))
    assert not signature.verify(body, str(NOW), "v0=é" + "0" * 63), "non-ASCII signature"
    assert not signature.verify(b"\xff\xfe", str(NOW), sign(b"\xff\xfe", NOW)), "not UTF-8"


def test_replay_cache_is_bounded_in_size_and_age() -> None:
    now = [0.0]
    cache = ReplayCache(ttl=10, max_entries=2, clock=lambda: now[0])
    cache.put("a", 1)
    cache.put("b", 2)
    cache.put("c", 3)
    assert (cache.get("a"), cache.get("b"), cache.get("c")) == (None, 2, 3)
    now[0] = 10.5
    assert cache.get("b") is None and cache.get("c") is None


def test_clip_closes_an_open_code_fence_and_says_it_cut() -> None:
    text = "intro\n```python\n" + "x = 1\n" * 1000 + "```\nafter"
    clipped = clip(text, 300)
    assert len(clipped) <= 300
    assert clipped.endswith("```\n… (truncated)")
    assert open_fence(clipped) is None
    assert clip("short", 300) == "short"
    line = clip_line("a  b\nc" + "d" * 200, 20)
    assert len(line) == 20 and line.startswith("a b cd") and line.endswith("d…")


def test_markdown_keeps_user_text_inert() -> None:
    assert escape("*bold* [link](x) <b>html</b> warpgroup_size _em_") == (
        r"\*bold\* \[link\](x) \<b>html\</b> warpgroup_size \_em\_"
    )
    assert code_span("a ` b") == "``a ` b``"
    assert code_block("```\nx") == "````python\n```\nx\n````"


def _huge_card(index: int) -> Answer:
    long_diff = "\n".join(f"-line_{n} = {n}" for n in range(2000)) + "\n+y"
    return Answer(
        kind="match",
        headline=f"Error {index}: " + "very long title " * 30,
        doThis=Step(title="pad", note="verified", diff=long_diff),
        facts=(Fact(label="shape", value="[7]"),),
        quotes=(Quote(label="In the paste", text="x" * 10_000),),
        notes=tuple(f"paragraph {n}" for n in range(30)),
    )


def test_slack_message_respects_block_kit_limits() -> None:
    message = slack_message(Reply([_huge_card(n) for n in range(3)], share=False))
    blocks = message["blocks"]
    assert len(blocks) == MAX_BLOCKS
    assert blocks[-1]["type"] == "context" and "truncated" in blocks[-1]["elements"][0]["text"]
    headers = [block["text"]["text"] for block in blocks if block["type"] == "header"]
    assert headers and all(len(text) <= HEADER_LIMIT and text.endswith("…") for text in headers)
    sections = [block["text"]["text"] for block in blocks if block["type"] == "section"]
    assert all(len(text) <= SECTION_LIMIT for text in sections)
    assert any(text.endswith("… (truncated)") for text in sections)
    assert all(open_fence(text) is None for text in sections)
    assert message["response_type"] == "ephemeral"


def test_slack_escapes_mentions_and_links_in_user_text() -> None:
    card = Answer(
        kind="notice",
        headline="t",
        quotes=(Quote(label="paste", text="<!channel> <https://evil|click> a & b"),),
    )
    text = slack_message(Reply([card], share=True))["blocks"][1]["text"]["text"]
    assert "&lt;!channel&gt; &lt;https://evil|click&gt; a &amp; b" in text
    assert "<!channel>" not in text


def test_markdown_limit() -> None:
    text = markdown([_huge_card(n) for n in range(3)], limit=16_383)
    assert len(text) <= 16_383 and text.endswith("… (truncated)")
    assert open_fence(text) is None


@pytest.mark.parametrize(
    ("accept", "wanted"),
    [
        (None, False),
        ("*/*", False),
        ("application/json", False),
        ("text/markdown", True),
        ("text/markdown, application/json;q=0.9", True),
        ("application/json, text/markdown;q=0.5", False),
        ("text/markdown;q=0, */*", False),
        ("text/markdown;q=bogus", False),
        ("TEXT/Markdown", True),
    ],
)
def test_markdown_negotiation(accept: str | None, wanted: bool) -> None:
    assert prefers_markdown(accept) is wanted


def _unfixed_match(line: str) -> MatchResponse:
    """A match the engine could not reproduce (no shape or dtype in the paste)."""
    values = ValuesOut(
        shape=None,
        dtype=None,
        bitwidth=None,
        elementCount=None,
        bits=None,
        bytes=32,
        memorySpace=None,
        numbers={},
        inferred=[],
    )
    why = WhyOut(
        patternId=0,
        pattern="Got (?P<x>.*)",
        normalizedLine=line,
        truncated=False,
        foundIn="exception message",
        literal="Got ",
        stripped="",
        unread=[],
    )
    found = MatchOut(
        errorId="r1",
        slug="got-bytes",
        rule=None,
        errorClass="NotImplementedError",
        score=1.0,
        variant="current",
        matchedLine=f"NotImplementedError: {line}",
        lineNumber=1,
        chainPosition=0,
        captures={},
        values=values,
        operation=None,
        fix=None,
        fixUnavailable="the paste does not show the block's shape and dtype",
        alternatives=[],
        why=why,
        userFrame=None,
    )
    return MatchResponse(matches=[found], exceptions=[], unmatched=[], suggestions=[])


def test_an_unfixed_match_is_headed_with_the_pasted_line_unless_it_could_mention() -> None:
    known = {"r1": RecordInfo("r1", "got-bytes", "Got {bytes=} but {n}", None, None, ())}
    [plain] = match_answers(_unfixed_match("Got bytes=32 but 128"), known, Links(""))
    assert plain.headline == "NotImplementedError: Got bytes=32 but 128"
    for line in ("Got <!channel> but 128", "Got @here but 128"):
        [card] = match_answers(_unfixed_match(line), known, Links(""))
        assert card.headline == "NotImplementedError: Got bytes=… but …"


def test_an_unfixed_match_says_what_to_do_from_the_records_solutions() -> None:
    advice = ("Pad the block.", "Use int8.", "Split the copy.", "Ask upstream.")
    known = {
        "r1": RecordInfo(
            "r1", "got-bytes", "Got {bytes=} but {n}", None, None, (), solutions=advice
        )
    }
    [card] = match_answers(_unfixed_match("Got bytes=32 but 128"), known, Links(""))
    told = [step_heading(card, index) for index in range(len(card.steps))]
    assert told == ["Do this: Pad the block.", "Or: Use int8.", "Or: Split the copy."]
    unadvised = {"r1": replace(known["r1"], solutions=())}
    [card] = match_answers(_unfixed_match("Got bytes=32 but 128"), unadvised, Links(""))
    assert card.steps == ()


def test_advice_worded_as_an_alternative_is_not_told_or_twice() -> None:
    advice = ("Pad the block.", "Or use int8.", "Alternatively, split the copy.")
    known = {
        "r1": RecordInfo(
            "r1", "got-bytes", "Got {bytes=} but {n}", None, None, (), solutions=advice
        )
    }
    [card] = match_answers(_unfixed_match("Got bytes=32 but 128"), known, Links(""))
    told = [step_heading(card, index) for index in range(len(card.steps))]
    assert told == ["Do this: Pad the block.", "Or: Use int8.", "Or: Split the copy."]


def _pointed(**fields: Any) -> MatchResponse:
    """An answer naming one site, which a frame's source line points at (``fields`` say
    otherwise)."""
    point = RaisePointOut(
        **{
            "errorId": "r1",
            "slug": "grid-context",
            "filePath": "jax/_src/pallas/core.py",
            "function": "axis_frame",
            "line": 361,
            "lineNumber": 13,
            "releases": ["0.10.2"],
            "sourceUrl": None,
            "why": "the frame's source line is this assert's condition",
            "via": "frame",
            **fields,
        }
    )
    return MatchResponse(
        matches=[], exceptions=[], unmatched=[], suggestions=[], raisePoints=[point]
    )


def test_a_raise_points_card_says_what_to_do_where_its_site_has_advice() -> None:
    response = _pointed()
    advised = RecordInfo(
        "r1",
        "grid-context",
        "",
        "AssertionError",
        None,
        (),
        solutions=("Call pl.program_id inside the kernel.",),
    )
    [card] = match_answers(response, {"r1": advised}, Links(""))
    assert card.doThis is not None
    assert card.doThis.title == "Call pl.program_id inside the kernel."
    [card] = match_answers(response, {}, Links(""))
    assert card.doThis is None


def test_a_cut_tracebacks_card_says_where_it_ends_and_what_jax_says_there() -> None:
    response = _pointed(
        filePath="jax/_src/pallas/mosaic_gpu/primitives.py",
        function="_copy_gmem_to_smem_lowering",
        line=820,
        why="the traceback ends at this frame, before its message; the frame is on this "
        "site's line in 0.10.2",
        via="cut",
    )
    [point] = response.raisePoints
    known = {
        "r1": RecordInfo(
            "r1",
            "integer-bytes",
            "Can only transfer integer bytes (shape={shape}, dtype={dtype})",
            "ValueError",
            None,
            (),
            solutions=("Pad the block.",),
        )
    }
    [card] = match_answers(response, known, Links(""))
    assert card.headline.startswith("Cut before its message, in JAX's _copy_gmem_to_smem_lowering")
    assert card.notes[0] == f"The paste is cut before its message: {point.why}."
    said = "JAX's message there: Can only transfer integer bytes (shape={shape}, dtype={dtype})"
    assert said in card.notes
    assert card.doThis is not None and card.doThis.title == "Pad the block."


def test_a_source_only_errors_closest_records_link_by_id_which_slugs_alike_share() -> None:
    response = _unfixed_match("Got bytes=32 but 128")
    closest = [
        ClosestOut(errorId=id_, slug=slug, errorMessage=id_, score=0.5, why="same file")
        for id_, slug in (("r2", ""), ("r3", "third"))
    ]
    source = SourceOnlyOut(
        filePath="jax/core.py",
        function="f",
        kind="raise",
        condition="x > 1",
        variables={},
        releases="0.10.2",
        sourceUrl=None,
        unknown="No curated advice yet.",
        closest=closest,
    )
    response.matches[0].sourceOnly = source
    [card] = match_answers(response, {}, Links(""))
    assert [link.url for link in card.links[1:]] == ["/errors/r2", "/errors/r3"]


@pytest.mark.parametrize(
    ("template", "heading"),
    [
        (
            "Got {bytes=} but warpgroup size is {WARPGROUP_SIZE}",
            "Got bytes=… but warpgroup size is …",
        ),
        (
            "Only byte-aligned shapes are supported. Got shape: {ref.dtype}{ref.shape}",
            "Only byte-aligned shapes are supported. Got shape: …",
        ),
        ("Unsupported memref {{literal braces}}", "Unsupported memref {literal braces}"),
    ],
)
def test_a_template_reads_as_a_heading_with_its_placeholders_elided(
    template: str, heading: str
) -> None:
    assert readable_message(template) == heading
