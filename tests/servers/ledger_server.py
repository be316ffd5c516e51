"""A stdio MCP server with a side effect, for one-tool calls (``gocode call``) from the shell.

Tools:

    record {"amount": int, "tags": [str], "urgent": bool, "note": str|null}
        appends the arguments as one JSON line to the file named by ``--ledger`` and returns them
    refuse {"reason": str}
        fails (isError) with the reason

So a test can tell whether a call was made (a line in the ledger), and how its arguments arrived.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field

server = MCPServer("ledger")
LEDGER: Path | None = None


class Entry(BaseModel):
    amount: int
    tags: list[str]
    urgent: bool
    note: str | None


@server.tool()
def record(
    amount: Annotated[int, Field(description="Cents", ge=0)],
    tags: list[str],
    urgent: bool = False,
    note: str | None = None,
) -> Entry:
    """Record an amount in the ledger."""
    entry = Entry(amount=amount, tags=tags, urgent=urgent, note=note)
    assert LEDGER is not None
    with LEDGER.open("a", encoding="utf-8") as f:
        f.write(entry.model_dump_json() + "\n")
    return entry


@server.tool()
def refuse(reason: str) -> str:
    """Always fails."""
    raise ToolError(f"refused: {reason}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--ledger", required=True)
    LEDGER = Path(parser.parse_args().ledger)
    server.run()
