"""Where a request's CPU work runs: on the event loop when it is short, else in a worker
thread, one at a time.

Answering from memory (a match of an ordinary paste, a compute of a case seen before) costs
less than a hop to a worker thread and back. Running the engine on a new case costs
milliseconds, which would stall every other request on the loop, so it goes to a thread.
CPU-bound Python threads only take turns on the GIL, and many at once spend much of their
CPU switching (measured: a new compute case cost 34 ms of CPU with 16 at once, 12 ms one at
a time), so each process runs such work one piece at a time; more workers use more cores.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Hashable
from typing import Any, TypeVar, cast

import anyio
import anyio.to_thread
from fastapi import Request
from starlette.concurrency import run_in_threadpool

from app.answers.compute import EngineNeeded

T = TypeVar("T")
# Worker threads running CPU-bound work at once, per process.
CPU_THREADS = 1


def cpu_turns() -> anyio.CapacityLimiter:
    """The process's limiter for CPU-bound work; made on the event loop that uses it."""
    return anyio.CapacityLimiter(CPU_THREADS)


async def cpu_bound[T](request: Request, work: Callable[[], T]) -> T:
    """``work()`` in a worker thread, when it is this process's turn."""
    limiter: anyio.CapacityLimiter = request.app.state.cpu_turns
    return await anyio.to_thread.run_sync(work, limiter=limiter)


async def on_loop_unless_engine[T](
    request: Request, work: Callable[[bool], T], *, on_loop: bool = True
) -> T:
    """``work(run_engine)`` on the loop with ``run_engine=False``; when that raises
    ``EngineNeeded``, or when ``on_loop`` is false, ``work(True)`` in a worker thread.

    A retried match is read twice, which costs less than the engine's run that follows it,
    and happens once per new case: the engine's answer is then remembered.
    """
    if on_loop:
        try:
            return work(False)
        except EngineNeeded:
            pass
    return await cpu_bound(request, lambda: work(True))


class SharedRun:
    """Thread-pool work that callers share: those arriving while a run with the same key is
    under way wait for its result rather than each starting their own.

    The store's version is read again every half second, and every request then in flight
    needs it: sixteen of them would each take a thread and a query (or queue on the
    catalog's lock), and each hop back to the event loop may wait for the interpreter's
    switch interval.
    """

    def __init__(self) -> None:
        self._running: tuple[Hashable, asyncio.Future[Any]] | None = None

    async def run(self, key: Hashable, work: Callable[[], T]) -> T:
        # One caller's cancellation must not cancel the run the others wait for.
        return cast(T, await asyncio.shield(self.start(key, work)))

    def start(self, key: Hashable, work: Callable[[], T]) -> asyncio.Future[Any]:
        """The run under way for ``key``, else a new one; for a caller that need not wait."""
        running = self._running
        if running is None or running[0] != key or running[1].done():
            running = (key, asyncio.ensure_future(run_in_threadpool(work)))
            self._running = running
        return running[1]
