"""gocode for pydantic-ai: the toolbox's tools as a toolset.

::

    from pydantic_ai import Agent
    from gocode import Toolbox
    from gocode.integrations.pydantic_ai import GocodeToolset

    async with Toolbox("gocode.yaml", model="gpt-5") as toolbox:
        agent = Agent("openai:gpt-5", toolsets=[GocodeToolset(toolbox)])
        print((await agent.run("What's the weather where I am?")).output)

``execute_go_code``, ``search_go_tools`` (when offered) and every tool excluded from code mode
are the toolset's tools, with the toolbox's descriptions and input schemas; a result is its
text (images stay images, as ``BinaryContent``). The list is read
at every step of a run, so tools a server adds later appear on their own. A failed call (a
compile error, a tool error, a timeout) is raised as ``ToolFailed``: the model sees the error
text as a failed tool result and can act on it, and no retry budget is spent.

Install with ``pip install 'gocode[pydantic-ai]'``.
"""

from __future__ import annotations

import base64
from typing import Any

import pydantic_core

from gocode.integrations import AnyToolbox, call, input_schema, missing_framework, offered_tools, parts

try:
    from pydantic_ai import BinaryContent, RunContext, ToolFailed
    from pydantic_ai.tools import ToolDefinition
    from pydantic_ai.toolsets import AbstractToolset, ToolsetTool
except ImportError as exc:  # pragma: no cover - exercised by the missing-extra test
    raise missing_framework("pydantic-ai", "pydantic-ai", exc) from exc

__all__ = ["GocodeToolset"]

# The arguments go to the toolbox as the model sent them: the toolbox and the servers check
# them against the tools' own schemas (as pydantic-ai's MCP toolset does).
_ANY_OBJECT = pydantic_core.SchemaValidator(
    pydantic_core.core_schema.dict_schema(
        pydantic_core.core_schema.str_schema(), pydantic_core.core_schema.any_schema()
    )
)


class GocodeToolset(AbstractToolset[Any]):
    """A gocode toolbox's tools for a pydantic-ai ``Agent`` (``toolsets=[GocodeToolset(toolbox)]``).

    ``id`` names the toolset among an agent's toolsets (durable execution needs one);
    ``max_retries`` bounds retries after arguments that are not a JSON object (default: the
    agent's setting).
    """

    def __init__(self, toolbox: AnyToolbox, *, id: str | None = None, max_retries: int | None = None) -> None:
        self.toolbox = toolbox
        self._id = id
        self.max_retries = max_retries

    @property
    def id(self) -> str | None:
        return self._id

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        return {
            tool.name: ToolsetTool(
                toolset=self,
                tool_def=ToolDefinition(
                    name=tool.name, description=tool.description, parameters_json_schema=input_schema(tool)
                ),
                max_retries=self.max_retries if self.max_retries is not None else ctx.max_retries,
                args_validator=_ANY_OBJECT,
            )
            for tool in offered_tools(self.toolbox)
        }

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> str | list[str | BinaryContent]:
        result = await call(self.toolbox, name, tool_args)
        if result.is_error:
            raise ToolFailed(result.text)
        found = parts(result)
        if found is None:
            return result.text
        return [
            p if isinstance(p, str) else BinaryContent(data=base64.b64decode(p.data), media_type=p.mime_type)
            for p in found
        ]
