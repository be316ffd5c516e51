"""A test MCP server whose tool list changes at run time.

``add_tool(name)`` registers a tool ``name`` (it answers ``"hello from <name>"``) and sends
``notifications/tools/list_changed``. Added tools are kept in the JSON file named by
``DYNAMIC_STATE`` so that every instance of the server (a Go program starts its own) offers
them too. ``picture`` returns an image, for passthrough tests.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from mcp.server.mcpserver import Context, MCPServer

STATE = Path(os.environ.get("DYNAMIC_STATE", "/nonexistent/dynamic-state.json"))

server = MCPServer("dynamic")


def _register(name: str) -> None:
    def hello() -> str:
        return f"hello from {name}"

    server.add_tool(hello, name=name, description=f"Says hello from {name}.")


def _saved() -> list[str]:
    try:
        return list(json.loads(STATE.read_text()))
    except (OSError, ValueError):
        return []


@server.tool()
async def add_tool(name: str, ctx: Context) -> str:
    """Add a tool called `name` and tell clients the tool list changed."""
    names = _saved()
    if name not in names:
        names.append(name)
        STATE.write_text(json.dumps(names))
        _register(name)
    await ctx.request_context.session.send_tool_list_changed()
    return f"added {name}"


for _name in _saved():
    _register(_name)

if __name__ == "__main__":
    server.run("stdio")
