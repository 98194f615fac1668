"""JAX's verdicts on a list of cases, from whichever JAX release this interpreter has.

Run inside a virtual environment holding one release (see ``test_releases.py``): reads
``[[operation, shape, dtype, target_dtype], ...]`` as JSON on stdin and writes
``[[error_class, message], ...]`` (``null`` where the kernel lowers) on stdout. An argument
``Lane`` or ``Warpgroup`` lowers every case with those semantics, not the release's default.

    echo '[["copy_gmem_to_smem", [7], "int4", null]]' | python -m tests.oracle.release_verdicts
"""

from __future__ import annotations

import json
import sys

from .jax_kernels import jax_verdict


def main() -> int:
    semantics = sys.argv[1] if len(sys.argv) > 1 else None
    cases = json.load(sys.stdin)
    verdicts = [
        list(jax_verdict(operation, tuple(shape), dtype, target, semantics))
        for operation, shape, dtype, target in cases
    ]
    json.dump(verdicts, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
