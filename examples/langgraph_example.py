"""gocode in a LangGraph agent: ``execute_go_code`` as a LangChain tool in ``create_react_agent``.

Runs offline: LangChain's fake chat model, taught to bind tools and to follow a script, stands
in for the LLM. It asks for one Go program that calls the bundled demo weather server and a
Python function, then answers with what the program printed. Needs ``pip install 'gocode[langchain]'`` and Go
(``gocode warmup`` once).

    python examples/langgraph_example.py                  # the demo weather server
    python examples/langgraph_example.py -c gocode.yaml   # your servers (the script calls getCity, getWeather)

For a real model, pass any tool-calling chat model (``ChatOpenAI(model="gpt-5")``,
``ChatAnthropic(...)``) instead of ``ScriptedChatModel()``. The same tools go to
``langchain.agents.create_agent``, the successor of ``create_react_agent`` in the ``langchain``
package.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import warnings
from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langgraph.prebuilt import create_react_agent
from langgraph.warnings import LangGraphDeprecatedSinceV10
from pydantic import BaseModel

from gocode import Config, Toolbox, parse_config
from gocode.integrations.langchain import GocodeToolkit

# What the scripted model writes: one program calling the weather server's tools and a Python function.
CODE = """\
city, err := getCity(ctx)
if err != nil {
	return err
}
w, err := getWeather(ctx, GetWeatherInput{City: city.City})
if err != nil {
	return err
}
outfit, err := whatToWear(ctx, WhatToWearInput{Celsius: w.Temperature, Conditions: w.Conditions})
if err != nil {
	return err
}
fmt.Printf("%s: %.1f°C, %s; wear %s\\n", city.City, w.Temperature, w.Conditions, outfit.Wear)
"""
EXPECTED = "It is Paris: 18.5°C, sunny; wear a T-shirt"


class Outfit(BaseModel):
    wear: str
    umbrella: bool


def what_to_wear(celsius: float, conditions: str) -> Outfit:
    """What to wear in this weather."""
    return Outfit(wear="a coat" if celsius < 12 else "a T-shirt", umbrella=conditions == "rainy")


class ScriptedChatModel(GenericFakeChatModel):
    """Calls execute_go_code once, then answers with its output (the stock fake model cannot bind tools)."""

    messages: Any = iter(())  # unused: the script decides from the conversation

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChatModel:
        return self

    def _generate(self, messages: list[Any], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        outputs = [str(m.content) for m in messages if isinstance(m, ToolMessage)]
        if outputs:
            reply = AIMessage(content="It is " + outputs[-1].strip())
        else:
            reply = AIMessage(content="", tool_calls=[{"name": "execute_go_code", "args": {"code": CODE}, "id": "c1"}])
        return ChatResult(generations=[ChatGeneration(message=reply)])


def demo_config() -> Config:
    """The bundled demo weather server, started with this Python."""
    servers = {"weather": {"command": sys.executable, "args": ["-m", "gocode.demo.server"]}}
    return parse_config(json.dumps({"mcpServers": servers}), "demo.json")


async def ask(config: Config | str, question: str) -> str:
    # create_react_agent still works throughout LangGraph 1.x; it only points at its successor.
    warnings.filterwarnings("ignore", category=LangGraphDeprecatedSinceV10)
    # The Python function becomes the Go function whatToWear, beside the servers' tools.
    async with Toolbox(config, tools=[what_to_wear]) as toolbox:
        agent = create_react_agent(ScriptedChatModel(), GocodeToolkit(toolbox=toolbox).get_tools())
        state = await agent.ainvoke({"messages": [("user", question)]})
        return str(state["messages"][-1].content)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-c", "--config", help="gocode config (default: the demo weather server)")
    args = parser.parse_args(argv)
    print(asyncio.run(ask(args.config or demo_config(), "What's the weather where I am?")))


if __name__ == "__main__":
    main()
