"""Long-lived sessions to the configured MCP servers, for a controller that serves many calls.

``gocode serve`` and the Python API keep one :class:`Upstream` per server: it discovers the
server's tools over the session it keeps, passes regular (excluded) tool calls through, and
reports ``notifications/tools/list_changed`` (legacy era) or a ``subscriptions/listen`` event
(2026-07-28 era) so the controller can regenerate the Go declarations.

Each session lives in a task of its own, because anyio requires a client's context to be
entered and left in the same task. A session that dies (the server crashed, the network went
away) is reopened on the next call; a call already sent is never retried, since tools may have
side effects.
"""

from __future__ import annotations

import contextlib
import logging
import tempfile
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import mcp_types as types
from anyio.abc import TaskGroup
from mcp import Client
from mcp.shared.dispatcher import ProgressFnT
from mcp.shared.exceptions import MCPError

from gocode.config import ServerConfig
from gocode.discovery import connect, describe_server, failure, leaves, list_all_tools, sent_by_server, server_tools
from gocode.errors import DiscoveryError
from gocode.toolset import MODERN_PROTOCOL, ServerTools

log = logging.getLogger("gocode.upstream")

ChangeCallback = Callable[[str], Awaitable[None]]


class UpstreamError(Exception):
    """A passthrough call that could not reach its server (the server's own errors are results)."""


class Upstream:
    """One configured server behind one long-lived client session."""

    def __init__(self, name: str, server: ServerConfig, tg: TaskGroup, on_change: ChangeCallback) -> None:
        self.name = name
        self.server = server
        self._tg = tg
        self._on_change = on_change
        self._client: Client | None = None
        self._tools: ServerTools | None = None
        self._error: DiscoveryError | None = None
        self._stop = anyio.Event()
        self._lock = anyio.Lock()

    @property
    def tools(self) -> ServerTools:
        """The tools listed when the session opened, or at the last change."""
        if self._tools is None:
            raise self._error or DiscoveryError(f"{describe_server(self.name, self.server)} is not connected")
        return self._tools

    @property
    def connected(self) -> bool:
        """Whether the session is open now (a closed one reconnects on the next call)."""
        return self._client is not None

    async def start(self) -> None:
        """Connect and list tools; raises :class:`DiscoveryError` when the server fails."""
        async with self._lock:
            if self._client is not None:
                return
            self._error = None
            self._stop = anyio.Event()
            ready = anyio.Event()
            self._tg.start_soon(self._run, ready, self._stop)
            await ready.wait()
            if self._client is None:
                raise self._error or DiscoveryError(f"{describe_server(self.name, self.server)} closed at once")

    async def _run(self, ready: anyio.Event, stop: anyio.Event) -> None:
        client: Client | None = None
        with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errlog:
            errlog_for = errlog if self.server.type == "stdio" else None
            try:
                async with connect(self.name, self.server, errlog_for, message_handler=self._message) as (c, version):
                    with anyio.fail_after(self.server.timeout):
                        raw = await list_all_tools(c)
                    self._tools = server_tools(self.name, self.server, raw, version, c.server_info)
                    self._client = client = c
                    ready.set()
                    async with anyio.create_task_group() as tg:
                        if version == MODERN_PROTOCOL and _advertises_list_changed(c):
                            tg.start_soon(self._listen, c)
                        await stop.wait()
                        tg.cancel_scope.cancel()
            except (Exception, BaseExceptionGroup) as exc:
                self._error = failure(self.name, self.server, exc, errlog_for)
                if ready.is_set():
                    log.warning("%s", self._error)
            finally:
                if self._client is client:  # not a newer session started after stop()
                    self._client = None
                ready.set()

    async def _message(self, message: types.ServerNotification | Exception) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self._tg.start_soon(self.relist)

    async def _listen(self, client: Client) -> None:
        # The 2026-07-28 era has no spontaneous notifications: changes come on a listen stream.
        with contextlib.suppress(Exception):
            async with client.listen(tools_list_changed=True) as sub:
                async for _ in sub:
                    self._tg.start_soon(self.relist)

    async def relist(self) -> None:
        """List the tools again (after a change notification) and tell the controller."""
        client = self._client
        if client is None or self._tools is None:
            return
        try:
            with anyio.fail_after(self.server.timeout):
                raw = await list_all_tools(client)
        except (Exception, BaseExceptionGroup) as exc:
            log.warning("re-listing the tools of %s failed: %s", describe_server(self.name, self.server), exc)
            return
        new = server_tools(self.name, self.server, raw, self._tools.protocol_version, client.server_info)
        if new != self._tools:
            self._tools = new
            await self._on_change(self.name)

    async def call(
        self,
        tool: str,
        arguments: dict[str, Any] | None,
        timeout: float,
        progress: ProgressFnT | None = None,
    ) -> types.CallToolResult:
        """Call a tool as it is; the server's protocol errors are raised as :class:`MCPError`.

        ``progress`` receives the server's progress notifications for this call.
        """
        if self._client is None:
            try:
                await self.start()
            except DiscoveryError as exc:
                raise UpstreamError(str(exc)) from None
        client = self._client
        assert client is not None
        try:
            with anyio.fail_after(timeout):
                return await client.call_tool(tool, arguments, progress_callback=progress)
        except MCPError as exc:
            if sent_by_server(exc):
                raise
            self.stop()  # the server went away: the next call starts a new session
            raise UpstreamError(
                f"{describe_server(self.name, self.server)}: the connection closed during {tool!r} "
                "(the server exited?); it is reconnected on the next call"
            ) from None
        except TimeoutError:
            raise UpstreamError(
                f"{describe_server(self.name, self.server)}: tool {tool!r} did not answer within {timeout:g} s"
            ) from None
        except (Exception, BaseExceptionGroup) as exc:
            if all(sent_by_server(e) for e in leaves(exc)):
                raise next(iter(leaves(exc))) from None
            self.stop()  # the session is unusable; the next call reconnects
            raise UpstreamError(f"{describe_server(self.name, self.server)}: calling {tool!r} failed: {exc}") from None

    def stop(self) -> None:
        """Close the session (in its own task); the next call opens a new one."""
        self._client = None
        self._stop.set()


def _advertises_list_changed(client: Client) -> bool:
    with contextlib.suppress(Exception):
        caps = client.server_capabilities
        return bool(caps.tools and caps.tools.list_changed)
    return False
