"""What the miner finds: one error site of one JAX release, before releases are linked.

A site is where JAX's source raises (``raise``), asserts (``assert``) or reports a C++
diagnostic (``emitOpError`` and kin). The miner reads each release on its own into sites;
``history`` then links the same site across releases into one record.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# The error class a C++ diagnostic reaches Python with: MLIR's verifier and pass failures
# surface as ``MLIRError`` (``jaxlib.mlir.ir.MLIRError``) or inside a runtime error's text.
CPP_ERROR_CLASS = "MLIRError"


@dataclass(frozen=True)
class Site:
    """One error site as found in one release's source."""

    file_path: str  # repo-relative, e.g. ``jax/_src/pallas/mosaic_gpu/primitives.py``
    line: int  # 1-based line of the ``raise``/``assert``/diagnostic statement
    kind: str  # "raise", "assert" or "diagnostic"
    error_class: str  # ``ValueError``; ``AssertionError`` for asserts; CPP_ERROR_CLASS for C++
    template: str  # the message as the seeds write it; "" for a bare assert
    pattern: str  # the seeds' pattern: escaped literals, ``(.+?)`` per placeholder
    function: str | None  # qualified name of the enclosing function (``Class.method``)
    backend: str  # "mosaic_gpu", "triton", "tpu" or "core"
    condition: str | None = None  # the guarding condition as source (``bits % 8``)
    definitions: tuple[str, ...] = ()  # assignments in the function defining its names
    lowering_rule: str | None = None  # the registering decorator, as source
    language: str = "python"  # "python" or "cpp"
    extra: dict[str, str] = field(default_factory=dict, compare=False, hash=False)
