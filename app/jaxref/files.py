"""The committed data files that more than one layer reads.

The miners (``app.knowledge``) write these and the reader (``app.matching``) loads them, so
their paths live below both: neither layer imports the other to find a file.
"""

from __future__ import annotations

from pathlib import Path

# What errata knows, beside the package: records, annotations, what the miners wrote.
DATA_DIR = Path(__file__).resolve().parents[2] / "data"
# Every mined site's line per release, and the releases of each wording of its message
# (``knowledge.frame_index.write_frame_index``; loaded by ``matching.frames.FrameIndex``).
FRAME_INDEX_FILE = DATA_DIR / "frame-index.json"
# Where each release defines its functions (``knowledge.functions``).
FUNCTIONS_FILE = DATA_DIR / "jax-functions.json"
# XLA's error catalogue, mined (``knowledge.xla_errors``; read by ``matching.compiler_advice``).
XLA_ERRORS_FILE = DATA_DIR / "mined" / "xla-errors.jsonl"
