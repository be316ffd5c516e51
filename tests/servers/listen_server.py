"""A test MCP server whose ``subscriptions/listen`` refuses the first subscription.

Run it behind ``tests/era_proxy.py modern-only`` so the client speaks the 2026-07-28 era (where
tool-list changes come only on a listen stream). Tools: ``add {"name": N}`` adds a tool ``N``
and publishes the change. Each listen request appends a line to the file named by
``--listen-log``, so a test can see the client subscribe again.
"""

from __future__ import annotations

import argparse
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
from mcp.shared.exceptions import MCPError


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--listen-log", required=True)
    args = parser.parse_args()
    bus = InMemorySubscriptionBus()
    handler = ListenHandler(bus)
    names = ["add"]
    listens = 0

    async def list_tools(ctx: ServerRequestContext[Any], params: Any) -> types.ListToolsResult:
        schema = {"type": "object", "properties": {"name": {"type": "string"}}}
        return types.ListToolsResult(
            tools=[types.Tool(name=n, description=f"{n}.", input_schema=schema) for n in names]
        )

    async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name == "add":
            names.append(str((params.arguments or {}).get("name")))
            await bus.publish(ToolsListChanged())
        return types.CallToolResult(content=[types.TextContent(type="text", text=params.name)])

    async def listen(ctx: ServerRequestContext[Any], params: Any) -> Any:
        nonlocal listens
        listens += 1
        with open(args.listen_log, "a") as fh:
            fh.write("listen\n")
        if listens == 1:
            raise MCPError(code=types.INTERNAL_ERROR, message="listen refused once")
        return await handler(ctx, params)

    server: Server[Any] = Server(
        "listen-once", on_list_tools=list_tools, on_call_tool=call_tool, on_subscriptions_listen=listen
    )

    async def run() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options(NotificationOptions(tools_changed=True)))

    anyio.run(run)


if __name__ == "__main__":
    main()
