"""Compile and run a grid of Pallas TPU kernels on a TPU, and record each one's verdict.

    python tpu_verdicts.py OUT_DIR               # on a TPU: compile, run, check the result
    python tpu_verdicts.py OUT_DIR --cpu-lower   # here: lower each case for TPU on the CPU
    python tpu_verdicts.py --dry-run             # list the grid
    python tpu_verdicts.py OUT_DIR --cases FILE  # cases of a JSON file instead of the grid

What only libtpu checks (the operand tiling of E2002, the scoped VMEM of E1001, the alignment
of dynamic offsets of E2003, the matmul dtypes a chip takes) is known only by running kernels
on a TPU. This script needs nothing but JAX and numpy (Python 3.11, no network, the project
not installed), runs the whole grid in one process (a TPU is held by one program at a time
and costs seconds to start), catches every exception per case, and writes one JSON Lines file
to OUT_DIR: a header (JAX, jaxlib and libtpu versions, the chip) then one line per case, with
its parameters and its verdict: ``ok`` with whether the result was right, or the exception's
class and message. ``data/tpu-verdicts/README.md`` describes the file.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import json
import os
import platform
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

MIB = 1 << 20
SCHEMA_VERSION = 1
MAX_MESSAGE_CHARS = 20_000  # a message is kept whole up to this; MLIR dumps can run longer
Case = dict[str, Any]

# --- the grid -------------------------------------------------------------------------

BLOCK_DTYPES = ("float32", "bfloat16", "int8", "int4")
ARRAYS_2D = ((64, 256), (256, 256), (512, 384))
BLOCKS_2D = (
    (4, 128), (8, 128), (16, 128), (32, 128), (64, 128), (8, 256), (16, 256), (32, 256),
    (64, 256), (128, 128), (8, 100), (100, 100), (128, 384), (64, 384),
)  # fmt: skip
ARRAYS_1D = ((4096,), (8192,))
BLOCKS_1D = ((128,), (256,), (500,), (512,), (1024,), (2048,), (4096,))
VMEM_ROWS = (256, 512, 1024, 2048)  # float32 blocks (rows, 2048): 2, 4, 8 and 16 MiB
VMEM_LIMITS = (None, 16 * MIB, 32 * MIB, 64 * MIB, 100 * MIB, 128 * MIB)
MATMULS = (  # (lhs, rhs, preferred_element_type; None: a bare @)
    ("float32", "float32", "float32"),
    ("bfloat16", "bfloat16", "float32"),
    ("bfloat16", "bfloat16", "bfloat16"),
    ("bfloat16", "bfloat16", None),
    ("float16", "float16", "float32"),
    ("int8", "int8", "int32"),
    ("int8", "int8", "float32"),
    ("int8", "int8", None),
    ("int8", "bfloat16", "float32"),
    ("int4", "int4", "int32"),
    ("float8_e4m3fn", "float8_e4m3fn", "float32"),
    ("float8_e5m2", "float8_e5m2", "float32"),
    ("float8_e4m3fn", "float8_e4m3fn", "bfloat16"),
)
MATMUL_SHAPES = (((128, 256), (256, 128)), ((128, 100), (100, 128)))
# Every pair of these, into the 32-bit accumulator of its kind: which mixes Mosaic converts
MIXED_DTYPES = ("float32", "bfloat16", "float16", "int8", "int4", "float8_e4m3fn", "float8_e5m2")
PRECISE = (("float32", "float32"), ("bfloat16", "bfloat16"), ("bfloat16", "float32"))
BIG_VMEM_SHAPE = (8192, 2048)  # float32 blocks of 32 and 64 MiB: past physical VMEM
BIG_VMEM_LIMITS = (None, 128 * MIB, 256 * MIB)


def grid() -> list[Case]:
    """Every case, each with a unique ``id``."""
    return [
        *_block_cases(),
        *_vmem_cases(),
        *_offset_cases(),
        *_matmul_cases(),
        *_mixed_matmul_cases(),
    ]


def _block_cases() -> list[Case]:
    """Copies by blocks: the (8, 128) rule, the rank-1 rule and each dtype's tiling."""
    cases = []
    for dtype in BLOCK_DTYPES:
        for shape in ARRAYS_2D:
            blocks = [b for b in BLOCKS_2D if all(d <= s for d, s in zip(b, shape, strict=True))]
            if shape not in blocks:  # the whole array, always allowed
                blocks.append(shape)
            cases += [case("block", shape=shape, block=b, dtype=dtype) for b in blocks]
        for shape_1d in ARRAYS_1D:
            cases += [case("block", shape=shape_1d, block=b, dtype=dtype) for b in BLOCKS_1D]
    return cases


def _vmem_cases() -> list[Case]:
    """Blocks of 2 to 16 MiB, in and out, under each scoped limit, double- or single-buffered."""
    shape = (4096, 2048)
    scoped = [
        case("vmem", shape=shape, block=(rows, 2048), dtype="float32", limit=limit, buffers=n)
        for rows in VMEM_ROWS
        for limit in VMEM_LIMITS
        for n in (None, 1)
    ]
    physical = [
        case("vmem", shape=BIG_VMEM_SHAPE, block=(rows, 2048), dtype="float32", limit=limit,
              buffers=n)
        for rows in (4096, 8192)
        for limit in BIG_VMEM_LIMITS
        for n in (None, 1)
    ]  # fmt: skip
    return scoped + physical


def _offset_cases() -> list[Case]:
    """Loads at a start read from SMEM, aligned or not, promised aligned or not."""
    return [
        case("offset", axis=axis, start=start, promise=promise)
        for axis, multiple in (("lane", 128), ("sublane", 8))
        for start in (multiple, multiple // 2)
        for promise in (False, True)
    ]


def _matmul_cases() -> list[Case]:
    return [
        case("matmul", lhs=lhs, rhs=rhs, acc=acc, lhsShape=lhs_shape, rhsShape=rhs_shape)
        for lhs, rhs, acc in MATMULS
        for lhs_shape, rhs_shape in MATMUL_SHAPES
    ]


def _mixed_matmul_cases() -> list[Case]:
    """Every pair of dtypes into its kind's 32-bit accumulator, and precision=HIGHEST."""
    shapes = {"lhsShape": MATMUL_SHAPES[0][0], "rhsShape": MATMUL_SHAPES[0][1]}
    pairs = [
        case("matmul", lhs=lhs, rhs=rhs, acc=_natural_acc(lhs, rhs), **shapes)
        for lhs in MIXED_DTYPES
        for rhs in MIXED_DTYPES
        if (lhs, rhs, _natural_acc(lhs, rhs)) not in {m[:3] for m in MATMULS}
    ]
    precise = [
        case("matmul", lhs=lhs, rhs=rhs, acc="float32", precision="highest", **shapes)
        for lhs, rhs in PRECISE
    ]
    return pairs + precise


def _natural_acc(lhs: str, rhs: str) -> str:
    return "int32" if lhs.startswith("int") and rhs.startswith("int") else "float32"


def case(family: str, **parameters: Any) -> Case:
    shown = "-".join(
        f"{k}={'x'.join(map(str, v)) if isinstance(v, tuple) else v}" for k, v in parameters.items()
    )
    listed = {k: list(v) if isinstance(v, tuple) else v for k, v in parameters.items()}
    return {"id": f"{family}-{shown}", "family": family, **listed}


# --- the kernels ----------------------------------------------------------------------


def _modules() -> tuple[Any, Any, Any, Any]:
    import jax
    import jax.numpy as jnp
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import tpu as pltpu

    return jax, jnp, pl, pltpu


def _array(shape: tuple[int, ...], dtype: str, seed: int = 0) -> Any:
    """Values every dtype of the grid holds exactly (int4 from -8 to 7)."""
    import numpy as np

    jax, jnp, _, _ = _modules()
    values = np.random.default_rng(seed).integers(-8, 8, size=shape)
    return jax.device_put(jnp.asarray(values, jnp.float32).astype(jnp.dtype(dtype)))


def _build(case: Case) -> tuple[Callable[..., Any], list[Any], Callable[..., Any]]:
    """The jitted function, its arguments, and the result it should give (from numpy)."""
    builder = {"block": _copy, "vmem": _copy, "offset": _offset, "matmul": _matmul}
    return builder[case["family"]](case)


def _copy(case: Case) -> tuple[Callable[..., Any], list[Any], Callable[..., Any]]:
    jax, _, pl, pltpu = _modules()
    shape, block = tuple(case["shape"]), tuple(case["block"])
    grid_shape = tuple(-(-s // b) for s, b in zip(shape, block, strict=True))
    buffers = case.get("buffers")
    mode = {} if buffers is None else {"pipeline_mode": pl.Buffered(buffers)}
    spec = pl.BlockSpec(block, lambda *index: index, **mode)
    limit = case.get("limit")
    params = (
        {} if limit is None else {"compiler_params": pltpu.CompilerParams(vmem_limit_bytes=limit)}
    )

    def kernel(x_ref: Any, o_ref: Any) -> None:
        o_ref[...] = x_ref[...]

    x = _array(shape, case["dtype"])
    call = pl.pallas_call(
        kernel,
        out_shape=jax.ShapeDtypeStruct(shape, x.dtype),
        grid=grid_shape,
        in_specs=[spec],
        out_specs=spec,
        **params,
    )
    return jax.jit(call), [x], lambda x: x


def _offset(case: Case) -> tuple[Callable[..., Any], list[Any], Callable[..., Any]]:
    """A load at a start read from SMEM: along the lanes of an f32 (8, 512) ref, or the
    sublanes of an f32 (64, 128) one, with or without ``pl.multiple_of``."""
    jax, jnp, pl, pltpu = _modules()
    lane = case["axis"] == "lane"
    multiple = 128 if lane else 8
    shape, out = ((8, 512), (8, 128)) if lane else ((64, 128), (8, 128))

    def kernel(start_ref: Any, x_ref: Any, o_ref: Any) -> None:
        start = start_ref[0]
        if case["promise"]:
            start = pl.multiple_of(start, multiple)
        window = pl.ds(start, multiple)
        o_ref[...] = x_ref[:, window] if lane else x_ref[window, :]

    call = pl.pallas_call(
        kernel,
        out_shape=jax.ShapeDtypeStruct(out, jnp.float32),
        in_specs=[pl.BlockSpec(memory_space=pltpu.SMEM), pl.BlockSpec(memory_space=pltpu.VMEM)],
        out_specs=pl.BlockSpec(memory_space=pltpu.VMEM),
    )
    s = case["start"]
    x = _array(shape, "float32")
    start = jnp.array([s], jnp.int32)
    return jax.jit(call), [start, x], lambda _, x: x[:, s : s + 128] if lane else x[s : s + 8, :]


def _matmul(case: Case) -> tuple[Callable[..., Any], list[Any], Callable[..., Any]]:
    jax, jnp, pl, _ = _modules()
    acc = case["acc"]
    lhs_shape, rhs_shape = tuple(case["lhsShape"]), tuple(case["rhsShape"])
    out_dtype = acc or jnp.result_type(jnp.dtype(case["lhs"]), jnp.dtype(case["rhs"])).name

    precision = {"precision": jax.lax.Precision.HIGHEST} if case.get("precision") else {}

    def kernel(x_ref: Any, w_ref: Any, o_ref: Any) -> None:
        if acc is None:
            o_ref[...] = x_ref[...] @ w_ref[...]
        else:
            o_ref[...] = jnp.dot(
                x_ref[...], w_ref[...], preferred_element_type=jnp.dtype(acc), **precision
            )

    call = pl.pallas_call(
        kernel, out_shape=jax.ShapeDtypeStruct((lhs_shape[0], rhs_shape[1]), jnp.dtype(out_dtype))
    )
    x, w = _array(lhs_shape, case["lhs"], 1), _array(rhs_shape, case["rhs"], 2)
    return jax.jit(call), [x, w], lambda x, w: x @ w


# --- verdicts -------------------------------------------------------------------------


def _as_float64(value: Any) -> Any:
    import numpy as np

    return np.asarray(value.astype("float32") if hasattr(value, "astype") else value, np.float64)


def run_case(case: Case, cpu_lower: bool) -> dict[str, Any]:
    """The case's verdict; every exception is caught and recorded, never raised."""
    try:
        function, arguments, expected = _build(case)
        if cpu_lower:
            jax = _modules()[0]
            avals = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in arguments]
            jitted: Any = function
            jitted.trace(*avals).lower(lowering_platforms=("tpu",))
            return {"verdict": "lowered"}
        result = function(*arguments)
        result.block_until_ready()
        import numpy as np

        want = expected(*(_as_float64(a) for a in arguments))
        got = _as_float64(result)
        correct = got.shape == want.shape and bool(np.allclose(got, want, rtol=2e-2, atol=1e-2))
        return {"verdict": "ok", "correct": correct}
    except Exception as error:  # every failure is the record
        return _failure(error)


def _failure(error: BaseException) -> dict[str, Any]:
    kind = type(error)
    # The kernel's place as JAX prints it, relative to the checkout: no machine's path.
    message = str(error).replace(f"{Path(__file__).resolve().parent.parent}/", "")
    return {
        "verdict": "error",
        "errorClass": kind.__name__,
        "errorModule": kind.__module__,
        "message": message[:MAX_MESSAGE_CHARS],
        "truncated": len(message) > MAX_MESSAGE_CHARS,
    }


def header(cpu_lower: bool) -> dict[str, Any]:
    jax = _modules()[0]
    device = jax.devices()[0]
    versions: dict[str, str | None] = {}
    for package in ("jax", "jaxlib", "libtpu", "libtpu-nightly", "numpy", "ml_dtypes"):
        try:
            versions[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            versions[package] = None
    return {
        "kind": "header",
        "schemaVersion": SCHEMA_VERSION,
        "mode": "cpu-lower" if cpu_lower else "tpu",
        "chip": "TPU v5 lite (CPU lowering)" if cpu_lower else device.device_kind,
        "platformVersion": getattr(device.client, "platform_version", None),
        "deviceCount": jax.device_count(),
        "python": platform.python_version(),
        "versions": versions,
        "started": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
    }


def pretend_v5e() -> None:
    """On a CPU, answer TPU lowering's questions about the chip as a TPU v5e would."""
    from jax._src.pallas.mosaic import tpu_info

    tpu_info.registry["cpu"] = lambda: tpu_info.get_tpu_info_for_chip(
        tpu_info.ChipVersion.TPU_V5E, 1
    )


def selected(
    only: list[str], skip: list[str], limit: int | None, given: list[Case] | None = None
) -> list[Case]:
    """The cases (``given``, else the grid's) whose id holds a word of ``only`` (all,
    without it) and none of ``skip``: a case that brings the process down is skipped on
    the next run."""
    cases = [
        case
        for case in (grid() if given is None else given)
        if (not only or any(word in case["id"] for word in only))
        and not any(word in case["id"] for word in skip)
    ]
    return cases[:limit]


def record(out_dir: Path, cases: list[Case], cpu_lower: bool, suffix: str = "") -> Path:
    """Run ``cases`` and write the header and one line per case, flushed as it goes."""
    first = header(cpu_lower)
    chip = str(first["chip"]).split(" (")[0].lower().replace(" ", "-")
    out_dir.mkdir(parents=True, exist_ok=True)
    name = f"verdicts-{first['mode']}-{chip}-jax-{first['versions']['jax']}{suffix}.jsonl"
    path = out_dir / name
    with path.open("w") as out:
        out.write(json.dumps(first) + "\n")
        for number, case in enumerate(cases, 1):
            line = {"kind": "case", **case, **run_case(case, cpu_lower)}
            out.write(json.dumps(line) + "\n")
            out.flush()
            print(f"{number}/{len(cases)} {case['id']}: {line['verdict']}", file=sys.stderr)
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir", nargs="?", type=Path, help="where the JSON Lines file goes")
    parser.add_argument("--dry-run", action="store_true", help="list the grid and stop")
    parser.add_argument("--cpu-lower", action="store_true", help="lower for TPU on the CPU")
    parser.add_argument("--only", action="append", default=[], help="cases whose id holds this")
    parser.add_argument("--skip", action="append", default=[], help="not the cases holding this")
    parser.add_argument("--limit", type=int, default=None, help="at most this many cases")
    parser.add_argument("--cases", type=Path, default=None, help="a JSON list of cases to run")
    arguments = parser.parse_args(argv)
    given = json.loads(arguments.cases.read_text()) if arguments.cases else None
    cases = selected(arguments.only, arguments.skip, arguments.limit, given)
    if arguments.dry_run:
        print("\n".join(case["id"] for case in cases))
        print(f"{len(cases)} cases", file=sys.stderr)
        return 0
    if arguments.out_dir is None:
        parser.error("OUT_DIR is needed unless --dry-run")
    if arguments.cpu_lower:
        os.environ["JAX_PLATFORMS"] = "cpu"
        pretend_v5e()
    suffix = f"-{arguments.cases.stem}" if arguments.cases else ""
    path = record(arguments.out_dir, cases, arguments.cpu_lower, suffix)
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
