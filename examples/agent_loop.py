"""A complete agent loop with gocode: a model behind the OpenAI Chat Completions API.

The model gets gocode's tools (``execute_go_code`` plus the tools excluded from code mode for
this model), and every tool call it makes is dispatched with ``Toolbox.call``. Works with any
OpenAI-compatible endpoint (OpenAI, Azure OpenAI, vLLM, Ollama, OpenRouter, …); the HTTP call
uses only the standard library, so copying this file needs no extra package.

    export OPENAI_API_KEY=...                       # and OPENAI_BASE_URL for another endpoint
    python examples/agent_loop.py -c gocode.yaml --model gpt-5 "What's the weather where I am?"

``--model`` is the model ref of the config (its codeMode settings apply) and, unless
``--api-model`` says otherwise, the model name sent to the API.

The loop itself (:func:`run_agent`) takes the model as a function, so the tests drive the very
same loop with a scripted model (tests/test_agent_loop.py).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import urllib.error
import urllib.request
from collections.abc import Awaitable, Callable
from typing import Any

from gocode import Toolbox

# (messages, tools) -> the assistant message, in Chat Completions shape.
Model = Callable[[list[dict[str, Any]], list[dict[str, Any]]], Awaitable[dict[str, Any]]]

SYSTEM = (
    "You are a helpful assistant. To use tools, prefer execute_go_code: write Go that calls the "
    "tool functions listed in its description, and print only what you need."
)


async def run_agent(toolbox: Toolbox, model: Model, prompt: str, *, max_turns: int = 10) -> str:
    """Ask the model, run the tool calls it makes, repeat until it answers in text."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}]
    tools = toolbox.definitions("openai")
    for _ in range(max_turns):
        reply = await model(messages, tools)
        messages.append(reply)
        calls = reply.get("tool_calls") or []
        if not calls:
            return str(reply.get("content") or "")
        for call in calls:
            fn = call["function"]
            result = await toolbox.call(fn["name"], fn.get("arguments") or "{}")
            print(f"[{fn['name']}] {'error' if result.is_error else 'ok'}: {result.text[:200]}", file=sys.stderr)
            messages.append(result.openai(call["id"]))
    raise RuntimeError(f"no final answer after {max_turns} turns")


def openai_model(name: str, *, base_url: str, api_key: str) -> Model:
    """A :data:`Model` that calls ``POST {base_url}/chat/completions``."""

    def post(body: dict[str, Any]) -> dict[str, Any]:
        req = urllib.request.Request(
            base_url.rstrip("/") + "/chat/completions",
            data=json.dumps(body).encode(),
            headers={"Authorization": f"Bearer {api_key}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(req, timeout=300) as resp:
                return json.load(resp)
        except urllib.error.HTTPError as exc:
            raise RuntimeError(f"{exc.code} from the model API: {exc.read().decode(errors='replace')[:500]}") from None

    async def call(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
        data = await asyncio.to_thread(post, {"model": name, "messages": messages, "tools": tools})
        message = data["choices"][0]["message"]
        # Send back only what the API accepts in a request.
        return {k: v for k, v in message.items() if k in ("role", "content", "tool_calls")}

    return call


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("prompt")
    parser.add_argument("-c", "--config", default="gocode.yaml")
    parser.add_argument("--model", help="model ref in the config")
    parser.add_argument("--api-model", help="model name for the API (default: --model)")
    args = parser.parse_args()
    api_key = os.environ.get("OPENAI_API_KEY")
    if not api_key:
        sys.exit("set OPENAI_API_KEY (and OPENAI_BASE_URL for an endpoint other than OpenAI's)")
    model = openai_model(
        args.api_model or args.model or "gpt-5",
        base_url=os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1"),
        api_key=api_key,
    )
    async with Toolbox(args.config, args.model) as toolbox:
        print(await run_agent(toolbox, model, args.prompt))


if __name__ == "__main__":
    asyncio.run(main())
