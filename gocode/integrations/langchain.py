"""gocode for LangChain and LangGraph: the toolbox's tools as ``BaseTool`` objects.

::

    from langgraph.prebuilt import create_react_agent
    from gocode import Toolbox
    from gocode.integrations.langchain import GocodeToolkit

    async with Toolbox("gocode.yaml", model="gpt-5") as toolbox:
        agent = create_react_agent(chat_model, GocodeToolkit(toolbox=toolbox).get_tools())
        state = await agent.ainvoke({"messages": [("user", "What's the weather where I am?")]})

``execute_go_code``, ``search_go_tools`` (when offered) and every tool excluded from code mode
become one :class:`GocodeTool` each, with the toolbox's descriptions and input schemas (bound
to a chat model as they are). A tool's message content is the result's text (with images, a
list of standard ``text`` and ``image`` content blocks); its artifact the
MCP result as JSON (``structuredContent``, and for Go code the run's timings and tool calls in
``_meta``). A failed call (a compile error, a tool error, a timeout) becomes a ``ToolMessage``
with ``status="error"``, the error text, and the same artifact (the run's phase and ``_meta``),
which the model reads and can act on; it never stops the graph.

Over a :class:`~gocode.Toolbox` the tools are asynchronous (``ainvoke``, LangGraph's
``astream``/``ainvoke``); over a :class:`~gocode.SyncToolbox` they also work synchronously. The
list is what the toolbox offers when it is made: after a server's tools change, make it again.
Install with ``pip install 'gocode[langchain]'`` (LangGraph is a separate package).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field

from gocode.integrations import AnyToolbox, call, call_blocking, input_schema, missing_framework, offered_tools, parts
from gocode.results import ToolResult

try:
    from langchain_core.messages import ToolMessage
    from langchain_core.tools import BaseTool, BaseToolkit
except ImportError as exc:  # pragma: no cover - exercised by the missing-extra test
    raise missing_framework("LangChain", "langchain", exc) from exc

__all__ = ["GocodeTool", "GocodeToolkit", "langchain_tools"]


class GocodeTool(BaseTool):
    """One tool of a gocode toolbox; calls go to :meth:`~gocode.Toolbox.call`."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    toolbox: Any = Field(exclude=True)  # Toolbox | SyncToolbox (pydantic cannot check either)
    response_format: Literal["content", "content_and_artifact"] = "content_and_artifact"
    handle_tool_error: bool = True

    # The arguments arrive as keywords exactly as the model sent them (the schema is the
    # server's JSON Schema, so LangChain does not validate them; the toolbox and server do).
    def _run(self, **arguments: Any) -> tuple[str | list[Any], dict[str, Any]]:
        return _answer(call_blocking(self.toolbox, self.name, arguments))

    async def _arun(self, **arguments: Any) -> tuple[str | list[Any], dict[str, Any]]:
        return _answer(await call(self.toolbox, self.name, arguments))

    # A failed call is answered, not raised (a ToolException's message would lose the artifact:
    # the run's phase and _meta); the message it becomes is marked as the error it is.
    def run(self, *args: Any, **kwargs: Any) -> Any:
        return _marked(super().run(*args, **kwargs))

    async def arun(self, *args: Any, **kwargs: Any) -> Any:
        return _marked(await super().arun(*args, **kwargs))


class GocodeToolkit(BaseToolkit):
    """The toolbox's tools as a LangChain toolkit."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    toolbox: Any = Field(exclude=True)

    def get_tools(self) -> list[BaseTool]:
        return list(langchain_tools(self.toolbox))


def langchain_tools(toolbox: AnyToolbox) -> list[GocodeTool]:
    """One :class:`GocodeTool` per tool the toolbox offers its model."""
    return [
        GocodeTool(name=tool.name, description=tool.description or "", args_schema=input_schema(tool), toolbox=toolbox)
        for tool in offered_tools(toolbox)
    ]


def _answer(result: ToolResult) -> tuple[str | list[Any], dict[str, Any]]:
    found = parts(result)
    content: str | list[Any] = result.text
    if found is not None and not result.is_error:  # standard content blocks, which every chat model integration reads
        content = [
            {"type": "text", "text": p}
            if isinstance(p, str)
            else {"type": "image", "base64": p.data, "mime_type": p.mime_type}
            for p in found
        ]
    return content, result.result.model_dump(mode="json", by_alias=True, exclude_none=True)


def _marked(output: Any) -> Any:
    """``output`` with ``status="error"`` when it is the message of a failed call (its artifact,
    the MCP result, says ``isError``)."""
    if isinstance(output, ToolMessage) and isinstance(output.artifact, dict) and output.artifact.get("isError") is True:
        output.status = "error"
    return output
