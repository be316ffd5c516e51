"""Stdio servers started ahead of their sessions (gocode.mcp.prestart): the session takes the
process over (one start, its stderr still reported), and one nobody takes is stopped."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from gocode.config import ServerConfig, load_config
from gocode.errors import DiscoveryError
from gocode.mcp.discovery import connect, failure, list_all_tools
from gocode.mcp.prestart import Command, command_for, commands_in_file, prestarted
from gocode.mcp.serverenv import base_environment

ROOT = Path(__file__).resolve().parent.parent


def counted_server(tmp_path: Path, inner: str) -> tuple[ServerConfig, Path]:
    """A stdio server (the module ``inner``, run as a script) that notes each start's pid in a file."""
    starts = tmp_path / "starts"
    script = tmp_path / "counted.py"
    script.write_text(
        "import os, runpy, sys\n"
        f"with open({str(starts)!r}, 'a') as f:\n"
        "    f.write(f'{os.getpid()}\\n')\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        f"runpy.run_module({inner!r}, run_name='__main__')\n"
    )
    return ServerConfig(command=sys.executable, args=(str(script),)), starts


def pids(starts: Path) -> list[int]:
    return [int(line) for line in starts.read_text().split()] if starts.exists() else []


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_a_prestarted_server_is_taken_over_by_its_session(tmp_path):
    server, starts = counted_server(tmp_path, "gocode.demo.server")

    async def go() -> list[str]:
        async with prestarted({"weather": command_for(server)}):
            assert len(pids(starts)) <= 1  # started (it notes its pid once it runs)
            with tempfile.TemporaryFile("w+") as errlog:
                async with connect("weather", server, errlog) as (client, _):
                    listing = await list_all_tools(client)
        return sorted(t["name"] for t in listing.tools)

    assert asyncio.run(go()) == ["get_city", "get_weather"]
    assert len(pids(starts)) == 1, "the session started the server again"
    assert gone(pids(starts)[0])


def test_a_server_started_otherwise_is_not_taken_and_the_prestarted_one_is_stopped(tmp_path):
    server, starts = counted_server(tmp_path, "gocode.demo.server")
    other = server.model_copy(update={"env": {"GOCODE_TEST_MARK": "1"}})  # another environment

    async def go() -> None:
        async with prestarted({"weather": command_for(server)}):
            with tempfile.TemporaryFile("w+") as errlog:
                async with connect("weather", other, errlog) as (client, _):
                    await list_all_tools(client)

    asyncio.run(go())
    started = pids(starts)
    assert len(started) == 2
    assert all(gone(pid) for pid in started), "a server was left running"


def test_a_taken_over_server_that_dies_is_reported_with_its_stderr(tmp_path):
    server, starts = counted_server(tmp_path, "tests.servers.crash_server")

    async def go() -> DiscoveryError:
        async with prestarted({"crash": command_for(server)}):
            with tempfile.TemporaryFile("w+") as errlog:
                try:
                    async with connect("crash", server, errlog) as (client, _):
                        await list_all_tools(client)
                except Exception as exc:
                    return failure("crash", server, exc, errlog)
        raise AssertionError("the crashing server listed its tools")

    err = asyncio.run(go())
    assert len(pids(starts)) == 1
    assert "crasher: giving up on tools/list" in err.stderr
    assert err.exit_status == 3


# Runs `gocode exec` up to the moment its servers are started, and prints the heavy modules
# loaded by then (none: validating the config and importing the SDK overlap the servers' start).
EXEC_UNTIL_SPAWN = """
import contextlib, json, os, sys
import gocode.mcp.prestart as prestart

@contextlib.asynccontextmanager
async def spawning(servers):
    loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("mcp", "mcp_types", "pydantic"))
    print(json.dumps({"servers": sorted(servers), "loaded": loaded}), flush=True)
    os._exit(0)
    yield

prestart.prestarted = spawning
from gocode.cli import main
main(["exec", "-c", sys.argv[1], "-"], prog_name="gocode")
"""


def test_exec_starts_its_servers_before_loading_the_mcp_sdk_or_the_config_models(tmp_path):
    config = tmp_path / "gocode.json"
    config.write_text(json.dumps({"mcpServers": {"weather": {"command": sys.executable, "args": ["-m", "x"]}}}))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-c", EXEC_UNTIL_SPAWN, str(config)],
        input='fmt.Println("x")\n',
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert json.loads(proc.stdout) == {"servers": ["weather"], "loaded": []}


@pytest.mark.fast
def test_the_servers_read_early_are_started_as_the_config_starts_them(tmp_path, monkeypatch):
    monkeypatch.setenv("GOCODE_TEST_TOKEN", "t0k")
    config = tmp_path / "gocode.yaml"
    config.write_text(
        "mcpServers:\n"
        "  plain: {command: srv, args: [--port, '1'], env: {A: b}, cwd: /tmp}\n"
        "  typed: {type: stdio, command: srv2}\n"
        "  secret: {command: srv3, env: {TOKEN: '${GOCODE_TEST_TOKEN}'}}\n"
        "  remote: {url: 'http://127.0.0.1:1/mcp'}\n"
    )
    early = commands_in_file(str(config))
    servers = load_config(config).mcp_servers
    # A ${VAR} is the config's to expand: that server starts with its session instead.
    assert sorted(early) == ["plain", "typed"]
    for name, command in early.items():
        assert command == command_for(servers[name])
    assert early["plain"] == Command(["srv", "--port", "1"], {**base_environment(), "A": "b"}, "/tmp")
    monkeypatch.chdir(tmp_path)
    assert sorted(commands_in_file(None)) == ["plain", "typed"]  # gocode.yaml in the working directory
    for text in ("mcpServers: [1, 2]", "{not yaml", "mcpServers:\n  x: {command: [a]}\n"):
        config.write_text(text)
        assert commands_in_file(str(config)) == {}
    assert commands_in_file(str(tmp_path / "missing.yaml")) == {}
