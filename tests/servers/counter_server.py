"""A stdio MCP server with a side effect, for replay and stateless-step tests.

Tools:

    increment {"by": N}   adds N to a counter kept in the file ``--state`` names and answers
                          {"count": total}; every call appends one line to that file's ``.log``
    read                  answers {"count": total} without changing it

The counter lives in a file so a test can count side effects across sessions and processes.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel, Field


class Count(BaseModel):
    count: int = Field(description="The counter after the call")


server = MCPServer("gocode-test-counter")
STATE = Path("counter.txt")


def _read() -> int:
    try:
        return int(STATE.read_text() or 0)
    except FileNotFoundError:
        return 0


@server.tool()
def increment(by: int) -> Count:
    """Add to the counter (a side effect)."""
    total = _read() + by
    STATE.write_text(str(total))
    with STATE.with_suffix(".log").open("a") as fh:
        fh.write(f"increment {by}\n")
    return Count(count=total)


@server.tool()
def read() -> Count:
    """Read the counter."""
    return Count(count=_read())


def main() -> None:
    global STATE
    parser = argparse.ArgumentParser()
    parser.add_argument("--state", required=True)
    STATE = Path(parser.parse_args().state)
    server.run("stdio")


if __name__ == "__main__":
    main()
