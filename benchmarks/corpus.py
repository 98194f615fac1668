"""Synthetic but realistic benchmark inputs: error records by the thousand, and pastes.

Records are rendered from message templates that read like JAX / Mosaic GPU / XLA errors:
literal words plus f-string placeholders (``{x.shape}``, ``{bytes=}``, ``{ref_ty}``). The
words are drawn from a large vocabulary so that the literal text differs from record to
record, as it does in a real catalog, while common phrases ("must be a multiple of",
"is not supported") recur. Everything is seeded, so every run sees the same inputs.

Pastes are real tracebacks from ``tests/fixtures/tracebacks`` padded to size with log
output and deeper JAX frames; each holds exactly one error that the catalog knows.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.answers.catalog_cache import _index_pattern
from app.jaxref.templates import derive_pattern
from app.knowledge.calls import MINED_CALLS
from app.knowledge.mining import MINED_SITES
from app.knowledge.public_names import MINED_API
from app.matching.index import PatternEntry, call_names
from app.records.importer import read_documents, read_text
from app.records.validation import validate_record

REPO_ROOT = Path(__file__).resolve().parent.parent
SEEDS = REPO_ROOT / "data" / "seeds"
TRACEBACKS = REPO_ROOT / "tests" / "fixtures" / "tracebacks"

# The one known error inside every paste, and the seed record that describes it.
KNOWN_RECORD = "225d0e9c2ee22311"
SYNTHETIC_TAG = "synthetic"  # on every generated record document
KNOWN_TRACEBACK = TRACEBACKS / "MGPU-COPY-INTEGER-BYTES.txt"

NOUNS = (
    "block", "tile", "buffer", "barrier", "descriptor", "warpgroup", "layout", "stride",
    "dimension", "transfer", "operand", "accumulator", "register", "slice", "fragment",
    "semaphore", "pipeline", "grid", "kernel", "reference", "memref", "vector", "mask",
    "index", "offset", "axis", "predicate", "scratch buffer", "shared memory", "cluster",
    "thread block", "warp", "lane", "swizzle", "tiling", "transform", "view", "alias",
    "bitcast", "reshape", "broadcast", "reduction", "scan", "carry", "loop bound",
    "induction variable", "program id", "core map", "mesh axis", "collective", "all-gather",
    "reduce-scatter", "permutation", "sharding", "partition spec", "device buffer", "literal",
    "constant", "pointer", "address space", "global memory", "tensor map", "TMA box",
    "copy size", "element count", "bit width", "packing", "padding", "alignment", "byte count",
    "vector length", "fence", "arrival count", "phase", "commit group", "wgmma operand",
    "tcgen05 accumulator", "TMEM allocation", "column count", "row count", "leading dimension",
    "minor dimension", "major dimension", "batch dimension", "contracting dimension",
    "output shape", "input shape", "block spec", "index map", "grid spec", "scalar prefetch",
    "semaphore array", "DMA", "async copy", "cp.async", "ldmatrix", "stmatrix", "fragment layout",
    "register file", "predicate mask", "epilogue", "prologue", "pipeline stage", "slot",
    "ring buffer", "double buffer", "queue", "token", "effect", "primitive", "jaxpr", "equation",
    "lowering rule", "MLIR type", "LLVM type", "PTX instruction", "SASS", "kernel argument",
    "launch bound", "cluster shape", "CTA", "thread count", "warp specialization",
)  # fmt: skip
ADJECTIVES = (
    "aligned", "contiguous", "static", "dynamic", "swizzled", "transposed", "packed",
    "sub-byte", "signed", "unsigned", "padded", "strided", "tiled", "nested", "scalar",
    "leading", "trailing", "minor", "major", "donated", "aliased", "mutable", "immutable",
    "uninitialized", "unbounded", "negative", "non-contiguous", "non-power-of-two",
    "mismatched", "duplicate", "empty", "zero-sized", "oversized", "misaligned", "unsupported",
    "unknown", "ambiguous", "inconsistent", "partial", "interleaved", "replicated", "sharded",
    "fused", "unrolled", "vectorized", "predicated", "asynchronous", "synchronous", "pending",
    "outstanding", "committed", "released", "acquired", "collective", "broadcasted", "reduced",
    "quantized", "low-precision", "mixed-precision", "byte-aligned", "warp-aligned",
)  # fmt: skip
VERBS = (
    "transfer", "copy", "bitcast", "reshape", "broadcast", "lower", "store", "load", "slice",
    "transpose", "reduce", "gather", "scatter", "allocate", "pad", "split", "concatenate",
    "fuse", "vectorize", "unroll", "pipeline", "swizzle", "tile", "index", "squeeze",
    "expand", "permute", "shard", "replicate", "donate", "alias", "wait on", "arrive at",
    "commit", "fence", "prefetch", "emit", "trace", "compile", "serialize",
)  # fmt: skip
_OP_HEADS = (
    "copy", "async", "wgmma", "tcgen05", "tma", "cp_async", "ldmatrix", "stmatrix", "mma",
    "barrier", "semaphore", "dot", "reduce", "scan", "gather", "scatter", "fori", "while",
    "cond", "pallas", "emit", "run_scoped", "core_map", "commit", "wait", "bitcast", "swap",
)  # fmt: skip
_OP_TAILS = (
    "load", "store", "wait", "arrive", "commit", "lowering", "rule", "fence", "signal",
    "gmem_to_smem", "smem_to_gmem", "general", "p", "impl", "pipeline", "kernel", "call",
)  # fmt: skip
OPERATIONS = tuple(f"{head}_{tail}" for head in _OP_HEADS for tail in _OP_TAILS)
EXCEPTIONS = (
    "ValueError", "NotImplementedError", "TypeError", "RuntimeError", "AssertionError",
    "IndexError", "LoweringError", "XlaRuntimeError",
)  # fmt: skip
# Frames of real messages; {V} verb, {A}/{B} adjectives, {N}/{M} nouns, {O} an operation.
# The other braces are the placeholders a template keeps.
FRAMES = (
    "Can only {V} {A} {N}s (shape={dst_ty.shape}, dtype={dst_ty.element_type})",
    "{O} requires the {N} of the {A} {M} to be a multiple of {alignment} bytes, but got {bytes=}",
    "Only {A} {N}s are supported in {O}. Got {ref.dtype}{ref.shape}",
    "{O}: the {A} {N} must be divisible by {WARPGROUP_SIZE}, got {num_elements}",
    "Unsupported {A} {N} for {O} with {swizzle=} and {layout}",
    "Expected a {A} {N} of rank {rank} in {O}, got {ref_ty}",
    "{A} {N}s are not implemented for {dtype} in {O} (got {tuple(block_shape)})",
    "Can not {V} {N} of size {shape_bitwidth} bits to {M} with {target_bitwidth} bits.",
    "Mismatched {N} in {O}: {a.shape} vs {b.shape}",
    "The {N} passed to {O} must be {A}, but it is {value}",
    "Invalid {N} for {O}: expected {expected!r}, got {got!r}",
    "{O} cannot {V} more than {MAX_COUNT} {N}s at once (requested {count})",
    "Failed to {V} the {A} {N} while lowering {O}: {reason}",
    "{N} {index} is out of bounds for the {A} {M} of shape {x.shape}",
    "Cannot {V} a {A} {N} into a {M} with layout {layout}",
    "{O} only supports {A} {N}s with at most {MAX_RANK} dimensions, got {len(shape)}",
    "Attempted to {V} {N} {name!r} twice in {O}",
    "{O} does not support {N}s of dtype {dtype}; use a {A} {M} instead",
    "The {A} dimension of the {N} must be {B}, but got stride {strides[-1]} in {O}",
    "Block shape {tuple(block_shape)} of {O} does not evenly divide the {A} {N} {x.shape}",
    "Could not find a {A} {N} for {O}{what}: {M} has {minor_dim_bits} bits",
    "{V} of {A} {N}s requires {PACKING} {M}s per {N}, got {count}",
    "{O} expects the {N} and the {M} to share a {A} layout, got {lhs_layout} and {rhs_layout}",
    "Only {B} {N}s can be {V}ed in {O} (the {M} is {A}). Got {ref_ty}",
    "{N} of {O} must stay {A} across the {M}: {num_steps} steps, {stride} stride",
    "Encountered a {A} {N} during {O}; {V} it to a {B} {M} first",
)  # fmt: skip


@dataclass(frozen=True)
class Template:
    record_id: str
    template: str
    error_class: str


def templates(count: int, seed: int = 0) -> list[Template]:
    """``count`` distinct message templates, the same ones for the same ``seed``."""
    rng = random.Random(seed)
    seen: set[str] = set()
    found: list[Template] = []
    while len(found) < count:
        frame = rng.choice(FRAMES)
        text = _fill(frame, rng)
        if text in seen:
            continue
        seen.add(text)
        record_id = hashlib.sha256(text.encode()).hexdigest()[:16]
        found.append(Template(record_id, text, rng.choice(EXCEPTIONS)))
    return found


def _fill(frame: str, rng: random.Random) -> str:
    slots = {
        "{V}": lambda: rng.choice(VERBS),
        "{A}": lambda: rng.choice(ADJECTIVES),
        "{B}": lambda: rng.choice(ADJECTIVES),
        "{N}": lambda: rng.choice(NOUNS),
        "{M}": lambda: rng.choice(NOUNS),
        "{O}": lambda: rng.choice(OPERATIONS),
    }
    words = {slot: pick() for slot, pick in slots.items()}
    # An occasional qualifier makes the same frame and words read differently.
    if rng.random() < 0.5:
        words["{N}"] = f"{rng.choice(ADJECTIVES)} {words['{N}']}"
    for slot, word in words.items():
        frame = frame.replace(slot, word)
    return frame[0].upper() + frame[1:] if frame[0] != "{" else frame


def seed_entries() -> list[PatternEntry]:
    """The shipped seed records, indexed as the service indexes them."""
    found = []
    for path in sorted(SEEDS.glob("*.txt")):
        for incoming in read_documents(read_text(path), path.name):
            document = validate_record(incoming.record).document
            metadata = {"exception_class": document.get("errorClass") or "", "rule": ""}
            found.append(
                PatternEntry(document["id"], _index_pattern(document), "current", metadata)
            )
    return found


def entries(count: int, seed: int = 0) -> list[PatternEntry]:
    """The seeds plus ``count - 4`` synthetic records, as ``PatternEntry`` rows."""
    found = seed_entries()
    for template in templates(max(0, count - len(found)), seed):
        metadata = {"exception_class": template.error_class, "rule": ""}
        found.append(
            PatternEntry(template.record_id, derive_pattern(template.template), "current", metadata)
        )
    return found[:count]


def mined_entries() -> list[PatternEntry]:
    """Every matchable site mined from JAX's source, and the errors of reading Pallas's
    public names and calling its functions (``data/mined/jax-api.jsonl``,
    ``jax-calls.jsonl``), as the catalog indexes them."""
    found = []
    for path in (MINED_SITES, MINED_API, MINED_CALLS):
        with path.open(encoding="utf-8") as stream:
            for line in stream:
                record = json.loads(line).get("record")
                # A site's ``matchPattern`` is null where its message is no text to match
                # (``{eqn.primitive}``); a public name's record has only its message's.
                pattern = record and record.get("matchPattern", record["messagePattern"])
                if pattern:
                    metadata = {"exception_class": record["errorClass"], "rule": ""}
                    call_of = call_names(record.get("calledAs", ()))
                    entry = PatternEntry(record["id"], pattern, "current", metadata, None, call_of)
                    found.append(entry)
    return found


def record_documents(count: int, seed: int = 0) -> Iterator[dict[str, Any]]:
    """Whole record documents (seed-sized: message, docs, code, solutions) for a database.

    They carry no ``slug`` or ``messagePattern``: the importer derives both, as it does for
    any record without them.
    """
    rng = random.Random(seed + 1)
    for template in templates(count, seed):
        noun, verb = rng.choice(NOUNS), rng.choice(VERBS)
        yield {
            "id": template.record_id,
            "repo": "jax-ml/jax",
            "errorCode": None,
            "errorMessage": template.template,
            "errorType": "exception",
            "errorClass": template.error_class,
            "severity": "error",
            "filePath": f"jax/_src/pallas/mosaic_gpu/{rng.choice(_OP_HEADS)}.py",
            "lineNumber": rng.randint(10, 5000),
            "sourceCode": "\n".join(
                f"    {rng.choice(_OP_HEADS)}_{n} = {rng.choice(OPERATIONS)}(ref, {n})"
                for n in range(24)
            ),
            "documentation": " ".join(
                f"The {rng.choice(ADJECTIVES)} {rng.choice(NOUNS)} must {verb} its {noun}."
                for _ in range(12)
            ),
            "triggerScenarios": f"{verb} a {rng.choice(ADJECTIVES)} {noun} in a kernel",
            "commonSituations": f"Quantized {noun}s; dynamic {rng.choice(NOUNS)} sizes",
            "solutions": [
                f"Pad the {noun} to whole bytes",
                f"Use a {rng.choice(ADJECTIVES)} {noun}",
            ],
            "exampleFix": f"# before\n{verb}({noun}[(7,)])\n# after\n{verb}({noun}[(8,)])",
            "handlingStrategy": "validation",
            "validationCode": "import math\nassert math.prod(shape) * bits % 8 == 0",
            "preventionTips": [f"Validate {noun} sizes before launching the kernel"],
            "tags": ["jax", "pallas", rng.choice(("mosaic-gpu", "triton", "tpu")), SYNTHETIC_TAG],
            "backgroundTag": f"{rng.choice(ADJECTIVES)}-error",
            "analyzedSha": hashlib.sha1(template.record_id.encode()).hexdigest(),
            "schemaVersion": 2,
        }


# --- pastes ------------------------------------------------------------------------------

_LOG_LINES = (
    "{ts} INFO train.py:{n1}] step {n2} loss={f:.4f} lr={g:.2e} tokens/s={n3}",
    "{ts} WARNING absl: Compiling {op} for the {adj} {noun} took {f:.2f}s; consider caching",
    "I{md} {hms}.{us} {pid} compilation_cache.cc:{n1}] Persistent cache miss for {op}_{n2}",
    "W{md} {hms}.{us} {pid} gpu_helpers.cc:{n1}] {adj} {noun} of {n2} bytes is not optimal",
    "{ts} DEBUG jax._src.dispatch: Finished tracing + transforming {op} in {g:.4f} sec",
    "{ts} INFO data.py:{n1}] loaded shard {n2}/{n3} ({n4} examples) from gs://bucket/{noun}",
    "  {op}: {adj} {noun} = f32[{n1},{n2}]  # {verb} at line {n3}",
)


def paste(size: int, seed: int = 0, known: Path = KNOWN_TRACEBACK) -> str:
    """A paste of about ``size`` bytes: log output, then a JAX traceback of one known error
    (``known``, a real traceback's file).

    Small pastes are only the end of the traceback; larger ones add the log that preceded
    it and repeat JAX's lowering frames, as a deep ``pallas_call`` does.
    """
    rng = random.Random(seed)
    traceback = known.read_text(encoding="utf-8")
    if size <= len(traceback):
        return _tail(traceback, size)
    lines = traceback.splitlines()
    frames_at = next(i for i, line in enumerate(lines) if line.startswith("  File "))
    frames = _frames(lines)
    head, tail = lines[: frames_at + 1], lines[frames_at + 1 :]
    extra_frames: list[str] = []
    budget = size - len(traceback)
    while len("\n".join(extra_frames)) < budget * 0.4:
        block = rng.choice(frames)
        line_number = rng.randint(100, 4000)
        extra_frames += [re.sub(r"line \d+", f"line {line_number}", block[0]), *block[1:]]
    log: list[str] = []
    while len("\n".join(log)) + len("\n".join(extra_frames)) < budget:
        log.append(_log_line(rng))
    return "\n".join([*log, *head, *extra_frames, *tail]) + "\n"


def _tail(traceback: str, size: int) -> str:
    """The last frames and the message, about ``size`` bytes, under a traceback header."""
    lines = traceback.rstrip("\n").splitlines()
    kept: list[str] = []
    for line in reversed(lines):
        if len("\n".join(kept)) + len(line) > size - 40:
            break
        kept.insert(0, line)
    while kept and not kept[0].startswith("  File "):
        kept.pop(0)
    return "\n".join(["Traceback (most recent call last):", *kept]) + "\n"


def _frames(lines: list[str]) -> list[list[str]]:
    """Each ``File ...`` line of a traceback with the source and caret lines under it."""
    blocks: list[list[str]] = []
    for line in lines:
        if line.startswith("  File "):
            blocks.append([line])
        elif blocks and line.startswith("    "):
            blocks[-1].append(line)
    return blocks


def _log_line(rng: random.Random) -> str:
    day, hour = rng.randint(1, 28), rng.randint(0, 23)
    values = {
        "ts": f"2026-08-{day:02d} {hour:02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d},"
        f"{rng.randint(0, 999):03d}",
        "md": f"08{day:02d}",
        "hms": f"{hour:02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}",
        "us": f"{rng.randint(0, 999999):06d}",
        "pid": str(rng.randint(1000, 99999)),
        "op": rng.choice(OPERATIONS),
        "adj": rng.choice(ADJECTIVES),
        "noun": rng.choice(NOUNS),
        "verb": rng.choice(VERBS),
    }
    template = rng.choice(_LOG_LINES)
    numbers = {f"n{i}": rng.randint(1, 100000) for i in range(1, 5)}
    return template.format(f=rng.random() * 10, g=rng.random(), **numbers, **values)


# --- adversarial pastes --------------------------------------------------------------------

_FRAME = '  File "/site-packages/jax/_src/pallas/core.py", line 12, in f\n    y = x\n'


def adversarial_pastes(size: int) -> dict[str, str]:
    """Pastes of at most ``size`` bytes (UTF-8) shaped to find work that grows faster than
    the paste: one long line, digits, many short errors, a traceback repeated, deep
    indentation, frames without end, pathological Unicode, unclosed brackets."""
    known = KNOWN_TRACEBACK.read_text(encoding="utf-8")
    units = {
        "one long line": ("ValueError: ", "x"),
        "digits": ("ValueError: ", "1"),
        "many short errors": ("", "ValueError: x\n"),
        "repeated tracebacks": ("", known),
        "deep indentation": ("", " " * 200 + "x\n"),
        "frames without end": ("Traceback (most recent call last):\n", _FRAME),
        "pathological unicode": ("ValueError: ", "e\u0301\u200b\U0001f600\u202e\ufeff"),
        "unclosed brackets": ("ValueError: ", "([{<'\""),
    }
    return {name: _filled(head, unit, size) for name, (head, unit) in units.items()}


def _filled(head: str, unit: str, size: int) -> str:
    """``head`` then ``unit`` repeated, cut to at most ``size`` bytes of UTF-8."""
    count = (size - len(head.encode())) // len(unit.encode())
    text = head + unit * count
    spare = size - len(text.encode())
    return text + unit[:spare] if unit.isascii() else text
