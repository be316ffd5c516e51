"""Result types inferred from what tools answered: which tools may be given one, and the tool
set with them given. Decided from each tool's own :class:`~gocode.toolset.ToolInfo`, so the
stages after this one receive a tool set already typed."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from gocode.schema.media import returns_media
from gocode.toolset import ServerTools, ToolInfo, ToolSet


def typeable(info: ToolInfo) -> bool:
    """Whether a tool's result could be typed by what it looked like: it declares no output
    schema and is not expected to answer with images or audio."""
    return info.output_schema is None and not returns_media(info)


def typeable_tools(toolset: ToolSet) -> frozenset[tuple[str, str]]:
    """The (server, tool) of each tool in ``toolset`` that :func:`typeable` admits."""
    return frozenset((t.server, t.name) for s in toolset.servers for t in s.tools if typeable(t))


def with_inferred_outputs(toolset: ToolSet, inferred: dict[tuple[str, str], dict[str, Any]]) -> ToolSet:
    """``toolset`` with each typeable tool in ``inferred`` given that output schema, marked as
    inferred (pure; a declared output schema always wins)."""
    use = {k: v for k, v in inferred.items() if k in typeable_tools(toolset)}
    if not use:
        return toolset
    return ToolSet(tuple(_typed(s, use) for s in toolset.servers))


def _typed(server: ServerTools, use: dict[tuple[str, str], dict[str, Any]]) -> ServerTools:
    tools = tuple(
        replace(t, output_schema=use[(t.server, t.name)], output_inferred=True) if (t.server, t.name) in use else t
        for t in server.tools
    )
    return replace(server, tools=tools)
