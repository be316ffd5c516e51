"""The time a program's own build may take: the run's timeout, spent only by its own steps.

What one program's build does (the type check of its code, its compile and link, the ``go
build`` fallback) is bounded by its run's timeout, in total. What the tool set shares with
every run (the module cache's set-up, the bindings' export data, the standard library's
listing) is not, nor does it spend the budget: one run's limit must not cut short work the
next run needs too, nor fail a small program because its tool set was new.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable
from typing import TypeVar

from gocode.errors import BuildTimeout

T = TypeVar("T")


class Budget:
    """One build's budget (``limit`` seconds; None: unbounded). Used by one build at a time."""

    def __init__(self, limit: float | None = None) -> None:
        self.limit = limit
        self.spent = 0.0

    def left(self) -> float | None:
        """The seconds left (None: unbounded); raises :class:`BuildTimeout` once none are."""
        if self.limit is None:
            return None
        left = self.limit - self.spent
        if left <= 0:
            raise BuildTimeout(self.limit)
        return left

    async def bound(self, work: Awaitable[T]) -> T:
        """``work``, one of the program's own steps, within the time left, which it spends. Past
        it ``work`` is cancelled (a tool's process group killed and reaped: ``golink.run``) and
        :class:`BuildTimeout` raised; so is it when ``work`` itself times out at the time left."""
        start = time.monotonic()
        try:
            left = self.left()
        except BuildTimeout:
            if inspect.iscoroutine(work):
                work.close()  # never started
            raise
        try:
            return await asyncio.wait_for(work, left)
        except TimeoutError:
            if self.limit is None:
                raise
            raise BuildTimeout(self.limit) from None
        finally:
            self.spent += time.monotonic() - start
