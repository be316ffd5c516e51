"""Tools with no implementation on gocode's side: their calls are answered by someone else.

Two kinds of tools are declared without anything behind them:

- client-owned tools of the stateless step protocol (:mod:`gocode.run.step`): the caller runs
  them between passes and hands the results back;
- the servers of a recorded run being replayed (:mod:`gocode.run.recordstore`): the recording
  answers every call, and no server is started.

Both are a :class:`~gocode.mcp.provider.ToolProvider` like an MCP session or Python functions,
given to one run only (``Loopback.open_run(providers=…)``), so the program reaches them through
the same loopback endpoint and typed Go functions. The run's interceptor answers their calls;
a call that reaches :meth:`DeclaredTools.call` anyway has no one to answer it and fails.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types
from mcp.shared.dispatcher import ProgressFnT

from gocode.errors import ToolProviderError
from gocode.mcp.backchannel import Caller
from gocode.toolset import ServerTools


class DeclaredTools:
    """A server name and its tool declarations, with nothing behind them (see the module docstring)."""

    def __init__(self, tools: ServerTools, answered_by: str) -> None:
        self.tools = tools
        self.answered_by = answered_by  # "the caller", "the recording": for the error below

    @property
    def name(self) -> str:
        return self.tools.server

    @property
    def known_tools(self) -> ServerTools:
        return self.tools

    async def call(
        self,
        tool: str,
        arguments: dict[str, Any] | None,
        timeout: float,
        progress: ProgressFnT | None = None,
        caller: Caller | None = None,
    ) -> types.CallToolResult:
        raise ToolProviderError(
            f"{tool} (server {self.name}) has no implementation here: {self.answered_by} answers it"
        )
