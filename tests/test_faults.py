"""Faults stay where they happen: a bad tool, a dead or noisy server never takes the rest down.

Real servers over real transports: ``tests/servers/wild_server.py`` sends the exact JSON real
servers send (tools the SDK refuses, banners on stdout, a tool that kills the server), and
commands that exit at once or never answer stand in for servers that fail to start or hang.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from gocode import Toolbox
from gocode.codemode import TOOL_NAME, CodeMode
from gocode.errors import UpstreamError
from gocode.mcp.cache import ListingCache
from gocode.mcp.discovery import discover
from gocode.mcp.listing import FALLBACK_INPUT, Listing, vet_tools
from gocode.mcp.upstream import Upstream
from tests.conftest import ROOT, background, config_from, demo_stdio, free_port

GOCODE = str(Path(sys.executable).parent / "gocode")
WILD = str(ROOT / "tests" / "servers" / "wild_server.py")

DEAD = {"command": "sh", "args": ["-c", "echo 'starting up' >&2; echo 'fatal: cannot bind port 9' >&2; exit 7"]}
HANGS = {"command": sys.executable, "args": ["-c", "import time; time.sleep(120)"], "timeout": 2}

WEATHER_CODE = """\
w, err := getWeather(ctx, GetWeatherInput{City: "Oslo"})
if err != nil {
	return err
}
fmt.Println(w.Temperature)
"""


def wild(tools: str = "plain", *flags: str) -> dict:
    return {"command": sys.executable, "args": [WILD, "--tools", tools, *flags]}


def tool_names(result, server: str) -> list[str]:
    (found,) = [s for s in result.servers if s.server == server]
    return [t.name for t in found.tools]


def gocode(*args: str, stdin: str | None = None, timeout: float = 180) -> subprocess.CompletedProcess:
    return subprocess.run([GOCODE, *args], input=stdin, capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def write_config(tmp_path: Path, servers: dict) -> str:
    path = tmp_path / "gocode.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    return str(path)


# --- one tool at a time -------------------------------------------------------------------------


@pytest.mark.fast
def test_vet_tools_keeps_each_tool_it_can_and_says_why_for_the_rest():
    raw = [
        {"name": "fine", "inputSchema": {"type": "object", "properties": {"a": {"type": "string"}}}},
        {"name": "empty", "inputSchema": {}},
        {"name": "listy", "inputSchema": {"type": "array"}},
        {"name": "yes", "inputSchema": True},
        {"name": "old"},
        {"name": "text_out", "inputSchema": {"type": "object"}, "outputSchema": {"type": "string"}},
        {"inputSchema": {"type": "object"}},
        "not a tool",
        {"name": "fine", "inputSchema": {"type": "object"}},
        {"name": "odd_annotations", "inputSchema": {"type": "object"}, "annotations": "read-only"},
    ]
    kept, warnings = vet_tools(raw)
    by_name = {t["name"]: t for t in kept}
    assert list(by_name) == ["fine", "empty", "listy", "yes", "old", "text_out", "odd_annotations"]
    assert by_name["fine"] == raw[0]  # a good tool is kept exactly as sent
    assert by_name["empty"]["inputSchema"] == {}  # "no parameters", as get_city in CPE's weather example says it
    assert by_name["listy"]["inputSchema"] == FALLBACK_INPUT and by_name["yes"]["inputSchema"] == FALLBACK_INPUT
    assert by_name["old"]["inputSchema"] == {"type": "object"}
    assert "outputSchema" not in by_name["text_out"]
    assert "annotations" not in by_name["odd_annotations"]
    assert warnings == [
        "tool 'listy': inputSchema has type \"array\", not object; its input is taken as map[string]any",
        "tool 'yes': inputSchema is not a JSON object (true); its input is taken as map[string]any",
        'tool \'text_out\': outputSchema is not an object schema ({"type": "string"}); its result is returned as text',
        "tool #7 has no usable name (null); left out",
        'tool #8 is not a JSON object ("not a tool"); left out',
        "tool 'fine' is listed twice; the second one is left out (calls name only one)",
        "tool 'odd_annotations': fields the SDK cannot read were dropped: annotations",
    ]


def test_a_tool_with_an_empty_schema_does_not_hide_its_server():
    """The get_city shape of CPE's weather example (`inputSchema: {}`): the SDK refuses the whole listing."""
    result = asyncio.run(discover(config_from({"weather": wild("empty-schema")})))
    assert result.failures == {}
    assert tool_names(result, "weather") == ["get_city", "get_weather"]
    assert result.servers[0].warnings == ()


def test_a_server_that_quits_before_reading_its_first_request_is_reported_with_its_exit_status():
    """The client's write finds the pipe closed before the server's output ends: the session
    ends first, and how the process ended must still reach the report (a race under load)."""
    result = asyncio.run(discover(config_from({"quits": wild("plain", "--quit-after-initialize")})))
    assert result.failures["quits"].brief == "MCP server 'quits' failed: the server exited with status 5"
    assert result.failures["quits"].exit_status == 5


def _nested(levels: int) -> dict:
    schema: dict = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"x": schema}}
    return schema


@pytest.mark.parametrize(("transport", "levels"), [("stdio", 100), ("stdio", 420), ("http", 100)])
def test_a_tool_nested_too_deep_is_left_out_and_its_server_keeps_the_rest(tmp_path, transport, levels):
    """One tool's schema nests 100 (or 420) objects deep: the SDK's parser refused the whole
    tools/list answer, so the server failed on its timeout with none of its tools. Now that
    tool is left out with a warning saying why, and the server's other tools are typed."""
    tools = [
        {"name": "deep", "description": "Too deep.", "inputSchema": _nested(levels)},
        {"name": "odd", "description": "Odd.", "inputSchema": {"type": "object", "properties": {"a": {"type": [{}]}}}},
        {
            "name": "fine",
            "description": "Fine.",
            "inputSchema": {"type": "object", "properties": {"b": {"type": "string"}}},
        },
    ]
    path = tmp_path / "tools.json"
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(10_000)  # json's encoder recurses per level: writing the fixture only
    try:
        path.write_text(json.dumps({"tools": tools}))
    finally:
        sys.setrecursionlimit(limit)
    server = wild("plain", "--tools-file", str(path))
    with contextlib.ExitStack() as stack:
        if transport == "http":
            port = free_port()
            stack.enter_context(background([server["command"], *server["args"], "--http", str(port)], port))
            server = {"type": "http", "url": f"http://127.0.0.1:{port}/mcp"}
        config = config_from({"deep": {**server, "timeout": 20}})
        start = time.monotonic()
        result = asyncio.run(discover(config))
    assert result.failures == {} and time.monotonic() - start < 15
    assert tool_names(result, "deep") == ["odd", "fine"]
    assert result.servers[0].warnings == ("tool 'deep': inputSchema is nested deeper than 64 levels; left out",)
    cm = CodeMode(config)
    cm.adopt(result)
    assert [f.tool for f in cm.package.funcs] == ["fine"]
    assert "deep: tool 'deep': inputSchema is nested deeper than 64 levels; left out" in cm.warnings
    assert any(w.startswith("deep.odd: left out: its schema cannot be converted to Go") for w in cm.warnings)


@pytest.mark.fast
def test_a_schema_the_builder_cannot_convert_costs_that_tool_only():
    from gocode.schema.builder import build_package
    from gocode.toolset import ServerTools, ToolInfo, ToolSet

    # A type that is an object in a list: the builder once raised TypeError, and the whole tool
    # set (every server's) failed to build.
    odd = ToolInfo("s", "odd", "Odd.", input_schema={"type": "object", "properties": {"a": {"type": [{}]}}})
    fine = ToolInfo("s", "fine", "Fine.", input_schema={"type": "object", "properties": {"b": {"type": "string"}}})
    package = build_package(ToolSet((ServerTools("s", (odd, fine)),)))
    assert [f.tool for f in package.funcs] == ["fine"]
    (note,) = [w for w in package.warnings if w.startswith("s.odd")]
    assert note.startswith("s.odd: left out: its schema cannot be converted to Go (TypeError: ")


def test_bad_tools_get_a_fallback_or_are_left_out_with_a_warning():
    result = asyncio.run(discover(config_from({"mixed": wild("mixed")})))
    assert result.failures == {}
    assert tool_names(result, "mixed") == [
        "array_params",
        "bool_params",
        "string_params",
        "schema_not_object",
        "bad_output",
        "no_description",
        "long_description",
        "echo",
        "die",
    ]
    (server,) = result.servers
    tools = {t.name: t for t in server.tools}
    assert tools["array_params"].input_schema == FALLBACK_INPUT
    assert tools["bad_output"].output_schema is None
    assert tools["no_description"].description == ""
    assert len(tools["long_description"].description) > 30_000
    assert len(server.warnings) == 8
    assert "tool #1 has no usable name (null); left out" in server.warnings
    assert "tool #9 has no usable name (42); left out" in server.warnings


def test_hundreds_of_tools_and_newer_fields_under_2024_11_05():
    config = config_from(
        {
            "many": wild("many", "--protocol", "2024-11-05"),
            "old": wild("empty-schema", "--protocol", "2024-11-05"),
        }
    )
    result = asyncio.run(discover(config))
    assert result.failures == {}
    assert len(tool_names(result, "many")) == 300
    (old,) = [s for s in result.servers if s.server == "old"]
    assert old.protocol_version == "2025-11-25" and old.warnings == ()
    weather = {t.name: t for t in old.tools}["get_weather"]
    assert weather.title == "Weather" and weather.output_schema == {
        "type": "object",
        "properties": {"temperature": {"type": "number"}},
    }


def test_gocode_list_and_smoke_show_every_tool_and_every_problem(tmp_path):
    cfg = write_config(tmp_path, {"mixed": wild("mixed"), "dead": DEAD})
    r = gocode("list", "--json", "-c", cfg)
    assert r.returncode == 2, r.stderr  # a server failed
    doc = {s["name"]: s for s in json.loads(r.stdout)["servers"]}
    assert len(doc["mixed"]["tools"]) == 9 and len(doc["mixed"]["warnings"]) == 8
    assert doc["dead"]["exitStatus"] == 7 and "fatal: cannot bind port 9" in doc["dead"]["stderr"]
    assert doc["dead"]["summary"].endswith("failed: the server exited with status 7")
    text = gocode("list", "-c", cfg).stdout
    assert "  warning: tool 'echo' is listed twice; the second one is left out (calls name only one)" in text
    r = gocode("smoke", "--json", "-c", cfg)
    checks = {(c["group"], c["name"]): c for c in json.loads(r.stdout)["checks"]}
    listed = checks[("server mixed", "list tools")]
    assert listed["status"] == "passed" and listed["message"] == "9 tools, 8 warnings"
    assert len(listed["warnings"]) == 8
    assert checks[("server mixed", "compile")]["status"] == "passed"
    assert "exited with status 7" in checks[("server dead", "connect")]["message"]


# --- noisy stdout --------------------------------------------------------------------------------

PING = "out, err := ping(ctx)\nif err != nil {\n\treturn err\n}\nfmt.Println(out)\n"


def test_noise_on_stdout_is_skipped_by_the_controller(tmp_path):
    cfg = write_config(tmp_path, {"noisy": wild("plain", "--noise")})
    r = gocode("list", "-c", cfg)
    assert r.returncode == 0, r.stderr
    assert "noisy (2 tools, protocol 2025-11-25)" in r.stdout
    assert (
        "MCP server 'noisy' printed a line on stdout that is not JSON-RPC (skipped): "
        "'wild server banner: hello from stdout'" in r.stderr
    )
    assert r.stderr.count("not JSON-RPC") == 3  # then silence
    assert "validation error" not in r.stderr and "Traceback" not in r.stderr


@pytest.mark.go
def test_noise_on_stdout_is_skipped_by_the_go_program(tmp_path):
    cfg = write_config(tmp_path, {"noisy": wild("plain", "--noise")})
    for mode in (["--direct"], []):
        r = gocode("exec", *mode, "-c", cfg, "-", stdin=PING)
        assert r.returncode == 0 and r.stdout == "ping {}\n", (mode, r.stderr)
    # --direct: the program itself read the noise, and said so.
    r = gocode("exec", "--direct", "-c", cfg, "-", stdin=PING)
    assert 'gocode: MCP server "noisy" printed a line on stdout that is not JSON-RPC (skipped)' in r.stderr


# --- dead, hanging and dying servers -------------------------------------------------------------


@pytest.mark.go
def test_a_dead_and_a_hanging_server_leave_the_others_working(module_cache):
    cfg = config_from({"weather": demo_stdio(), "mixed": wild("mixed"), "dead": DEAD, "hangs": HANGS})

    async def go() -> None:
        start = time.monotonic()
        async with Toolbox(cfg, module_cache=module_cache, prewarm=False, retry=(60, 60)) as box:
            assert time.monotonic() - start < 60  # not the hanging server's 120 s
            down = box.code_mode.unavailable
            assert sorted(down) == ["dead", "hangs"]
            assert down["dead"].endswith("failed: the server exited with status 7")
            assert "no answer within 2 s" in down["hangs"]
            desc = box.tools()[0].description or ""
            assert desc.endswith(
                "Note: unavailable servers (their calls fail): dead, hangs; 8 tools typed loosely or left out.\n"
            )
            r = await box.execute(WEATHER_CODE)
            assert r.ok and r.output == "4\n", r.error_text()
            r = await box.execute(
                's, err := echo(ctx, EchoInput{Text: "hi"})\nif err != nil {\n\treturn err\n}\nfmt.Println(s)'
            )
            assert r.ok and r.output == 'echo {"text": "hi"}\n', r.error_text()
            r = await box.execute(
                's, err := arrayParams(ctx, ArrayParamsInput{"k": []int{1}})\nif err != nil {\n\treturn err\n}\nfmt.Println(s)'
            )
            assert r.ok and r.output == 'array_params {"k": [1]}\n', r.error_text()

    anyio.run(go)


def test_a_server_still_connecting_does_not_hold_up_the_start(tmp_path):
    """The start comes with the servers that answered within ``start_wait``; one still
    connecting is named as such, and its outcome is announced when it comes.

    The slow server answers nothing until the test opens its gate (then it exits), so "still
    starting" does not depend on how fast a loaded machine builds the tool list, and
    ``start_wait`` leaves the fast one seconds to connect."""
    gate = tmp_path / "gate"
    slow = {"command": "sh", "args": ["-c", f"while [ ! -e '{gate}' ]; do sleep 0.05; done; exit 3"]}
    cfg = config_from({"fast": wild("plain"), "slow": slow})

    async def go() -> None:
        async with Toolbox(cfg, prewarm=False, retry=(60, 60), start_wait=5) as box:
            assert "still starting" in box.code_mode.unavailable["slow"]
            assert "func ping(context.Context) (string, error)" in (box.tools()[0].description or "")
            changed = anyio.Event()

            async def on_change() -> None:
                changed.set()

            box.on_tools_changed(on_change)
            gate.touch()
            with anyio.fail_after(30):
                await changed.wait()
            assert box.code_mode.unavailable["slow"] == "MCP server 'slow' failed: the server exited with status 3"
            assert "func ping(context.Context) (string, error)" in (box.tools()[0].description or "")

    anyio.run(go)


@pytest.mark.go
def test_all_servers_dead_still_starts_with_zero_tools(module_cache):
    cfg = config_from({"dead": DEAD})

    async def go() -> None:
        async with Toolbox(cfg, module_cache=module_cache, prewarm=False, retry=(60, 60)) as box:
            assert [t.name for t in box.tools()] == [TOOL_NAME]
            assert box.warnings == [box.code_mode.unavailable["dead"]]
            r = await box.execute('fmt.Println("still here")')
            assert r.ok and r.output == "still here\n"

    anyio.run(go)


@pytest.mark.go
def test_exec_and_generate_with_a_dead_server(tmp_path):
    cfg = write_config(tmp_path, {"weather": demo_stdio(), "dead": DEAD})
    r = gocode("exec", "-c", cfg, "-", stdin=WEATHER_CODE)
    assert r.returncode == 0 and r.stdout == "4\n", r.stderr
    assert "MCP server 'dead' (command: sh -c" in r.stderr and "exited with status 7" in r.stderr
    # Code that needs the dead server's tools: exit 2 (a server that failed to start), with the reason.
    r = gocode("exec", "-c", cfg, "-", stdin=PING)
    assert r.returncode == 2
    assert "undefined: ping" in r.stderr
    assert "MCP server 'dead' failed: the server exited with status 7 (its tools are not in the program)" in r.stderr
    r = gocode("exec", "--direct", "-c", cfg, "-", stdin=WEATHER_CODE)
    assert r.returncode == 0 and r.stdout == "4\n", r.stderr
    r = gocode("generate", "-c", cfg)
    assert r.returncode == 0, r.stderr
    assert "func getWeather(context.Context, GetWeatherInput) (GetWeatherOutput, error)" in r.stdout
    assert "gocode: warning: MCP server 'dead' failed: the server exited with status 7" in r.stderr


@pytest.mark.go
def test_a_server_killed_mid_session_fails_at_once_and_comes_back(module_cache, tmp_path):
    flag = tmp_path / "may-start"
    flag.touch()
    cfg = config_from({"weather": demo_stdio(), "victim": wild("plain", "--fail-unless", str(flag))})

    async def go() -> None:
        async with Toolbox(cfg, module_cache=module_cache, prewarm=False, retry=(0.2, 0.5)) as box:
            r = await box.execute(PING)
            assert r.ok and r.output == "ping {}\n", r.error_text()
            flag.unlink()  # restarts now fail (exit 4)
            r = await box.execute("_, err := die(ctx)\nreturn err")
            assert not r.ok
            # The supervisor restarts the server at once (a call meanwhile waits for that
            # restart, however long a busy machine takes); once it has failed, calls fail at once.
            with anyio.fail_after(60):
                while "the server exited with status 4" not in (r := await box.execute(PING)).stderr:
                    assert not r.ok and "tool ping (server victim) failed: unavailable" in r.stderr, r.stderr
            for _ in range(3):
                r = await box.execute(PING)
                assert not r.ok and r.phase == "runtime"
                assert "tool ping (server victim) failed: unavailable: MCP server 'victim'" in r.stderr, r.stderr
                assert "the server exited with status" in r.stderr
                (c,) = r.tool_calls
                assert c.duration_ms < 10_000, c  # at once, not after the 60 s retry wait
                r = await box.execute(WEATHER_CODE)
                assert r.ok and r.output == "4\n", r.error_text()
            flag.touch()
            with anyio.fail_after(60):
                while not (r := await box.execute(PING)).ok:
                    await anyio.sleep(0.2)
            assert r.output == "ping {}\n"

    anyio.run(go)


def test_a_call_during_a_restart_waits_for_that_restart_and_starts_no_other(tmp_path):
    """The server dies; its supervisor restarts it at once (a slow start that fails). A call
    arriving meanwhile gets that restart's answer; it must not start the server a third time
    (which doubled the call's wait on a loaded machine)."""
    flag, starts = tmp_path / "may-start", tmp_path / "starts.log"
    flag.touch()
    victim = wild("plain", "--fail-unless", str(flag), "--start-delay", "2", "--start-log", str(starts))
    server = config_from({"victim": victim}).mcp_servers["victim"]

    async def changed(_: str) -> None:
        pass

    async def go() -> None:
        async with anyio.create_task_group() as tg:
            up = Upstream("victim", server, tg, changed)
            tg.start_soon(up.supervise, 60, 60)  # no retry within the test after the restart
            with anyio.fail_after(60):
                await up.attempted.wait()
            assert up.connected
            flag.unlink()
            with pytest.raises(UpstreamError):
                await up.call("die", {}, 30)
            with anyio.fail_after(60):
                while len(starts.read_text().splitlines()) < 2:  # the restart is under way
                    await anyio.sleep(0.01)
            with pytest.raises(UpstreamError, match="failed: the server exited with status 4"):
                await up.call("ping", {}, 30)
            assert starts.read_text().splitlines() == ["start", "start"]
            up.shutdown()
            tg.cancel_scope.cancel()

    anyio.run(go)


@pytest.mark.go
def test_a_server_that_comes_back_is_announced_to_serve_clients(tmp_path):
    flag = tmp_path / "may-start"
    cfg = write_config(tmp_path, {"weather": demo_stdio(), "late": wild("plain", "--fail-unless", str(flag))})
    changed = anyio.Event()

    async def on_message(message: object) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    params = StdioServerParameters(command=GOCODE, args=["serve", "-c", cfg, "--no-prewarm"])

    async def go() -> None:
        async with Client(stdio_client(params), mode="legacy", message_handler=on_message) as c:
            (tool,) = (await c.list_tools()).tools
            assert "func ping(" not in (tool.description or "")
            assert "unavailable servers (their calls fail): late" in (tool.description or "")
            flag.touch()
            # serve retries a failed server after 1 s, doubling up to 30 s: the next try may be
            # up to 30 s away when starting serve took a busy machine several seconds.
            with anyio.fail_after(60):
                await changed.wait()
            (tool,) = (await c.list_tools()).tools
            assert "func ping(context.Context) (string, error)" in (tool.description or "")
            assert "unavailable" not in (tool.description or "")
            r = await c.call_tool(TOOL_NAME, {"code": PING})
            assert "".join(p.text for p in r.content if isinstance(p, types.TextContent)) == "ping {}\n"

    anyio.run(go)


# --- cached tool lists, and the 2026-07-28 fields gocode serves -----------------------------------


def serve_params(cfg: str, env: dict | None = None) -> StdioServerParameters:
    return StdioServerParameters(
        command=GOCODE, args=["serve", "-c", cfg, "--no-prewarm"], env={**os.environ, **(env or {})}
    )


async def raw_request(client: Client, method: str, params: dict) -> dict:
    """A request's raw result, as the wire carried it (the SDK's models would fill defaults in)."""
    data = {"method": method, "params": params}
    opts: dict = {}
    client.session._stamp(data, opts)
    return await client.session._dispatcher.send_raw_request(method, data["params"], opts)


def test_a_restarted_serve_takes_tool_lists_from_the_cache_as_long_as_ttl_allows(tmp_path):
    env = {"GOCODE_CACHE_DIR": str(tmp_path / "cache")}
    logs = {name: tmp_path / f"{name}.log" for name in ("kept", "no_ttl", "expired")}
    cfg = write_config(
        tmp_path,
        {
            "kept": wild("plain", "--ttl", "600000", "--list-log", str(logs["kept"])),
            "no_ttl": wild("empty-schema", "--list-log", str(logs["no_ttl"])),
            "expired": wild("many", "--ttl", "1", "--list-log", str(logs["expired"])),
        },
    )

    async def start_once() -> str:
        async with Client(stdio_client(serve_params(cfg, env)), mode="legacy") as c:
            # "many" has enough tools for the index tier, so search_go_tools is offered beside it.
            tools = {t.name: t for t in (await c.list_tools()).tools}
            assert sorted(tools) == ["execute_go_code", "search_go_tools"]
            return tools["execute_go_code"].description or ""

    first = anyio.run(start_once)
    second = anyio.run(start_once)
    assert first == second, (first, second)
    assert "// kept (2 tools): die, ping" in second and "// no_ttl (2 tools): getCity, getWeather" in second
    assert logs["kept"].read_text() == "list\n"  # listed once: the second serve used the cache
    assert logs["no_ttl"].read_text() == "list\nlist\n"  # no ttlMs: nothing kept
    assert logs["expired"].read_text() == "list\nlist\n"  # ttlMs 1: stale at once
    entries = [json.loads(p.read_text()) for p in (tmp_path / "cache" / "tool-lists").glob("*.json")]
    assert sorted(e["ttlMs"] for e in entries) == [1, 600000]  # no entry for the server without ttlMs
    (kept,) = [e for e in entries if e["ttlMs"] == 600000]
    assert kept["cacheScope"] == "private" and [t["name"] for t in kept["tools"]] == ["ping", "die"]


@pytest.mark.go
def test_a_server_dead_at_start_keeps_its_cached_functions_and_fails_at_once(module_cache, tmp_path):
    flag = tmp_path / "may-start"
    flag.touch()
    cfg = config_from({"weather": demo_stdio(), "cached": wild("plain", "--ttl", "600000", "--fail-unless", str(flag))})
    cache = ListingCache(tmp_path / "cache")

    async def go() -> None:
        async with Toolbox(cfg, module_cache=module_cache, prewarm=False, listing_cache=cache) as box:
            assert box.code_mode.unavailable == {}
        flag.unlink()
        async with Toolbox(cfg, module_cache=module_cache, prewarm=False, listing_cache=cache, retry=(60, 60)) as box:
            assert list(box.code_mode.unavailable) == ["cached"]
            r = await box.execute(PING)
            assert not r.ok and r.phase == "runtime", r.error_text()
            assert "tool ping (server cached) failed: unavailable: MCP server 'cached'" in r.stderr
            assert "failed: the server exited with status 4" in r.stderr
            (call,) = r.tool_calls
            assert call.duration_ms < 10_000, call  # at once, not after the 60 s retry wait
            r = await box.execute(WEATHER_CODE)
            assert r.ok and r.output == "4\n", r.error_text()

    anyio.run(go)


def test_serve_sends_the_2026_07_28_list_and_result_fields(tmp_path):
    cfg = write_config(tmp_path, {"wild": wild("plain")})

    async def go() -> None:
        async with Client(stdio_client(serve_params(cfg)), mode="2026-07-28") as c:
            listed = await raw_request(c, "tools/list", {})
            assert listed["ttlMs"] == 60000 and listed["cacheScope"] == "private"
            assert listed["resultType"] == "complete"
            called = await raw_request(c, "tools/call", {"name": TOOL_NAME, "arguments": {"code": "for {\n"}})
            assert called["resultType"] == "complete" and called["isError"] is True

    anyio.run(go)


@pytest.mark.go
def test_a_direct_program_says_how_its_server_ended(tmp_path):
    cfg = write_config(tmp_path, {"victim": wild("plain")})
    r = gocode("exec", "--direct", "-c", cfg, "-", stdin="_, err := die(ctx)\nreturn err\n")
    assert r.returncode == 1
    assert "calling tool die (server victim): the server exited with status 9: " in r.stderr, r.stderr
    assert "wild: told to die" in r.stderr


@pytest.mark.fast
def test_the_listing_cache_honours_ttl_and_the_whole_server_config(tmp_path):
    cache = ListingCache(tmp_path)
    server = config_from({"s": wild("plain")}).mcp_servers["s"]
    other_secret = server.model_copy(update={"env": {"TOKEN": "another user's"}})
    listing = Listing(tools=[{"name": "ping", "inputSchema": {"type": "object"}}], ttl_ms=1000, cache_scope="private")
    cache.save("s", server, listing, "2025-11-25", "wild 1.0")
    hit = cache.load("s", server)
    assert hit is not None and hit.listing.tools == listing.tools and hit.server_info == "wild 1.0"
    assert cache.load("s", other_secret) is None  # other credentials never see this answer
    assert cache.load("t", server) is None
    assert cache.load("s", server, now=time.time() + 2) is None  # past its ttlMs
    assert cache.load("s", server) is None  # and the stale entry is gone
    cache.save("s", server, Listing(tools=listing.tools, ttl_ms=0), "2025-11-25", "")
    assert cache.load("s", server) is None and list(tmp_path.iterdir()) == []


@pytest.mark.go
def test_every_corpus_tool_compiles_in_one_program_beside_a_dead_server(module_cache):
    """The captured tool lists of the corpus's real servers, each replayed by its own server
    process, plus a dead command: every tool gets a function, all in one program."""
    files = sorted((ROOT / "tests" / "corpus" / "real").glob("*.json"))
    servers = {f"r{i:02d}": wild("plain", "--tools-file", str(p)) for i, p in enumerate(files)}
    expected = sum(len(json.loads(p.read_text())["tools"]) for p in files)
    cm = CodeMode(config_from({**servers, "dead": DEAD}), module_cache=module_cache)
    asyncio.run(cm.refresh())
    assert sorted(cm.unavailable) == ["dead"]
    assert sum(len(s.tools) for s in cm.view.code_tools.servers) == expected > 1000
    assert len(cm.package.funcs) == expected
    r = asyncio.run(cm.execute("".join(f"_ = {f.name}\n" for f in cm.package.funcs) + 'fmt.Println("ok")'))
    assert r.ok and r.output == "ok\n", r.error_text()[:3000]


@pytest.mark.go
def test_what_the_model_reads_of_a_failed_server_never_carries_its_command_line(module_cache, monkeypatch):
    """A server's args often carry a secret through ${VAR} (a token, a connection string): the
    model reads the server's name and what went wrong, the operator's log the command line."""
    secret = "s3cr3t-" + os.urandom(6).hex()
    monkeypatch.setenv("GOCODE_TEST_SECRET", secret)
    dead = {"command": "sh", "args": ["-c", "echo 'fatal: cannot bind port 9' >&2; exit 7", "${GOCODE_TEST_SECRET}"]}
    cfg = config_from({"weather": demo_stdio(), "dead": dead})

    async def go() -> None:
        async with Toolbox(cfg, module_cache=module_cache, prewarm=False, retry=(60, 60)) as box:
            assert box.code_mode.unavailable["dead"] == "MCP server 'dead' failed: the server exited with status 7"
            seen = [json.dumps([t.model_dump() for t in box.tools()]), *box.warnings]
            r = await box.execute(PING)
            seen.append(r.error_text())
            assert (
                "MCP server 'dead' failed: the server exited with status 7 (its tools are not in the program)"
                in seen[-1]
            )
            assert all(secret not in s and "sh -c" not in s for s in seen), seen

    anyio.run(go)


@pytest.mark.go
def test_a_result_without_the_structured_content_its_schema_promises_still_reaches_the_program(module_cache):
    """Many servers declare an output schema and answer in text. The result is the program's to
    decode: callTool gets the text, the typed function says what did not fit, and the session
    stays up for the next call."""
    cfg = config_from({"w": wild("empty-schema")})
    code = (
        'r, err := callTool(ctx, "w.get_weather", map[string]any{"city": "Oslo"})\n'
        "fmt.Println(r, err)\n"
        'out, err := getWeather(ctx, GetWeatherInput{City: "Oslo"})\n'
        "fmt.Println(out, err)\n"
    )

    async def go() -> None:
        async with Toolbox(cfg, module_cache=module_cache, prewarm=False) as box:
            r = await box.execute(code)
            assert r.ok, r.error_text()
            first, second = r.output.splitlines()
            assert first == 'get_weather {"city": "Oslo"} <nil>'
            assert second.startswith("{0} tool get_weather (server w) returned no structured content"), second
            assert [c.error for c in r.tool_calls] == [None, None] and box.code_mode.unavailable == {}

    anyio.run(go)


@pytest.mark.fast
def test_list_search_describe_answer_from_kept_listings_without_starting_servers(tmp_path):
    """A kept listing younger than the limit is used as is (the command is never started: it
    does not exist, and a fast test may start no process); ttlMs 0 keeps nothing."""
    from gocode.mcp.browse import browse
    from gocode.mcp.cache import RecentListings

    recent = RecentListings(tmp_path)
    config = config_from({"s": {"command": str(tmp_path / "no-such-server")}})
    server = config.mcp_servers["s"]
    listing = Listing(tools=[{"name": "ping", "inputSchema": {"type": "object"}}])
    recent.save("s", server, listing, "2025-11-25", "wild 1.0")
    said: list[str] = []
    got = asyncio.run(browse(config, recent=recent, max_age=60, progress=said.append))
    assert [t.name for s in got.servers for t in s.tools] == ["ping"] and not got.failures
    assert "s" in got.from_cache and "as listed up to" in said[0] and "--refresh" in said[0]
    recent.save("s", server, Listing(tools=listing.tools, ttl_ms=0), "2025-11-25", "")
    assert recent.load("s", server) is None


def test_list_says_a_kept_listing_is_too_old_when_it_starts_the_server(tmp_path):
    """A kept listing older than the limit is not used: the server is started, and the message
    says why (here the command does not exist, so the server is reported as failed)."""
    from gocode.mcp.browse import browse
    from gocode.mcp.cache import RecentListings

    recent = RecentListings(tmp_path)
    config = config_from({"s": {"command": str(tmp_path / "no-such-server")}})
    listing = Listing(tools=[{"name": "ping", "inputSchema": {"type": "object"}}])
    recent.save("s", config.mcp_servers["s"], listing, "2025-11-25", "wild 1.0")
    said: list[str] = []
    time.sleep(0.05)  # older than the limit below, however fast the machine
    got = asyncio.run(browse(config, recent=recent, max_age=0.01, progress=said.append))
    assert said == ["starting 1 server to list their tools (their kept listings are older than 0 s)"]
    assert not got.servers and list(got.failures) == ["s"]
