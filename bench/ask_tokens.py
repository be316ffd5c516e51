"""Tokens the orchestrator spends on a task, next to a plain agent loop over the same endpoint.

Each task runs three ways against the scripted endpoint of tests/llm_server.py (real HTTP, the
real ``openai`` SDK), which counts every request's tokens (o200k_base over the messages, the
system prompt and the tool definitions) as a provider would bill them:

- ``ask``: :class:`gocode.agent.Orchestrator` (decide, search, write, run, repair, answer);
- ``loop+code``: examples/agent_loop.py's loop offering gocode's tools (``execute_go_code``,
  and ``search_go_tools`` when the description does not show every declaration);
- ``loop+classic``: the same loop offering the MCP tools themselves (code mode off).

The scripted model makes the same moves each way (one compile error and its repair for the
weather task), so the figures differ only by what each approach puts in its requests.

    python bench/ask_tokens.py            # the demo weather server alone
    python bench/ask_tokens.py --more     # plus mcp-server-time and server-everything (23 more tools)
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from examples.agent_loop import run_agent  # noqa: E402
from gocode import Toolbox  # noqa: E402
from gocode.agent import Orchestrator  # noqa: E402
from gocode.config import Config, parse_config  # noqa: E402
from tests.llm_server import Recorded, ScriptedLLM, ToolCall, Turn  # noqa: E402

KEY_ENV = "GOCODE_BENCH_KEY"
PROMPT = "What's the weather where I am?"
TYPO = (
    "c := must(getCity(ctx))\n"
    "w := must(getWether(ctx, GetWeatherInput{City: c.City}))\n"
    'fmt.Printf("%s: %.1f %s, %s\\n", c.City, w.Temperature, w.Unit, w.Conditions)\n'
)
FIXED = TYPO.replace("getWether", "getWeather")
ANSWER = "It is 18.5 °C and sunny in Paris."


def config(url: str, more: bool, code_mode: bool = True) -> Config:
    servers: dict[str, Any] = {"weather": {"command": sys.executable, "args": ["-m", "gocode.demo.server"]}}
    if more:
        servers["time"] = {"command": str(Path(sys.executable).parent / "mcp-server-time")}
        servers["everything"] = {"command": str(ROOT / ".cache/npm/node_modules/.bin/mcp-server-everything")}
    model = {"ref": "m", "type": "openai", "id": "bench", "base_url": url, "api_key_env": KEY_ENV}
    doc = {"mcpServers": servers, "models": [model], "defaults": {"codeMode": {"enabled": code_mode}}}
    return parse_config(json.dumps(doc), "<bench>.json")


def tool_turns(rec: Recorded, moves: list[Turn]) -> Turn:
    """The next move of a tool-calling model: one per tool result already in the conversation."""
    done = sum(1 for m in rec.messages if m.get("role") == "tool")
    return moves[min(done, len(moves) - 1)]


async def openai_loop(llm: ScriptedLLM, cfg: Config, moves: list[Turn], prompt: str) -> None:
    import openai

    client = openai.AsyncOpenAI(api_key="bench", base_url=llm.openai_url, max_retries=0)

    async def model(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
        got = await client.chat.completions.create(model="bench", messages=messages, tools=tools)  # type: ignore[arg-type]
        return got.choices[0].message.model_dump(include={"role", "content", "tool_calls"}, exclude_none=True)

    async with Toolbox(cfg, "m") as box:
        await run_agent(box, model, prompt)
    await client.close()


def measure(name: str, script: Any, run: Any) -> dict[str, Any]:
    with ScriptedLLM(script) as llm:
        anyio.run(run, llm)
        per = [r.body for r in llm.requests]
    from tests.llm_server import prompt_tokens

    inputs = [prompt_tokens(b) for b in per]
    return {"way": name, "requests": len(per), "input_tokens": sum(inputs), "per_request": inputs}


def weather(more: bool) -> list[dict[str, Any]]:
    ask_turns = [Turn("TOOLS: current city; weather of a city"), Turn(f"```go\n{TYPO}```"),
                 Turn(f"```go\n{FIXED}```"), Turn(ANSWER)]  # fmt: skip

    async def ask(llm: ScriptedLLM) -> None:
        async with Orchestrator(config(llm.openai_url, more), "m", env={KEY_ENV: "bench"}) as o:
            t = await o.ask(PROMPT)
        assert t.ok, t.error

    async def probe_complete(llm: ScriptedLLM) -> bool:
        async with Toolbox(config(llm.openai_url, more), "m") as box:
            return box.code_mode.complete()

    with ScriptedLLM([]) as llm:
        complete = anyio.run(probe_complete, llm)
    search = [] if complete else [Turn(tool_calls=[ToolCall("search_go_tools", {"query": "current city weather"})])]
    code_moves = [
        *search,
        Turn(tool_calls=[ToolCall("execute_go_code", {"code": TYPO})]),
        Turn(tool_calls=[ToolCall("execute_go_code", {"code": FIXED})]),
        Turn(ANSWER),
    ]
    classic_moves = [
        Turn(tool_calls=[ToolCall("get_city", {})]),
        Turn(tool_calls=[ToolCall("get_weather", {"city": "Paris"})]),
        Turn(ANSWER),
    ]

    async def loop_code(llm: ScriptedLLM) -> None:
        await openai_loop(llm, config(llm.openai_url, more), code_moves, PROMPT)

    async def loop_classic(llm: ScriptedLLM) -> None:
        await openai_loop(llm, config(llm.openai_url, more, code_mode=False), classic_moves, PROMPT)

    return [
        measure("ask", ask_turns, ask),
        measure("loop+code", lambda r: tool_turns(r, code_moves), loop_code),
        measure("loop+classic", lambda r: tool_turns(r, classic_moves), loop_classic),
    ]


def no_tools(more: bool) -> list[dict[str, Any]]:
    prompt = "What is 2 + 2?"

    async def ask(llm: ScriptedLLM) -> None:
        async with Orchestrator(config(llm.openai_url, more), "m", env={KEY_ENV: "bench"}) as o:
            assert (await o.ask(prompt)).ok

    async def loop_code(llm: ScriptedLLM) -> None:
        await openai_loop(llm, config(llm.openai_url, more), [Turn("4")], prompt)

    async def loop_classic(llm: ScriptedLLM) -> None:
        await openai_loop(llm, config(llm.openai_url, more, code_mode=False), [Turn("4")], prompt)

    return [
        measure("ask", [Turn("4")], ask),
        measure("loop+code", [Turn("4")], loop_code),
        measure("loop+classic", [Turn("4")], loop_classic),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--more", action="store_true", help="add mcp-server-time and server-everything")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("GOCODE_LOG_LEVEL", "warning")
    results = {"weather (one repair)": weather(args.more), "no tools needed": no_tools(args.more)}
    if args.json:
        print(json.dumps(results))
        return
    tools = "weather + time + everything" if args.more else "weather (2 tools)"
    print(f"tool set: {tools}; input tokens as the endpoint counted them (o200k_base)")
    for task, rows in results.items():
        print(f"\n{task}")
        for r in rows:
            per = " + ".join(str(n) for n in r["per_request"])
            print(
                f"  {r['way']:<13} {r['requests']} request{'' if r['requests'] == 1 else 's'}  {r['input_tokens']:>6} tokens in  ({per})"
            )


if __name__ == "__main__":
    main()
