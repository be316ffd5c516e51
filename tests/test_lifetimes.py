"""Lifetimes and concurrency: sessions, locks and caches belong to what made them.

A failure on an old upstream session must not close the one opened since; locks must work
from any event loop (``SyncToolbox`` runs its own, on a thread); the HTTP server forgets
client sessions that ended.
"""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
import pytest

from gocode.compile.modcache import ModuleCache
from gocode.errors import UpstreamError
from gocode.mcp.upstream import Upstream
from gocode.run.sandbox import Launcher
from gocode.schema.ir import Package
from tests.conftest import ROOT, config_from, demo_stdio

SESSION_SERVER = str(ROOT / "tests" / "servers" / "session_server.py")
LISTEN_SERVER = str(ROOT / "tests" / "servers" / "listen_server.py")
ERA_PROXY = str(ROOT / "tests" / "era_proxy.py")


def _text(result) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def test_a_failure_on_an_old_session_does_not_close_the_new_one(tmp_path):
    """Call B is in flight on session 1 when call A fails there and closes it; call C opens
    session 2. B's failure arrives late, on session 1: it must not close session 2 under C."""
    starts = tmp_path / "starts"
    server = config_from(
        {"s": {"command": sys.executable, "args": [SESSION_SERVER, "--start-log", str(starts)]}}
    ).mcp_servers["s"]

    async def changed(_: str) -> None:
        pass

    async def go() -> None:
        async with anyio.create_task_group() as tg:
            up = Upstream("s", server, tg, changed)
            await up.start()
            late: dict[str, object] = {}

            async def in_flight() -> None:
                try:
                    late["b"] = await up.call("slow", {"seconds": 2}, 10)
                except UpstreamError as exc:
                    late["b"] = exc

            tg.start_soon(in_flight)
            await anyio.sleep(0.3)
            with pytest.raises(UpstreamError):
                await up.call("malformed", {}, 10)
            c = await up.call("slow", {"seconds": 1.5}, 10)
            assert _text(c) == "slept 1.5"
            assert isinstance(late["b"], UpstreamError), late
            assert _text(await up.call("slow", {"seconds": 0}, 10)) == "slept 0"
            assert starts.read_text().splitlines() == ["start", "start"]
            up.stop()
            tg.cancel_scope.cancel()

    anyio.run(go)


def _from_two_loops(make: Callable[[], Awaitable[object]]) -> tuple[object, object]:
    """Run ``make()`` in this thread's event loop and, while it holds its lock, in another
    loop on another thread (as a ``SyncToolbox`` next to an async app does)."""
    results: dict[str, object] = {}

    def other() -> None:
        time.sleep(0.2)  # the first loop holds the lock by now
        results["other"] = asyncio.run(make())

    thread = threading.Thread(target=other, daemon=True)
    thread.start()
    results["first"] = asyncio.run(make())
    thread.join(10)
    assert not thread.is_alive(), "the second event loop is stuck on a lock the first one held"
    return results["first"], results["other"]


def test_the_sandbox_launcher_serves_two_event_loops(tmp_path, monkeypatch):
    binary = tmp_path / "launcher"
    binary.write_text("")

    async def slow_build(self: Launcher) -> Path:
        await asyncio.sleep(0.5)
        return binary

    monkeypatch.setattr(Launcher, "_build", slow_build)
    launcher = Launcher(ModuleCache(root=tmp_path))
    assert _from_two_loops(launcher.path) == (binary, binary)


def test_direct_build_configs_serve_two_event_loops(tmp_path, monkeypatch):
    async def slow_compute(self: ModuleCache, path: str, bindings_hash: str, runner: str) -> None:
        await asyncio.sleep(0.5)

    monkeypatch.setattr(ModuleCache, "_compute_direct", slow_compute)
    ws = ModuleCache(root=tmp_path)
    pkg = Package(funcs=(), digest="0" * 16)
    assert _from_two_loops(lambda: ws.direct_config(pkg)) == (None, None)


def test_the_http_server_forgets_client_sessions_that_ended():
    """Many clients connect over HTTP and leave: the sessions kept for change notices stay few."""
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    from gocode.serve.server import ToolServer, bind, serve_http
    from gocode.toolbox import Toolbox

    async def go() -> list[int]:
        async with Toolbox(config_from({"weather": demo_stdio()}), prewarm=False, pooled=False) as box:
            tool_server = ToolServer(box)
            sock = bind("127.0.0.1", 0)
            url = f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
            kept = []
            async with anyio.create_task_group() as tg:
                tg.start_soon(serve_http, tool_server, sock, "127.0.0.1", None)
                for _ in range(25):
                    async with Client(streamable_http_client(url), mode="legacy") as client:
                        assert [t.name for t in (await client.list_tools()).tools] == ["execute_go_code"]
                    with anyio.move_on_after(60):
                        while tool_server._sessions:  # the session's teardown runs after the client left
                            await anyio.sleep(0.02)
                    kept.append(len(tool_server._sessions))
                tg.cancel_scope.cancel()
            sock.close()
            return kept

    assert anyio.run(go) == [0] * 25


def test_a_refused_listen_subscription_is_logged_and_reopened(tmp_path, caplog):
    """2026-07-28 era: tool-list changes arrive only on a listen stream. The server refuses the
    first subscription; gocode says so and subscribes again, and a later change reaches it."""
    listens = tmp_path / "listens"
    server = config_from(
        {
            "s": {
                "command": sys.executable,
                "args": [ERA_PROXY, "modern-only", "--", sys.executable, LISTEN_SERVER, "--listen-log", str(listens)],
            }
        }
    ).mcp_servers["s"]
    changed = anyio.Event()

    async def on_change(_: str) -> None:
        changed.set()

    async def go() -> list[str]:
        async with anyio.create_task_group() as tg:
            up = Upstream("s", server, tg, on_change)
            await up.start()
            assert [t.name for t in up.tools.tools] == ["add"]
            with anyio.fail_after(60):
                while not (listens.exists() and len(listens.read_text().splitlines()) >= 2):
                    await anyio.sleep(0.05)
            await up.call("add", {"name": "wave"}, 10)
            with anyio.fail_after(60):
                await changed.wait()
            names = [t.name for t in up.tools.tools]
            up.stop()
            tg.cancel_scope.cancel()
            return names

    with caplog.at_level("WARNING", logger="gocode.mcp.upstream"):
        assert anyio.run(go) == ["add", "wave"]
    (line,) = [r.getMessage() for r in caplog.records if "subscription" in r.getMessage()]
    assert "listen refused once" in line and "\n" not in line, line
