"""Connection limits of gocode's HTTP listeners, enforced before any request reaches an app.

uvicorn's h11 protocol waits for a request's headers and body for as long as a client keeps
its connection open (its keep-alive timer starts only after a response), and accepts until
the process runs out of descriptors; then the accept loop fails and logs on every attempt.
So a client that half-sends thousands of requests holds every descriptor, before any token
is looked at. :func:`uvicorn_options` gives both listeners (``gocode serve``'s HTTP port and
the loopback endpoint programs call) a protocol that bounds each stage of a connection:

- **headers**: a connection waiting for a request (just opened, or after a response) must
  deliver the request line and headers within ``header_timeout`` (total, not per byte);
- **body**: once the headers are in, the whole body within ``body_timeout`` (time the app
  leaves it unread, its reading paused, does not count);
- **count**: at most ``max_connections`` open; a new one beyond that closes the connection
  that has waited longest for its next request (half-open, or idle between requests) once
  it has waited ``FRESH_S``, so clients that send promptly keep being served; failing that,
  the listener's ``shed`` (the loopback's: a request parked unread at the gate of the run
  holding the most, when that is more than its share) gives one up, then the connection
  opened longest ago is closed; when every connection has a request under way, the new one
  gets 503 and is closed.

A connection running a request (an app answering, a program running) has no deadline here:
that is bounded by the call's own timeout. The limits hold per listener. Thread-bound: one
event loop.
"""

from __future__ import annotations

import contextlib
import json
import logging
import resource
import socket
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gocode.mcp import logs

if TYPE_CHECKING:
    import asyncio

    from uvicorn.protocols.http.h11_impl import H11Protocol

DEFAULT_HEADER_TIMEOUT_S = 10.0
DEFAULT_BODY_TIMEOUT_S = 60.0
DEFAULT_KEEP_ALIVE_S = 5
# A connection waiting this long for its request's headers is idle or stalled, not one whose
# client is still sending them (that takes well under a millisecond on loopback).
FRESH_S = 1.0
MAX_CONNECTIONS_CEILING = 1024
MAX_HEADER_BYTES = 16 * 1024  # request line and headers; h11 answers 400 beyond it
ACCEPT_BATCH = 128
# A program's connection forwarded out of its network namespace (the netns sandbox tier) holds
# three of the controller's descriptors: the one accepted from the program, the one to the
# loopback, and the loopback's side of it.
DESCRIPTORS_PER_FORWARDED = 3
# Gives up one connection whose request is held unread, from a client holding more than its
# share of the cap it is given; True if it did (see protocol_class).
Shed = Callable[[int], bool]


def default_max_connections() -> int:
    """1024, or a quarter of the open-files limit when that is lower: the rest stays for MCP
    servers, programs and the other listener."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return MAX_CONNECTIONS_CEILING
    return max(16, min(MAX_CONNECTIONS_CEILING, soft // 4))


def forwarded_max_connections() -> int:
    """How many program connections the netns tier's forwarders may hold at once, all runs
    together: the descriptors they cost stay within what one listener's cap allows."""
    return max(16, default_max_connections() // DESCRIPTORS_PER_FORWARDED)


@dataclass(frozen=True)
class ConnectionLimits:
    """What one listener allows a connection (see the module docstring)."""

    header_timeout: float = DEFAULT_HEADER_TIMEOUT_S
    body_timeout: float = DEFAULT_BODY_TIMEOUT_S
    max_connections: int | None = None  # None: default_max_connections()

    def connections(self) -> int:
        return self.max_connections if self.max_connections is not None else default_max_connections()


_BUSY_BODY = json.dumps(
    {"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": "too many open connections; retry shortly"}}
).encode()
_BUSY = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 1\r\n"
    b"connection: close\r\ncontent-length: " + str(len(_BUSY_BODY)).encode() + b"\r\n\r\n" + _BUSY_BODY
)


def protocol_class(limits: ConnectionLimits, shed: Shed | None = None) -> type[H11Protocol]:
    """An h11 protocol class enforcing ``limits``; one class per listener (it keeps the
    listener's waiting connections). ``shed(cap)``, called when the cap is reached, gives up
    one connection whose request is held unread, from a client holding more than its share of
    ``cap``, True if it did."""
    # Here, not at the top: `gocode serve --help` reads this module's defaults.
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    cap = limits.connections()
    # Connections waiting for their next request's headers, oldest first (dicts keep order).
    waiting: dict[_Limited, None] = {}

    class _Limited(H11Protocol):
        _deadline: asyncio.TimerHandle | None = None
        _stage: str = "headers"
        _since = 0.0  # when it began waiting for its next request

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            super().connection_made(transport)  # type: ignore[arg-type]
            no_delay(transport)
            if len(self.connections) > cap and not self._make_room():
                # Every connection has a request under way: refuse this one, saying why.
                self.connections.discard(self)
                transport.write(_BUSY)  # type: ignore[attr-defined]
                transport.close()
                return
            self._await_request()

        def _make_room(self) -> bool:
            """Close one connection for this one: one idle or half-open past FRESH_S, else a
            request held unread by a client over its share (``shed``), else the connection
            opened longest ago (a burst of one client's new connections would otherwise close
            each other's, their requests surely on their way)."""
            oldest = next(iter(waiting), None)
            if oldest is not None and self.loop.time() - oldest._since >= FRESH_S:
                oldest._drop()
            elif shed is not None and shed(cap):
                pass
            elif oldest is not None:
                oldest._drop()
            else:
                return False
            return True

        def connection_lost(self, exc: Exception | None) -> None:
            self._settle()
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            state = self.conn.their_state
            if state is h11.SEND_BODY and self._stage == "headers":
                self._arm("body", limits.body_timeout)
            elif state is not h11.IDLE and state is not h11.SEND_BODY:
                self._settle()  # the request is in (or the connection is ending): the app's time now

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
                self._await_request()

        def _await_request(self) -> None:
            self._since = self.loop.time()
            waiting[self] = None
            self._arm("headers", limits.header_timeout)

        def _arm(self, stage: str, seconds: float) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
            if stage != "headers":
                waiting.pop(self, None)
            self._stage = stage
            self._deadline = self.loop.call_later(seconds, self._expired)

        def _settle(self) -> None:
            waiting.pop(self, None)
            self._stage = "app"
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _expired(self) -> None:
            if self._stage == "body" and self.flow.read_paused:
                # The app has not read what came (a request waiting for its turn): not the
                # client's delay, so its time starts again.
                self._arm("body", limits.body_timeout)
                return
            self._drop()

        def _drop(self) -> None:
            """Close a connection that took too long (or made room): no response, nothing logged."""
            self._settle()
            if not self.transport.is_closing():
                self.transport.abort()

    return _Limited


class _AcceptErrors(logging.Filter):
    """Only asyncio's accept-loop failures (out of descriptors), a few a minute per listener."""

    def __init__(self) -> None:
        super().__init__()
        self.flood = logs.FloodFilter()

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(ACCEPT_ERROR) or self.flood.filter(record)


ACCEPT_ERROR = "socket.accept() out of system resource"


def limit_accept_errors() -> None:
    """asyncio logs an accept loop out of descriptors (with its traceback) on every retry,
    about once a second per listener, for as long as it lasts: at most a few a minute get
    through, then a count. Once per process; other asyncio messages pass untouched."""
    logger = logging.getLogger("asyncio")
    if not any(isinstance(f, _AcceptErrors) for f in logger.filters):
        logger.addFilter(_AcceptErrors())


def no_delay(transport: asyncio.BaseTransport) -> None:
    """Send each response at once (TCP_NODELAY). asyncio sets it only on connections of a
    listening socket made with ``proto=IPPROTO_TCP``; ours are made with 0, and uvicorn writes
    a response's head and body separately: the body then waited for the client's delayed ACK,
    40 ms on Linux, on every request of a kept-alive connection (a program's every tool call)."""
    sock = transport.get_extra_info("socket")
    if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
        with contextlib.suppress(OSError):  # the client may be gone already
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def uvicorn_options(limits: ConnectionLimits, shed: Shed | None = None) -> dict[str, Any]:
    """Keyword arguments for ``uvicorn.Config`` that enforce ``limits`` (``shed``: see
    :func:`protocol_class`)."""
    return {
        "http": protocol_class(limits, shed),
        "timeout_keep_alive": DEFAULT_KEEP_ALIVE_S,
        "h11_max_incomplete_event_size": MAX_HEADER_BYTES,
        # Also how many connections asyncio accepts in one go, before a dropped one's descriptor
        # is closed: kept small, so a burst cannot overshoot the cap into the open-files limit.
        "backlog": ACCEPT_BATCH,
    }
