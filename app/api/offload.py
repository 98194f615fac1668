"""Where a request's CPU work runs: on the event loop when it is short, else in the thread pool.

Answering from memory (a match of an ordinary paste, a compute of a case seen before) costs
less than a hop to a worker thread and back. Running the engine on a new case costs
milliseconds, which would stall every other request on the loop. The GIL gives CPU work in
a thread no more throughput, only turns: what the thread pool buys is that the loop keeps
answering while the engine runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from starlette.concurrency import run_in_threadpool

from app.services.compute import EngineNeeded

T = TypeVar("T")


async def on_loop_unless_engine(work: Callable[[bool], T], *, on_loop: bool = True) -> T:
    """``work(run_engine)`` on the loop with ``run_engine=False``; when that raises
    ``EngineNeeded``, or when ``on_loop`` is false, ``work(True)`` in the thread pool."""
    if on_loop:
        try:
            return work(False)
        except EngineNeeded:
            pass
    return await run_in_threadpool(work, True)
