"""A tool the client calls as itself: a server's, or a Python tool, passed through unchanged.

Every :class:`~gocode.mcp.provider.ToolProvider` answers the same way (an MCP session, the
toolbox's Python tools, declared tools), so one handler serves them all, one per tool.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types

from gocode.errors import ToolProviderError
from gocode.mcp.provider import ToolProvider
from gocode.mcp.tasksupport import as_plain_tool
from gocode.results import error_result
from gocode.routes.handler import Answer, CallContext, Kind
from gocode.toolset import ToolInfo


class ProviderTool:
    """One provider's tool under the name the client sees; its result comes back unchanged.
    A protocol error the server sent (:class:`~mcp.shared.exceptions.MCPError`) is raised."""

    kind: Kind = "passthrough"
    runs_code = False

    def __init__(self, provider: ToolProvider, tool: ToolInfo, timeout: float) -> None:
        self.provider, self.tool, self.timeout = provider, tool, timeout

    async def handle(self, arguments: dict[str, Any] | None, ctx: CallContext) -> Answer:
        try:
            result = await self.provider.call(
                self.tool.name, arguments, self.timeout, ctx.reporter.progress, caller=ctx.caller
            )
            return Answer(result)
        except ToolProviderError as exc:
            return Answer(error_result(str(exc)))


def passthrough_tool(name: str, info: ToolInfo) -> types.Tool:
    """The server's own tool definition under the name the client sees (a task-only tool as a
    plain one: gocode runs the task, :mod:`gocode.mcp.tasks`)."""
    raw = as_plain_tool(info.definition) or info.as_json()
    raw["name"] = name
    raw.setdefault("inputSchema", {"type": "object"})
    try:
        return types.Tool.model_validate(raw)
    except ValueError:  # fields this SDK cannot model: keep the ones that matter
        return types.Tool.model_validate(info.as_json() | {"name": name})
