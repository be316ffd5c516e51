"""What answers a program's tool calls: one :class:`ToolProvider` per server name.

A program reaches every tool the same way, as a server name and a tool name sent to the
controller's loopback endpoint (:mod:`gocode.mcp.loopback`). Behind each server name is a
provider: an MCP server's long-lived session (:class:`gocode.mcp.upstream.Upstream`), the
Python callables given to a toolbox (:class:`gocode.tools.python.PythonTools`), or any other
kind of tool that can say which tools it has and answer a call. The endpoint, the toolbox's
passthrough of excluded tools and the records of a run treat them alike, so a new kind of tool
needs only this interface (and a :class:`~gocode.toolset.ServerTools` listing for the Go
declarations, the model view and search).

The protocol lives here, below the stages that implement it, because the loopback endpoint
(this subpackage) routes to it and must not import the later ``gocode.tools`` stage.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import mcp_types as types
from mcp.shared.dispatcher import ProgressFnT

from gocode.mcp.backchannel import Caller
from gocode.toolset import ServerTools


@runtime_checkable
class ToolProvider(Protocol):
    """Something that answers ``tools/call`` for one server name.

    ``known_tools`` is what the provider offers (None while it has never listed any, like a
    server that has not answered yet). :meth:`call` returns the tool's result, ``isError`` for
    the tool's own failures; it raises :class:`ToolProviderError` when the call could not be
    made, and may raise :class:`mcp.shared.exceptions.MCPError` for a protocol error the
    provider's server sent (an unknown tool, invalid parameters). It must return within
    ``timeout`` seconds; ``progress`` receives progress notifications for the call, if any, and
    ``caller`` stands for the client that made it (an MCP server's log messages, sampling and
    elicitation requests during the call reach it: :mod:`gocode.mcp.backchannel`).
    """

    @property
    def name(self) -> str: ...

    @property
    def known_tools(self) -> ServerTools | None: ...

    async def call(
        self,
        tool: str,
        arguments: dict[str, Any] | None,
        timeout: float,
        progress: ProgressFnT | None = None,
        caller: Caller | None = None,
    ) -> types.CallToolResult: ...
