"""The answers for Pallas TPU errors the engine computed: what went wrong for the paste's own
values, and the changes that make the kernel compile, first.

A TPU computation on the line of a matched error takes that match's place, carrying its
record page and source link, so the error is answered once, with its fixes.
"""

from __future__ import annotations

from collections.abc import Sequence

from app.answers.answer import Answer, Fact, Link, Quote, Step, code_diff
from app.answers.links import Links
from app.answers.tpu_found import tpu_lines
from app.schemas.compute import FixOut
from app.schemas.match import MatchOut, MatchResponse
from app.schemas.tpu_compute import TpuComputeResponse
from app.schemas.tpu_found import TpuFoundOut

MIB = 1 << 20


def tpu_answers(response: MatchResponse, links: Links) -> tuple[list[Answer], set[int]]:
    """An answer per TPU computation, and the positions of the matches they answer."""
    answers, answered = [], set()
    for found in response.tpu:
        match = _match_on(found, response.matches)
        if match is not None and found.unavailable:
            continue  # the match's own answer says why nothing was computed
        if match is not None:
            answered.add(response.matches.index(match))
        answers.append(tpu_answer(found, match, links))
    return answers, answered


def _match_on(found: TpuFoundOut, matches: Sequence[MatchOut]) -> MatchOut | None:
    lines = tpu_lines(found)
    return next((match for match in matches if match.lineNumber in lines), None)


def tpu_answer(found: TpuFoundOut, match: MatchOut | None, links: Links) -> Answer:
    facts = [("line", f"{found.lineNumber} of the paste"), ("chip", found.chip)]
    if found.jaxVersion:
        facts.append(("JAX", found.jaxVersion))
    notes = [f"Assumed: {each}." for each in found.assumed]
    record_links: list[Link] = []
    if match is not None:
        record_links.append(Link(label="Record page", url=links.record(match.errorId)))
        if match.sourceUrl:
            record_links.append(Link(label="JAX source", url=match.sourceUrl))
    headline, steps, quotes = _computed(found)
    if found.unavailable:
        notes.append(f"No fix computed: {found.unavailable}.")
    return Answer.with_steps(
        steps,
        kind="compute",
        headline=headline,
        facts=tuple(Fact(label=label, value=value) for label, value in facts),
        quotes=quotes,
        notes=tuple(notes),
        links=tuple(record_links),
    )


def _computed(found: TpuFoundOut) -> tuple[str, tuple[Step, ...], tuple[Quote, ...]]:
    """The headline, the steps and JAX's words, for what was computed."""
    if found.compute is not None and found.compute.vmem is not None:
        return (
            _budget(found.compute),
            _fix_steps(found.chip, found.jaxVersion, found.compute.fixes),
            (),
        )
    if found.compute is not None:
        return (
            _block(found.compute),
            _fix_steps(found.chip, found.jaxVersion, found.compute.fixes),
            _said(found.compute),
        )
    if found.tiling is not None:
        return _tiling(found)
    if found.offset is not None:
        offset = found.offset
        headline = (
            f"The compiler cannot prove a dynamic start on the {offset.axis} axis "
            f"(dimension {offset.dimension}) is a multiple of {offset.multiple}"
        )
        return headline, (Step(title=_sentence(offset.advice)),), ()
    if found.matmul is not None:
        return _matmul(found)
    if found.vmemLimitBytes is not None:
        return _limit_only(found)
    return f"Pallas TPU {found.kind} error on line {found.lineNumber}", (), ()


def _block(compute: TpuComputeResponse) -> str:
    first = compute.firstViolation
    if first is None:
        block = _dims(compute.blockShape or ())
        return f"The block {block} passes every check of JAX {compute.jaxVersion}"
    return f"{first.errorClass}: {first.explanation}"


def _said(compute: TpuComputeResponse) -> tuple[Quote, ...]:
    first = compute.firstViolation
    if first is None:
        return ()
    return (Quote(label=f"JAX {compute.jaxVersion} says, for these values", text=first.message),)


def _budget(compute: TpuComputeResponse) -> str:
    vmem = compute.vmem
    assert vmem is not None
    if compute.ok:
        return f"The blocks fit: {vmem.totalBytes:,} bytes of VMEM of {vmem.limitBytes:,}"
    limit = "the default scoped limit" if vmem.limitIsDefault else "vmem_limit_bytes"
    return (
        f"VMEM over {limit} by {vmem.overBytes:,} bytes: the blocks take "
        f"{vmem.totalBytes:,} bytes, padded and buffered, against {vmem.limitBytes:,}"
    )


def _fix_steps(chip: str, jax_version: str | None, fixes: Sequence[FixOut]) -> tuple[Step, ...]:
    release = f" of JAX {jax_version}" if jax_version else ""
    checked = f"passes every check{release} the engine models, on the {chip}"
    return tuple(
        Step(
            title=_sentence(fix.description),
            note="; ".join(part for part in (checked, fix.note) if part),
            diff=code_diff(fix.code.before, fix.code.after),
        )
        for fix in fixes
    )


def tpu_compute_answer(response: TpuComputeResponse) -> Answer:
    """``/api/compute``'s TPU answer, as every surface renders it: the verdict, then the
    fixes."""
    quotes: tuple[Quote, ...] = ()
    if response.vmem is not None:
        headline = _budget(response)
    else:
        headline, quotes = _block(response), _said(response)
    facts = [("chip", response.chip), ("JAX", response.jaxVersion)]
    if response.arrayShape is not None and response.blockShape is not None:
        facts += [("array", _dims(response.arrayShape)), ("block", _dims(response.blockShape))]
    if response.dtype:
        facts.append(("dtype", response.dtype))
    return Answer.with_steps(
        _fix_steps(response.chip, response.jaxVersion, response.fixes),
        kind="compute",
        headline=headline,
        facts=tuple(Fact(label=label, value=value) for label, value in facts),
        quotes=quotes,
    )


def _tiling(found: TpuFoundOut) -> tuple[str, tuple[Step, ...], tuple[Quote, ...]]:
    tiling = found.tiling
    assert tiling is not None
    block, tile = _dims(tiling.blockShape), _dims(tiling.tile)
    operand = f" of {tiling.operand}" if tiling.operand else ""
    headline = f"E2002: the block {block}{operand} is not whole {tile} tiles"
    codes = tiling.code or [None] * len(tiling.blocks)
    steps = tuple(
        Step(
            title=f"Block {_dims(shape)} instead of {block}",
            note=f"whole {tile} tiles on the {found.chip}",
            diff=code_diff(code.before, code.after)
            if code
            else code_diff(f"block_shape={block}", f"block_shape={_dims(shape)}"),
        )
        for shape, code in zip(tiling.blocks, codes, strict=True)
    )
    return headline, steps, ()


def _matmul(found: TpuFoundOut) -> tuple[str, tuple[Step, ...], tuple[Quote, ...]]:
    matmul = found.matmul
    assert matmul is not None
    into = f" into {matmul.accDtype}" if matmul.accDtype else ""
    if matmul.precision:
        into += f" at precision {matmul.precision.upper()}"
    headline = f"The {found.chip} does not multiply {matmul.lhsDtype} × {matmul.rhsDtype}{into}"
    if matmul.supported:
        headline = f"The {found.chip} multiplies {matmul.lhsDtype} × {matmul.rhsDtype}{into}"
    steps = []
    if matmul.precision == "highest" and not matmul.supported:
        steps.append(
            Step(
                title="Leave the dot at the default precision",
                note=f"a 16-bit product is exact at the default precision; {matmul.reason}",
                diff=code_diff(
                    "precision=lax.Precision.HIGHEST", "precision=lax.Precision.DEFAULT"
                ),
            )
        )
    for lhs, rhs, acc in matmul.alternatives:
        title = f"Multiply {lhs} × {rhs} and accumulate in {acc}"
        diff = None
        if (lhs, rhs) == (matmul.lhsDtype, matmul.rhsDtype) and matmul.accDtype:
            diff = code_diff(
                f"preferred_element_type=jnp.{matmul.accDtype}",
                f"preferred_element_type=jnp.{acc}",
            )
        steps.append(Step(title=title, note=matmul.reason, diff=diff))
    return headline, tuple(steps), ()


def _limit_only(found: TpuFoundOut) -> tuple[str, tuple[Step, ...], tuple[Quote, ...]]:
    assert found.vmemLimitBytes is not None and found.physicalBytes is not None
    needed = found.vmemLimitBytes
    step = Step(
        title=f"Raise the scoped VMEM limit to {needed // MIB} MiB",
        note=f"what the compiler asked for, within the {found.chip}'s "
        f"{found.physicalBytes // MIB} MiB of VMEM; the paste shows no BlockSpec to shrink",
        diff=code_diff(
            "compiler_params=pltpu.CompilerParams()",
            f"compiler_params=pltpu.CompilerParams(vmem_limit_bytes={needed})",
        ),
    )
    over = (found.requestedBytes or 0) - (found.limitBytes or 0)
    headline = f"VMEM over its scoped limit by {over:,} bytes: {found.requestedBytes:,} asked"
    return f"{headline}, {found.limitBytes:,} allowed", (step,), ()


def _dims(shape: Sequence[int | None]) -> str:
    parts = ["None" if size is None else str(size) for size in shape]
    return f"({parts[0]},)" if len(parts) == 1 else f"({', '.join(parts)})"


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]
