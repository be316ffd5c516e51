"""How much of the loopback endpoint one run may hold at once: requests and body bytes.

A program can open as many connections to the loopback as its open-files limit allows and post
a body up to the cap on each; every body admitted is read, joined and parsed in the controller
(a few times its size in memory). So each run gets a :class:`RunGate`: at most
``max_requests`` requests (the endpoint's POSTs: tool calls) admitted at once and at most ``max_bytes`` of their bodies (a body
without ``Content-Length`` counts as the whole cap); the next ``max_waiting`` wait, first come
first served, before their bodies are read (a waiting request costs a connection, not its
body); beyond that a request is refused at once. A run can only starve itself: other runs have
gates of their own. A waiting request still holds a connection: when the listener runs out of
them, the run waiting the most gives up its newest (:meth:`RunGate.shed`). Closing the gate
(the run ended) refuses everything still waiting.
"""

from __future__ import annotations

import contextlib
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass

import anyio

from gocode.errors import AdmissionRefused

MAX_REQUESTS_PER_RUN = 16
# One body at the endpoint's cap at a time. Parsed, JSON costs several times its size, and up to
# ~65 times for a body of tiny values (4 MiB of `{},` became 268 MB): so this is the bound.
MAX_BYTES_PER_RUN = 4 * 1024 * 1024
MAX_WAITING_PER_RUN = 256


@dataclass
class _Waiter:
    size: int
    admitted: anyio.Event  # set when it is admitted (taken) or refused (the run ended, or shed)
    taken: bool = False
    refusal: str = "the program's run has ended"


class RunGate:
    """Admission for one run's requests (see the module docstring). One event loop."""

    def __init__(
        self,
        max_requests: int = MAX_REQUESTS_PER_RUN,
        max_bytes: int = MAX_BYTES_PER_RUN,
        max_waiting: int = MAX_WAITING_PER_RUN,
    ) -> None:
        self.max_requests, self.max_bytes, self.max_waiting = max_requests, max_bytes, max_waiting
        self.requests = 0  # admitted now
        self.bytes = 0  # their bodies' reserved bytes
        self._waiting: deque[_Waiter] = deque()
        self.closed = False

    @property
    def waiting(self) -> int:
        return len(self._waiting)

    @property
    def held(self) -> int:
        """The requests it holds a connection for: under way and waiting."""
        return self.requests + self.waiting

    def _fits(self, size: int) -> bool:
        # Nothing admitted: any one body fits (it is within the endpoint's own cap).
        return self.requests == 0 or (self.requests < self.max_requests and self.bytes + size <= self.max_bytes)

    @contextlib.asynccontextmanager
    async def admit(self, size: int) -> AsyncIterator[None]:
        """Hold a place for a request whose body is ``size`` bytes, waiting for one if need be.
        Raises :class:`AdmissionRefused` when the wait is full or the run has ended."""
        if self.closed:
            raise AdmissionRefused("the program's run has ended")
        if not self._waiting and self._fits(size):
            self._take(size)
        else:
            if len(self._waiting) >= self.max_waiting:
                raise AdmissionRefused(
                    f"too many requests from this program at once: {self.requests} under way and "
                    f"{len(self._waiting)} waiting (at most {self.max_requests} and {self.max_waiting})"
                )
            waiter = _Waiter(size, anyio.Event())
            self._waiting.append(waiter)
            try:
                await waiter.admitted.wait()
            except BaseException:
                if waiter.taken:  # admitted just as it was cancelled: give the place back
                    self._give(size)
                elif waiter in self._waiting:
                    self._waiting.remove(waiter)
                raise
            if not waiter.taken:
                raise AdmissionRefused(waiter.refusal)
        try:
            yield
        finally:
            self._give(size)

    def shed(self, reason: str) -> bool:
        """Refuse the newest waiting request (its connection is wanted elsewhere), saying
        ``reason``; False when none waits."""
        if not self._waiting:
            return False
        waiter = self._waiting.pop()
        waiter.refusal = reason
        waiter.admitted.set()
        return True

    def close(self) -> None:
        """The run ended: refuse everything waiting and everything to come."""
        self.closed = True
        while self._waiting:
            self._waiting.popleft().admitted.set()

    def _take(self, size: int) -> None:
        self.requests += 1
        self.bytes += size

    def _give(self, size: int) -> None:
        self.requests -= 1
        self.bytes -= size
        while self._waiting and not self.closed and self._fits(self._waiting[0].size):
            waiter = self._waiting.popleft()
            self._take(waiter.size)
            waiter.taken = True
            waiter.admitted.set()
