"""A stdio MCP server whose tool answers JSON as text, with no output schema, in a shape a test
can change between calls: for result types inferred from what a tool returned.

Tools:

    repo_stats {"path": str}   answers {"repo": path, "open": 3, "commits": [{"hash": …, "files": 2}]}
                               as text; the file ``--shape`` names says how: ``extra`` adds a
                               "labels" list, ``changed`` makes "open" a string ("many")
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from mcp.server.mcpserver import MCPServer

server = MCPServer("gocode-test-report")
SHAPE = Path("shape.txt")


@server.tool(structured_output=False)
def repo_stats(path: str) -> str:
    """Statistics of a repository: open issues and recent commits."""
    try:
        shape = SHAPE.read_text().strip()
    except FileNotFoundError:
        shape = ""
    doc: dict[str, object] = {
        "repo": path,
        "open": "many" if shape == "changed" else 3,
        "commits": [{"hash": "3f1c2a9e", "files": 2}, {"hash": "9b8a7c6d", "files": 5}],
    }
    if shape == "extra":
        doc["labels"] = ["bug", "docs"]
    return json.dumps(doc)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--shape", default="shape.txt", help="file that says which shape to answer in")
    SHAPE = Path(parser.parse_args().shape)
    server.run("stdio")
