"""What each answer says, composed from a match, a compute or a record: the answers every
surface renders (``answer.py``).

A matched error is headed with the paste's own line (JAX's words with the user's values, as
the record's pattern matched them), unless a chat could read a mention in it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from app.answers.answer import Answer, Fact, Link, Quote, Snippet, Step, code_diff
from app.answers.catalog import RecordInfo
from app.answers.links import Links
from app.answers.record_text import corrections_by_field, field_label, readable_message
from app.answers.tpu_cards import tpu_answers
from app.engines.mosaic_gpu import parse_version, render_list, render_tuple
from app.jaxref.releases import oldest_release, runs
from app.matching.index import wording_until
from app.schemas.answers import KeywordOut, MemoryOut, PrimitiveOut, SourceOnlyOut
from app.schemas.compute import ComputeResponse, FixOut
from app.schemas.match import (
    CompilerMessageOut,
    MatchOut,
    MatchResponse,
    RaisePointOut,
    ReleaseOut,
    SourceSiteOut,
    ValuesOut,
)

# A record's solutions shown in a match's answer; the record's page shows them all.
MAX_SOLUTIONS_SHOWN = 3
KEYWORD_TAKERS_SHOWN = 4  # the functions named that take a keyword a call does not
# What Slack or Mattermost would read as a mention or a channel link.
_MENTION = re.compile(r"<[!@#]|@\w")
# The matcher names inferred values by attribute; answers label them for people.
_VALUE_LABELS = {
    "bit_width": "bit width",
    "element_count": "elements",
    "memory_space": "memory space",
}
# Curated solutions offered as alternatives often start so; the answer labels them itself.
_ALTERNATIVE_OPENING = re.compile(r"^(?:Or|Alternatively),?\s+(?=\w)", re.IGNORECASE)


def step_heading(answer: Answer, index: int) -> str:
    """``Do this`` for the first step, ``Or`` for the others; a record's example as named."""
    step = answer.steps[index]
    if not step.ranked:
        return step.title
    return f"{'Do this' if index == 0 else 'Or'}: {step.title}"


def hidden_steps_note(answer: Answer, shown: int) -> str | None:
    """Said when a short answer leaves steps out, with the link that lists them (All fixes,
    else the record's page) where the answer has one."""
    hidden = len(answer.steps) - shown
    if hidden <= 0:
        return None
    more = f"{hidden} more {'fix' if hidden == 1 else 'fixes'}"
    labels = {link.label for link in answer.links}
    listed = next((label for label in ("All fixes", "Record page") if label in labels), None)
    return f"{more}: follow {listed}." if listed else f"{more}."


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


def _facts(pairs: Iterable[tuple[str, str]]) -> tuple[Fact, ...]:
    return tuple(Fact(label=label, value=value) for label, value in pairs)


def advice_steps(solutions: tuple[str, ...]) -> tuple[Step, ...]:
    """The record's curated advice, where the engine computed no fix for the paste's values:
    the answer then says what to do without sending the reader to the record's page."""
    return tuple(
        Step(title=_sentence(_ALTERNATIVE_OPENING.sub("", text)))
        for text in solutions[:MAX_SOLUTIONS_SHOWN]
    )


def match_answers(
    response: MatchResponse, known: Mapping[str, RecordInfo], links: Links
) -> list[Answer]:
    """An answer per matched error, then one for the site an exception no message matched was
    raised at (a bare ``NotImplementedError`` that JAX's ``LoweringException`` wraps), then
    the memory reports; with none of them, what a compiler said, else the exceptions seen and
    the closest records. Answers with a step to do come first: a memory report's blocks that
    fit lead an error that has no fix; an upgrade the mined history offers follows advice.

    ``known`` is the catalog's view of the records, for their messages.
    """
    tpu, answered = tpu_answers(response, links)
    computed = {found.lineNumber for found in response.tpu if found.kind == "vmem"}
    memory = [  # a TPU report the engine worked out is answered with its blocks
        _memory_answer(report)
        for report in response.memory
        if report.backend != "tpu" or report.lineNumber not in computed
    ]
    release = release_told(response.release)
    found = [
        _match_answer(match, known.get(match.errorId), links, release)
        for position, match in enumerate(response.matches)
        if position not in answered
    ]
    found += tpu
    if response.raisePoints:
        found.append(_raise_point_answer(response, known, links, release))
    if not found:
        found = [_compiler_answer(message) for message in response.compilerMessages]
    if not found and not memory:
        found = [_unknown_answer(response, links)]
    upgrades = [
        step
        for match in response.matches
        if match.sourceOnly and match.sourceOnly.changedIn
        for step in advice_steps((match.sourceOnly.changedIn.advice,))
    ]
    return sorted([*found, *memory], key=lambda a: (a.doThis is None, a.doThis in upgrades))


def _unknown_answer(response: MatchResponse, links: Links) -> Answer:
    """No known error: the exceptions seen, and the closest records to read."""
    seen = tuple(
        Quote(
            label=f"Exception on line {found.lineNumber}",
            text=f"{found.exceptionClass}: {found.message}",
        )
        for found in response.unmatched[:3]
    )
    closest = tuple(
        Link(label=suggestion.errorMessage, url=links.record(suggestion.errorId))
        for suggestion in response.suggestions
    )
    note = (
        "The closest known errors are linked below."
        if closest
        else ("Paste the whole traceback, or search the records.")
    )
    return Answer(
        kind="unknown",
        headline="errata knows no error in this paste",
        quotes=seen,
        notes=(note,),
        links=closest,
    )


def _compiler_answer(said: CompilerMessageOut) -> Answer:
    """A message no release of JAX's source holds, named as its compiler's."""
    return Answer(
        kind="compiler",
        headline=f"{said.compiler} rejected the kernel",
        quotes=(Quote(label=f"Line {said.lineNumber}", text=said.message),),
        notes=(f"Said by {said.compiler}, not by JAX's source: {said.why}.",),
    )


class ReleaseTold(NamedTuple):
    """The JAX release the answer follows and how the paste told it, for every card."""

    facts: list[tuple[str, str]]
    notes: list[str]  # a contradiction, a version outside the mined releases


def release_told(release: ReleaseOut | None) -> ReleaseTold:
    if release is None or release.used is None:
        return ReleaseTold([], [])
    # The releases the paste reads lead, where it reads several and none was asked for: the
    # one the answer follows (the newest, for its links) is not a claim about the paste.
    several = release.given is None and release.span and release.span != release.used
    told = release.span if several else release.used
    if release.span and release.span != release.used and not several:
        told += f" (the paste reads {release.span})"
    worded = any(evidence.kind == "wording" for evidence in release.evidence)
    if release.frames:
        told += f", from {release.frames} JAX frame{'s' if release.frames > 1 else ''}"
        told += " and the message's wording" if worded else ""
    elif any(evidence.kind == "version" for evidence in release.evidence):
        told += ", as the paste names it"
    elif worded:
        told += ", by the message's wording"
    if several:
        told += f"; the answer's links follow {release.used}"
    notes = [
        f"Release: {note}."  # the notes start with a name as written: "jaxVersion 0.8.1 but …"
        for note in (release.contradiction, release.outside)
        if note is not None
    ]
    return ReleaseTold([("JAX release", told)], notes)


def _raise_point_answer(
    response: MatchResponse, known: Mapping[str, RecordInfo], links: Links, release: ReleaseTold
) -> Answer:
    """An exception no message matched, named by the JAX site its last frame points at; or
    the site of a statement the paste quotes. With the site's curated advice, if any."""
    first, *others = response.raisePoints
    seen = tuple(
        Quote(
            label=f"Exception on line {found.lineNumber}",
            text=f"{found.exceptionClass}: {found.message}"
            if found.message
            else found.exceptionClass,
        )
        for found in response.unmatched[:1]
    )
    advised = known.get(first.errorId) if first.errorId else None
    said: tuple[str, ...] = ()
    where = f"{first.function} ({first.filePath}:{first.line})"
    if first.via == "quote":
        told = f"The paste quotes a statement of JAX's source: {first.why}."
        headline = f"JAX raises this in {where}"
    elif first.via == "cut":
        told = f"The paste is cut before its message: {first.why}."
        headline = f"Cut before its message, in JAX's {where}"
        said = (f"JAX's message there: {advised.message}",) if advised else ()
    elif first.errorId is None:
        told = f"JAX raises on no such line in any release: {first.why}."
        headline = f"Raised inside JAX's {where}"
    else:
        told = f"JAX's frame points at this site: {first.why}."
        headline = f"Raised by JAX in {where}"
    if first.failure is not None:  # computed from the paste's code: the message had nothing
        headline, said = first.failure, (f"Raised by JAX in {where}.", *said)
    computed = tuple(
        Step(title=fix.title, note=fix.note, diff=code_diff(fix.before, fix.after))
        for fix in first.fixes
    )
    steps = (*computed, *advice_steps(advised.solutions if advised else ()))
    return Answer.with_steps(
        steps,
        kind="site",
        headline=headline,
        facts=_facts(release.facts),
        quotes=seen,
        notes=(told, *said, *release.notes),
        links=(*_site_links(first, links), *_other_sites(others, links)),
    )


def _record_page(point: RaisePointOut, links: Links) -> str | None:
    """The page of the point's record, where the catalog holds one (``slug`` says so)."""
    return links.record(point.errorId) if point.errorId and point.slug is not None else None


def _site_links(point: RaisePointOut, links: Links) -> list[Link]:
    page = _record_page(point, links)
    found = [Link(label="Record page", url=page)] if page else []
    if point.sourceUrl:
        found.append(Link(label="JAX source", url=point.sourceUrl))
    return found


def _other_sites(points: Iterable[RaisePointOut], links: Links) -> list[Link]:
    """The other sites the frame may point at (three at most): each one's record, else its
    source."""
    found = []
    for point in points:
        url = _record_page(point, links) or point.sourceUrl
        if url:
            found.append(
                Link(label=f"Or {point.function} ({point.filePath}:{point.line})", url=url)
            )
    return found[:3]


def _memory_answer(report: MemoryOut) -> Answer:
    """How far over its on-chip memory a kernel is, on which devices, and what fits."""
    over = f"{report.overBytes:,} bytes ({report.overPercent:g}%)"
    approximate = "" if report.exact else " (the report rounds to 0.01 MiB)"
    facts = [
        ("requested", f"{report.requestedBytes:,} bytes{approximate}"),
        ("limit", f"{report.limitBytes:,} bytes"),
        ("over by", over),
    ]
    if report.devices:
        facts.append(("the limit of", ", ".join(report.devices)))
    if report.fitsOn:
        facts.append(("fits as is on", ", ".join(report.fitsOn)))
    steps: list[Step] = []
    budget = report.budget
    if budget is not None:
        steps += [
            Step(
                title=f"Block {render_tuple(tuple(fit.newShape))} instead of "
                f"{render_tuple(tuple(fit.shape))}",
                note=f"{fit.smemBytes:,} bytes at max_concurrent_steps="
                f"{budget.maxConcurrentSteps}; passes every other pallas_call check",
                diff=code_diff(
                    f"block_shape={render_tuple(tuple(fit.shape))}",
                    f"block_shape={render_tuple(tuple(fit.newShape))}",
                ),
            )
            for fit in budget.fittingBlocks
        ]
    if report.fittingDepth is not None and report.maxConcurrentSteps is not None:
        steps.append(
            Step(
                title=f"max_concurrent_steps={report.fittingDepth}",
                note=f"from {report.maxConcurrentSteps}: the kernel fits, if every buffer is "
                "pipelined",
                diff=code_diff(
                    f"max_concurrent_steps={report.maxConcurrentSteps}",
                    f"max_concurrent_steps={report.fittingDepth}",
                ),
            )
        )
    steps += [Step(title=advice) for advice in report.advice]
    return Answer.with_steps(
        tuple(steps),
        kind="memory",
        headline=f"{report.memory} over the limit by {over}",
        facts=_facts(facts),
    )


def _match_answer(
    match: MatchOut,
    record: RecordInfo | None,
    links: Links,
    release: ReleaseTold,
) -> Answer:
    """Headed with JAX's message for the paste's values and why it fails, where the engine
    reproduced it, else with the paste's line as the record's pattern matched it; the message
    shown once. Its steps: the engine's fixes, else a rewrite, else the record's advice."""
    fix = match.fix
    first = fix.firstViolation if fix else None
    message = first.message if first else _pasted_message(match, record)
    headline = f"{match.errorClass or 'Error'}: {message}"
    if first is not None and first.explanation:
        headline += f" ({first.explanation})"
    quotes = []
    if match.why.normalizedLine.strip() not in headline:  # a cut line, an older wording
        line = match.matchedLine.strip()
        quotes.append(Quote(label=f"Line {match.lineNumber} of the paste", text=line))
    facts = [("line", f"{match.lineNumber} of the paste"), *_value_facts(match.values)]
    if match.operation:
        facts.append(("operation", match.operation))
    if match.rule:
        facts.append(("rule", match.rule))
    facts.extend(release.facts)
    if match.fixUnavailable:
        facts.append(("computed fix", f"none: {match.fixUnavailable}"))
    notes = list(release.notes)
    if match.why.calledBy:
        notes.append(f"Python raised this where JAX called your code: {match.why.calledBy}.")
    if match.variant != "current" and not match.why.truncated:  # a cut shows no wording's end
        notes.append(_older_wording_note(match.variant))
    if fix is not None:
        notes.extend(_later_checks(fix))
        notes.extend(releases_checked(fix))
    steps = _fix_steps(fix) if fix else ()
    closest: tuple[Link, ...] = ()
    if match.keyword is not None:
        notes.extend(keyword_text(match.keyword))
    if match.primitive is not None:
        notes.extend(primitive_text(match.primitive))
        steps = (*steps, *_rewrite_steps(match.primitive))
    if not steps and record is not None:
        steps = advice_steps(record.solutions)
    if match.sourceOnly is not None:
        if not steps and match.sourceOnly.changedIn is not None:  # the mined history's fix
            steps = advice_steps((match.sourceOnly.changedIn.advice,))
        facts.extend(_source_facts(match.sourceOnly))
        quotes.extend(_source_quotes(match.sourceOnly))
        notes.append(match.sourceOnly.unknown)
        closest = tuple(
            Link(label=item.errorMessage, url=links.record(item.errorId))
            for item in match.sourceOnly.closest
        )
    page = Link(label="Record page", url=links.record(match.errorId))
    source = (
        (Link(label=_source_label(match.source), url=match.sourceUrl),) if match.sourceUrl else ()
    )
    return Answer.with_steps(
        steps,
        kind="match",
        headline=headline,
        facts=_facts(facts),
        quotes=tuple(quotes),
        notes=tuple(notes),
        links=(page, *source, *_all_fixes(fix, links), *closest),
    )


def _source_label(site: SourceSiteOut | None) -> str:
    """Names the file, line and release the link pins, so that a chat answer shows them."""
    return f"JAX source: {site.filePath}:{site.line} ({site.release})" if site else "JAX source"


def keyword_text(keyword: KeywordOut) -> list[str]:
    """Where a keyword the call does not take belongs, and the call's keywords like it."""
    lines = []
    if keyword.closeTo:
        spelled = " or ".join(f"`{name}`" for name in keyword.closeTo)
        lines.append(f"Did you mean {spelled}? It takes that keyword.")
    if keyword.takenBy:
        takers = ", ".join(
            f"{' / '.join(taker.calledAs)} (JAX {taker.releases})"
            for taker in keyword.takenBy[:KEYWORD_TAKERS_SHOWN]
        )
        more = len(keyword.takenBy) - KEYWORD_TAKERS_SHOWN
        takers += f", and {more} more" if more > 0 else ""
        lines.append(f"`{keyword.keyword}` is a parameter of {takers}: pass it there.")
    elif not keyword.closeTo:
        lines.append(f"No function of Pallas's public API takes `{keyword.keyword}`.")
    return lines


def primitive_text(primitive: PrimitiveOut) -> list[str]:
    """Which releases lower the primitive, and under which semantics."""
    name, backend = primitive.primitive, primitive.backend
    if not primitive.lowered:
        return [f"No release from {oldest_release()} on has a {backend} lowering rule for {name}."]
    lines = [
        f"{backend} lowers {name} under {entry.semantics} semantics in {entry.releases}"
        + ("" if entry.inNewest else " (no longer in the newest release)")
        + "."
        for entry in primitive.lowered
    ]
    if primitive.upgradeTo:
        lines.append(f"Upgrade to JAX {primitive.upgradeTo} or later: it lowers {name} there.")
    elif primitive.semantics:
        lines.append(f"No release lowers {name} under {primitive.semantics} semantics.")
    return lines


def _rewrite_steps(primitive: PrimitiveOut) -> tuple[Step, ...]:
    rewrite = primitive.rewrite
    if rewrite is None:
        return ()
    return (
        Step(
            title=f"Rewrite: {rewrite.summary}",
            note="lowered by JAX 0.10.2 in errata's tests",
            diff=code_diff(rewrite.before, rewrite.after),
        ),
    )


def _source_facts(source: SourceOnlyOut) -> list[tuple[str, str]]:
    facts = [
        ("raised in", f"{source.filePath}, {source.function} ({source.kind})"),
        ("releases", source.releases),
    ]
    return facts


def _source_quotes(source: SourceOnlyOut) -> list[Quote]:
    """The check as JAX writes it, and the message's values as pasted (both verbatim)."""
    quotes = []
    if source.condition:
        when = "raised when it fails" if source.kind == "assert" else "raised when it holds"
        quotes.append(Quote(label=f"The check in JAX's source ({when})", text=source.condition))
    if source.variables:
        values = ", ".join(f"{name}={value}" for name, value in source.variables.items())
        quotes.append(Quote(label="Its values in the paste", text=values))
    return quotes


def _older_wording_note(variant: str) -> str:
    """Says which wording the paste shows, where it is not the one JAX prints today."""
    until = wording_until(variant)
    if until is None:
        return "Matched an older wording of this error."
    return f"Matched the wording JAX printed until {until}; later releases word it otherwise."


def _pasted_message(match: MatchOut, record: RecordInfo | None) -> str:
    """The matched line, values and all; the record's message with its placeholders elided
    when the line could mention somebody in a chat."""
    line = match.why.normalizedLine.strip()
    if line and not _MENTION.search(line):
        return line
    return readable_message(record.message) if record else match.slug


def compute_answer(response: ComputeResponse, links: Links) -> Answer:
    """The verdict for one case: JAX's first error and the fixes, or that it passes."""
    first = response.firstViolation
    shape = render_tuple(tuple(response.shape))
    facts = [("operation", response.operation), ("shape", shape), ("dtype", response.dtype)]
    if response.targetDtype:
        facts.append(("target dtype", response.targetDtype))
    facts.append(("JAX", response.jaxVersion))
    facts.append(("lowering semantics", response.loweringSemantics))
    failing = [each for each in response.checkedIn if not each.ok]
    steps = _fix_steps(response)
    if first is None and not failing:
        return Answer(
            kind="compute",
            headline=f"{response.operation}: {shape} {response.dtype} passes every check",
            facts=_facts(facts),
            notes=("Nothing to fix: this block lowers.",),
        )
    if first is None:  # it lowers in jaxVersion, not in some other release asked for
        elsewhere = runs(tuple(each.jaxVersion for each in failing))
        return Answer.with_steps(
            steps,
            kind="compute",
            headline=f"{response.operation}: {shape} {response.dtype} lowers in JAX "
            f"{response.jaxVersion}, not in {elsewhere}",
            facts=_facts(facts),
            notes=(
                *(f"JAX {each.jaxVersion} fails {each.rule}." for each in failing),
                *releases_checked(response),
            ),
            links=_all_fixes(response, links),
        )
    pages = [Link(label="Record page", url=links.record(first.errorId))] if first.errorId else []
    headline = f"{first.errorClass}: {first.message}"
    return Answer.with_steps(
        steps,
        kind="compute",
        headline=f"{headline} ({first.explanation})" if first.explanation else headline,
        facts=_facts(facts),
        notes=(*_later_checks(response), *releases_checked(response)),
        links=(*pages, *_all_fixes(response, links)),
    )


def record_answer(
    document: dict[str, Any], annotation: dict[str, Any] | None, links: Links
) -> Answer:
    """A record in brief: what the error means, its example fix (errata's, when corrected)."""
    corrections = corrections_by_field(annotation)
    rule = (annotation or {}).get("rule") or document.get("rule")
    place = document.get("filePath")
    if place and document.get("lineNumber"):
        place = f"{place}:{document['lineNumber']}"
    facts = [
        (label, str(value))
        for label, value in (("id", document["id"]), ("rule", rule), ("thrown at", place))
        if value
    ]
    meaning, _ = _corrected(document, corrections, "documentation")
    notes = [meaning] if meaning else []
    if corrections:
        labels = ", ".join(dict.fromkeys(field_label(field) for field in corrections))
        notes.append(f"errata corrects this record ({labels}): read the record page.")
    example, problem = _corrected(document, corrections, "exampleFix")
    steps = advice_steps(tuple(document.get("solutions") or ()))
    if example:  # code first: the record's own change, then its advice in words
        title = "Example fix, as corrected by errata" if problem else "Example fix"
        code = (Snippet(label="", code=example),)
        steps = (Step(title=title, note=problem or "", snippets=code, ranked=False), *steps)
    message = readable_message(document["errorMessage"])
    return Answer.with_steps(
        steps,
        kind="record",
        headline=f"{document.get('errorClass') or 'Error'}: {message}",
        facts=_facts(facts),
        notes=tuple(notes),
        links=(Link(label="Record page", url=links.record(document["id"])),),
    )


def _corrected(
    document: dict[str, Any], corrections: dict[str, dict[str, Any]], field: str
) -> tuple[str | None, str | None]:
    """A field as errata says it should read, and what was wrong with it (None if nothing)."""
    correction = corrections.get(field)
    if correction:
        return correction["correction"], correction["problem"]
    return document.get(field), None


def _value_facts(values: ValuesOut) -> Iterable[tuple[str, str]]:
    inferred = {_VALUE_LABELS.get(key, key) for key in values.inferred}
    found = (
        ("shape", render_list(tuple(values.shape)) if values.shape is not None else None),
        ("dtype", values.dtype),
        ("bit width", values.bitwidth),
        ("elements", values.elementCount),
        ("bits", values.bits),
        ("bytes", values.bytes),
        ("memory space", values.memorySpace),
        *values.numbers.items(),
    )
    for label, value in found:
        if value is not None:
            yield label, f"{value} (inferred)" if label in inferred else str(value)


def _later_checks(response: ComputeResponse) -> list[str]:
    """Why the fixes go further than the first error asks: the checks that fail after it."""
    later = [violation.rule for violation in response.violations[1:]]
    if not later:
        return []
    checks = "check fails" if len(later) == 1 else "checks fail"
    return [
        f"Fixing only this is not enough: {len(later)} more {checks} ({', '.join(later)}); "
        "each fix passes them too."
    ]


def releases_checked(response: ComputeResponse) -> list[str]:
    """Where the fixes were checked, when in more than one release: each semantics' releases."""
    if len(response.checkedIn) < 2 or not response.fixes:
        return []
    by_semantics: dict[str, list[str]] = {}
    for each in sorted(response.checkedIn, key=lambda each: parse_version(each.jaxVersion)):
        by_semantics.setdefault(each.loweringSemantics, []).append(each.jaxVersion)
    where = " and ".join(
        f"{runs(tuple(releases))} ({semantics} semantics)"
        for semantics, releases in by_semantics.items()
    )
    return [f"Every fix passes every check in JAX {where}."]


def _fix_steps(response: ComputeResponse) -> tuple[Step, ...]:
    fixes = response.fixes
    return tuple(
        Step(
            title=_sentence(fix.description),
            note=_fix_note(fix, fixes[index - 1] if index else None, response),
            diff=code_diff(fix.code.before, fix.code.after),
        )
        for index, fix in enumerate(fixes)
    )


def _fix_note(fix: FixOut, above: FixOut | None, response: ComputeResponse) -> str:
    """What the fix costs and asks of the data, and why it ranks below the fix above it."""
    parts = [
        "verified against every check" if fix.verified else "not verified",
        f"adds {fix.addedBytes:g} bytes" if fix.addedBytes else "adds no bytes",
    ]
    if fix.note:
        parts.append(fix.note)
    if above is not None:
        parts.extend(_ranked_below(fix, above, response))
    return "; ".join(parts)


def _ranked_below(fix: FixOut, above: FixOut, response: ComputeResponse) -> list[str]:
    """The ranking rule that put ``above`` first, where the added bytes do not say it."""

    def keeps(candidate: FixOut) -> bool:
        return (candidate.dtype, candidate.targetDtype) == (response.dtype, response.targetDtype)

    if fix.addedBytes > above.addedBytes and keeps(fix) == keeps(above):
        return []
    if keeps(above) and not keeps(fix):
        return ["ranked below the fixes that keep your dtypes, which change less of what you meant"]
    if _keeps_axes(above, response) and not _keeps_axes(fix, response):
        return ["ranked below the pads that keep your block's axes, which move no data"]
    if fix.addedBytes != above.addedBytes:
        return []
    tie = "as many bytes as the fix above"
    if fix.kind != above.kind:
        return [f"{tie}, which ranks first as a {above.kind} (pads, reshapes, then type changes)"]
    if fix.dtype != above.dtype:
        return [f"{tie}, which ranks first with the narrower {above.dtype}"]
    if fix.targetDtype != above.targetDtype:
        return [f"{tie}, which ranks first as a view nearer to {response.targetDtype}"]
    if above.axis == -1 and fix.axis != -1:
        return [f"{tie}, which ranks first for padding the last axis"]
    return [tie]


def _keeps_axes(fix: FixOut, response: ComputeResponse) -> bool:
    """Every axis of the block stays, only grown: see the engine's ranking."""
    return len(fix.shape) == len(response.shape) and all(
        new >= old for new, old in zip(fix.shape, response.shape, strict=True)
    )


def _all_fixes(response: ComputeResponse | None, links: Links) -> tuple[Link, ...]:
    """A link to the compute page for these values, where every fix is listed."""
    if response is None or not response.fixes:
        return ()
    return (Link(label="All fixes", url=links.compute(**compute_fields(response))),)


def compute_fields(response: ComputeResponse) -> dict[str, str | None]:
    """The compute request that gives this answer again, with every fix: a link's query,
    a command's options."""
    # Releases checked under different semantics are each under its default: none was asked.
    semantics = {each.loweringSemantics for each in response.checkedIn}
    also = [each.jaxVersion for each in response.checkedIn[1:]]
    return {
        "operation": response.operation,
        "shape": render_tuple(tuple(response.shape)),
        "dtype": response.dtype,
        "targetDtype": response.targetDtype,
        "jaxVersion": response.jaxVersion,
        "alsoJaxVersions": ",".join(also) if also else None,
        "loweringSemantics": response.loweringSemantics if len(semantics) == 1 else None,
    }
