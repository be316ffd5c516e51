"""Progress notifications that keep a long ``execute_go_code`` call alive in its client.

MCP clients give up on a request after their own timeout (the TypeScript SDK: 60 s, reset by
each progress notification when the client asked for that). A cold first call (the module cache
set up, the program built) or a long program that prints nothing sends no notification of its
own, so a client that gave a progress token hears one every :data:`INTERVAL_S` seconds of
silence. A call's own notifications are its printed lines, numbered 1, 2, 3 (see
``gocode.toolbox``); a beat continues that count with a value between the last line and the
next one (last + ½, + ¾, …), so the values only grow, as the protocol requires.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

import anyio

INTERVAL_S = 10.0

Send = Callable[[float, float | None, str | None], Awaitable[None]]


class Heartbeat:
    """Wraps a call's progress sender (:meth:`forward`); :meth:`run` beats until cancelled."""

    def __init__(self, send: Send, interval: float = INTERVAL_S) -> None:
        self._send = send
        self._interval = interval
        self._last = 0.0  # the last value sent
        self._line = 0.0  # the last value the call itself sent
        self._quiet_since = time.monotonic()
        self._start = self._quiet_since

    async def forward(self, progress: float, total: float | None, message: str | None) -> None:
        self._line = progress
        self._last = max(self._last, progress)
        self._quiet_since = time.monotonic()
        await self._send(progress, total, message)

    async def run(self) -> None:
        while True:
            await anyio.sleep(max(0.0, self._quiet_since + self._interval - time.monotonic()))
            now = time.monotonic()
            if now - self._quiet_since < self._interval:
                continue  # the call spoke meanwhile
            self._last += (self._line + 1 - self._last) / 2
            self._quiet_since = now
            await self._send(self._last, None, f"still working ({now - self._start:.0f} s)")
