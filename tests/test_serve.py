"""`gocode serve` with real clients over real transports: the Python `mcp` client over stdio and
streamable HTTP, and the MCP Inspector CLI from npm. Needs Go and the npm sample servers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx2
import mcp_types as types
import pytest
import yaml
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from gocode.demo.runner import DEMO_CODE
from tests.conftest import EVERYTHING, ROOT, background, demo_stdio, free_port, need, wait_gone

pytestmark = pytest.mark.go

GOCODE = str(Path(sys.executable).parent / "gocode")
INSPECTOR = ROOT / ".cache" / "npm" / "node_modules" / "@modelcontextprotocol" / "inspector-cli" / "build" / "index.js"
TOKEN = "test-token-" + uuid.uuid4().hex

WEATHER = DEMO_CODE  # CPE's weather example
WEATHER_OUT = "City: Paris\nWeather: 65.3°F, sunny\n"

# Writes its pid where the test can see it, then sleeps: for cancellation tests.
SLEEPER = """\
if err := os.WriteFile(%s, []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
	return err
}
time.Sleep(120 * time.Second)
fmt.Println("not cancelled")
"""


def two_model_config() -> dict:
    """The new-user scenario: an image tool excluded for one model, in code mode for the other."""
    return {
        "mcpServers": {"weather": demo_stdio(), "everything": {"command": need(EVERYTHING)}},
        "defaults": {"model": "text"},
        # Unsandboxed (stated, not the default): test programs write their pid where the test reads it.
        "models": [
            {"ref": "vision", "codeMode": {"excludedTools": ["get-tiny-image"], "sandbox": "off"}},
            # Every declaration shown (the full tier: about 2,100 tokens with the rules naming the
            # servers' resources and prompts), so the description has getTinyImage's.
            {
                "ref": "text",
                "codeMode": {"excludedTools": ["everything.echo"], "sandbox": "off", "descriptionTokens": 2500},
            },
            {"ref": "classic", "codeMode": {"enabled": False}},
        ],
    }


@pytest.fixture(scope="module")
def config_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("serve") / "gocode.yaml"
    path.write_text(yaml.safe_dump(two_model_config()))
    return path


def stdio_params(config: Path, *args: str, env: dict | None = None) -> StdioServerParameters:
    return StdioServerParameters(
        command=GOCODE, args=["serve", "-c", str(config), *args], env={**os.environ, **(env or {})}
    )


def text_of(result: types.CallToolResult) -> str:
    return "".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def direct_tiny_image() -> types.CallToolResult:
    async with Client(StdioServerParameters(command=need(EVERYTHING)), mode="legacy") as c:
        return await c.call_tool("get-tiny-image", {})


# --- stdio --------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_stdio_vision_model(config_file, mode):
    """The image tool is passed through unchanged; the weather example runs in Go."""

    async def go() -> None:
        async with Client(stdio_client(stdio_params(config_file, "--model", "vision")), mode=mode) as c:
            listed = (await c.list_tools()).tools
            assert [t.name for t in listed] == ["execute_go_code", "get-tiny-image"]
            execute = listed[0]
            assert execute.input_schema["required"] == ["code"]
            assert execute.output_schema is not None and "output" in execute.output_schema["properties"]
            assert "func getWeather(context.Context, GetWeatherInput) (GetWeatherOutput, error)" in (
                execute.description or ""
            )
            assert "getTinyImage" not in (execute.description or "")

            r = await c.call_tool("execute_go_code", {"code": WEATHER})
            assert not r.is_error, text_of(r)
            assert text_of(r) == WEATHER_OUT and r.structured_content == {"output": WEATHER_OUT}

            passed = await c.call_tool("get-tiny-image", {})
            direct = await direct_tiny_image()
            assert [p.model_dump() for p in passed.content] == [p.model_dump() for p in direct.content]
            assert any(isinstance(p, types.ImageContent) and p.mime_type == "image/png" for p in passed.content)

            bad = await c.call_tool("execute_go_code", {"code": 'return fmt.Errorf("boom")'})
            assert bad.is_error and "boom" in text_of(bad)

    anyio.run(go)


def test_stdio_client_leaving_ends_serve_quietly(config_file, tmp_path):
    """A stdio client that hangs up (stdin closed) after a call: serve leaves in order (its
    loopback endpoint stopped, its task groups exited), saying nothing but its progress lines."""
    log = tmp_path / "serve.err"

    async def go() -> None:
        with log.open("w") as errlog:
            params = stdio_params(config_file, "--model", "text")
            async with Client(stdio_client(params, errlog=errlog), mode="legacy") as c:
                r = await c.call_tool("execute_go_code", {"code": WEATHER})
                assert text_of(r) == WEATHER_OUT, text_of(r)

    anyio.run(go)
    lines = log.read_text().splitlines()
    assert lines and all(line.startswith("gocode: ") for line in lines), lines
    assert not any("error" in line.lower() for line in lines), lines


def test_stdio_text_model_has_the_image_tool_in_go(config_file):
    async def go() -> None:
        async with Client(stdio_client(stdio_params(config_file, "--model", "text")), mode="legacy") as c:
            listed = (await c.list_tools()).tools
            assert [t.name for t in listed] == ["execute_go_code", "echo"]
            assert "func getTinyImage(context.Context) (Content, error)" in (listed[0].description or "")
            r = await c.call_tool("execute_go_code", {"code": WEATHER})
            assert text_of(r) == WEATHER_OUT, text_of(r)
            r = await c.call_tool("echo", {"message": "hi there"})
            assert text_of(r) == "Echo: hi there" and not r.is_error
            # The passthrough keeps the server's own schema and annotations.
            echo = listed[1]
            assert echo.input_schema["required"] == ["message"]

    anyio.run(go)


def test_stdio_code_mode_off_passes_everything_through(config_file):
    async def go() -> None:
        async with Client(stdio_client(stdio_params(config_file, "--model", "classic")), mode="legacy") as c:
            names = [t.name for t in (await c.list_tools()).tools]
            assert "execute_go_code" not in names
            assert {"get_city", "get_weather", "echo", "get-tiny-image"} <= set(names)
            r = await c.call_tool("get_weather", {"city": "Oslo"})
            assert not r.is_error and r.structured_content == {
                "temperature": 4.0,
                "unit": "celsius",
                "conditions": "cloudy",
            }
            # isError from the server comes back as it is.
            r = await c.call_tool("get_weather", {"city": "Atlantis"})
            assert r.is_error and "unknown city" in text_of(r)
            with pytest.raises(Exception, match="unknown tool 'execute_go_code'"):
                await c.call_tool("execute_go_code", {"code": WEATHER})
            # Progress notifications of a passed-through tool reach the client.
            seen: list[float] = []

            async def on_progress(progress: float, total: float | None, message: str | None) -> None:
                seen.append(progress)

            r = await c.call_tool(
                "trigger-long-running-operation", {"duration": 1, "steps": 2}, progress_callback=on_progress
            )
            assert not r.is_error and seen == [1.0, 2.0], (text_of(r), seen)

    anyio.run(go)


def test_stdio_client_gone_stops_the_program(config_file, tmp_path):
    """A client that goes away mid-call (stdin closes) leaves no program or server behind."""
    marker = f"GOCODE_TEST_MARK={uuid.uuid4().hex}"
    pidfile = tmp_path / "pid"

    async def go() -> int:
        params = stdio_params(config_file, "--model", "vision", env={"GOCODE_TEST_MARK": marker.split("=")[1]})
        async with Client(stdio_client(params), mode="legacy") as c, anyio.create_task_group() as tg:
            tg.start_soon(c.call_tool, "execute_go_code", {"code": SLEEPER % json.dumps(str(pidfile))})
            pid = await wait_for_pid(pidfile)
            tg.cancel_scope.cancel()
        return pid

    pid = anyio.run(go)
    assert gone(pid), f"program {pid} still running"
    assert wait_gone(marker) == []


# --- streamable HTTP ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def http_url(config_file) -> Iterator[str]:
    port = free_port()
    cmd = [GOCODE, "serve", "-c", str(config_file), "--model", "vision", "--transport", "http", "--port", str(port)]
    with background(cmd, port, env={"GOCODE_TOKEN": TOKEN}):
        yield f"http://127.0.0.1:{port}/mcp"


def http_client(url: str, token: str | None = TOKEN, mode: str = "legacy") -> Client:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"} if token else None)
    return Client(streamable_http_client(url, http_client=http), mode=mode)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_http_weather_and_image(http_url, mode):
    async def go() -> None:
        async with http_client(http_url, mode=mode) as c:
            assert [t.name for t in (await c.list_tools()).tools] == ["execute_go_code", "get-tiny-image"]
            r = await c.call_tool("execute_go_code", {"code": WEATHER})
            assert text_of(r) == WEATHER_OUT, text_of(r)
            img = await c.call_tool("get-tiny-image", {})
            assert any(isinstance(p, types.ImageContent) for p in img.content)

    anyio.run(go)


@pytest.mark.parametrize("token", [None, "wrong", TOKEN + "x"])
def test_http_wrong_token_is_refused(http_url, token):
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    r = httpx2.post(http_url, headers=headers, json=body, timeout=10)
    assert r.status_code == 401
    assert r.headers["www-authenticate"].startswith("Bearer")

    async def go() -> None:
        async with http_client(http_url, token=token) as c:
            await c.list_tools()

    with pytest.raises(BaseException):  # noqa: B017 - the client reports the 401 in its own way
        anyio.run(go)


def test_http_bearer_scheme_is_case_insensitive(http_url):
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    for scheme in ("bearer", "BEARER", "Bearer"):
        r = httpx2.post(http_url, headers={**headers, "Authorization": f"{scheme} {TOKEN}"}, json=body, timeout=10)
        assert r.status_code != 401, scheme


def test_http_parallel_calls_are_isolated(http_url):
    """Eight programs at once: each gets its own output, and they really overlap in time."""
    code = """\
start := time.Now().UnixNano()
w, err := getWeather(ctx, GetWeatherInput{City: %s})
if err != nil {
	return err
}
time.Sleep(1500 * time.Millisecond)
fmt.Printf("%%d %%d %%.1f\\n", start, time.Now().UnixNano(), w.Temperature)
"""
    cities = {"Paris": 18.5, "Tokyo": 22.0, "New York": 15.0, "Nairobi": 24.5, "Oslo": 4.0}
    jobs = [list(cities)[i % len(cities)] for i in range(8)]
    results: dict[int, str] = {}

    async def one(c: Client, i: int) -> None:
        r = await c.call_tool("execute_go_code", {"code": code % json.dumps(jobs[i])})
        assert not r.is_error, text_of(r)
        results[i] = text_of(r)

    async def go() -> None:
        async with http_client(http_url) as c, anyio.create_task_group() as tg:
            for i in range(len(jobs)):
                tg.start_soon(one, c, i)

    anyio.run(go)
    spans = []
    for i, city in enumerate(jobs):
        start, end, temp = results[i].split()
        assert float(temp) == cities[city]
        spans.append((int(start), int(end)))
    # Some program started before another one finished: they ran concurrently.
    assert any(a[0] < b[1] and b[0] < a[1] for a in spans for b in spans if a is not b)


def test_http_cancelled_request_stops_program(http_url, tmp_path):
    pidfile = tmp_path / "pid"

    async def go() -> int:
        async with http_client(http_url) as c, anyio.create_task_group() as tg:
            tg.start_soon(c.call_tool, "execute_go_code", {"code": SLEEPER % json.dumps(str(pidfile))})
            pid = await wait_for_pid(pidfile)
            tg.cancel_scope.cancel()  # the client sends notifications/cancelled
        return pid

    pid = anyio.run(go)
    assert gone(pid), f"program {pid} still running after the request was cancelled"


def test_http_disconnect_stops_program(http_url, tmp_path):
    """A client that drops the connection without cancelling: nobody can get the result, so the program stops."""
    pidfile = tmp_path / "pid"
    headers = {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "Authorization": f"Bearer {TOKEN}",
    }

    async def go() -> int:
        async with httpx2.AsyncClient(timeout=30) as http:
            init = {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"},
            }
            r = await http.post(
                http_url, headers=headers, json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}
            )
            session = {**headers, "mcp-session-id": r.headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
            await http.post(http_url, headers=session, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
            call = {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "execute_go_code", "arguments": {"code": SLEEPER % json.dumps(str(pidfile))}},
            }

            async def post() -> None:
                async with http.stream("POST", http_url, headers=session, json=call) as resp:
                    async for _ in resp.aiter_lines():
                        pass

            async with anyio.create_task_group() as tg:
                tg.start_soon(post)
                pid = await wait_for_pid(pidfile)
                tg.cancel_scope.cancel()  # closes the response stream: the connection drops
        return pid

    pid = anyio.run(go)
    assert gone(pid), f"program {pid} still running after the client disconnected"


# --- tool list changes ------------------------------------------------------------------------


def dynamic_config(tmp_path: Path) -> Path:
    """A config with the test server whose tool list changes, its `add_tool` passed through."""
    server = {
        "command": sys.executable,
        "args": ["-m", "tests.servers.dynamic_server"],
        "cwd": str(ROOT),
        "env": {"DYNAMIC_STATE": str(tmp_path / "state.json")},
    }
    config = tmp_path / "gocode.yaml"
    doc = {"mcpServers": {"dyn": server}, "defaults": {"codeMode": {"excludedTools": ["add_tool"]}}}
    config.write_text(yaml.safe_dump(doc))
    return config


def test_upstream_tool_list_change_reaches_the_client(tmp_path):
    """A server adds a tool: gocode regenerates the declarations and tells its clients."""
    config = dynamic_config(tmp_path)
    changed = anyio.Event()

    async def on_message(message: object) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    async def go() -> None:
        async with Client(stdio_client(stdio_params(config)), mode="legacy", message_handler=on_message) as c:
            before = (await c.list_tools()).tools
            assert "var wave " not in (before[0].description or "")
            r = await c.call_tool("add_tool", {"name": "wave"})
            assert text_of(r) == "added wave"
            with anyio.fail_after(60):
                await changed.wait()
            after = (await c.list_tools()).tools
            assert "func wave(context.Context) (WaveOutput, error)" in (after[0].description or "")
            r = await c.call_tool(
                "execute_go_code",
                {"code": "s, err := wave(ctx)\nif err != nil {\n\treturn err\n}\nfmt.Println(s.Result)"},
            )
            assert text_of(r) == "hello from wave\n", text_of(r)

    anyio.run(go)


def test_tool_list_change_reaches_a_2026_client(tmp_path):
    """A 2026-07-28 client hears about the change on its subscriptions/listen stream."""
    config = dynamic_config(tmp_path)

    async def go() -> None:
        async with Client(stdio_client(stdio_params(config)), mode="2026-07-28") as c:
            async with c.listen(tools_list_changed=True) as sub:
                await c.call_tool("add_tool", {"name": "beam"})
                with anyio.fail_after(60):
                    async for _event in sub:
                        break
            desc = (await c.list_tools(cache_mode="refresh")).tools[0].description or ""
            assert "func beam(context.Context) (BeamOutput, error)" in desc

    anyio.run(go)


# --- MCP Inspector CLI --------------------------------------------------------------------------


def inspector(*args: str, env: dict | None = None) -> dict:
    """Run the Inspector CLI (in its own process group, killed whole on a timeout)."""
    proc = subprocess.Popen(
        ["node", need(INSPECTOR), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=90)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        out, err = proc.communicate()
    assert proc.returncode == 0, f"inspector failed ({proc.returncode}): {err}"
    return json.loads(out)


def test_inspector_cli_over_stdio(config_file):
    env = {"GOCODE_CONFIG": str(config_file), "GOCODE_MODEL": "vision"}
    listed = inspector(GOCODE, "serve", "--method", "tools/list", env=env)
    assert [t["name"] for t in listed["tools"]] == ["execute_go_code", "get-tiny-image"]
    called = inspector(
        GOCODE, "serve", "--method", "tools/call", "--tool-name", "execute_go_code",
        "--tool-arg", "code=" + json.dumps(WEATHER), env=env,
    )  # fmt: skip
    assert called["content"][0]["text"] == WEATHER_OUT
    assert called["structuredContent"] == {"output": WEATHER_OUT} and not called["isError"]


def test_inspector_cli_over_http(http_url):
    auth = ["--transport", "http", "--header", f"Authorization: Bearer {TOKEN}"]
    listed = inspector(http_url, *auth, "--method", "tools/list")
    assert [t["name"] for t in listed["tools"]] == ["execute_go_code", "get-tiny-image"]
    called = inspector(
        http_url,
        *auth,
        "--method",
        "tools/call",
        "--tool-name",
        "execute_go_code",
        "--tool-arg",
        "code=" + json.dumps(WEATHER),
    )
    assert called["content"][0]["text"] == WEATHER_OUT
    image = inspector(http_url, *auth, "--method", "tools/call", "--tool-name", "get-tiny-image")
    assert any(p["type"] == "image" and p["mimeType"] == "image/png" for p in image["content"])


# --- helpers ------------------------------------------------------------------------------------


async def wait_for_pid(path: Path) -> int:
    with anyio.fail_after(60):
        while True:
            if path.exists() and (text := path.read_text()):
                return int(text)
            await anyio.sleep(0.05)


def gone(pid: int, timeout: float = 60) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return True
        if ") Z " in stat:
            return True
        time.sleep(0.05)
    return False
