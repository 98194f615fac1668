"""What a match answer works out beyond the record: a memory budget, a primitive's lowering
history, and, for an error known only from JAX's source, what is known and what is not.
"""

from __future__ import annotations

import difflib
import math

from rapidfuzz import fuzz, utils

from app.answers.catalog import Catalog, RecordInfo
from app.answers.kinship import record_features
from app.engines.mosaic_gpu import InputValueError
from app.engines.mosaic_gpu.operations import MBARRIER_BYTES, smem_aligned
from app.engines.mosaic_gpu.smem import (
    Budget,
    Gpu,
    gpus_fitting,
    gpus_with_limit,
    over_percent,
    smem_budget,
)
from app.jaxref.releases import COMPARE, commit_of, runs, span
from app.jaxref.templates import literal_text
from app.knowledge.calls import keywords_of, keywords_taken
from app.knowledge.primitives import (
    Lowered,
    PrimitiveLowering,
    primitive_lowering,
    semantics_named,
)
from app.matching.compiler_advice import memory_advice
from app.matching.frames import FrameIndex
from app.matching.memory import BudgetHints, MemoryOverflow, budget_hints, find_overflows
from app.schemas.answers import (
    BlockFitOut,
    BufferOut,
    ChangedInOut,
    ClosestOut,
    GpuOut,
    KeywordOut,
    KeywordTakerOut,
    LoweredOut,
    MemoryOut,
    PrimitiveOut,
    RewriteOut,
    SmemBudgetOut,
    SourceOnlyOut,
)

CLOSEST = 3
# A keyword passed by mistake shares this much of its spelling with the one meant
# (difflib's ratio): ``block_shap`` for ``block_shape``, ``dimension_semantic``.
CLOSE_KEYWORD = 0.75


def smem_budget_out(budget: Budget) -> SmemBudgetOut:
    return SmemBudgetOut(
        smemBytes=budget.smem_bytes,
        maxSmemBytes=budget.limit,
        gpu=_gpu(budget.gpu),
        fits=budget.fits,
        overBytes=budget.over_bytes,
        overPercent=budget.over_percent,
        buffers=[
            BufferOut(
                shape=list(buffer.dims),
                dtype=buffer.dtype.name,
                role=buffer.role,
                slots=budget.depth if buffer.pipelined else 1,
                bytes=size,
            )
            for buffer, size in zip(budget.buffers, budget.buffer_bytes, strict=True)
        ],
        barrierBytes=budget.barrier_bytes,
        maxConcurrentSteps=budget.depth,
        fittingDepth=budget.fitting_depth,
        fittingBlocks=[
            BlockFitOut(
                shape=list(fit.dims),
                axis=fit.axis,
                size=fit.size,
                newShape=list(fit.new_dims),
                smemBytes=fit.smem_bytes,
            )
            for fit in budget.fitting_blocks
        ],
        fitsOn=[_gpu_label(gpu) for gpu in budget.fits_on],
        jaxVersion=budget.jax_version,
    )


def memory_overflows(text: str, jax_version: str | None) -> list[MemoryOut]:
    """Each report in the paste of a kernel over its on-chip memory, worked out."""
    overflows = find_overflows(text)
    if not overflows:
        return []
    hints = budget_hints(text)
    return [_memory(overflow, hints, jax_version) for overflow in overflows]


def _memory(overflow: MemoryOverflow, hints: BudgetHints, jax_version: str | None) -> MemoryOut:
    gpu = overflow.backend != "tpu"
    steps = hints.max_concurrent_steps if overflow.backend == "mosaic_gpu" else None
    return MemoryOut(
        lineNumber=overflow.line_number,
        backend=overflow.backend,
        memory=overflow.memory,
        requestedBytes=overflow.requested,
        limitBytes=overflow.limit,
        exact=overflow.exact,
        overBytes=max(0, overflow.requested - overflow.limit),
        overPercent=over_percent(overflow.requested, overflow.limit),
        devices=[_gpu_label(g) for g in gpus_with_limit(overflow.limit)] if gpu else [],
        fitsOn=[_gpu_label(g) for g in gpus_fitting(overflow.requested)] if gpu else [],
        maxConcurrentSteps=steps,
        fittingDepth=_depth_from_bytes(overflow, steps) if steps else None,
        budget=_inferred_budget(overflow, hints, jax_version) if steps else None,
        advice=memory_advice(overflow.backend, overflow.memory),
    )


def _depth_from_bytes(overflow: MemoryOverflow, steps: int) -> int | None:
    """Each step's share of the request (its barrier apart), as many as fit."""
    per_step = (overflow.requested - steps * MBARRIER_BYTES) / steps + MBARRIER_BYTES
    depth = min(steps, int(overflow.limit // per_step))
    return depth or None


def _inferred_budget(
    overflow: MemoryOverflow, hints: BudgetHints, jax_version: str | None
) -> SmemBudgetOut | None:
    """The budget as so many blocks of the shape and dtype the paste shows, when the bytes
    are exactly that (1 output, the rest inputs) and the limit is a known GPU's."""
    steps, block, dtype = hints.max_concurrent_steps, hints.block, hints.dtype
    devices = gpus_with_limit(overflow.limit)
    if steps is None or block is None or dtype is None or not devices:
        return None
    slot = smem_aligned(steps * math.prod(block) * dtype.bits // 8)
    buffers, remainder = (
        divmod(overflow.requested - steps * MBARRIER_BYTES, slot) if slot else (0, 1)
    )
    if remainder or buffers < 1:
        return None
    roles = ["input"] * max(1, buffers - 1) + ["output"] * (buffers > 1)
    try:
        budget = smem_budget(
            [(list(block), dtype.name, role) for role in roles],
            steps,
            gpu=devices[0].compute_capability,
            jax_version=jax_version,
        )
    except InputValueError:
        return None
    return smem_budget_out(budget) if budget.smem_bytes == overflow.requested else None


def _gpu(gpu: Gpu) -> GpuOut:
    return GpuOut(
        name=gpu.name, computeCapability=gpu.compute_capability, maxSmemBytes=gpu.max_smem_bytes
    )


def _gpu_label(gpu: Gpu) -> str:
    return f"{gpu.name} (sm_{gpu.compute_capability.replace('.', '')})"


def primitive_out(info: RecordInfo, captures: dict[str, str]) -> PrimitiveOut | None:
    """For an unimplemented-primitive error: the releases that lower it, and the rewrite."""
    name = captures.get("name")
    if name is None or info.backend is None or not info.message.startswith("Unimplemented"):
        return None
    captured = captures.get("lowering_semantics") or captures.get("kernel_type")
    semantics = semantics_named(info.backend, captured)
    lowering = primitive_lowering(name.strip(), info.backend)
    named = lowering.lowered_under(semantics)
    in_newest = named is not None and named.releases[-1] == lowering.newest
    return PrimitiveOut(
        primitive=lowering.primitive,
        backend=lowering.backend,
        semantics=semantics,
        lowered=[_lowered(entry, lowering) for entry in lowering.lowered],
        upgradeTo=named.releases[0] if named is not None and in_newest else None,
        rewrite=RewriteOut(
            summary=lowering.rewrite.summary,
            before=lowering.rewrite.before,
            after=lowering.rewrite.after,
        )
        if lowering.rewrite
        else None,
    )


def _lowered(entry: Lowered, lowering: PrimitiveLowering) -> LoweredOut:
    return LoweredOut(
        semantics=entry.semantics,
        since=entry.releases[0],
        releases=entry.span,
        inNewest=entry.releases[-1] == lowering.newest,
    )


def keyword_out(info: RecordInfo, captures: dict[str, str]) -> KeywordOut | None:
    """For a keyword a call of one of Pallas's public callables does not take (the record
    reads it from the message): where it belongs, and the callable's keywords like it."""
    keyword = captures.get("keyword")
    if keyword is None or not info.called_as:
        return None
    own = sorted({name for spelled in info.called_as for name, _ in keywords_of(spelled)})
    takers = [
        KeywordTakerOut(calledAs=list(taker.called_as), releases=runs(taker.releases))
        for taker in keywords_taken(keyword)
        if not set(taker.called_as) & set(info.called_as)
    ]
    close = difflib.get_close_matches(keyword, own, n=3, cutoff=CLOSE_KEYWORD)
    return KeywordOut(keyword=keyword, takenBy=takers, closeTo=close)


def source_only_out(
    info: RecordInfo,
    captures: dict[str, str],
    catalog: Catalog,
    frames: FrameIndex,
    source_url: str | None,
) -> SourceOnlyOut | None:
    """For a record mined from JAX's source with no curated advice: what the source says,
    and the curated records nearest to it by file, function and message. ``source_url`` is
    the site in the release the answer follows, or in the nearest release with it."""
    if info.curated:
        return None
    site = frames.site_of(info.id)
    if site is None:
        return None
    return SourceOnlyOut(
        filePath=site.file,
        function=site.function,
        kind=site.kind,
        condition=site.condition,
        variables=captures,
        releases=span(list(frames.releases_of(info.id))),
        sourceUrl=source_url,
        unknown="No curated advice yet: nobody has written what causes this error in user "
        "code, how to fix it, or an example fix.",
        closest=closest_curated(info, site.function, catalog, frames),
        changedIn=changed_in(info.id, frames),
    )


def changed_in(record_id: str, frames: FrameIndex) -> ChangedInOut | None:
    """Where the mined history has the site end before the newest release: the first
    release without it, its commit, and the change between the two releases."""
    found = frames.changed_in(record_id)
    if found is None:
        return None
    last, release = found
    before, commit = commit_of(last), commit_of(release)
    compare = f"{COMPARE}/{before}...{commit}" if before and commit else None
    advice = (
        f"Upgrade to JAX {release} or later: {release} no longer has this check (it was last in "
        f"{last}; the release's commit {commit or 'is not recorded'}"
        + (f", the change between them {compare})" if compare else ")")
    )
    return ChangedInOut(
        lastRelease=last, release=release, commit=commit, compareUrl=compare, advice=advice
    )


def closest_curated(
    info: RecordInfo, function: str, catalog: Catalog, frames: FrameIndex
) -> list[ClosestOut]:
    """The curated records nearest to ``info`` (raised in ``function``) by message, file and
    function, of its own backend or Pallas's core; worked out once per record and catalog.
    Only the records sharing a feature few records carry with it are scored (see kinship):
    a few hundred at most, however large the catalog."""
    key = ("closest curated", info.id, function)
    known: list[ClosestOut] | None = catalog.answers.get(key)
    if known is None:
        known = _score_curated(info, function, catalog, frames)
        catalog.answers.put(key, known)
    return known


def _score_curated(
    info: RecordInfo, function: str, catalog: Catalog, frames: FrameIndex
) -> list[ClosestOut]:
    scored = []
    words = literal_text(info.message)
    for other_id in catalog.kinship.sharing([*record_features(info), f"function:{function}"]):
        other = catalog.records[other_id]
        if not other.curated or other.retired or other.id == info.id:
            continue
        if info.backend not in (None, "core") and other.backend not in (info.backend, "core"):
            continue  # words alike are no kinship across backends
        similarity = fuzz.token_set_ratio(
            words, literal_text(other.message), processor=utils.default_process
        )
        same_file = info.file is not None and other.file == info.file
        other_site = frames.site_of(other.id)
        same_function = other_site is not None and other_site.function == function
        score = 0.5 * similarity / 100 + 0.3 * same_file + 0.2 * same_function
        reasons = [f"message {similarity:.0f}% alike"]
        if same_file:
            reasons.append("same file")
        if same_function:
            reasons.append("same function")
        scored.append((round(score, 3), other, ", ".join(reasons)))
    scored.sort(key=lambda item: (-item[0], item[1].id))
    return [
        ClosestOut(
            errorId=other.id, slug=other.slug, errorMessage=other.message, score=score, why=why
        )
        for score, other, why in scored[:CLOSEST]
    ]
