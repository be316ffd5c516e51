"""gocode in a pydantic-ai agent: ``execute_go_code`` from a toolset.

Runs offline: pydantic-ai's ``FunctionModel`` with a script stands in for the LLM. It asks for
one Go program that calls the bundled demo weather server and a Python function, then answers
with what the program printed. Needs ``pip install 'gocode[pydantic-ai]'`` and Go
(``gocode warmup`` once).

    python examples/pydantic_ai_example.py                  # the demo weather server
    python examples/pydantic_ai_example.py -c gocode.yaml   # your servers (the script calls getCity, getWeather)

For a real model, pass its name instead of ``FunctionModel(script)``: ``Agent("openai:gpt-5", ...)``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

from pydantic import BaseModel
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from gocode import Config, Toolbox, parse_config
from gocode.integrations.pydantic_ai import GocodeToolset

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


def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Calls execute_go_code once, then answers with its output."""
    returns = [p for m in messages for p in m.parts if isinstance(p, ToolReturnPart)]
    if returns:
        return ModelResponse(parts=[TextPart("It is " + str(returns[-1].content).strip())])
    return ModelResponse(parts=[ToolCallPart(tool_name="execute_go_code", args={"code": CODE})])


def demo_config() -> Config:
    """The bundled demo weather server, started with this Python."""
    servers = {"weather": {"command": sys.executable, "args": ["-m", "gocode.demo.server"]}}
    return parse_config(json.dumps({"mcpServers": servers}), "demo.json")


async def ask(config: Config | str, question: str) -> str:
    # The Python function becomes the Go function whatToWear, beside the servers' tools.
    async with Toolbox(config, tools=[what_to_wear]) as toolbox:
        agent = Agent(FunctionModel(script), toolsets=[GocodeToolset(toolbox)])
        return (await agent.run(question)).output


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-c", "--config", help="gocode config (default: the demo weather server)")
    args = parser.parse_args(argv)
    print(asyncio.run(ask(args.config or demo_config(), "What's the weather where I am?")))


if __name__ == "__main__":
    main()
