"""Adapters for agent frameworks: a :class:`~gocode.Toolbox`'s tools in each framework's own shape.

Each adapter is a thin layer over the same toolbox (its :meth:`~gocode.Toolbox.tools` and
:meth:`~gocode.Toolbox.call`), so ``execute_go_code``, ``search_go_tools`` (when the budget
offers it) and the tools excluded from code mode behave exactly as under ``gocode serve``:

==============================================  ===============================  ===========================
module                                          gives                            extra
==============================================  ===============================  ===========================
:mod:`gocode.integrations.openai_agents`        ``FunctionTool`` list            ``gocode[openai-agents]``
:mod:`gocode.integrations.langchain`            ``BaseTool`` list / toolkit      ``gocode[langchain]``
:mod:`gocode.integrations.pydantic_ai`          a toolset                        ``gocode[pydantic-ai]``
==============================================  ===============================  ===========================

Each module imports its framework when it is imported itself (never by ``import gocode``), and
says which extra to install when the framework is missing.

Every adapter takes a :class:`~gocode.Toolbox` (entered in the event loop the agent runs in) or
a :class:`~gocode.SyncToolbox` (its own loop on a thread: for a framework's blocking entry
points, such as ``Runner.run_sync`` or ``Agent.run_sync``, which start a loop of their own).
"""

from __future__ import annotations

from typing import TypeAlias

import anyio.to_thread
import mcp_types as types

from gocode.blocking import SyncToolbox
from gocode.results import ToolResult
from gocode.tool_formats import describe_part
from gocode.toolbox import Toolbox

AnyToolbox: TypeAlias = Toolbox | SyncToolbox


def missing_framework(framework: str, extra: str, exc: ImportError) -> ImportError:
    """The error an adapter raises when its framework is not installed: it names the extra."""
    return ImportError(
        f"gocode's {framework} adapter needs {framework}: pip install 'gocode[{extra}]' ({exc})",
        name=exc.name,
    )


def offered_tools(toolbox: AnyToolbox) -> list[types.Tool]:
    """The tools the toolbox offers its model now (they change when a server's tools do)."""
    return toolbox.tools()


def input_schema(tool: types.Tool) -> dict[str, object]:
    """A tool's input schema as an object schema every framework accepts (``properties`` always set)."""
    schema = dict(tool.input_schema or {})
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    return schema


async def call(toolbox: AnyToolbox, name: str, arguments: dict[str, object] | str | None) -> ToolResult:
    """One tool call from an async framework; a :class:`SyncToolbox` is called from a worker thread."""
    if isinstance(toolbox, SyncToolbox):
        return await anyio.to_thread.run_sync(toolbox.call, name, arguments)
    return await toolbox.call(name, arguments)


def call_blocking(toolbox: AnyToolbox, name: str, arguments: dict[str, object] | str | None) -> ToolResult:
    """One tool call from a framework's synchronous path: only a :class:`SyncToolbox` can answer it."""
    if isinstance(toolbox, SyncToolbox):
        return toolbox.call(name, arguments)
    raise TypeError(
        f"{name} was called synchronously, but its Toolbox runs in an event loop: call the tool "
        "asynchronously (ainvoke, arun), or build the tools from a SyncToolbox"
    )


def parts(result: ToolResult) -> list[str | types.ImageContent] | None:
    """A result with images as its parts, texts described as everywhere else; ``None`` without images.

    Excluded tools that return images are offered as regular tools so the model sees the image
    (the frameworks accept images in a tool result); everything else is the result's text.
    """
    if not any(isinstance(p, types.ImageContent) for p in result.result.content):
        return None
    return [p if isinstance(p, types.ImageContent) else describe_part(p) for p in result.result.content]
