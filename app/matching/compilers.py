"""Messages that JAX's source does not hold: what a compiler that JAX hands a kernel to says
through JAX's wrappers (``Mosaic failed to compile TPU kernel: …``, XLA's TPU errors and
failed internal checks), and what MLIR's verifier says of the IR Pallas built
(``MLIRError: Verification failed:``).

errata mines JAX's Python and the open C++ of Mosaic (``jaxlib/mosaic``). The TPU
compiler that runs after them ships only in libtpu, as a binary: its messages can be named
as its own, but not pinned to a line of source. MLIR's own ops (``vector.shape_cast``,
``arith.cmpi``) are checked by upstream MLIR's verifiers, which are not JAX's source either.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class CompilerMessage:
    line: int  # the 1-based line of the paste where the compiler's words stand
    message_line: int  # where the message itself stands: that line or a few after it
    compiler: str
    message: str  # what the compiler said, after the wrapper
    why: str  # why JAX's source does not hold it, which holds where no record matches it


_TPU_WRAPPER = "Mosaic failed to compile TPU kernel"
# What libtpu said instead until early 2024 (jax#18595, JAX 0.4.20).
_OLD_TPU_WRAPPER = "Failed to compile a Mosaic module"
_XLA_TPU_WRAPPER = "XLA:TPU compile permanent error"
_MOSAIC_TPU = (
    "libtpu (Mosaic's TPU compiler)",
    "no release of JAX that errata mined holds it. Mosaic's TPU compiler is JAX's open "
    "jaxlib/mosaic, whose messages errata knows, then a closed part in libtpu, whose "
    "version decides this one (pip show libtpu)",
)
_WRAPPERS = {
    _TPU_WRAPPER: _MOSAIC_TPU,
    _OLD_TPU_WRAPPER: _MOSAIC_TPU,
    _XLA_TPU_WRAPPER: (
        "libtpu (XLA's TPU compiler)",
        "XLA's TPU compiler wrote it; it ships in libtpu, not in JAX's source",
    ),
}
# The backend whose compiler each wrapper names: a TPU kernel's, whatever frames it shows.
_WRAPPED_BACKEND = {wrapper: "tpu" for wrapper in _WRAPPERS}
# Each wrapper by its words after the first letter: people retyping a wrapper may write that
# letter in lower case (pytorch/helion#3204: "mosaic failed to compile TPU kernel: …").
_WRAPPER_TAILS = {wrapper[1:]: wrapper for wrapper in _WRAPPERS}
_SAID = re.compile(
    "(?P<wrapper>"
    + "|".join(f"[{w[0]}{w[0].lower()}]{re.escape(w[1:])}" for w in _WRAPPERS)
    + r")[:.]?[ \t]*(?P<message>[^\n]*)"
)
# XLA's internal checks, as its status macros print them: ``INTERNAL: RET_CHECK failure
# (external/xla/xla/service/gpu/ir_emitter_unnested.cc:1388) triton_module Failed to …``.
_RET_CHECK = re.compile(
    r"RET_CHECK failure \((?:external/xla/)?(?P<where>[\w./-]+:\d+)\)[ \t]*(?P<message>[^\n]*)"
)
# Messages a compiler or runtime under JAX prints whole, with no wrapper of JAX's around
# them: each names itself. (Reports that give their figures are memory reports instead.)
# Each with the words it needs, looked for first: a search of a 20 KB paste by ``in`` takes
# a fifth of the time of the pattern's.
_REPORTED = (
    (
        "Ran out of memory in memory space",
        re.compile(r"Ran out of memory in memory space vmem\b[^\n]*"),
        "libtpu (XLA's TPU compiler)",
        "the TPU compiler's report of a kernel over its VMEM, here without the figures; it "
        "ships in libtpu, not in JAX's source. Shrink the block shapes (Pallas double-buffers "
        "every input and output block) or raise the scoped limit with "
        "pltpu.CompilerParams(vmem_limit_bytes=…)",
    ),
    (
        "Ran out of memory in memory space",
        re.compile(r"Ran out of memory in memory space smem\b[^\n]*"),
        "libtpu (XLA's TPU compiler)",
        "the TPU compiler's report of a kernel over its SMEM, the small scalar memory; it ships "
        "in libtpu, not in JAX's source. Scalar-prefetch operands (PrefetchScalarGridSpec), blocks "
        "in pltpu.SMEM and SMEM scratch are held there whole: keep large tables in VMEM or HBM "
        "(pl.ANY) instead",
    ),
    (
        "Shared memory requested exceeds",
        re.compile(r"Shared memory requested exceeds device resources[^\n]*"),
        "XLA's GPU runtime",
        "the kernel asked for more shared memory per block than the GPU gives; it is XLA's "
        "runtime check, not JAX's source. Lower num_stages or shrink the block shapes",
    ),
    (
        "must be >= 16!",
        re.compile(
            r"All values in both first input shape \([^\n]*\) and second input shape "
            r"\([^\n]*\) must be >= 16![^\n]*"
        ),
        "Triton (tl.dot)",
        "Triton's own check of a dot, in its Python front end (triton/language/semantic.py), "
        "which JAX until 0.4.24 called as it lowered a Pallas kernel; it is Triton's source, "
        "not JAX's (JAX 0.4.25 to 0.9.1 check it themselves: 'all dimensions of x and y "
        "must be >= 16', later of 'a and b', then of 'b'). Every dimension of both blocks of "
        "a jnp.dot must be at least 16: "
        "pad the blocks to 16, or compute a small product by broadcasting, "
        "jnp.sum(x[:, :, None] * y[None, :, :], axis=1)",
    ),
    (
        "must have the same dtype!",
        re.compile(
            r"First input \([^\n]*\) and second input \([^\n]*\) must have the same dtype![^\n]*"
        ),
        "Triton (tl.dot)",
        "Triton's own check of a dot, in its Python front end (triton/language/semantic.py), "
        "which JAX until 0.4.24 called as it lowered a Pallas kernel; it is Triton's source, "
        "not JAX's. Both operands of a jnp.dot must have one dtype (jax-ml/jax#19453: bfloat16 "
        "times float32): cast one to the other's in the kernel, x.astype(y.dtype), and give the "
        "result's dtype with preferred_element_type=jnp.float32",
    ),
    (
        "Triton support is only enabled for Ampere",
        re.compile(r"Triton support is only enabled for Ampere GPUs[^\n]*"),
        "XLA's GPU compiler",
        "XLA compiles Triton kernels, Pallas's GPU kernels among them, only for GPUs of compute "
        "capability 8.0 (Ampere) and later, and this one is older (7.5: a T4 or an RTX 20xx; "
        "jax-ml/jax#26799: Colab's free T4); it is XLA's check, not JAX's source. Run the "
        "kernel on a GPU of compute capability 8.0 or later (A100, L4, H100), or on this one "
        "with pl.pallas_call(..., interpret=True), which runs the kernel's body as ordinary "
        "JAX operations (slowly), or compute it with jax.numpy here",
    ),
    (
        "with base 10: 'gfx",
        re.compile(r"invalid literal for int\(\) with base 10: 'gfx\w*'"),
        "Python, in Mosaic GPU's _infer_arch",
        "Mosaic GPU reads a GPU's compute capability as NVIDIA's major.minor numbers, and an "
        "AMD GPU gives its architecture's name instead (jax-ml/jax#34689: gfx950); it is "
        "Python's int() inside JAX's jax/experimental/mosaic/gpu/core.py. Mosaic GPU runs on "
        "NVIDIA GPUs only, and JAX 0.9.0 and 0.9.0.1 choose it by default on every GPU. On "
        "ROCm use Pallas's Triton backend: pl.pallas_call(..., backend='triton'), or "
        "JAX_PALLAS_USE_MOSAIC_GPU=0 in the environment, or JAX 0.9.1 or later, which "
        "gives ROCm devices to Triton",
    ),
    (
        "No PTX compilation provider",
        re.compile(r"No PTX compilation provider is available[^\n]*"),
        "XLA's GPU compiler",
        "XLA found no CUDA compiler to turn a kernel's PTX into GPU code: neither the ptxas "
        "and nvlink programs nor the nvJitLink library (marin-community/marin#6636: a "
        "container without them); it is XLA's message, not JAX's source. Install JAX with "
        "its CUDA wheels, pip install -U 'jax[cuda12]', which bring ptxas "
        "(nvidia-cuda-nvcc-cu12) and nvJitLink (nvidia-nvjitlink-cu12), or put the bin "
        "directory of a CUDA toolkit, which holds ptxas, on PATH",
    ),
    (
        "Unsupported .version",
        re.compile(r"Unsupported \.version \d+\.\d+; current version is '\d+\.\d+'"),
        "ptxas (CUDA's PTX assembler)",
        "the ptxas XLA ran is older than the PTX it was given: the first version is the PTX "
        "the kernel's compiler wrote (Triton's, for Pallas on GPU and jax-triton), the second "
        "the newest this ptxas reads (PTX ISA 8.4 is CUDA 12.4's; jax-ml/jax#25344: jaxlib "
        "0.4.34 with CUDA 12.2's ptxas). XLA runs the ptxas of JAX's CUDA wheels, else the "
        "first on PATH: pip install -U 'jax[cuda12]', which brings a matching ptxas "
        "(nvidia-cuda-nvcc-cu12), or put a newer CUDA toolkit's bin directory first on PATH",
    ),
    (
        "CompileTimeScopedVmemOom",
        re.compile(r"(?:E1001:? )?CompileTimeScopedVmemOom\b[^\n`]*"),
        "libtpu (XLA's TPU compiler)",
        "the TPU compiler's error E1001: the kernel's scoped VMEM (its blocks, which Pallas "
        "double-buffers, its scratch and the compiler's own temporaries) is over the scoped "
        "VMEM limit; it ships in libtpu, not in JAX's source. Raise the limit for this kernel "
        "with compiler_params=pltpu.CompilerParams(vmem_limit_bytes=…), up to the chip's VMEM "
        "(vllm-project/tpu-inference#3194: a kernel 1.6 MB over the 32 MB limit, passed by "
        "raising it there rather than by a LIBTPU_INIT_ARGS flag), or shrink the block shapes",
    ),
    (
        "CompileTimeMosaicUnprovenMemoryAccessAlignment",
        re.compile(r"(?:E2003:? )?CompileTimeMosaicUnprovenMemoryAccessAlignment\b[^\n`]*"),
        "libtpu (Mosaic's TPU compiler)",
        "Mosaic's error E2003: a load, store or DMA starts at an index computed at run time "
        "(from pl.program_id, a loop counter or a value read from SMEM) that Mosaic cannot prove "
        "is a multiple of the tiling of that dimension (8 rows of 32-bit data, 128 lanes); it "
        "ships in libtpu, not in JAX's source (JAX 0.4.24 to 0.8.1 raise the same words in "
        "jaxlib/mosaic). Where the index is such a multiple, say so: "
        "pl.ds(pl.multiple_of(i * 128, 128), 128); otherwise align the start, or let a "
        "BlockSpec's index_map choose the block (jax-ml/jax#36770, pytorch/helion#2753)",
    ),
    (
        "Trying to register different dialects",
        re.compile(r"Trying to register different dialects for the same namespace[^\n]*"),
        "LLVM (MLIR's dialect registry)",
        "MLIR aborts when two copies of it in one process each register a dialect of the same "
        "name; it is MLIR's check, not JAX's source. jaxlib 0.4.24's Triton extension, which "
        "Pallas's GPU kernels use, linked a copy of MLIR's C API of its own, so every Pallas "
        "Triton kernel stopped here (jax-ml/jax#19825); jaxlib 0.4.25 fixed it (commit "
        "5e2e609, '_triton_ext no longer links in MLIR C APIs'): pip install -U jaxlib. On a "
        "later jaxlib, look for another package of the process that carries MLIR of its own",
    ),
    (
        "Failed to deserialize the Mosaic module",
        re.compile(r"Failed to deserialize the Mosaic module[^\n]*"),
        "libtpu (Mosaic's TPU compiler)",
        "libtpu could not read the kernel jaxlib serialized for it, which usually means a "
        "jaxlib newer than the libtpu installed beside it; it is libtpu's message, not JAX's "
        "source. Install them together (pip install -U 'jax[tpu]')",
    ),
)
# E2002's details, on its line or the next ones: "Operand of shape (..., 16, 256) has tiling
# (16, 128), but its block shape (..., 8, 256) is not divisible by tiling evenly nor matches
# the full shape" (sgl-project/sglang-jax#1546).
_MISALIGNED = re.compile(
    r"Operand of shape \((?:\.\.\.,\s*)?(?P<shape>\d+(?:,\s*\d+)*)\)\s+has tiling "
    r"\((?P<tiling>\d+,\s*\d+)\),\s+but its block shape "
    r"\((?:\.\.\.,\s*)?(?P<block>\d+(?:,\s*\d+)*)\)"
)


def misaligned_block(details: str) -> str | None:
    """What E2002's block could be instead, from the figures it prints: each of its last two
    dimensions that is neither a multiple of the tiling nor the array's whole dimension, and
    the multiples nearest it that fit, or the whole dimension."""
    found = _MISALIGNED.search(details)
    if found is None:
        return None
    shape, tiling, block = (
        [int(n) for n in re.findall(r"\d+", found[group])] for group in ("shape", "tiling", "block")
    )
    if len(shape) < 2 or len(block) < 2:
        return None
    changes = []
    for name, size, tile, whole in zip(
        ("second-to-last", "last"), block[-2:], tiling, shape[-2:], strict=False
    ):
        if size % tile == 0 or size == whole:
            continue
        nearest = {size // tile * tile, -(-size // tile) * tile}
        fits = [*sorted(n for n in nearest if tile <= n < whole), whole]
        listed = " or ".join(filter(None, [", ".join(map(str, fits[:-1])), str(fits[-1])]))
        changes.append(f"its {name} dimension {listed} instead of {size}")
    if not changes:
        return None
    return (
        "Here the block fits with "
        + "; ".join(changes)
        + f" (tiling ({tiling[0]}, {tiling[1]}), the array's last two dimensions "
        f"({shape[-2]}, {shape[-1]}))"
    )


# libtpu's check of a slice of a ref along one of its tiled dimensions, with its figures:
# "Slice shape along dimension 2 must be aligned to tiling (8), but is 2." (pytorch/xla#8797).
_MISALIGNED_SLICE = re.compile(
    r"Slice shape along dimension (?P<dim>\d+) must be aligned to tiling \((?P<tile>\d+)\),"
    r"\s*but is (?P<size>\d+)"
)


def misaligned_slice(details: str) -> str | None:
    """What size the sliced dimension could have instead, from the figures the message
    prints: the multiples of its tiling nearest the slice's size."""
    found = _MISALIGNED_SLICE.search(details)
    if found is None:
        return None
    dim, tile, size = (int(found[group]) for group in ("dim", "tile", "size"))
    if tile < 2 or size % tile == 0:
        return None
    fits = sorted({max(tile, size // tile * tile), -(-size // tile) * tile})
    return (
        f"Here the slice fits with a size of {' or '.join(map(str, fits))} instead of {size} "
        f"along dimension {dim} (a multiple of its tiling, {tile}), starting at a multiple of "
        f"{tile}, or with the ref's whole size along it"
    )


# What to do about libtpu's own messages behind Mosaic's TPU wrapper, each seen in a real
# report: libtpu's words (a pattern read from the message's start), what the reports and
# maintainers say they mean, and what can be worked out from the figures that follow the
# message. The chip decides most of them, so the same kernel may compile on a newer TPU.
_MOSAIC_TPU_SAYS = "libtpu's Mosaic compiler said it; it ships in libtpu, not in JAX's source. "
_MOSAIC_TPU_ADVICE = (
    (
        re.compile(r"[^\n]*?\b(?:E2002\b|CompileTimeMosaicMisalignedBlockAndTiling)"),
        "A BlockSpec's block does not fit the operand's tiling (E2002, "
        "https://openxla.org/xla/errors/error_2002): each of the block's last two dimensions "
        "must be a multiple of the tiling the message names or equal the array's whole "
        "dimension. The tiling's rows grow as the dtype narrows (8 for 32-bit, 16 for 16-bit, "
        "32 for 8-bit dtypes; 128 lanes): a block of 8 rows fits float32 but not bfloat16. "
        "Derive the block's rows from the dtype, or use the whole dimension",
        misaligned_block,
    ),
    (
        re.compile(r"Slice shape along dimension \d+ must be aligned to tiling"),
        "A slice of a ref (not of a value loaded from it) does not cover whole tiles along the "
        "dimension named. Mosaic lays out a ref's last two dimensions in tiles, whose size the "
        "message prints: 128 lanes in the last, and in the second-to-last commonly 8 rows of "
        "32-bit data, 16 of 16-bit and 32 of 8-bit (fewer for a ref of only a few rows: a ref "
        "of 2 rows is tiled by 2). A ref sliced as a ref, for a DMA or to pass on "
        "(x_ref.at[…], pl.ds in pltpu.async_copy or pltpu.sync_copy, a pipeline's blocks), "
        "must start and end on tile boundaries there (JAX's Pallas TPU guide, 'Accessing "
        "memory'; jaxlib/mosaic's own check of tpu.memref_slice, from JAX 0.10.0, prints "
        "'Slice sizes along tiled dimensions must be aligned to tiles'; pytorch/xla#8797: "
        "'(8), but is 2'). "
        "Slice a multiple of the tiling, starting at a multiple of it, or the whole dimension; "
        "or copy whole tiles and take the part needed from the value loaded "
        "(x_ref[...][:, :64]); or move that dimension out of the last two, reshaping the "
        "array before the pallas_call so that it leads",
        misaligned_slice,
    ),
    (
        re.compile(r"[^\n]*?\b(?:E2001\b|CompileTimeMosaicUnsupportedRhsType)"),
        "This TPU's matrix unit takes no matmul with this RHS dtype (E2001, "
        "https://openxla.org/xla/errors/error_2001; jax-ml/jax#37367: int8 on a TPU v4). Cast "
        "both operands to bfloat16 in the kernel, exact for int8 values, and accumulate in "
        "float32: jnp.dot(x.astype(jnp.bfloat16), y.astype(jnp.bfloat16), "
        "preferred_element_type=jnp.float32)",
        None,
    ),
    (
        re.compile(r"(?:'tpu\.matmul' op )?Unsupported input data type in matrix multiplication"),
        "This TPU's matrix unit takes no matmul of these operand dtypes (jax-ml/jax#23989: a "
        "bfloat16 matmul on a TPU v3, whose Mosaic takes float32). Cast both operands to "
        "float32 before the jnp.dot, or run the kernel on a newer TPU",
        None,
    ),
    (
        re.compile(r"Target does not support this comparison"),
        "This TPU's vector unit has no comparison in the operands' dtype (jax-ml/jax#30104: "
        "bfloat16 on a TPU v5p; the same kernel compiles on a v6e). Compare in float32: "
        "x.astype(jnp.float32) < y.astype(jnp.float32); later libtpu releases add such "
        "comparisons",
        None,
    ),
    (
        re.compile(r"Unsupported type in transpose"),
        "Mosaic transposes no value of this dtype on this TPU (jax-ml/jax#29278: int8). "
        "Transpose a 32-bit copy, x.astype(jnp.int32).T.astype(jnp.int8), or let the matmul "
        "take the transposed operand: lax.dot_general with the contracting dimensions of x.T",
        None,
    ),
    (
        re.compile(r"failed to legalize operation '(?:arith|math)\.\w+'"),
        "Mosaic has no lowering of this arithmetic in the operands' dtype on this TPU "
        "(jax-ml/jax#28305: arith.addi on int8). Compute in a 32-bit dtype and cast back: "
        "(x.astype(jnp.int32) + y.astype(jnp.int32)).astype(jnp.int8)",
        None,
    ),
    (
        re.compile(r"Invalid vector type for load"),
        "Mosaic has no load of this vector type on this TPU. In pytorch/helion#3204 a float16 "
        "kernel (vector<8x128x2xf16>, head_dim 256, on a TPU v7) failed here and the same "
        "kernel in bfloat16 compiled: a TPU's native 16-bit float is bfloat16, so use bfloat16 "
        "in TPU kernels rather than float16 (x.astype(jnp.bfloat16) before the call), or "
        "float32",
        None,
    ),
    (
        re.compile(r"Failed to verify layout for Mosaic kernel operand \d+"),
        "XLA laid the operand out in memory otherwise than the tiled layout the kernel was "
        "compiled for. Reports show it for an operand of size 0 (s32[0], "
        "vllm-project/tpu-inference#2506) and for arrays handed over by PyTorch/XLA "
        "(pytorch/xla#8732): pass no zero-size operand (skip the call, or pad the operand to "
        "one element), and call the kernel on arrays JAX made",
        None,
    ),
)
_RET_CHECK_WHY = (
    "an internal check of XLA's C++ (RET_CHECK) failed: XLA ships inside jaxlib, and its "
    "source is not the Python and Mosaic code errata mined"
)
_QUOTES = "`'\""
_FIELD = re.compile(r"\{[\w.]+\}")  # an f-string's field: ``{lhs.dtype}``
# MLIR's verifier, as the bindings raise it (``MLIRError: Verification failed:``) and as
# Pallas re-raises it (``VerificationError``), then its diagnostic on a line that follows:
# ``error: loc(…): 'vector.shape_cast' op operand #0 must be vector …``.
_VERIFIER = re.compile(
    r"MLIRError: Verification failed:|Pallas encountered an internal verification error"
)
_OP_DIAGNOSTIC = re.compile(r"'(?P<op>[a-z_]\w*\.[\w.]+)' op (?P<said>[^\n]+)")
# What real reports show MLIR's verifier rejecting of an upstream op, and what to do: the
# op, and its words.
_VERIFIER_ADVICE = (
    (
        "vector.shape_cast",
        re.compile(r"operand #0 must be vector of any type values, but got '[a-z]+\d+'"),
        "A scalar (an i32 or f32, such as pl.program_id(0) or a value read from SMEM) "
        "was stored into a VMEM ref, which holds vectors only (jax-ml/jax#22817, #23884): "
        "put the ref in SMEM (pl.BlockSpec(memory_space=pltpu.SMEM), or "
        "pltpu.SMEM((1,), jnp.int32) as scratch), or store a vector: "
        "o_ref[...] = jnp.full(o_ref.shape, x, o_ref.dtype)",
    ),
    (
        "arith.index_cast",
        re.compile(
            r"operand #0 must be signless-(?:non-zero-bitwidth-)?integer-like or memref of "
            r"signless-integer, but got '(?:f|bf)\d+'"
        ),
        "A ref was indexed with a floating-point value: Pallas turns each index into MLIR's "
        "index type with arith.index_cast, which takes integers only (jax-ml/jax#26034: a "
        "store at an index computed in float32; JAX 0.10.2 lowers pl.ds(i, 1) with i a "
        "float32 to this). Index with integers: keep pl.program_id(0) and loop counters "
        "int32 and cast only the values stored (x.astype(jnp.float32)), or cast a computed "
        "index back with .astype(jnp.int32)",
    ),
)
MAX_DIAGNOSTIC_LINES = 4  # lines after the verifier's words where its diagnostic may stand
# Dialects whose ops Mosaic defines in jaxlib/mosaic, whose verifiers errata mined.
MOSAIC_DIALECTS = frozenset({"tpu", "mosaic_gpu"})


def compiler_messages(text: str) -> list[CompilerMessage]:
    """Each message the paste shows from a compiler JAX wraps, from MLIR's verifier, from
    XLA's internal checks, or that a compiler or runtime prints whole, in paste order."""
    wrapped = _wrapped(text)
    behind = {said.message_line for said in wrapped}
    said = [*wrapped, *_verified(text), *_checked(text), *_reported(text, behind)]
    return sorted(said, key=lambda message: message.line)


def backends_wrapping(lines: Iterable[str]) -> frozenset[str]:
    """The backends whose compilers' wrappers ``lines`` show: ``Mosaic failed to compile TPU
    kernel: Only 32-bit types supported`` is Mosaic TPU's message, not Mosaic GPU's raise of
    the same words, even in a paste with no frame."""
    return frozenset(
        _WRAPPED_BACKEND[wrapper]
        for line in lines
        if "ompile" in line  # every wrapper's; most lines have none
        for tail, wrapper in _WRAPPER_TAILS.items()
        if tail in line
    )


def _wrapped(text: str) -> list[CompilerMessage]:
    """What follows a compiler's wrapper. A message on the line after its wrapper (``…TPU
    kernel:`` then the message) is read from there."""
    if not any(tail in text for tail in _WRAPPER_TAILS):
        return []
    found = []
    for said in _SAID.finditer(text):
        line = _line_of(text, said.start())
        message, message_line = _unquoted(said["message"]), line
        if not message:
            rest = text[said.end() :]
            following = rest.lstrip("\n")
            message_line += len(rest) - len(following)
            message = _unquoted(following.partition("\n")[0].strip())
        compiler, why = _WRAPPERS[_WRAPPER_TAILS[said["wrapper"][1:]]]
        if (compiler, why) == _MOSAIC_TPU:
            why = _advised(text, said, message) or why
        # a message that names itself says more than its wrapper (what to do)
        compiler, why = next(
            ((c, w) for _, pattern, c, w in _REPORTED if pattern.match(message)), (compiler, why)
        )
        found.append(CompilerMessage(line, message_line, compiler, message, why))
    return found


def _advised(text: str, said: re.Match[str], message: str) -> str | None:
    """What to do about a libtpu message ``said`` behind its wrapper, where a report told,
    with what its figures on the lines after it work out."""
    for words, advice, work_out in _MOSAIC_TPU_ADVICE:
        if words.match(message):
            worked = None
            if work_out is not None:
                end = _end_of_lines(text, said.end(), MAX_DIAGNOSTIC_LINES)
                worked = work_out(text[said.start() : end])
            return _MOSAIC_TPU_SAYS + advice + (f". {worked}" if worked else "")
    return None


def _verified(text: str) -> list[CompilerMessage]:
    """The diagnostic MLIR's verifier gave after its words, within a few lines."""
    if "erification" not in text:  # "Verification failed", "internal verification error"
        return []
    found = []
    for said in _VERIFIER.finditer(text):
        limit = _end_of_lines(text, said.end(), MAX_DIAGNOSTIC_LINES + 1)
        diagnostic = _OP_DIAGNOSTIC.search(text, said.end(), limit)
        if diagnostic is None:
            continue
        op = diagnostic["op"]
        dialect = op.split(".", 1)[0]
        said_of_op = diagnostic["said"].strip()
        advised = next(
            (
                advice
                for advised_op, words, advice in _VERIFIER_ADVICE
                if advised_op == op and words.match(said_of_op)
            ),
            None,
        )
        if dialect in MOSAIC_DIALECTS:
            why = (
                f"'{op}' is an op of Mosaic's own {dialect} dialect, whose verifier errata "
                "mined from jaxlib/mosaic, but no mined release says this"
            )
        elif advised:
            why = (
                f"'{op}' is upstream MLIR's ({dialect} dialect), checked by MLIR's own "
                f"verifier, which is not JAX's source. {advised}"
            )
        else:
            why = (
                f"'{op}' is upstream MLIR's ({dialect} dialect), checked by MLIR's own "
                "verifier, which is not JAX's source: Pallas lowered the kernel to IR that MLIR "
                "rejects, an operand or shape Pallas took without a check of its own (worth a "
                "JAX issue, with the kernel)"
            )
        message = _unquoted(f"'{op}' op {said_of_op}")
        line = _line_of(text, said.start())
        message_line = _line_of(text, diagnostic.start())
        found.append(CompilerMessage(line, message_line, "MLIR's verifier", message, why))
    return found


def _checked(text: str) -> list[CompilerMessage]:
    """XLA's failed internal checks, named by the file and line of XLA's C++ that checks."""
    if "RET_CHECK failure" not in text:
        return []
    found = []
    for said in _RET_CHECK.finditer(text):
        line = _line_of(text, said.start())
        message = _unquoted(said["message"]) or "RET_CHECK failure"
        where = f"XLA ({said['where']})"
        found.append(CompilerMessage(line, line, where, message, _RET_CHECK_WHY))
    return found


def _reported(text: str, behind_wrappers: set[int]) -> list[CompilerMessage]:
    """The messages a compiler or runtime prints whole (``_REPORTED``), the first of each
    kind (a log repeats them); one on a line of ``behind_wrappers`` is a wrapper's message
    already, and one with an f-string's fields is the source that prints it (the frame's
    ``assert lhs.dtype == rhs.dtype, f"First input ({lhs.dtype}) …"``)."""
    found = []
    for words, pattern, compiler, why in _REPORTED:
        if words not in text:
            continue
        for said in pattern.finditer(text):
            line = _line_of(text, said.start())
            if line not in behind_wrappers and not _FIELD.search(said[0]):
                found.append(CompilerMessage(line, line, compiler, _unquoted(said[0]), why))
                break
    return found


def _end_of_lines(text: str, position: int, count: int) -> int:
    """Where the ``count``-th line break from ``position`` stands (the end of the text if
    there are fewer)."""
    end = position
    for _ in range(count):
        end = text.find("\n", end + 1)
        if end == -1:
            return len(text)
    return end


def _line_of(text: str, position: int) -> int:
    """The 1-based line of ``text`` that ``position`` stands on."""
    return text.count("\n", 0, position) + 1


def _unquoted(message: str) -> str:
    """The message without the quote that closed the span it was quoted in (`` `…` ``),
    keeping a closing quote of its own (``failed to legalize operation 'tpu.gather'``)."""
    message = message.rstrip()
    while message and message[-1] in _QUOTES and message.count(message[-1]) % 2:
        message = message[:-1].rstrip()
    return message
