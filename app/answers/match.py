"""Match: find the known errors in a paste, type their values, and attach the engine's fix.

Everything it reads is in the process's catalog (see ``catalog.py``): no database work.
"""

from __future__ import annotations

from typing import TypeGuard, cast

from app.answers.catalog import SIMILAR_QUERY_CHARS, Catalog, RecordInfo
from app.answers.code_edits import located, resized, with_edit
from app.answers.compute import ComputeService, checked_jax_version
from app.answers.computed import keyword_out, memory_overflows, primitive_out, source_only_out
from app.answers.site_fixes import site_fixes
from app.answers.tpu_found import tpu_found, tpu_lines, tpu_on
from app.engines.mosaic_gpu import InputValueError
from app.engines.mosaic_gpu.versions import MODELLED
from app.errors import PayloadTooLarge, ProblemError, invalid_field
from app.matching import FoundException, Match, PasteTooLarge, UnreadablePaste, match_paste
from app.matching.compilers import compiler_messages
from app.matching.frames import Frame, FrameIndex, SourceSite
from app.matching.raise_points import RaisePoint
from app.matching.release import ReleaseReading
from app.matching.values import UserFrame
from app.schemas.answers import MemoryOut
from app.schemas.compute import (
    LOWERING_SEMANTICS,
    ComputeRequest,
    ComputeResponse,
    LoweringSemantics,
)
from app.schemas.match import (
    CompilerMessageOut,
    EvidenceOut,
    ExceptionOut,
    MatchOut,
    MatchRequest,
    MatchResponse,
    RaisePointOut,
    ReleaseOut,
    SourceSiteOut,
    SuggestionOut,
    UserFrameOut,
    ValuesOut,
    WhyOut,
)
from app.schemas.tpu_found import TpuFoundOut

# Words in a paste that say which construct the user ran, most specific first.
_OPERATION_HINTS = {
    "ref_union": ("RefUnion",),
    "smem_alias": ("ExtractAliasedRef",),
    "smem_bitcast": ("_handle_dtype_bitcast", "bitcast"),
    "pallas_call": ("pallas_call", "emit_pipeline", "offset: ?>"),
    "copy_gmem_to_smem": ("copy_gmem_to_smem",),
    "copy_smem_to_gmem": ("copy_smem_to_gmem",),
}


class MatchService:
    def __init__(
        self, catalog: Catalog, *, run_engine: bool = True, frames: FrameIndex | None = None
    ) -> None:
        """``run_engine=False``: see ``ComputeService``; a fix the engine has not computed
        yet raises ``EngineNeeded``. ``frames``: the frame index when the caller has one
        (a snapshot's), else the shipped one."""
        self.catalog = catalog
        self.engine = ComputeService(catalog, run_engine=run_engine)
        self.frames = frames if frames is not None else FrameIndex.load()

    def match(self, request: MatchRequest) -> MatchResponse:
        checked_jax_version(request.jaxVersion, modelled=False)
        try:
            report = match_paste(
                request.text, self.catalog.patterns, request.jaxVersion, self.frames
            )
        except PasteTooLarge as exc:
            raise PayloadTooLarge(f"text: {exc}") from None
        except UnreadablePaste as exc:
            raise invalid_field("text", str(exc)) from None
        release = report.release
        fixed_in = _releases_to_fix(request.jaxVersion, release)
        if request.jaxVersion is None and release is not None and _modelled(release.used):
            # The paste's own release picks the engine's rules, where the engine models it.
            request = request.model_copy(update={"jaxVersion": release.used})
        # The release the answer follows, modelled by the engine or not: it picks the links.
        followed = request.jaxVersion or (release.used if release is not None else None)
        possible = release.releases if release is not None else ()
        matches = [
            self._match(match, request, followed, possible, fixed_in) for match in report.matches
        ]
        # Where nothing matched, the records nearest the message; none where the paste's cut
        # traceback names its site (the nearest to its frames' text would be a guess).
        named = bool(matches) or any(point.via == "cut" for point in report.raise_points)
        suggestions = [] if named else self._suggestions(report.exceptions, request.text)
        memory = memory_overflows(request.text, request.jaxVersion)
        tpu = tpu_found(request.text, followed, self.catalog)
        matches = [_with_tpu_reason(match, tpu) for match in matches]
        return MatchResponse(
            matches=matches,
            exceptions=[_exception(found) for found in report.exceptions],
            unmatched=[_exception(found) for found in report.unmatched],
            suggestions=suggestions,
            release=_release(release) if _tells(release) else None,
            raisePoints=[
                self._raise_point(point, followed, request.text) for point in report.raise_points
            ],
            memory=memory,
            tpu=tpu,
            compilerMessages=_unexplained(request.text, matches, memory, tpu),
            skippedExceptions=report.skipped_exceptions,
        )

    def _raise_point(self, point: RaisePoint, followed: str | None, text: str) -> RaisePointOut:
        info = self.catalog.records.get(point.record_id) if point.record_id else None
        failure, fixes = site_fixes(info.rule if info is not None else None, text)
        # A release with the site on the frame's line: the one followed, if it is one.
        releases = point.releases
        release = followed if not releases or followed in releases else releases[-1]
        if point.record_id is None:  # the frame's own line, pinned to a release it is in
            frame = Frame(point.file, point.line, point.function, point.paste_line)
            shown = self.frames.call_site(frame, release, releases)
        else:
            shown = self.frames.source_site(point.record_id, release)
        return RaisePointOut(
            errorId=point.record_id,
            slug=info.slug if info is not None else None,
            filePath=point.file,
            function=point.function,
            line=point.line,
            lineNumber=point.paste_line,
            releases=list(point.releases),
            sourceUrl=_url(shown),
            why=point.reason,
            via=point.via,
            failure=failure,
            fixes=fixes,
        )

    def _match(
        self,
        match: Match,
        request: MatchRequest,
        followed: str | None,
        possible: tuple[str, ...],
        fixed_in: tuple[str | None, ...],
    ) -> MatchOut:
        """``possible``: the releases the paste can come from, which a frame's line is of;
        ``fixed_in``: those a fix must pass in (see ``_releases_to_fix``)."""
        info = self.catalog.records[match.record_id]
        operation, fix, reason = self._fix(match, info, request.text, fixed_in)
        values = match.values
        called = match.called_from
        if called is not None:
            site = self.frames.call_site(called, followed, possible)
        else:
            site = self.frames.source_site(info.id, followed)
        source_url = _url(site) or info.github_url
        return MatchOut(
            errorId=info.id,
            slug=info.slug,
            rule=info.rule,
            errorClass=info.error_class,
            score=round(match.score, 3),
            variant=match.variant,
            matchedLine=match.matched_line,
            lineNumber=match.line_number,
            chainPosition=match.chain_position,
            captures=match.captures,
            values=ValuesOut(
                shape=values.shape,
                dtype=values.dtype,
                bitwidth=values.bit_width,
                elementCount=values.element_count,
                bits=values.bits,
                bytes=values.bytes,
                memorySpace=values.memory_space,
                numbers=values.numbers,
                inferred=values.inferred,
            ),
            operation=operation,
            fix=fix,
            fixUnavailable=reason,
            alternatives=list(match.alternatives),
            userFrame=_frame(match.user_frame),
            sourceUrl=source_url,
            source=SourceSiteOut(filePath=site.file, line=site.line, release=site.release)
            if site
            else None,
            primitive=primitive_out(info, match.captures),
            keyword=keyword_out(info, match.captures),
            sourceOnly=source_only_out(
                info,
                match.captures,
                self.catalog,
                self.frames,
                source_url,
            ),
            why=WhyOut(
                patternId=match.pattern_id,
                pattern=match.pattern,
                normalizedLine=match.normalized_line,
                truncated=match.truncated,
                foundIn=match.found_in,
                literal=match.literal,
                stripped=match.stripped,
                unread=list(match.unread),
                calledBy=f"{called.file}:{called.line} {called.function}" if called else None,
                rankedBy=match.ranked_by,
            ),
        )

    def _fix(
        self, match: Match, info: RecordInfo, text: str, releases: tuple[str | None, ...]
    ) -> tuple[str | None, ComputeResponse | None, str | None]:
        """The engine's answer for the matched values, in the construct (and the lowering
        semantics) that reproduce the matched error; no fix rather than a fix for the wrong
        construct. The fix passes in every release of ``releases`` that raises the error."""
        if not info.operations:
            return None, None, "this error belongs to no construct the engine models"
        # Only the user's jaxVersion can be one the engine does not model (0.4.34).
        unmodelled = [release for release in releases if release and not _modelled(release)]
        if unmodelled:
            return None, None, f"JAX {unmodelled[0]} is not modelled; {MODELLED}"
        values = match.values
        if values.shape is None or values.dtype is None:
            return None, None, _missing_values(values.shape, values.dtype)
        operations = _by_hints(info.operations, text)
        refused: list[str] = []  # why the engine could not take the values in a construct
        shape = tuple(values.shape)
        for operation in operations:
            raising = [
                (version, *found)
                for version in releases
                if (
                    found := self._raising(
                        operation, shape, values.dtype, version, info.rule, refused
                    )
                )
            ]
            if raising:
                fix = self.engine.compute(
                    _fix_request(operation, values.shape, values.dtype, raising)
                )
                return operation, _in_the_users_code(fix, match.user_frame, text), None
        because = f" ({'; '.join(dict.fromkeys(refused))})" if refused else ""
        return (
            operations[0],
            None,
            f"for shape {values.shape} and {values.dtype} the engine does not reproduce "
            f"this error in {', '.join(operations)}{because}",
        )

    def _raising(
        self,
        operation: str,
        shape: tuple[int, ...],
        dtype: str,
        version: str | None,
        rule: str | None,
        refused: list[str],
    ) -> tuple[LoweringSemantics | None, str] | None:
        """The lowering semantics under which ``version`` raises ``rule`` first for these
        values, as asked (``None``: the release's default) and as resolved: the default
        first, then the other, since an error only Lane raises (a copy's 128-byte multiple,
        in a release whose default is Warpgroup) shows the kernel asked for Lane. What the
        engine refuses is added to ``refused``."""
        default: str | None = None
        for semantics in (None, *LOWERING_SEMANTICS):
            if semantics is not None and semantics == default:
                continue  # asked already, as the release's default
            try:
                verdict = self.engine.verdict(operation, shape, dtype, version, semantics)
            except InputValueError as exc:
                refused.append(str(exc))
                continue
            default = default or verdict.lowering_semantics
            first = verdict.first_violation
            if first is not None and first.rule_id == rule:
                return semantics, verdict.lowering_semantics
        return None

    def _suggestions(
        self, exceptions: tuple[FoundException, ...], text: str
    ) -> list[SuggestionOut]:
        query = exceptions[0].message if exceptions else text[-SIMILAR_QUERY_CHARS:]
        return [
            SuggestionOut(
                errorId=record_id,
                slug=self.catalog.records[record_id].slug,
                errorMessage=self.catalog.records[record_id].message,
                score=score,
            )
            for record_id, score in self.catalog.similar(query)
        ]


def _releases_to_fix(given: str | None, release: ReleaseReading | None) -> tuple[str | None, ...]:
    """The releases a fix must pass in: the one the user gives; else the one the answer
    follows, then every other the paste may come from that the engine models, newest first
    (a fix for the newest alone can fail in an older one: Lane, the default up to 0.10.2,
    asks a copy for whole multiples of 128 bytes); else the engine's default."""
    if given is not None or release is None:
        return (given,)
    modelled = [r for r in reversed(release.releases) if _modelled(r) and r != release.used]
    if _modelled(release.used):
        return (release.used, *modelled)
    return tuple(modelled) or (None,)


def _fix_request(
    operation: str,
    shape: list[int],
    dtype: str,
    raising: list[tuple[str | None, LoweringSemantics | None, str]],
) -> ComputeRequest:
    """The engine's request for a fix in each release that raises the error (release,
    semantics asked, semantics resolved; the first is the answer's). One semantics is asked
    for all: each release's default where every release raised under it, else the first's,
    in the releases that raised under that."""
    (version, _, resolved), *others = raising
    semantics: LoweringSemantics | None = None
    if any(each_asked is not None for _, each_asked, _ in raising):
        semantics = cast(LoweringSemantics, resolved)
        others = [other for other in others if other[2] == resolved]
    return ComputeRequest(
        operation=operation,
        shape=shape,
        dtype=dtype,
        jaxVersion=version,
        loweringSemantics=semantics,
        alsoJaxVersions=[other_version for other_version, _, _ in others if other_version],
    )


def _modelled(release: str | None) -> bool:
    try:
        checked_jax_version(release)
    except ProblemError:
        return False
    return release is not None


def _missing_values(shape: list[int] | None, dtype: str | None) -> str:
    """What the engine lacks, saying what the paste does show."""
    if dtype is not None:
        return f"the paste shows the dtype ({dtype}) but not the block's shape"
    if shape is not None:
        return f"the paste shows the block's shape ({shape}) but not its dtype"
    return "the paste does not show the block's shape and dtype"


def _in_the_users_code(fix: ComputeResponse, frame: UserFrame | None, text: str) -> ComputeResponse:
    """Each fix as a change of the user's code: every line of the paste that writes the
    block's shape, and the call cut back to it (``code_edits``); else the construct's own
    line with the user's values. A copy: answers are shared."""
    call = frame.source if frame is not None else None
    fixes = []
    for option in fix.fixes:
        edit = None
        if option.targetDtype == fix.targetDtype:  # a view's target the code cannot show
            edit = resized(text, call, fix.shape, fix.dtype, option.shape, option.dtype)
        if edit is not None and frame is not None and frame.source is not None:
            edit = located(edit, frame.source, f"# {frame.file}, line {frame.line}")
        fixes.append(with_edit(option, edit))
    return fix.model_copy(update={"fixes": fixes})


def _frame(frame: UserFrame | None) -> UserFrameOut | None:
    if frame is None:
        return None
    return UserFrameOut(file=frame.file, line=frame.line, source=frame.source)


def _by_hints(operations: tuple[str, ...], text: str) -> list[str]:
    """The record's constructs, those the paste mentions first."""
    mentioned = [
        op for op in operations if any(hint in text for hint in _OPERATION_HINTS.get(op, ()))
    ]
    return mentioned + [op for op in operations if op not in mentioned]


def _unexplained(
    text: str, matches: list[MatchOut], memory: list[MemoryOut], tpu: list[TpuFoundOut]
) -> list[CompilerMessageOut]:
    """The compilers' messages that no match, memory report or TPU computation stands on, on
    the wrapper's line or the message's."""
    explained = {m.lineNumber for m in matches} | {m.lineNumber for m in memory}
    explained |= {line for found in tpu for line in tpu_lines(found)}
    return [
        CompilerMessageOut(
            lineNumber=said.line,
            compiler=said.compiler,
            message=said.message,
            why=said.why,
            errorId=said.record_id,
        )
        for said in compiler_messages(text)
        if not explained & {said.line, said.message_line}
    ]


def _with_tpu_reason(match: MatchOut, tpu: list[TpuFoundOut]) -> MatchOut:
    """A TPU match the engine computed for (its card leads with the fixes), or says why not:
    no longer "no construct the engine models"."""
    found = tpu_on(match.lineNumber, tpu)
    if found is None or match.fix is not None:
        return match
    return match.model_copy(update={"fixUnavailable": found.unavailable, "operation": None})


def _url(site: SourceSite | None) -> str | None:
    return site.url if site else None


def _tells(reading: ReleaseReading | None) -> TypeGuard[ReleaseReading]:
    """Whether the paste says anything of its release: a mined one, or a version outside."""
    return reading is not None and bool(reading.releases or reading.outside)


def _release(reading: ReleaseReading) -> ReleaseOut:
    return ReleaseOut(
        releases=list(reading.releases),
        span=reading.span,
        frames=reading.frames,
        evidence=[
            EvidenceOut(kind=e.kind, lineNumber=e.line, text=e.text, releases=list(e.releases))
            for e in reading.evidence
        ],
        given=reading.given,
        used=reading.used,
        contradiction=reading.contradiction,
        outside=reading.outside,
    )


def _exception(found: FoundException) -> ExceptionOut:
    return ExceptionOut(
        exceptionClass=found.qualified_class,
        message=found.message,
        lineNumber=found.line_number,
        chainPosition=found.chain_position,
        truncated=found.truncated,
    )
