"""How many MCP sessions one HTTP client may hold open, and for how long an idle one lives.

A handshake-era client opens a session with ``initialize`` and may leave it open without ever
closing it; the MCP SDK keeps up to 10,000 of them for 30 minutes each, so one client could
hold them all and every other client got 503. :class:`SessionGuard` counts sessions per client
(the address uvicorn reports: the peer, or the ``X-Forwarded-For`` of a proxy the operator
lists in ``FORWARDED_ALLOW_IPS``; with that unset no header is trusted) and refuses a client's next ``initialize`` with 429 once it has
``per_client`` open; the SDK is given the total and the idle expiry. A session counts from the
answer that opened it until its client deletes it, it answers 404 (expired), or it has been
idle (no request under way) for ``idle_s``, as the SDK's own expiry. See docs/operations.md.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any

Scope = MutableMapping[str, Any]
ASGIApp = Callable[[Scope, Any, Any], Awaitable[None]]

DEFAULT_MAX_SESSIONS = 1000
DEFAULT_MAX_SESSIONS_PER_CLIENT = 32
DEFAULT_SESSION_IDLE_S = 600.0
_SESSION_HEADER = b"mcp-session-id"


@dataclass(frozen=True)
class SessionLimits:
    """``--max-sessions``, ``--max-sessions-per-client``, ``--session-idle-timeout``."""

    total: int = DEFAULT_MAX_SESSIONS
    per_client: int = DEFAULT_MAX_SESSIONS_PER_CLIENT
    idle_s: float = DEFAULT_SESSION_IDLE_S


@dataclass
class _Session:
    client: str
    last_active: float = field(default_factory=time.monotonic)
    in_flight: int = 0


def client_key(scope: Scope) -> str:
    client = scope.get("client")
    return str(client[0]) if client else "unknown"


class SessionGuard:
    """ASGI middleware in front of the SDK's streamable-HTTP app: per-client session caps.
    One event loop; shared by every request of one listener."""

    def __init__(self, app: ASGIApp, limits: SessionLimits) -> None:
        self.app, self.limits = app, limits
        self._sessions: dict[str, _Session] = {}
        self._opening: dict[str, int] = {}  # per client: requests without a session under way

    def open_for(self, client: str) -> int:
        """Sessions ``client`` holds (or is opening) now."""
        self._expire()
        return sum(1 for s in self._sessions.values() if s.client == client) + self._opening.get(client, 0)

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        sid = next((v.decode("latin-1") for k, v in scope.get("headers", ()) if k.lower() == _SESSION_HEADER), None)
        if sid is None:
            await self._without_session(scope, receive, send)
        else:
            await self._within(sid, scope, receive, send)

    async def _without_session(self, scope: Scope, receive: Any, send: Any) -> None:
        client = client_key(scope)
        held = self.open_for(client)
        if scope.get("method") == "POST" and held >= self.limits.per_client and not _stateless(scope):
            await _too_many(send, held, self.limits)
            return
        self._opening[client] = self._opening.get(client, 0) + 1
        opened: list[str] = []

        async def watch(message: Any) -> None:
            if message.get("type") == "http.response.start" and message.get("status", 500) < 400:
                opened.extend(
                    v.decode("latin-1") for k, v in message.get("headers", ()) if k.lower() == _SESSION_HEADER
                )
            await send(message)

        try:
            await self.app(scope, receive, watch)
        finally:
            self._opening[client] -= 1
            if not self._opening[client]:
                del self._opening[client]
            for sid in opened:  # the answer opened one (an initialize); stateless requests open none
                self._sessions[sid] = _Session(client)

    async def _within(self, sid: str, scope: Scope, receive: Any, send: Any) -> None:
        session = self._sessions.get(sid)
        if session is not None:
            session.in_flight += 1
        status: list[int] = []

        async def watch(message: Any) -> None:
            if message.get("type") == "http.response.start":
                status.append(message.get("status", 500))
            await send(message)

        try:
            await self.app(scope, receive, watch)
        finally:
            if session is not None:
                session.in_flight -= 1
                session.last_active = time.monotonic()
                ended = status and (status[0] == 404 or (scope.get("method") == "DELETE" and status[0] < 300))
                if ended:
                    self._sessions.pop(sid, None)

    def _expire(self) -> None:
        cutoff = time.monotonic() - self.limits.idle_s
        for sid in [k for k, s in self._sessions.items() if not s.in_flight and s.last_active < cutoff]:
            del self._sessions[sid]


def _stateless(scope: Scope) -> bool:
    """A request of the stateless era (its version header says so), which opens no session."""
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS  # not at the top: `serve --help` reads this module

    version = next((v for k, v in scope.get("headers", ()) if k.lower() == b"mcp-protocol-version"), b"")
    return version.decode("latin-1").strip() in MODERN_PROTOCOL_VERSIONS


async def _too_many(send: Any, held: int, limits: SessionLimits) -> None:
    message = (
        f"this client has {held} MCP sessions open, the most one client may hold "
        f"(--max-sessions-per-client {limits.per_client}): close one (DELETE) or wait for one to expire "
        f"({limits.idle_s:.0f} s without a request)"
    )
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": message}}).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"retry-after", str(int(limits.idle_s)).encode()),
    ]
    await send({"type": "http.response.start", "status": 429, "headers": headers})
    await send({"type": "http.response.body", "body": body})
