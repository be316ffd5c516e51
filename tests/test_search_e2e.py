"""Search end to end: search_go_tools over `gocode serve` with the Python MCP client, the
Toolbox offering it only when the description is not complete, searchTools and callTool from
real Go programs against real servers, and the `gocode search` / `gocode describe` commands."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import httpx2
import mcp_types as types
import pytest
import yaml
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from gocode.codemode import CodeMode
from gocode.toolbox import Toolbox
from tests.conftest import EVERYTHING, TIME_SERVER, config_from, demo_stdio, need

pytestmark = pytest.mark.go

GOCODE = str(Path(sys.executable).parent / "gocode")

EXPLORE = """\
found, err := searchTools(ctx, "current time in a timezone")
if err != nil {
	return err
}
for _, m := range found {
	fmt.Println(m.Server, m.Name, m.Function)
}
r, err := callTool(ctx, "time.get_current_time", map[string]any{"timezone": "Asia/Tokyo"})
if err != nil {
	return err
}
fmt.Println(r.(map[string]any)["timezone"])
"""


def servers() -> dict:
    return {"weather": demo_stdio(), "time": {"command": need(TIME_SERVER)}}


def code_mode(**settings: object) -> dict:
    return {"defaults": {"codeMode": settings}} if settings else {}


def text_of(result: types.CallToolResult) -> str:
    return "".join(c.text for c in result.content if isinstance(c, types.TextContent))


def test_serve_offers_search_go_tools_and_programs_search_at_run_time(tmp_path):
    config = tmp_path / "gocode.yaml"
    config.write_text(yaml.safe_dump({"mcpServers": servers(), **code_mode(disclosure="index")}))
    params = StdioServerParameters(command=GOCODE, args=["serve", "-c", str(config)], env=dict(os.environ))

    async def go() -> None:
        async with Client(stdio_client(params), mode="legacy") as c:
            listed = {t.name: t for t in (await c.list_tools()).tools}
            assert list(listed) == ["execute_go_code", "search_go_tools"]
            # What gocode is and where to look; the rules are in the description alone (not twice).
            said = c.instructions or ""
            assert "execute_go_code" in said and "search_go_tools" in said, said
            rules = "Only the standard library and golang.org/x/sync/errgroup exist"
            assert rules not in said and rules in (listed["execute_go_code"].description or ""), said
            assert set(listed["search_go_tools"].input_schema["properties"]) == {"query", "names", "limit"}

            r = await c.call_tool("search_go_tools", {"query": "get the current time in a timezone", "limit": 1})
            assert not r.is_error, text_of(r)
            assert "func getCurrentTime(context.Context, GetCurrentTimeInput) (TimeResult, error)" in text_of(r)
            assert "getWeather" not in text_of(r)

            r = await c.call_tool("search_go_tools", {"names": ["GetWeather", "time.convert_time"]})
            assert not r.is_error and "func getWeather(" in text_of(r) and "func convertTime(" in text_of(r)
            assert "type GetWeatherInput struct" in text_of(r)

            r = await c.call_tool("search_go_tools", {"names": ["getWether"]})
            assert r.is_error and "no tool named 'getWether'; did you mean getWeather" in text_of(r)
            r = await c.call_tool("search_go_tools", {})
            assert r.is_error and "give a `query`" in text_of(r)

            r = await c.call_tool("execute_go_code", {"code": EXPLORE})
            assert not r.is_error, text_of(r)
            lines = text_of(r).splitlines()
            assert lines[0] == "time get_current_time getCurrentTime" and lines[-1] == "Asia/Tokyo"

    anyio.run(go)


def test_toolbox_offers_search_only_when_the_description_is_not_complete():
    async def go() -> None:
        async with Toolbox(config_from(servers()), prewarm=False) as box:
            assert box.code_mode.complete()
            assert [t.name for t in box.tools()] == ["execute_go_code"]
            assert "searchTools" not in (box.tools()[0].description or "")
            r = await box.call("search_go_tools", {"query": "time"})
            assert r.is_error and "unknown tool 'search_go_tools'" in r.text
        async with Toolbox(config_from(servers(), **code_mode(disclosure="index")), prewarm=False) as box:
            assert [t.name for t in box.tools()] == ["execute_go_code", "search_go_tools"]
            assert "searchTools(ctx, query) ([]ToolMatch, error)" in (box.tools()[0].description or "")
            r = await box.call("search_go_tools", '{"query": "weather forecast for a city", "limit": 1}')
            assert not r.is_error and "func getWeather(" in r.text and "getCurrentTime" not in r.text

    anyio.run(go)


def test_run_time_search_covers_only_code_mode_tools_and_call_tool_is_refused_outside_it():
    code = """\
found, err := searchTools(ctx, "convert time between timezones")
if err != nil {
	return err
}
for _, m := range found {
	fmt.Println(m.Server + "." + m.Name)
}
_, err = callTool(ctx, "time.convert_time", map[string]any{"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"})
fmt.Println("excluded:", err != nil)
_, err = callTool(ctx, "nowhere.tool", nil)
fmt.Println(err)
w, err := callTool(ctx, "weather.get_city", nil)
if err != nil {
	return err
}
fmt.Println(w.(map[string]any)["city"])
"""
    config = config_from(servers(), **code_mode(excludedTools=["time.convert_time"]))

    async def go() -> None:
        async with Toolbox(config, prewarm=False) as box:
            result = await box.execute(code)
            assert result.ok, result.error_text()
            lines = result.output.splitlines()
            assert "time.convert_time" not in lines and "time.get_current_time" in lines
            assert "excluded: true" in lines
            assert 'callTool: "nowhere.tool" is not "server.tool" for a known server (servers: time, weather)' in lines
            assert lines[-1] == "Paris"
            assert [c.tool for c in result.tool_calls if c.server == "@gocode"] == ["search_tools"]

    anyio.run(go)


def test_search_tools_in_direct_mode_says_it_needs_a_controller():
    async def go() -> None:
        cm = CodeMode(config_from(servers()))
        await cm.refresh()
        result = await cm.execute(
            'w, err := callTool(ctx, "weather.get_city", nil)\nfmt.Println(w, err)\n_, err = searchTools(ctx, "x")\nreturn err'
        )
        assert not result.ok and result.phase == "runtime"
        assert result.output == "map[city:Paris] <nil>\n"
        assert "searchTools needs gocode's tool index, which only a controller has" in result.stderr

    anyio.run(go)


def test_cli_search_and_describe(tmp_path):
    config = tmp_path / "gocode.yaml"
    config.write_text(yaml.safe_dump({"mcpServers": servers()}))

    def gocode(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([GOCODE, *args, "-c", str(config)], capture_output=True, text=True, timeout=120)

    p = gocode("search", "what", "time", "is", "it", "in", "Tokyo", "--json", "--limit", "2")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["query"] == "what time is it in Tokyo" and doc["fits"] is True
    doc = doc["tools"]
    assert [(d["rank"], d["server"]) for d in doc] == [(1, "time"), (2, "time")]
    assert {d["tool"] for d in doc} == {"get_current_time", "convert_time"}
    assert all(d["declaration"].count(f"func {d['function']}(") == 1 for d in doc)

    p = gocode("search", "city", "weather")
    assert p.returncode == 0 and p.stdout.splitlines()[0].split()[:3] == ["1.", "weather.get_weather", "getWeather"]
    # Nothing fits: said so, exit 1, and the nearest tools still listed (by meaning, however far).
    p = gocode("search", "plan", "a", "birthday", "party")
    assert p.returncode == 1 and "no tool fits 'plan a birthday party'; the nearest:" in p.stderr
    listed = [line.split()[1] for line in p.stdout.splitlines()]
    assert len(listed) == 4 and set(listed) == {  # the four tools there are, nearest first
        "weather.get_city",
        "weather.get_weather",
        "time.get_current_time",
        "time.convert_time",
    }
    p = gocode("search", "zzzqqq", "--json", "--limit", "2")
    assert p.returncode == 1 and "no tool fits 'zzzqqq'" in p.stderr
    doc = json.loads(p.stdout)
    assert doc["fits"] is False and [d["rank"] for d in doc["tools"]] == [1, 2]
    p = gocode("search", "   ")
    assert p.returncode == 2 and "QUERY is empty" in p.stderr

    p = gocode("describe", "GetCurrentTime", "weather.get_city")
    assert p.returncode == 0, p.stderr
    assert "func getCurrentTime(context.Context, GetCurrentTimeInput) (TimeResult, error)" in p.stdout
    assert "func getCity(context.Context) (GetCityOutput, error)" in p.stdout
    p = gocode("describe", "get_wether", "--json")
    assert p.returncode == 1 and json.loads(p.stdout) == []
    assert "no tool named 'get_wether'; did you mean getWeather?" in p.stderr
    # A name close to none: no "did you mean" naming far tools, but the few there are.
    p = gocode("describe", "nosuch")
    assert p.returncode == 1 and "did you mean" not in p.stderr
    assert (
        "no tool named 'nosuch' nor one close to it; the tools are: convertTime, getCurrentTime, getCity, getWeather"
        in p.stderr
    )


def test_the_demos_own_tools_are_found_for_plain_questions(tmp_path):
    """Plain questions about the demo's two tools fit them, though they share no word with their
    terse descriptions and clear no fixed similarity floor: the tools stand out from what the
    question is like against tools in general. Questions about nothing there still fit nothing."""
    config = tmp_path / "gocode.yaml"
    config.write_text(yaml.safe_dump({"mcpServers": {"weather": demo_stdio()}}))

    def search(query: str) -> tuple[int, list[str]]:
        p = subprocess.run([GOCODE, "search", query, "-c", str(config)], capture_output=True, text=True, timeout=120)
        assert p.returncode in (0, 1), p.stderr
        return p.returncode, [line.split()[1] for line in p.stdout.splitlines()]

    for query in ("is it raining in tokyo", "how hot is it in Paris"):
        code, listed = search(query)
        assert code == 0 and set(listed) == {"weather.get_weather", "weather.get_city"}, (query, listed)
    assert search("where am I") == (0, ["weather.get_city", "weather.get_weather"])
    for query in ("what time is it", "order me a large pepperoni pizza", "zzzqqq"):
        assert search(query)[0] == 1, query


def test_the_loopback_search_server_only_searches_and_only_for_a_live_run():
    """The @gocode pseudo-server answers search_tools and nothing else, only with a run's token."""

    def rpc(method: str, params: dict) -> dict:
        return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}

    async def post(url: str, headers: dict, body: dict) -> httpx2.Response:
        headers = {**headers, "Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        async with httpx2.AsyncClient(timeout=30) as http:
            return await http.post(url, headers=headers, json=body)

    async def go() -> None:
        async with Toolbox(config_from(servers()), prewarm=False) as box:
            loopback = box._loopback
            assert loopback is not None
            run = loopback.open_run()
            spec = loopback.specs(run, box.code_mode.code_servers())["@gocode"]
            search = rpc("tools/call", {"name": "search_tools", "arguments": {"query": "city"}})
            r = await post(spec["url"], spec["headers"], search)
            matches = r.json()["result"]["structuredContent"]["matches"]
            assert matches[0]["function"] == "getCity" and set(matches[0]) == {
                "name", "server", "function", "description", "signature"
            }  # fmt: skip
            other = rpc("tools/call", {"name": "get_weather", "arguments": {"city": "Paris"}})
            r = await post(spec["url"], spec["headers"], other)
            assert r.json()["error"]["message"] == "unknown tool 'get_weather'"
            await loopback.close_run(run)
            r = await post(spec["url"], spec["headers"], search)
            assert r.status_code == 401

    anyio.run(go)


NPM_BIN = Path(__file__).resolve().parent.parent / ".cache" / "npm" / "node_modules" / ".bin"


@pytest.mark.net
def test_a_new_user_with_many_servers_finds_and_uses_tools_through_search(tmp_path):
    """Seven real servers at once: the default budget shows less than every declaration, so
    search_go_tools is offered; the model finds a tool by describing the task, and a program
    finds and calls one at run time."""
    many = {
        **servers(),
        "everything": {"command": need(EVERYTHING)},
        "memory": {
            "command": need(NPM_BIN / "mcp-server-memory"),
            "env": {"MEMORY_FILE_PATH": str(tmp_path / "m.json")},
        },
        "filesystem": {"command": need(NPM_BIN / "mcp-server-filesystem"), "args": [str(tmp_path)]},
        "thinking": {"command": need(NPM_BIN / "mcp-server-sequential-thinking")},
        "git": {"command": need(Path(sys.executable).parent / "mcp-server-git")},
    }
    (tmp_path / "notes.txt").write_text("remember the milk\n")
    code = f"""\
found, err := searchTools(ctx, "read the contents of a text file")
if err != nil {{
	return err
}}
m := found[0]
fmt.Println(m.Server, m.Name)
text, err := callTool(ctx, m.Server+"."+m.Name, map[string]any{{"path": {json.dumps(str(tmp_path / "notes.txt"))}}})
if err != nil {{
	return err
}}
fmt.Print(text.(map[string]any)["content"]) // the server's structured result
"""

    async def go() -> None:
        # The program may call any tool (a name found at run time), and the servers annotate
        # destructive tools: this user approves it (approvals have tests of their own).
        async with Toolbox(config_from(many), prewarm=False, approve=lambda request: True) as box:
            assert not box.code_mode.complete()
            assert [t.name for t in box.tools()] == ["execute_go_code", "search_go_tools"]
            r = await box.call("search_go_tools", {"query": "read the contents of a text file", "limit": 3})
            assert not r.is_error and "func readTextFile(" in r.text, r.text
            r = await box.call("search_go_tools", {"names": ["git_status", "createEntities"]})
            assert "func gitStatus(" in r.text and "func createEntities(" in r.text
            result = await box.execute(code)
            assert result.ok, result.error_text()
            assert result.output == "filesystem read_text_file\nremember the milk\n"

    anyio.run(go)


def test_search_and_call_tool_work_inside_the_sandbox():
    code = """\
found, err := searchTools(ctx, "weather in a city")
if err != nil {
	return err
}
r, err := callTool(ctx, found[0].Server+"."+found[0].Name, map[string]any{"city": "Paris"})
if err != nil {
	return err
}
fmt.Println(found[0].Function, r.(map[string]any)["conditions"])
"""

    async def go() -> None:
        async with Toolbox(config_from(servers(), **code_mode(sandbox="on")), prewarm=False) as box:
            result = await box.execute(code)
            assert result.ok, result.error_text()
            assert result.sandbox is not None and result.sandbox["tier"] in ("netns", "landlock")
            assert result.output == "getWeather sunny\n"

    anyio.run(go)
