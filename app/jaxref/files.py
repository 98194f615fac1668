"""The committed data files that more than one layer reads.

The miners (``app.knowledge``) write these and the reader (``app.matching``) loads them, so
their paths live below both: neither layer imports the other to find a file.
"""

from __future__ import annotations

from pathlib import Path

_DATA = Path(__file__).resolve().parents[2] / "data"
# Every mined site's line per release, and the releases of each wording of its message
# (``knowledge.frame_index.write_frame_index``; loaded by ``matching.frames.FrameIndex``).
FRAME_INDEX_FILE = _DATA / "frame-index.json"
# Where each release defines its functions (``knowledge.functions``).
FUNCTIONS_FILE = _DATA / "jax-functions.json"
