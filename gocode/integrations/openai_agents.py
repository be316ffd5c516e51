"""gocode for the OpenAI Agents SDK: the toolbox's tools as ``FunctionTool`` objects.

::

    from agents import Agent, Runner
    from gocode import Toolbox
    from gocode.integrations.openai_agents import function_tools

    async with Toolbox("gocode.yaml", model="gpt-5") as toolbox:
        agent = Agent(name="assistant", tools=function_tools(toolbox))
        print((await Runner.run(agent, "What's the weather where I am?")).final_output)

``execute_go_code``, ``search_go_tools`` (when offered) and every tool excluded from code mode
become one ``FunctionTool`` each, with the toolbox's descriptions and input schemas. A result
is its text (images stay images, as ``ToolOutputImage`` parts). A failed
call (a compile error, a tool error, a timeout) is returned to the model as its error text, as
the SDK does for its own MCP tools, so the model can fix its code; it never fails the run.

The list is what the toolbox offers when it is made: after a server's tools change
(:meth:`~gocode.Toolbox.on_tools_changed`), make it again. Install with
``pip install 'gocode[openai-agents]'``.
"""

from __future__ import annotations

from typing import Any

from gocode.integrations import AnyToolbox, call, input_schema, missing_framework, offered_tools, parts
from gocode.results import ToolResult

try:
    from agents import FunctionTool, RunContextWrapper, ToolOutputImage, ToolOutputText
except ImportError as exc:  # pragma: no cover - exercised by the missing-extra test
    raise missing_framework("the OpenAI Agents SDK", "openai-agents", exc) from exc

__all__ = ["function_tools"]


def function_tools(toolbox: AnyToolbox) -> list[FunctionTool]:
    """One ``FunctionTool`` per tool the toolbox offers its model (an ``Agent``'s ``tools``)."""
    return [
        _function_tool(toolbox, tool.name, tool.description or "", input_schema(tool))
        for tool in offered_tools(toolbox)
    ]


def _function_tool(toolbox: AnyToolbox, name: str, description: str, schema: dict[str, Any]) -> FunctionTool:
    async def invoke(_ctx: RunContextWrapper[Any], arguments: str) -> str | list[ToolOutputText | ToolOutputImage]:
        # The toolbox parses the JSON text itself and answers bad JSON with an error the model reads.
        return _output(await call(toolbox, name, arguments))

    return FunctionTool(
        name=name,
        description=description,
        params_json_schema=schema,
        on_invoke_tool=invoke,
        # As the SDK's own MCP tools: strict mode would make every optional argument required.
        strict_json_schema=False,
    )


def _output(result: ToolResult) -> str | list[ToolOutputText | ToolOutputImage]:
    """The result's text; with images, its parts (the images as data URLs)."""
    found = parts(result)
    if found is None:
        return result.text
    return [
        ToolOutputText(text=p)
        if isinstance(p, str)
        else ToolOutputImage(image_url=f"data:{p.mime_type};base64,{p.data}")
        for p in found
    ]
