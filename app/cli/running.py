"""``errata run -- <command>``: the command's output passed through as it comes, then, when
it fails, what errata knows of the error in it.

The command's standard output and error are read in chunks and written on unchanged (bytes,
not lines: progress bars and partial lines pass as they are), each keeping its last
``KEPT_BYTES`` for the explanation. Its standard input is the terminal's. The explanation
goes to standard error, after everything the command wrote, so a pipe of its standard output
holds the command's alone; errata's exit code is the command's (128 + the signal's number
when a signal ended it, as a shell says it). A command that succeeds gets nothing added.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections import deque
from typing import BinaryIO

from rich.text import Text

from app.cli.printing import FIXES_SHOWN, err, print_cards

# What is kept of each stream for the explanation: a traceback is at the end of what a
# failing program printed, and a paste is at most a megabyte (MAX_PASTE_BYTES).
KEPT_BYTES = 512 * 1024
CHUNK_BYTES = 64 * 1024  # one read: whatever the pipe holds, up to this
NOT_FOUND = 127  # a shell's exit code for a command it cannot find, and for one it cannot run
CANNOT_RUN = 126


class _Tail:
    """The last ``KEPT_BYTES`` of a stream."""

    def __init__(self) -> None:
        self.chunks: deque[bytes] = deque()
        self.size = 0

    def add(self, chunk: bytes) -> None:
        self.chunks.append(chunk)
        self.size += len(chunk)
        while self.size - len(self.chunks[0]) >= KEPT_BYTES:
            self.size -= len(self.chunks.popleft())

    def text(self) -> str:
        return b"".join(self.chunks)[-KEPT_BYTES:].decode("utf-8", "replace")


def run_command(command: list[str]) -> int:
    """Run ``command``, its output passed through; explain its failure; its exit code."""
    try:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except OSError as exc:
        _say(f"cannot run {command[0]}: {exc.strerror or exc}")
        return NOT_FOUND if isinstance(exc, FileNotFoundError) else CANNOT_RUN
    assert process.stdout is not None and process.stderr is not None
    tails = _Tail(), _Tail()
    pumps = [
        threading.Thread(target=_pump, args=(source, target, tail), daemon=True)
        for source, target, tail in zip(
            (process.stdout, process.stderr), _outputs(), tails, strict=True
        )
    ]
    for pump in pumps:
        pump.start()
    # Ctrl+C reaches the command too (the terminal signals the whole group): errata waits for
    # it to end, and says what it said.
    interrupt = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        code = process.wait()
        for pump in pumps:
            pump.join()
    finally:
        signal.signal(signal.SIGINT, interrupt)
    if code != 0:
        _explain(tails[0].text() + tails[1].text())
    return 128 - code if code < 0 else code


def _outputs() -> tuple[BinaryIO, BinaryIO]:
    """Where the command's standard output and error go: errata's own, as bytes."""
    return sys.stdout.buffer, sys.stderr.buffer


def _pump(source: BinaryIO, target: BinaryIO, tail: _Tail) -> None:
    """Copy ``source`` to ``target`` as it comes, keeping its tail."""
    descriptor = source.fileno()
    while chunk := os.read(descriptor, CHUNK_BYTES):
        target.write(chunk)
        target.flush()
        tail.add(chunk)


def _explain(output: str) -> None:
    """What errata knows of the error in ``output``; one line when it knows none, or cannot
    answer (a server gone): the command's own output is what matters."""
    from app.client.explain import explain
    from app.errors import ProblemError
    from app.matching import MAX_PASTE_BYTES

    text = output.encode()[-MAX_PASTE_BYTES:].decode("utf-8", "ignore")
    try:
        answer = explain(text)
    except ProblemError as exc:
        _say(f"could not explain the error: {exc.detail}")
        return
    if not (answer.matches or answer.compilerMessages or answer.memory or answer.raisePoints):
        _say("no known error in the output")
        return
    err.print()
    err.rule("errata", style="dim")
    print_cards(answer.answers, max_fixes=FIXES_SHOWN, console=err)


def _say(message: str) -> None:
    err.print(Text.assemble(("errata: ", "dim"), message))
