"""The netns tier's forwarder: a program's connections to its namespace's listener, carried to
the controller's loopback endpoint (which still checks the run's token).

Each forwarded connection holds three of the controller's descriptors (the one accepted from
the program, the one to the loopback, and the loopback's side of it), so the forwarders of all
runs together hold at most :func:`~gocode.mcp.httplimits.forwarded_max_connections` at once
(a third of the loopback listener's cap). Within that, each run holds at most its share (the
cap divided among the runs forwarding), even while places are free: a run above its share
would lose its newest connections, calls under way, as soon as the others took theirs. A run
at its share closes one of its own idle connections, or waits, its further connections queued
in its own namespace (the listener's backlog, which costs the controller nothing) until one of
its own ends. When the cap is reached (runs came, so the shares shrank), a run below its share
takes a place from the run holding the most: its longest idle connection, else one that never
carried a byte, else its newest. So a program can only slow itself, and never drive the
controller out of descriptors. Thread-bound: the places are kept per event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import weakref
from collections.abc import Callable
from typing import Any

from gocode.mcp import logs
from gocode.mcp.httplimits import forwarded_max_connections

# A connection that has carried a whole answer and nothing since for this long is taken as idle
# between requests. A streamed answer (chunked: progress events, a GET stream) is not idle
# until its last chunk, however quiet it is between events.
IDLE_S = 0.05
_LAST_CHUNK = b"\r\n0\r\n\r\n"
ACCEPT_RETRY_S = 0.5  # after an accept failed (the controller out of descriptors): try again then
log = logging.getLogger("gocode.run.forwarder")
log.addFilter(logs.FloodFilter())  # one failure repeated by every run's accept loop: a few lines


class _Pair:
    """One forwarded connection: its task, the accepted socket until that task takes it, whether
    the program sent anything on it, and since when it is idle (its last bytes ended an answer
    to the program, and nothing came since: a kept-alive connection between requests)."""

    def __init__(self, conn: socket.socket) -> None:
        self.task: asyncio.Future[None] | None = None
        self.conn: socket.socket | None = conn
        self.asked = False
        self.streaming = False  # a chunked answer under way
        self.idle_since: float | None = None

    def idle(self, now: float) -> bool:
        return self.idle_since is not None and now - self.idle_since >= IDLE_S

    def sent(self) -> None:
        """The program sent bytes (a request): not idle."""
        self.asked = True
        self.idle_since = None

    def answered(self, data: bytes, now: float) -> None:
        """The loopback's bytes reached the program: idle from ``now`` unless they are part of a
        chunked answer that has not ended (read from the response's head, which the loopback,
        not the program, writes; its end is the last chunk)."""
        if data.startswith(b"HTTP/1."):
            head = data.split(b"\r\n\r\n", 1)[0].lower()
            self.streaming = b"\r\ntransfer-encoding: chunked" in head
        if self.streaming and (data.endswith(_LAST_CHUNK) or data == _LAST_CHUNK[2:]):
            self.streaming = False
        self.idle_since = None if self.streaming else now


class _Forwarding:
    """One run's forwarded connections, newest last, and a place taken before each accept."""

    def __init__(self) -> None:
        self.pairs: list[_Pair] = []
        self.reserved = False

    @property
    def held(self) -> int:
        return len(self.pairs) + self.reserved

    def give_up(self, idle_only: bool) -> bool:
        """Close one connection: the longest idle (the runtime finds it closed before it writes
        and takes a new one), else, unless ``idle_only``, the newest that never carried a byte,
        else the newest. False when there is none."""
        now = asyncio.get_running_loop().time()
        idle = [p for p in self.pairs if p.idle(now)]
        pair = min(idle, key=lambda p: p.idle_since or 0.0) if idle else None
        if pair is None and not idle_only and self.pairs:
            # One not yet taken by its task may hold a request already: not counted as silent.
            silent = [p for p in self.pairs if p.conn is None and not p.asked]
            pair = silent[-1] if silent else self.pairs[-1]
        if pair is None:
            return False
        self.pairs.remove(pair)
        if pair.task is not None:
            pair.task.cancel()  # closed as its task unwinds
        return True


class _Places:
    """The forwarders of one event loop: how many connections they hold, run by run."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.runs: set[_Forwarding] = set()
        self._changed = asyncio.Event()

    def total(self) -> int:
        return sum(run.held for run in self.runs)

    def changed(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    async def take(self, run: _Forwarding) -> None:
        """Reserve a place for ``run``'s next connection, waiting while it holds its share."""
        while not self._take(run):
            # Also when nothing ends: one of its own connections may have become idle meanwhile.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), IDLE_S)

    def _take(self, run: _Forwarding) -> bool:
        share = max(1, self.limit // max(1, len(self.runs)))
        if run.held >= share:
            # At its share: its own idle connection makes room, else it waits for one to end.
            if not run.give_up(idle_only=True):
                return False
        elif self.total() >= self.limit:
            heaviest = max(self.runs, key=lambda r: r.held)
            if heaviest is run or not heaviest.give_up(idle_only=False):
                return False
        run.reserved = True
        return True


_places: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Places] = weakref.WeakKeyDictionary()


def _places_here() -> _Places:
    loop = asyncio.get_running_loop()
    places = _places.get(loop)
    if places is None:
        places = _places[loop] = _Places(forwarded_max_connections())
    return places


async def serve_endpoint(channel: socket.socket, port: int) -> None:
    """Serve the listener the launcher opened in the program's namespace (sent over ``channel``):
    every connection to it is forwarded to the loopback endpoint on ``port``, within the run's
    places. Runs until cancelled (the run ended), then closes what it forwards."""
    channel.setblocking(False)
    loop = asyncio.get_running_loop()
    try:
        _, fds, _, _ = await loop.run_in_executor(None, _recv_listener, channel)
    finally:
        channel.close()
    if not fds:
        return  # the launcher failed before: its status line says why
    listener = socket.socket(fileno=fds[0])
    listener.setblocking(False)
    places = _places_here()
    run = _Forwarding()
    places.runs.add(run)
    try:
        while True:
            await places.take(run)
            try:
                conn, _ = await loop.sock_accept(listener)
            except OSError as exc:
                run.reserved = False
                log.warning("forwarding a program's connection: accepting failed: %s", exc.strerror or exc)
                await asyncio.sleep(ACCEPT_RETRY_S)
                continue
            run.reserved = False
            pair = _Pair(conn)
            pair.task = asyncio.ensure_future(_forward(port, pair))
            run.pairs.append(pair)
            pair.task.add_done_callback(lambda _, pair=pair: _ended(places, run, pair))  # type: ignore[misc]
    finally:
        places.runs.discard(run)
        for held in run.pairs:
            if held.task is not None:
                held.task.cancel()
        listener.close()
        places.changed()


def _ended(places: _Places, run: _Forwarding, pair: _Pair) -> None:
    if pair.conn is not None:  # shed before its task ran: closed here, or the program waits on it
        pair.conn.close()
        pair.conn = None
    with contextlib.suppress(ValueError):  # a shed one left the list when it was chosen
        run.pairs.remove(pair)
    places.changed()


async def _forward(port: int, pair: _Pair) -> None:
    """Carry one connection both ways until either side ends (or the task is cancelled)."""
    assert pair.conn is not None
    conn, pair.conn = pair.conn, None
    writers: list[asyncio.StreamWriter] = []
    try:
        reader, writer = await asyncio.open_connection(sock=conn)
        writers.append(writer)
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", port)
        writers.append(up_writer)
        loop = asyncio.get_running_loop()

        def answered(data: bytes) -> None:
            pair.answered(data, loop.time())

        await asyncio.gather(_pipe(reader, up_writer, lambda _: pair.sent()), _pipe(up_reader, writer, answered))
    except OSError:
        for w in writers:
            w.close()
    except asyncio.CancelledError:
        for w in writers:
            w.transport.abort()  # shed, or its run ended: the descriptors come back at once
        raise
    finally:
        if not writers:
            conn.close()


async def _pipe(r: asyncio.StreamReader, w: asyncio.StreamWriter, seen: Callable[[bytes], None]) -> None:
    try:
        while data := await r.read(65536):
            seen(data)
            w.write(data)
            await w.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        with contextlib.suppress(Exception):
            w.close()


def _recv_listener(channel: socket.socket) -> tuple[bytes, list[int], int, Any]:
    channel.setblocking(True)
    channel.settimeout(30)
    try:
        return socket.recv_fds(channel, 1, 1)
    except (OSError, TimeoutError):
        return b"", [], 0, None
