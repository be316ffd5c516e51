"""A stdio MCP server that reports what its client gave it, for the environment policy and
``clientInfo`` tests.

Tools:

    environment     answers {"env": {...}}: this process's environment
    client          answers {"name": ..., "version": ...}: the clientInfo of its initialize
"""

from __future__ import annotations

import os

from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel, Field

server = MCPServer("gocode-test-env")


class Environment(BaseModel):
    env: dict[str, str] = Field(description="The server process's environment")


class ClientInfo(BaseModel):
    name: str
    version: str


@server.tool()
def environment() -> Environment:
    """This server's environment."""
    return Environment(env=dict(os.environ))


@server.tool()
def client(ctx: Context) -> ClientInfo:
    """The client's name and version, as it introduced itself."""
    params = ctx.session.client_params
    info = params.client_info if params is not None else None
    return ClientInfo(name=info.name if info else "", version=info.version if info else "")


if __name__ == "__main__":
    server.run()
