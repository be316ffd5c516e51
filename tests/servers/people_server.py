"""A stdio MCP server whose results have optional objects, for nil dereferences in Go.

Tools:

    find_person {"name": str} -> Person {"name": str, "manager": Person|null}
        an unknown name is a tool error (isError); "Ada" has no manager
    list_people {} -> {"people": [find_person's result, …]}
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel

server = MCPServer("people")


class Person(BaseModel):
    name: str
    manager: Person | None = None  # recursive: a pointer in Go, nil when left out


class People(BaseModel):
    people: list[Person]


PEOPLE = {
    "Ada": Person(name="Ada"),
    "Grace": Person(name="Grace", manager=Person(name="Ada")),
}


@server.tool()
def find_person(name: str) -> Person:
    """Find a person and their manager, if they have one."""
    if name not in PEOPLE:
        raise ToolError(f"nobody called {name!r}")
    return PEOPLE[name]


@server.tool()
def list_people() -> People:
    """Everyone, in name order."""
    return People(people=[PEOPLE[n] for n in sorted(PEOPLE)])


if __name__ == "__main__":
    server.run()
