"""What the commands read from the user: a paste from a file or standard input, and the
files ``errata import`` is given.

Any bytes may arrive. errata takes a paste as the API takes a body, UTF-8 text without NUL
bytes (``matching.normalize.paste_text``), and record files as the importer reads them;
anything else, like a file that cannot be opened, is said in one line on stderr with exit
code 2 before any work is done, never as a traceback.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import BinaryIO

from app.cli.printing import usage_error

STANDARD_INPUT = "-"
# Pastes' worth of bytes read at most. The service refuses a paste over MAX_PASTE_BYTES of
# text. Line breaks are read as Python's text mode reads them, \r\n as \n, so a file twice
# that long may still fit; past it, no more is read (``errata match /dev/zero`` ends).
PASTES_READ = 2


def read_paste(source: str) -> str:
    """The paste in the file ``source`` (``-``: standard input), as text. The reader is
    imported here: the commands that read no paste (``errata run``) start without it."""
    from app.matching import MAX_PASTE_BYTES, UnreadablePaste, paste_text

    most = PASTES_READ * MAX_PASTE_BYTES
    name = "standard input" if source == STANDARD_INPUT else source
    try:
        if source == STANDARD_INPUT:
            data = _read_at_most(sys.stdin.buffer, most + 1)
        else:
            with open(source, "rb") as stream:
                data = _read_at_most(stream, most + 1)
    except OSError as exc:
        usage_error(f"cannot read {source}: {exc.strerror or exc}")
    if len(data) > most:
        usage_error(f"{name}: over {most} bytes; a paste may be {MAX_PASTE_BYTES}")
    try:
        text = paste_text(data)
    except UnreadablePaste as exc:
        usage_error(f"{name}: {exc}")
    # As the command read a paste before it took bytes: the answers stay the same.
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _read_at_most(stream: BinaryIO, limit: int) -> bytes:
    """Up to ``limit`` bytes, to the end of the stream: a terminal's gives a line a read."""
    chunks: list[bytes] = []
    size = 0
    while size < limit and (chunk := stream.read(limit - size)):
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def readable_files(paths: list[Path]) -> list[Path]:
    """The files of ``paths`` (folders walked) as the importer takes them, once each is
    known to be text it can read: a usage error names the first that is not."""
    from app.records.importer import ImportFailed, expand_paths, read_text

    files = expand_paths(paths)
    for file in files:
        try:
            read_text(file)
        except ImportFailed as exc:
            usage_error(str(exc.issue))
    return files
