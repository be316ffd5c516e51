"""result(v), a tool's progress in Go (callToolStream), and a program's lines while it runs."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from pydantic import BaseModel

from gocode import Toolbox
from gocode.codemode import TOOL_NAME
from gocode.config import CodeModeConfig
from gocode.results import run_to_result
from gocode.run.runner import RunResult, _Capped
from gocode.serve import server as server_mod
from gocode.view.rules import rules
from tests.conftest import EVERYTHING, config_from, demo_stdio, need
from tests.test_cli import gocode

# --- pure ---------------------------------------------------------------------------------------


@pytest.mark.fast
def test_the_rules_name_result():
    assert "result(v) (no return value) also hands v back as JSON" in rules(CodeModeConfig(), "1.26")


@pytest.mark.fast
def test_a_result_is_structured_content_beside_the_output():
    r = run_to_result(RunResult(True, "ok", output="2 rows\n", result={"rows": [1, 2]}))
    assert r.structured_content == {"output": "2 rows\n", "result": {"rows": [1, 2]}}
    assert r.content[0].text == '2 rows\nresult: {"rows": [1, 2]}'  # clients that show only text
    plain = run_to_result(RunResult(True, "ok", output="hi\n"))
    assert plain.structured_content == {"output": "hi\n"} and plain.content[0].text == "hi\n"


@pytest.mark.fast
def test_printed_lines_are_handed_on_whole_within_the_cap():
    seen: list[str] = []

    async def line(text: str) -> None:
        seen.append(text)

    async def go() -> None:
        stream = asyncio.StreamReader()
        for chunk in (b"one\ntw", b"o\n", b"three\nfour-is-long", b"er\n"):
            stream.feed_data(chunk)
        stream.feed_eof()
        capped = _Capped(24, on_line=line)
        await capped.drain(stream)
        assert capped.text() == "one\ntwo\nthree\nfour-is-lo"

    asyncio.run(go())
    assert seen == ["one", "two", "three", "four-is-lo"]


# --- through a toolbox --------------------------------------------------------------------------

pytest_go = pytest.mark.go


class Total(BaseModel):
    city: str
    degrees: float


def convert(celsius: float) -> float:
    """Degrees Celsius in Fahrenheit."""
    return celsius * 9 / 5 + 32


def config(**servers: Any) -> Any:
    return config_from({"weather": demo_stdio(), **servers}, defaults={"codeMode": {"sandbox": "off"}})


RESULT_CODE = """
w := must(getWeather(ctx, GetWeatherInput{City: "Paris"}))
f := must(convert(ctx, ConvertInput{Celsius: w.Temperature}))
fmt.Println("converted")
result(map[string]any{"city": "Paris", "fahrenheit": f, "conditions": w.Conditions})
"""


@pytest_go
def test_result_through_the_toolbox_and_as_a_stream(module_cache):
    first_line = anyio.Event()

    async def after_the_first_line() -> str:
        """Returns once the caller has the program's first line."""
        await first_line.wait()
        return "go on"

    async def go() -> None:
        async with Toolbox(config(), module_cache=module_cache, tools=[convert, after_the_first_line]) as box:
            r = await box.execute(RESULT_CODE)
            assert r.ok, r.error_text()
            assert r.output == "converted\n"
            assert r.result == {"city": "Paris", "fahrenheit": 65.3, "conditions": "sunny"}
            called = await box.call(TOOL_NAME, {"code": RESULT_CODE})
            assert called.value == r.result
            assert called.result.structured_content == {"output": "converted\n", "result": r.result}
            # No result: None; a value JSON cannot hold fails the run with the reason.
            assert (await box.execute('fmt.Println("x")')).result is None
            bad = await box.execute("result(func() {})")
            assert bad.phase == "runtime" and "result(func()): the value cannot be encoded as JSON" in bad.stderr

            # Lines arrive while the program runs, then the result: the program goes on only once
            # its first line has arrived here (lines held until the end would time the run out).
            seen: list[Any] = []
            code = 'fmt.Println("step 1")\nmust(afterTheFirstLine(ctx))\nfmt.Println("step 2")\nfmt.Println("step 3")\nresult(3)'
            async for item in box.execute_stream(code, 60):
                if item == "step 1":
                    first_line.set()
                seen.append(item)
            assert seen[:3] == ["step 1", "step 2", "step 3"]
            last = seen[-1]
            assert isinstance(last, RunResult) and last.ok and last.result == 3 and last.output.count("\n") == 3, (
                last.error_text() if isinstance(last, RunResult) else last
            )

    anyio.run(go)


@pytest_go
def test_call_tool_stream_receives_the_servers_progress(module_cache):
    code = """
var seen []string
v, err := callToolStream(ctx, "everything.trigger-long-running-operation", map[string]any{"duration": 1, "steps": 4},
	func(p ToolProgress) { seen = append(seen, fmt.Sprintf("%g/%g", p.Progress, p.Total)) })
if err != nil {
	return err
}
fmt.Println(v)
fmt.Println(strings.Join(seen, " "))
_, err = callToolStream(ctx, "everything.nope", nil, nil)
fmt.Println(err)
"""

    async def go() -> None:
        async with Toolbox(config(everything={"command": need(EVERYTHING)}), module_cache=module_cache) as box:
            r = await box.execute(code)
            assert r.ok, r.error_text()
            lines = r.output.splitlines()
            assert lines[0] == "Long running operation completed. Duration: 1 seconds, Steps: 4."
            assert lines[1] == "1/4 2/4 3/4 4/4"
            assert "nope" in lines[2]

    anyio.run(go)


@pytest_go
def test_serve_from_python_with_python_tools_result_and_progress(module_cache):
    """ToolServer started from Python over streamable HTTP, a real MCP client asking for progress."""
    token = "t-" + "x" * 30
    code = 'for i := 1; i <= 3; i++ {\n\tfmt.Println("line", i)\n\ttime.Sleep(200 * time.Millisecond)\n}\n' + (
        "result(must(convert(ctx, ConvertInput{Celsius: 100})))"
    )

    async def go() -> None:
        async with (
            Toolbox(config(), module_cache=module_cache, tools=[convert]) as box,
            anyio.create_task_group() as tg,
        ):
            sock = server_mod.bind("127.0.0.1", 0)
            port = sock.getsockname()[1]
            tg.start_soon(server_mod.serve_http, server_mod.ToolServer(box), sock, "127.0.0.1", token)
            http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
            progress: list[tuple[float, str | None]] = []

            async def on_progress(value: float, total: float | None, message: str | None) -> None:
                progress.append((value, message))

            async with Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)) as c:
                tools = (await c.list_tools()).tools
                assert "func convert(context.Context, ConvertInput) (float64, error)" in (tools[0].description or "")
                r = await c.call_tool(TOOL_NAME, {"code": code}, progress_callback=on_progress)
                assert not r.is_error, r.content
                assert r.structured_content == {"output": "line 1\nline 2\nline 3\n", "result": 212.0}
                assert progress == [(1, "line 1"), (2, "line 2"), (3, "line 3")]
                # Without a progress token nothing is sent, and the answer is the same.
                again = await c.call_tool(TOOL_NAME, {"code": code})
                assert again.structured_content == r.structured_content
            tg.cancel_scope.cancel()

    anyio.run(go)


@pytest_go
@pytest.mark.parametrize("direct", [False, True])
def test_exec_json_states_the_result(tmp_path: Path, direct: bool):
    cfg = tmp_path / "gocode.json"
    cfg.write_text(json.dumps({"mcpServers": {"weather": demo_stdio()}, "defaults": {"codeMode": {"sandbox": "off"}}}))
    code = 'w := must(getWeather(ctx, GetWeatherInput{City: "Oslo"}))\nfmt.Println("ok")\nresult(w)'
    args = ["exec", "-c", str(cfg), "--json", *(["--direct"] if direct else []), "-"]
    p = gocode(*args, stdin=code)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["output"] == "ok\n"
    assert doc["result"] == {"temperature": 4, "unit": "celsius", "conditions": "cloudy"}
