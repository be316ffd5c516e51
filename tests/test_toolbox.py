"""The Python API for agent loops: Toolbox / SyncToolbox against real servers, the tool formats
of the model APIs, and examples/agent_loop.py driven by a scripted model."""

from __future__ import annotations

import base64
import json
from typing import Any

import anyio
import mcp_types as types
import pytest

from gocode import SyncToolbox, Toolbox
from gocode.demo.runner import DEMO_CODE
from gocode.results import run_to_result
from gocode.run.runner import RunResult
from gocode.tool_formats import (
    anthropic_tool_result,
    convert,
    gemini_function_response,
    openai_tool_message,
    result_text,
)
from gocode.toolbox import TOOL_NAME, exposed_names
from gocode.toolset import ToolInfo
from tests.conftest import EVERYTHING, ROOT, config_from, demo_stdio, load_script, need

WEATHER = DEMO_CODE  # CPE's weather example
WEATHER_OUT = "City: Paris\nWeather: 65.3°F, sunny\n"


def load_example(name: str) -> Any:
    return load_script(f"examples/{name}.py", f"example_{name}")


# --- pure ---------------------------------------------------------------------------------------


@pytest.mark.fast
def test_exposed_names_keep_own_names_and_disambiguate_clashes():
    tools = [
        ToolInfo("a", "search"),
        ToolInfo("b", "search"),
        ToolInfo("b", "get.thing"),
        ToolInfo("c", "9lives"),
        ToolInfo("c", TOOL_NAME),
        ToolInfo("d", "echo"),
        ToolInfo("e.x", "x" * 80),
    ]
    names = exposed_names(tools, {TOOL_NAME})
    by_tool = {(t.server, t.name): n for n, t in names.items()}
    assert by_tool[("d", "echo")] == "echo"
    assert by_tool[("a", "search")] == "a_search" and by_tool[("b", "search")] == "b_search"
    assert by_tool[("b", "get.thing")] == "b_get_thing"
    assert by_tool[("c", "9lives")] == "c_9lives"
    assert by_tool[("c", TOOL_NAME)] == "c_execute_go_code"
    assert len(by_tool[("e.x", "x" * 80)]) <= 64
    for name in names:
        assert name[0].isalpha() or name[0] == "_"
        assert all(ch.isalnum() or ch in "_-" for ch in name) and len(name) <= 64
    assert exposed_names(list(reversed(tools)), {TOOL_NAME}) == names  # order does not matter


@pytest.mark.fast
def test_exposed_names_never_collide():
    # "a_b" on server x, and tool "b" on server "a" (cleaned to "a_b" as well) on clash.
    tools = [ToolInfo("x", "a_b"), ToolInfo("a", "b"), ToolInfo("z", "b")]
    names = exposed_names(tools, set())
    assert len(names) == 3


TOOL = types.Tool(
    name="get_weather",
    description="Weather",
    input_schema={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


@pytest.mark.fast
def test_definition_formats():
    (openai,) = convert([TOOL], "openai")
    assert openai == {
        "type": "function",
        "function": {"name": "get_weather", "description": "Weather", "parameters": TOOL.input_schema},
    }
    (responses,) = convert([TOOL], "openai-responses")
    assert responses["name"] == "get_weather" and responses["strict"] is False
    (anthropic,) = convert([TOOL], "anthropic")
    assert anthropic == {"name": "get_weather", "description": "Weather", "input_schema": TOOL.input_schema}
    (gemini,) = convert([TOOL], "gemini")
    assert gemini["parametersJsonSchema"] == TOOL.input_schema
    (mcp,) = convert([TOOL], "mcp")
    assert mcp["inputSchema"] == TOOL.input_schema
    with pytest.raises(ValueError, match="known: mcp, openai"):
        convert([TOOL], "cohere")
    # A schema without properties still gives the APIs an object schema.
    bare = types.Tool(name="t", input_schema={"type": "object"})
    assert convert([bare], "openai")[0]["function"]["parameters"] == {"type": "object", "properties": {}}


PNG = base64.b64encode(b"\x89PNG fake").decode()


@pytest.mark.fast
def test_result_conversions_keep_images_for_anthropic():
    result = types.CallToolResult(
        content=[
            types.TextContent(type="text", text="here:"),
            types.ImageContent(type="image", data=PNG, mime_type="image/png"),
        ]
    )
    assert result_text(result) == "here:\n[image image/png, 9 bytes]"
    block = anthropic_tool_result(result, "tu_1")
    assert block["tool_use_id"] == "tu_1" and "is_error" not in block
    assert block["content"][1] == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": PNG},
    }
    assert openai_tool_message(result, "call_1") == {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": "here:\n[image image/png, 9 bytes]",
    }
    err = types.CallToolResult(content=[types.TextContent(type="text", text="nope")], is_error=True)
    assert anthropic_tool_result(err, "x")["is_error"] is True
    assert gemini_function_response(err, "f") == {"functionResponse": {"name": "f", "response": {"error": "nope"}}}
    structured_only = types.CallToolResult(content=[], structured_content={"a": 1})
    assert result_text(structured_only) == '{"a": 1}'


@pytest.mark.fast
def test_run_to_result():
    ok = run_to_result(RunResult(True, "ok", output="hi\n", build_ms=12.3))
    assert not ok.is_error and ok.structured_content == {"output": "hi\n"}
    assert ok.content[0].text == "hi\n" and ok.meta["io.gocode/run"]["buildMs"] == 12.3
    empty = run_to_result(RunResult(True, "ok"))
    assert empty.structured_content == {"output": ""} and empty.content[0].text
    bad = run_to_result(RunResult(False, "compile", stderr="model.go:1:1: undefined: x"))
    assert bad.is_error and bad.structured_content is None
    assert bad.content[0].text.startswith("compile error:\nmodel.go:1:1: undefined: x")


# --- real servers -------------------------------------------------------------------------------

pytest_go = pytest.mark.go


def config() -> Any:
    return config_from(
        {"weather": demo_stdio(), "everything": {"command": need(EVERYTHING)}},
        # Unsandboxed (stated, not the default): a test program writes its pid where the test reads it.
        models=[{"ref": "vision", "codeMode": {"excludedTools": ["get-tiny-image"], "sandbox": "off"}}],
    )


@pytest_go
def test_toolbox_dispatches_by_name(module_cache):
    async def go() -> None:
        async with Toolbox(config(), "vision", module_cache=module_cache) as tools:
            assert [t.name for t in tools.tools()] == [TOOL_NAME, "get-tiny-image"]
            assert [d["name"] for d in tools.definitions("anthropic")] == [TOOL_NAME, "get-tiny-image"]
            await tools.wait_warm()

            r = await tools.call(TOOL_NAME, {"code": WEATHER})
            assert not r.is_error and r.text == WEATHER_OUT
            assert r.run is not None and r.run.ok

            # OpenAI hands back arguments as JSON text.
            r = await tools.call(TOOL_NAME, json.dumps({"code": 'fmt.Println("x")'}))
            assert r.text == "x\n"

            img = await tools.call("get-tiny-image")
            block = img.anthropic("tu_1")
            assert any(b["type"] == "image" and b["source"]["media_type"] == "image/png" for b in block["content"])

            for name, args, expect in [
                ("nope", {}, "unknown tool 'nope'"),
                (TOOL_NAME, {}, "needs a string argument `code`"),
                (TOOL_NAME, "[1, 2]", "not a JSON object"),
                (TOOL_NAME, {"code": "if true {"}, "model.go:1:9: syntax error: this { is never closed"),
                (TOOL_NAME, {"code": "undefinedThing()"}, "undefined: undefinedThing"),
            ]:
                r = await tools.call(name, args)
                assert r.is_error and expect in r.text, r.text

    anyio.run(go)


def test_only_the_names_offered_are_routed():
    """The route table answers exactly the names in the tool list: names a dict, an object or
    a server's own listing would know (dunders, a server-qualified name, the Python tools'
    server, the tools code mode does not offer here, near-misses) are unknown tools."""

    def double(x: int) -> int:
        """Twice x."""
        return 2 * x

    cfg = config_from(
        {"weather": demo_stdio()},
        models=[{"ref": "m", "codeMode": {"excludedTools": ["get_weather"], "sandbox": "off"}}],
    )

    async def go() -> None:
        async with Toolbox(cfg, "m", prewarm=False, tools=[double], listing_cache=False) as tools:
            offered = [t.name for t in tools.tools()]
            assert offered == [TOOL_NAME, "get_weather"]
            assert {n: type(tools.route(n)).__name__ for n in offered} == {
                TOOL_NAME: "ExecuteGoCode", "get_weather": "ProviderTool"
            }  # fmt: skip
            for name in ["", "__class__", "handlers", "get", f"{TOOL_NAME} ", TOOL_NAME.upper(), f"{TOOL_NAME}\0",
                         "weather.get_weather", "weather_get_weather", "python", "double", "save_go_program",
                         "step_go_code", "search_go_tools", "get_weather\u200b", "x" * 10_000]:  # fmt: skip
                r = await tools.call(name, {})
                assert r.is_error and r.text.startswith(f"unknown tool {name!r}"), (name, r.text)
            r = await tools.call("get_weather", {"city": "Paris"})
            assert not r.is_error and "sunny" in r.text, r.text

    anyio.run(go)


@pytest_go
def test_toolbox_concurrent_calls_and_cancellation(module_cache, tmp_path):
    pidfile = tmp_path / "pid"
    sleeper = (
        f"os.WriteFile({json.dumps(str(pidfile))}, []byte(strconv.Itoa(os.Getpid())), 0o644)\ntime.Sleep(time.Minute)"
    )

    async def go() -> int:
        async with Toolbox(config(), "vision", module_cache=module_cache) as tools:
            outputs: dict[int, str] = {}

            async def one(i: int) -> None:
                outputs[i] = (await tools.call(TOOL_NAME, {"code": f"fmt.Println({i})"})).text

            async with anyio.create_task_group() as tg:
                for i in range(6):
                    tg.start_soon(one, i)
            assert outputs == {i: f"{i}\n" for i in range(6)}

            async with anyio.create_task_group() as tg:
                tg.start_soon(tools.call, TOOL_NAME, {"code": sleeper})
                with anyio.fail_after(60):
                    while not (pidfile.exists() and pidfile.read_text()):
                        await anyio.sleep(0.05)
                tg.cancel_scope.cancel()
            return int(pidfile.read_text())

    pid = anyio.run(go)
    from tests.test_serve import gone

    assert gone(pid), "the cancelled call's program is still running"


@pytest_go
def test_sync_toolbox(module_cache):
    with SyncToolbox(config(), "vision", module_cache=module_cache) as tools:
        assert [t["function"]["name"] for t in tools.definitions("openai")] == [TOOL_NAME, "get-tiny-image"]
        r = tools.call(TOOL_NAME, {"code": WEATHER})
        assert r.text == WEATHER_OUT
        assert "[image image/png" in tools.call("get-tiny-image").text


@pytest_go
def test_example_agent_loop_with_a_scripted_model(module_cache):
    """examples/agent_loop.py's loop, with a model that plays back a script and checks what it is sent."""
    agent = load_example("agent_loop")
    seen: list[list[dict[str, Any]]] = []

    script = [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": TOOL_NAME, "arguments": json.dumps({"code": WEATHER})},
                }
            ],
        },
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "call_2", "type": "function", "function": {"name": "get-tiny-image", "arguments": ""}}
            ],
        },
        {"role": "assistant", "content": "It is 65.3°F and sunny in Paris."},
    ]

    async def model(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
        assert [t["function"]["name"] for t in tools] == [TOOL_NAME, "get-tiny-image"]
        assert (
            "func getWeather(context.Context, GetWeatherInput) (GetWeatherOutput, error)"
            in tools[0]["function"]["description"]
        )
        seen.append(list(messages))
        return script[len(seen) - 1]

    async def go() -> str:
        async with Toolbox(config(), "vision", module_cache=module_cache) as tools:
            return await agent.run_agent(tools, model, "What's the weather where I am?")

    answer = anyio.run(go)
    assert answer == "It is 65.3°F and sunny in Paris."
    assert seen[1][-1] == {"role": "tool", "tool_call_id": "call_1", "content": WEATHER_OUT}
    assert seen[2][-1]["tool_call_id"] == "call_2" and "[image image/png" in seen[2][-1]["content"]


@pytest.mark.fast
def test_examples_parse_and_name_real_api():
    """The examples users copy compile, import only gocode's public names, and use only methods
    the toolbox has on the objects they open (``with Toolbox(...) as tools``)."""
    import ast

    import gocode

    used: list[tuple[str, str, str]] = []  # (example, class, attribute)
    for path in sorted((ROOT / "examples").glob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        compile(tree, str(path), "exec")
        imported = {
            a.asname or a.name: a.name
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module == "gocode"
            for a in node.names
        }
        assert imported and set(imported.values()) <= set(gocode.__all__), (path.name, imported)
        opened = {
            item.optional_vars.id: imported[item.context_expr.func.id]
            for node in ast.walk(tree)
            if isinstance(node, (ast.With, ast.AsyncWith))
            for item in node.items
            if isinstance(item.context_expr, ast.Call)
            and isinstance(item.context_expr.func, ast.Name)
            and item.context_expr.func.id in imported
            and isinstance(item.optional_vars, ast.Name)
        }
        assert opened, f"{path.name} opens no toolbox"
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in opened:
                used.append((path.name, opened[node.value.id], node.attr))
    missing = [u for u in used if not hasattr(getattr(gocode, u[1]), u[2])]
    assert used and missing == [], missing


@pytest_go
def test_pooled_programs_use_the_toolbox_sessions(module_cache):
    """Programs reach the servers through the loopback endpoint: no server is started per run,
    calls are recorded per run, and the endpoint refuses anyone without a live run token."""
    import httpx2

    fanout = """\
g, ctx := errgroup.WithContext(ctx)
var mu sync.Mutex
total := 0.0
for i := 0; i < 20; i++ {
	g.Go(func() error {
		w, err := getWeather(ctx, GetWeatherInput{City: "Oslo"})
		if err != nil {
			return err
		}
		mu.Lock()
		total += w.Temperature
		mu.Unlock()
		return nil
	})
}
if err := g.Wait(); err != nil {
	return err
}
fmt.Println(total)
"""

    async def go() -> None:
        async with Toolbox(config(), "vision", module_cache=module_cache) as tools:
            r = await tools.execute(fanout)
            assert r.ok and r.output == "80\n", r.error_text()
            assert r.pooled and len(r.tool_calls) == 20
            assert {(c.server, c.tool, c.error) for c in r.tool_calls} == {("weather", "get_weather", None)}
            bad = await tools.execute('_, err := getWeather(ctx, GetWeatherInput{City: "Atlantis"})\nreturn err')
            assert not bad.ok and "unknown city" in bad.stderr
            # The record carries what the tool said, not the flag.
            assert bad.tool_calls[0].error == (
                "Error executing tool get_weather: unknown city 'Atlantis'; known cities: Nairobi, New York, Oslo, Paris, Tokyo"
            )
            meta = (await tools.call(TOOL_NAME, {"code": WEATHER})).result.meta["io.gocode/run"]
            assert meta["pooled"] and [c["tool"] for c in meta["toolCalls"]] == ["get_city", "get_weather"]

            loopback = tools._loopback
            assert loopback is not None
            body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
            headers = {"Accept": "application/json, text/event-stream", "X-Gocode-Server": "weather"}
            async with httpx2.AsyncClient() as http:
                assert (await http.post(loopback.url, json=body, headers=headers)).status_code == 401
                run = loopback.open_run()
                await loopback.close_run(run)  # a finished run's token is dead
                auth = {**headers, "Authorization": f"Bearer {run.token}"}
                assert (await http.post(loopback.url, json=body, headers=auth)).status_code == 401

    anyio.run(go)


@pytest.mark.fast
def test_unmatched_exclusions_are_warnings_with_suggestions():
    from gocode.toolset import ServerTools
    from gocode.view.selection import split_tools

    servers = [ServerTools("everything", (ToolInfo("everything", "get-tiny-image"), ToolInfo("everything", "echo")))]
    view = split_tools(servers, {"get_tiny_image", "everything.echo", "nothing-like-it"}, True)
    assert [t.name for t in view.excluded] == ["echo"]
    assert view.warnings == (
        "excludedTools entry 'get_tiny_image' matches no tool (did you mean 'get-tiny-image' or 'everything.get-tiny-image'?)",
        "excludedTools entry 'nothing-like-it' matches no tool",
    )


@pytest_go
def test_a_server_that_dies_is_reconnected(module_cache):
    """Kill the upstream server under a running toolbox: the next calls start a new session."""
    import os
    import signal
    import uuid

    from tests.conftest import processes_with_env

    marker = uuid.uuid4().hex
    server = {**demo_stdio(), "env": {"GOCODE_TEST_SERVER": marker}}
    cfg = config_from({"weather": server}, defaults={"codeMode": {"excludedTools": ["get_city"]}})

    async def go() -> None:
        async with Toolbox(cfg, module_cache=module_cache) as tools:
            assert (await tools.call("get_city")).result.structured_content == {"city": "Paris"}
            (victim,) = processes_with_env(marker)
            old = victim.split(":")[0]
            os.kill(int(old), signal.SIGKILL)
            # A call sent before the session's end is noticed fails (a call already sent is never
            # retried), so wait for the server the supervisor starts again: from then on calls wait
            # for that session. However long a busy machine takes, only the restart is awaited.
            with anyio.fail_after(60):
                while not [p for p in processes_with_env(marker) if p.split(":")[0] != old]:
                    await anyio.sleep(0.05)
            answers = [await tools.call("get_city") for _ in range(2)]
            assert [a.result.structured_content for a in answers] == [{"city": "Paris"}] * 2, [a.text for a in answers]
            # Code mode goes through the same (new) session.
            r = await tools.call(
                TOOL_NAME,
                {
                    "code": 'w, err := getWeather(ctx, GetWeatherInput{City: "Oslo"})\nif err != nil {\n\treturn err\n}\nfmt.Println(w.Temperature)'
                },
            )
            assert r.text == "4\n", r.text

    anyio.run(go)
