"""gocode in an OpenAI Agents SDK agent: ``execute_go_code`` as a ``FunctionTool``.

Runs offline: a scripted model (the SDK's ``Model`` interface) stands in for the LLM. It asks
for one Go program that calls the bundled demo weather server and a Python function, then
answers with what the program printed. Needs ``pip install 'gocode[openai-agents]'`` and Go
(``gocode warmup`` once).

    python examples/openai_agents_example.py                  # the demo weather server
    python examples/openai_agents_example.py -c gocode.yaml   # your servers (the script calls getCity, getWeather)

For a real model, drop ``model=ScriptedModel()`` (the SDK then uses OpenAI with
``OPENAI_API_KEY``), or pass ``model="gpt-5"``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from agents import Agent, ModelResponse, Runner, Usage, set_tracing_disabled
from agents.models.interface import Model
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText
from pydantic import BaseModel

from gocode import Config, Toolbox, parse_config
from gocode.integrations.openai_agents import function_tools

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


class ScriptedModel(Model):
    """Calls execute_go_code once, then answers with its output (the SDK passes these parameters by name)."""

    async def get_response(
        self, system_instructions, input, model_settings, tools, output_schema, handoffs, tracing, **kwargs
    ) -> ModelResponse:
        items = input if isinstance(input, list) else []
        outputs = [i["output"] for i in items if isinstance(i, dict) and i.get("type") == "function_call_output"]
        if outputs:
            text = ResponseOutputText(type="output_text", text="It is " + outputs[-1].strip(), annotations=[])
            item: Any = ResponseOutputMessage(
                type="message", id="m1", role="assistant", status="completed", content=[text]
            )
        else:
            args = json.dumps({"code": CODE})
            item = ResponseFunctionToolCall(
                type="function_call", id="f1", call_id="c1", name="execute_go_code", arguments=args
            )
        return ModelResponse(output=[item], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("this example does not stream")


def demo_config() -> Config:
    """The bundled demo weather server, started with this Python."""
    servers = {"weather": {"command": sys.executable, "args": ["-m", "gocode.demo.server"]}}
    return parse_config(json.dumps({"mcpServers": servers}), "demo.json")


async def ask(config: Config | str, question: str) -> str:
    # The Python function becomes the Go function whatToWear, beside the servers' tools.
    async with Toolbox(config, tools=[what_to_wear]) as toolbox:
        agent = Agent(
            name="assistant", instructions="Answer with Go code.", model=ScriptedModel(), tools=function_tools(toolbox)
        )
        result = await Runner.run(agent, question)
        return str(result.final_output)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-c", "--config", help="gocode config (default: the demo weather server)")
    args = parser.parse_args(argv)
    set_tracing_disabled(True)  # offline: no traces uploaded
    print(asyncio.run(ask(args.config or demo_config(), "What's the weather where I am?")))


if __name__ == "__main__":
    main()
