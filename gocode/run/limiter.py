"""The bound on concurrent programs in one process, with a bounded queue in front of it.

A :class:`RunLimiter` lets ``limit`` programs build and run at once and ``queue`` more wait
for a slot, first come first served. A call that finds the queue full, or that waits longer
than it may, gets :class:`Busy` at once: the client should retry later (another replica
behind a load balancer may have room). Queued time counts against the call's timeout, so a
call never takes much longer than its timeout however loaded the process is.

One limiter per :class:`~gocode.toolbox.Toolbox` (``gocode serve`` has one); shared by the
tasks of one event loop, not across threads.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import AsyncIterator

import anyio

from gocode.errors import Busy


def default_limit(cores: int | None = None) -> int:
    """Programs at once by default: one per core, at least two (a program mostly waits on tools)."""
    return max(2, cores if cores is not None else (os.cpu_count() or 1))


class RunLimiter:
    """``limit`` programs at once, ``queue`` more waiting; see the module doc."""

    @classmethod
    def for_settings(cls, limit: int | None, queue: int | None) -> RunLimiter:
        """The limiter a config asks for (``maxConcurrentRuns``, ``maxQueuedRuns``); None takes
        the default: :func:`default_limit` at once, four times as many waiting."""
        limit = limit or default_limit()
        return cls(limit, queue if queue is not None else 4 * limit)

    def __init__(self, limit: int, queue: int) -> None:
        if limit < 1 or queue < 0:
            raise ValueError("the limit must be at least 1 and the queue at least 0")
        self.limit = limit
        self.queue = queue
        self._slots = anyio.Semaphore(limit)
        self.running = 0
        self.waiting = 0

    @contextlib.asynccontextmanager
    async def slot(self, max_wait: float) -> AsyncIterator[float]:
        """Hold a slot for the body; yields the seconds spent queued. Raises :class:`Busy`."""
        start = time.monotonic()
        if self._slots.value == 0:
            if self.waiting >= self.queue:
                raise Busy(
                    f"gocode is busy: {self.running} programs running and {self.waiting} queued, the most this "
                    "process takes; retry later"
                )
            self.waiting += 1
            got = False
            try:
                with anyio.move_on_after(max_wait):
                    await self._slots.acquire()
                    got = True
            finally:
                self.waiting -= 1
            if not got:
                raise Busy(
                    f"gocode is busy: no program slot came free within {max_wait:g} s (the call's timeout; "
                    f"{self.running} programs running); retry later"
                )
        else:
            await self._slots.acquire()
        self.running += 1
        try:
            yield time.monotonic() - start
        finally:
            self.running -= 1
            self._slots.release()
