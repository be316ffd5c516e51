"""A notes server whose tools carry MCP annotations, for approvals and large results.

``read_note`` is read-only (``readOnlyHint``), ``delete_note`` destructive
(``destructiveHint``), ``add_note`` unannotated; ``big_text`` returns a text of the size
asked for (a line pattern with a marker at both ends), for results larger than the output cap.
Notes live in memory, one process per test.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

server = MCPServer("notes")
NOTES: dict[str, str] = {"hello": "Hello, world."}


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def read_note(name: str) -> str:
    """Read a note."""
    return NOTES.get(name, "")


@server.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=True))
def delete_note(name: str) -> str:
    """Delete a note."""
    NOTES.pop(name, None)
    return f"deleted {name}"


@server.tool()
def add_note(name: str, text: str) -> str:
    """Add a note."""
    NOTES[name] = text
    return f"added {name}"


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def big_text(size: int) -> str:
    """A text of `size` bytes: BEGIN, numbered lines, END."""
    body = "".join(f"line {i:08d}\n" for i in range(size // 14 + 1))
    return ("BEGIN\n" + body)[: max(size - 4, 0)] + "END\n"


if __name__ == "__main__":
    server.run("stdio")
