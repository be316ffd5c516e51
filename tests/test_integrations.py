"""The framework adapters (gocode/integrations/), each driven end to end by its framework's own
test model: the OpenAI Agents SDK through a ``Model`` subclass, LangGraph's ``create_react_agent``
through a LangChain fake chat model that binds tools, pydantic-ai through ``FunctionModel``.

Every model follows one script (:func:`next_step`): search the Go functions and call the tool
excluded from code mode (two calls in one turn), run Go code that does not compile, run Go code
that calls the demo weather server and a Python function, then answer with what it read. The
runs are real: the demo server over stdio, real Go builds."""

from __future__ import annotations

import importlib
import json
import sys
from typing import Any

import anyio
import pytest
from pydantic import BaseModel

from gocode import SyncToolbox, Toolbox
from gocode.view.rules import SEARCH_TOOL_NAME
from tests.conftest import EVERYTHING, config_from, demo_stdio, load_script, need

TOOL_NAME = "execute_go_code"
BROKEN_CODE = 'w, _ := getWether(ctx, GetWeatherInput{City: "Oslo"})\nfmt.Println(w)'
# One program: the weather server's tool, then a Python function of this file.
CODE = """\
w, err := getWeather(ctx, GetWeatherInput{City: "Oslo", Unit: UnitCelsius})
if err != nil {
	return err
}
outfit, err := whatToWear(ctx, WhatToWearInput{Celsius: w.Temperature, Conditions: w.Conditions})
if err != nil {
	return err
}
fmt.Printf("Oslo: %.1f°C, %s; wear %s\\n", w.Temperature, w.Conditions, outfit.Wear)
"""
RAN = "Oslo: 4.0°C, cloudy; wear a coat\n"


class Outfit(BaseModel):
    wear: str
    umbrella: bool


def what_to_wear(celsius: float, conditions: str) -> Outfit:
    """What to wear in this weather."""
    return Outfit(wear="a coat" if celsius < 12 else "a T-shirt", umbrella=conditions == "rainy")


def config() -> Any:
    # The index disclosure offers search_go_tools; get_city stays a regular tool. Unsandboxed: the
    # sandbox's process limit counts every process of the user on a busy machine, and it is not
    # what these tests test.
    code_mode = {"disclosure": "index", "excludedTools": ["weather.get_city"], "sandbox": "off"}
    return config_from({"weather": demo_stdio()}, defaults={"codeMode": code_mode})


Call = tuple[str, dict[str, Any]]


def next_step(outputs: list[str]) -> list[Call] | str:
    """What the scripted model does after the tool outputs so far: tool calls, or its answer."""
    if not outputs:
        return [(SEARCH_TOOL_NAME, {"query": "current weather for a city"}), ("get_city", {})]
    if len(outputs) == 2:
        return [(TOOL_NAME, {"code": BROKEN_CODE})]
    if len(outputs) == 3:
        return [(TOOL_NAME, {"code": CODE})]
    return "answer: " + outputs[-1]


def check_outputs(outputs: list[str]) -> None:
    """The tool outputs the model read, in order, are the toolbox's real answers."""
    assert len(outputs) == 4, outputs
    search, city, broken, ran = outputs
    assert "func getWeather(context.Context, GetWeatherInput) (GetWeatherOutput, error)" in search, search
    assert json.loads(city) == {"city": "Paris"}, city
    assert "undefined: getWether" in broken and "getWeather" in broken, broken
    assert ran == RAN


# --- OpenAI Agents SDK -----------------------------------------------------------------------------


def agents_model() -> Any:
    from agents import ModelResponse, Usage
    from agents.models.interface import Model
    from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

    class Scripted(Model):
        """The SDK's model interface, answering from :func:`next_step` (parameter names as the runner passes them)."""

        def __init__(self) -> None:
            self.outputs: list[str] = []
            self.tools_seen: list[Any] = []

        async def get_response(
            self, system_instructions, input, model_settings, tools, output_schema, handoffs, tracing, **kw
        ):
            self.tools_seen = list(tools)
            items = input if isinstance(input, list) else []
            self.outputs = [
                i["output"] for i in items if isinstance(i, dict) and i.get("type") == "function_call_output"
            ]
            step = next_step(self.outputs)
            if isinstance(step, str):
                text = ResponseOutputText(type="output_text", text=step, annotations=[])
                out: list[Any] = [
                    ResponseOutputMessage(type="message", id="m", role="assistant", status="completed", content=[text])
                ]
            else:
                turn = len(self.outputs)
                out = [
                    ResponseFunctionToolCall(
                        type="function_call",
                        id=f"f{turn}_{n}",
                        call_id=f"c{turn}_{n}",
                        name=name,
                        arguments=json.dumps(args),
                    )
                    for n, (name, args) in enumerate(step)
                ]
            return ModelResponse(output=out, usage=Usage(), response_id=None)

        def stream_response(self, *args, **kwargs):
            raise NotImplementedError("the tests do not stream")

    return Scripted()


@pytest.mark.go
def test_openai_agents_runner_drives_execute_go_code(module_cache):
    from agents import Agent, Runner, set_tracing_disabled

    from gocode.integrations.openai_agents import function_tools

    set_tracing_disabled(True)
    model = agents_model()

    described: dict[str, str | None] = {}

    async def go() -> str:
        async with Toolbox(config(), module_cache=module_cache, tools=[what_to_wear]) as toolbox:
            described.update({t.name: t.description for t in toolbox.tools()})
            tools = function_tools(toolbox)
            assert [t.name for t in tools] == [TOOL_NAME, SEARCH_TOOL_NAME, "get_city"]
            assert tools[0].params_json_schema["required"] == ["code"]
            agent = Agent(name="weather", instructions="Use Go.", model=model, tools=tools)
            return (await Runner.run(agent, "How is the weather in Oslo?")).final_output

    answer = anyio.run(go)
    assert [t.name for t in model.tools_seen] == [TOOL_NAME, SEARCH_TOOL_NAME, "get_city"]
    assert {t.name: t.description for t in model.tools_seen} == described  # the toolbox's own descriptions
    assert "whatToWear" in (described[TOOL_NAME] or "")  # the Python function beside the server's tools
    check_outputs(model.outputs)
    assert answer == "answer: " + RAN


@pytest.mark.go
def test_openai_agents_run_sync_over_a_sync_toolbox(module_cache):
    from agents import Agent, Runner, set_tracing_disabled

    from gocode.integrations.openai_agents import function_tools

    set_tracing_disabled(True)
    model = agents_model()
    with SyncToolbox(config(), module_cache=module_cache, tools=[what_to_wear]) as toolbox:
        # run_sync starts its own event loop: a SyncToolbox answers from its own thread.
        agent = Agent(name="weather", model=model, tools=function_tools(toolbox))
        answer = Runner.run_sync(agent, "How is the weather in Oslo?").final_output
    check_outputs(model.outputs)
    assert answer == "answer: " + RAN


# --- LangChain / LangGraph -----------------------------------------------------------------------


def langchain_model() -> Any:
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, ToolMessage
    from langchain_core.outputs import ChatGeneration, ChatResult
    from pydantic import Field

    class ScriptedChat(GenericFakeChatModel):
        """LangChain's fake chat model, made to bind tools and to answer from :func:`next_step`."""

        bound: list[Any] = Field(default_factory=list)

        def bind_tools(self, tools, **kwargs):
            self.bound = list(tools)
            return self

        def _generate(self, messages, stop=None, run_manager=None, **kwargs):
            outputs = [str(m.content) for m in messages if isinstance(m, ToolMessage)]
            step = next_step(outputs)
            if isinstance(step, str):
                message = AIMessage(content=step)
            else:
                turn = len(outputs)
                calls = [{"name": n, "args": a, "id": f"c{turn}_{i}"} for i, (n, a) in enumerate(step)]
                message = AIMessage(content="", tool_calls=calls)
            return ChatResult(generations=[ChatGeneration(message=message)])

    return ScriptedChat(messages=iter(()))


@pytest.mark.go
def test_langgraph_react_agent_drives_execute_go_code(module_cache):
    from langchain_core.messages import ToolMessage
    from langgraph.prebuilt import create_react_agent

    from gocode.integrations.langchain import GocodeToolkit

    model = langchain_model()

    async def go() -> dict[str, Any]:
        async with Toolbox(config(), module_cache=module_cache, tools=[what_to_wear]) as toolbox:
            tools = GocodeToolkit(toolbox=toolbox).get_tools()
            assert [t.name for t in tools] == [TOOL_NAME, SEARCH_TOOL_NAME, "get_city"]
            agent = create_react_agent(model, tools)
            return await agent.ainvoke({"messages": [("user", "How is the weather in Oslo?")]})

    state = anyio.run(go)
    assert [t.name for t in model.bound] == [TOOL_NAME, SEARCH_TOOL_NAME, "get_city"]
    replies = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    check_outputs([str(m.content) for m in replies])
    assert [m.status for m in replies] == ["success", "success", "error", "success"]
    assert replies[2].artifact["isError"] is True and replies[2].artifact["_meta"]["io.gocode/run"]["phase"]
    assert [m.name for m in replies] == [SEARCH_TOOL_NAME, "get_city", TOOL_NAME, TOOL_NAME]
    # The artifact is the MCP result: the program's call to the weather server is in its _meta.
    calls = replies[-1].artifact["_meta"]["io.gocode/run"]["toolCalls"]
    assert [(c["server"], c["tool"]) for c in calls] == [("weather", "get_weather"), ("python", "what_to_wear")]
    assert state["messages"][-1].content == "answer: " + RAN


@pytest.mark.go
def test_langchain_tools_over_a_sync_toolbox_invoke_synchronously(module_cache):
    from gocode.integrations.langchain import langchain_tools

    with SyncToolbox(config(), module_cache=module_cache, tools=[what_to_wear]) as toolbox:
        tools = {t.name: t for t in langchain_tools(toolbox)}
        message = tools[TOOL_NAME].invoke({"type": "tool_call", "name": TOOL_NAME, "args": {"code": CODE}, "id": "c1"})
        assert message.content == RAN and message.status == "success"
        failed = tools[TOOL_NAME].invoke({"type": "tool_call", "name": TOOL_NAME, "args": {"code": "x :="}, "id": "c2"})
        assert failed.status == "error" and "syntax error" in failed.content
        # The error's artifact is the MCP result as for a success: the run's phase is in its _meta.
        assert failed.artifact["isError"] is True
        assert failed.artifact["_meta"]["io.gocode/run"]["phase"] == "compile", failed.artifact


@pytest.mark.go
def test_langchain_tools_over_an_async_toolbox_refuse_a_synchronous_call(module_cache):
    from gocode.integrations.langchain import langchain_tools

    async def go() -> None:
        async with Toolbox(config(), module_cache=module_cache, tools=[what_to_wear], prewarm=False) as toolbox:
            tool = langchain_tools(toolbox)[0]
            with pytest.raises(TypeError, match="runs in an event loop: call the tool asynchronously"):
                tool.invoke({"code": CODE})

    anyio.run(go)


# --- pydantic-ai ---------------------------------------------------------------------------------


@pytest.mark.go
def test_pydantic_ai_function_model_drives_execute_go_code(module_cache):
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from gocode.integrations.pydantic_ai import GocodeToolset

    seen: dict[str, Any] = {}

    def script(messages: list[Any], info: AgentInfo) -> ModelResponse:
        seen["tools"] = [t.name for t in info.function_tools]
        returns = [p for m in messages for p in m.parts if isinstance(p, ToolReturnPart)]
        seen["outcomes"] = [p.outcome for p in returns]
        seen["outputs"] = [p.model_response_str(wrap_if_error=False) for p in returns]
        step = next_step(seen["outputs"])
        if isinstance(step, str):
            return ModelResponse(parts=[TextPart(step)])
        return ModelResponse(parts=[ToolCallPart(tool_name=n, args=a) for n, a in step])

    async def go() -> str:
        async with Toolbox(config(), module_cache=module_cache, tools=[what_to_wear]) as toolbox:
            agent = Agent(FunctionModel(script), toolsets=[GocodeToolset(toolbox)])
            return (await agent.run("How is the weather in Oslo?")).output

    answer = anyio.run(go)
    assert seen["tools"] == [TOOL_NAME, SEARCH_TOOL_NAME, "get_city"]
    check_outputs(seen["outputs"])
    assert seen["outcomes"] == ["success", "success", "failed", "success"]
    assert answer == "answer: " + RAN


@pytest.mark.go
def test_pydantic_ai_test_model_run_sync_over_a_sync_toolbox(module_cache):
    from pydantic_ai import Agent
    from pydantic_ai.models.test import TestModel

    from gocode.integrations.pydantic_ai import GocodeToolset

    with SyncToolbox(config(), module_cache=module_cache, tools=[what_to_wear], prewarm=False) as toolbox:
        # run_sync starts its own event loop: a SyncToolbox answers from its own thread.
        agent = Agent(TestModel(call_tools=["get_city"]), toolsets=[GocodeToolset(toolbox)])
        output = agent.run_sync("Where am I?").output
    assert {k: json.loads(v) for k, v in json.loads(output).items()} == {"get_city": {"city": "Paris"}}


# --- images ------------------------------------------------------------------------------------


@pytest.mark.net
def test_an_excluded_tool_s_image_reaches_each_framework_as_an_image():
    from agents import ToolOutputImage, ToolOutputText
    from pydantic_ai import BinaryContent

    from gocode.integrations.langchain import langchain_tools
    from gocode.integrations.openai_agents import function_tools
    from gocode.integrations.pydantic_ai import GocodeToolset

    servers = {"everything": {"command": need(EVERYTHING)}}
    config = config_from(servers, defaults={"codeMode": {"excludedTools": ["everything.get-tiny-image"]}})

    async def go() -> tuple[Any, Any, Any]:
        async with Toolbox(config, prewarm=False) as toolbox:
            agents_tool = {t.name: t for t in function_tools(toolbox)}["get-tiny-image"]
            chain_tool = {t.name: t for t in langchain_tools(toolbox)}["get-tiny-image"]
            call = {"type": "tool_call", "name": "get-tiny-image", "args": {}, "id": "c1"}
            return (
                await agents_tool.on_invoke_tool(None, "{}"),
                await chain_tool.ainvoke(call),
                await GocodeToolset(toolbox).call_tool("get-tiny-image", {}, None, None),
            )

    agents_out, message, pydantic_out = anyio.run(go)
    images = [p for p in agents_out if isinstance(p, ToolOutputImage)]
    assert len(images) == 1 and images[0].image_url.startswith("data:image/png;base64,iVBOR")
    assert any(isinstance(p, ToolOutputText) and p.text for p in agents_out)
    blocks = [b for b in message.content if b["type"] == "image"]
    assert len(blocks) == 1 and blocks[0]["mime_type"] == "image/png" and blocks[0]["base64"].startswith("iVBOR")
    binary = [p for p in pydantic_out if isinstance(p, BinaryContent)]
    assert len(binary) == 1 and binary[0].media_type == "image/png" and binary[0].data.startswith(b"\x89PNG")


# --- the examples ------------------------------------------------------------------------------


@pytest.mark.go
@pytest.mark.parametrize("name", ["openai_agents_example", "langgraph_example", "pydantic_ai_example"])
def test_framework_example_runs_against_its_test_model(name, module_cache, capsys):
    example = load_script(f"examples/{name}.py", f"example_{name}")
    example.main([])
    out = capsys.readouterr().out
    assert out.strip() == example.EXPECTED, out


# --- without the framework -------------------------------------------------------------------------


@pytest.mark.fast
@pytest.mark.parametrize(
    ("module", "framework", "extra"),
    [
        ("gocode.integrations.openai_agents", "agents", "openai-agents"),
        ("gocode.integrations.langchain", "langchain_core", "langchain"),
        ("gocode.integrations.pydantic_ai", "pydantic_ai", "pydantic-ai"),
    ],
)
def test_adapter_without_its_framework_names_the_extra(module, framework, extra, monkeypatch):
    for name in [n for n in sys.modules if n == framework or n.startswith(framework + ".")] + [framework]:
        monkeypatch.setitem(sys.modules, name, None)  # importing it now fails as if it were not installed
    monkeypatch.delitem(sys.modules, module, raising=False)
    with pytest.raises(ImportError, match=rf"pip install 'gocode\[{extra}\]'"):
        importlib.import_module(module)
