"""`gocode serve` on a machine where gocode never ran, driven by the MCP Python SDK over stdio.

The one-off set-up (the Go module cache, the sandbox launcher) takes minutes on a busy machine,
longer than MCP clients give `initialize`. These tests hold it: gocode's cache is empty and its
`go` (``GOCODE_GO``) is the real toolchain behind a script that waits on a file the test
creates before it downloads modules. The Go caches are linked to the warm ones, so once
released the set-up only links; the failing case uses a module proxy nothing listens on.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import anyio
import mcp_types as types
import pytest
import yaml
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from gocode.compile.modcache import find_toolchain
from gocode.demo.runner import DEMO_CODE
from tests.conftest import ROOT, demo_stdio, free_port

pytestmark = pytest.mark.go

GOCODE = str(Path(sys.executable).parent / "gocode")
WEATHER_OUT = "City: Paris\nWeather: 65.3°F, sunny\n"


def _cold_env(tmp: Path, *, link: tuple[str, ...], go: str | None = None, **extra: str) -> dict[str, str]:
    """An environment with an empty gocode cache (``link``: Go caches shared with the warm one)."""
    from gocode.paths import cache_dir

    cache = tmp / "cache"
    cache.mkdir()
    for shared in link:
        (cache / shared).symlink_to(cache_dir() / shared)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GOCODE_") or k == "GOCODE_WORKSPACES"}
    env |= {"GOCODE_CACHE_DIR": str(cache), "GOCODE_STATE_DIR": str(tmp / "state"), "GOCODE_STD_BACKGROUND": "0"}
    if go is not None:
        env["GOCODE_GO"] = go
    return env | extra


def _held_go(tmp: Path) -> tuple[str, Path, Path]:
    """A `go` that waits for the gate file before `go mod download` (the set-up's first step)
    and logs each such download: (the script, the gate, the log)."""
    real = find_toolchain().go  # the Go gocode itself uses: on PATH, or the one it fetched
    gate, log = tmp / "release", tmp / "downloads"
    script = tmp / "go"
    script.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = mod ] && [ "$2" = download ]; then\n'
        f"  echo started >> '{log}'\n"
        f"  while [ ! -e '{gate}' ]; do sleep 0.05; done\n"
        "fi\n"
        f"exec '{real}' \"$@\"\n"
    )
    script.chmod(0o755)
    return str(script), gate, log


def _config(tmp: Path) -> Path:
    path = tmp / "gocode.yaml"
    path.write_text(yaml.safe_dump({"mcpServers": {"weather": demo_stdio()}}))
    return path


def _text(r: types.CallToolResult) -> str:
    return "".join(p.text for p in r.content if isinstance(p, types.TextContent))


def test_initialize_and_tools_list_answer_while_the_set_up_is_held_and_calls_share_it(tmp_path):
    """The client's initialize and tools/list are answered while the set-up is held (before
    any module is downloaded); two calls made meanwhile hear its progress (notifications, and
    log messages on this handshake-era session) and wait for that one set-up (one download),
    then both run; the definitions never change."""
    go, gate, downloads = _held_go(tmp_path)
    env = _cold_env(tmp_path, link=("gomod", "go-build"), go=go)
    params = StdioServerParameters(command=GOCODE, args=["serve", "-c", str(_config(tmp_path))], env=env, cwd=str(ROOT))
    heard: list[str] = []
    logged: list[str] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logged.append(str(params.data))

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        heard.append(message or "")

    async def go_() -> tuple[bool, list[types.Tool], list[types.CallToolResult], list[types.Tool]]:
        async with Client(stdio_client(params), mode="legacy", logging_callback=on_log) as c:
            listed = await c.list_tools(cache_mode="bypass")
            held = not gate.exists()  # answered with the set-up still waiting on the gate
            results: list[types.CallToolResult] = []

            async def call() -> None:
                results.append(await c.call_tool("execute_go_code", {"code": DEMO_CODE}, progress_callback=on_progress))

            async with anyio.create_task_group() as tg:
                tg.start_soon(call)
                tg.start_soon(call)
                with anyio.fail_after(120):
                    while not any("downloading" in m for m in heard) or not downloads.exists():
                        await anyio.sleep(0.05)
                gate.touch()
            again = await c.list_tools(cache_mode="bypass")
            return held, listed.tools, results, again.tools

    try:
        held, listed, results, again = anyio.run(go_)
    finally:
        gate.touch()
    assert held
    assert [t.name for t in listed] == ["execute_go_code"]
    assert "sandboxed (netns tier)" in (listed[0].description or "")
    assert [(r.is_error, _text(r)) for r in results] == [(False, WEATHER_OUT)] * 2
    assert downloads.read_text().splitlines() == ["started"]  # one set-up, however many waited
    assert any(m.startswith("[1/2] downloading the MCP Go SDK") for m in heard), heard
    assert any(m.startswith("[1/2] downloading the MCP Go SDK") for m in logged), logged
    assert [t.model_dump(mode="json") for t in again] == [t.model_dump(mode="json") for t in listed]


def test_a_call_without_a_progress_token_is_told_what_is_being_set_up_after_its_timeout(tmp_path):
    """A client that asked for no progress hears nothing while it waits: past the call's timeout
    (2 s here) it gets a retryable answer naming the set-up instead of its own timeout; the
    set-up goes on, and once it is released the next call (asking for progress) runs."""
    go, gate, _ = _held_go(tmp_path)
    env = _cold_env(tmp_path, link=("gomod", "go-build"), go=go)
    config = tmp_path / "gocode.yaml"
    config.write_text(
        yaml.safe_dump({"mcpServers": {"weather": demo_stdio()}, "defaults": {"codeMode": {"timeout": 2}}})
    )
    params = StdioServerParameters(command=GOCODE, args=["serve", "-c", str(config)], env=env, cwd=str(ROOT))

    async def go_() -> tuple[types.CallToolResult, types.CallToolResult]:
        async with Client(stdio_client(params), mode="legacy") as c:
            waited = await c.call_tool("execute_go_code", {"code": DEMO_CODE})
            gate.touch()
            with anyio.fail_after(120):
                # Asking for progress, it waits for the rest of the set-up however long it takes.
                return waited, await c.call_tool("execute_go_code", {"code": DEMO_CODE}, progress_callback=_ignore)

    try:
        waited, later = anyio.run(go_)
    finally:
        gate.touch()
    run = (waited.meta or {})["io.gocode/run"]
    assert waited.is_error and run["phase"] == "warming" and run["retryable"]
    text = _text(waited)
    assert "still setting up Go on this machine (once)" in text and "downloading the MCP Go SDK" in text, text
    assert "call again in a minute" in text, text
    assert (later.is_error, _text(later)) == (False, WEATHER_OUT)


def test_a_failed_set_up_is_a_clear_error_for_every_call(tmp_path):
    """An empty Go module cache and a module proxy that refuses connections: initialize and
    tools/list are answered, and each call gets the cause and what to do, not a hang."""
    proxy = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    env = _cold_env(tmp_path, link=("go-build",), GOPROXY=proxy)
    params = StdioServerParameters(command=GOCODE, args=["serve", "-c", str(_config(tmp_path))], env=env, cwd=str(ROOT))

    async def go_() -> tuple[list[str], list[types.CallToolResult]]:
        async with Client(stdio_client(params), mode="legacy") as c:
            listed = await c.list_tools(cache_mode="bypass")
            with anyio.fail_after(300):
                first = await c.call_tool("execute_go_code", {"code": DEMO_CODE}, progress_callback=_ignore)
                second = await c.call_tool("execute_go_code", {"code": DEMO_CODE}, progress_callback=_ignore)
            return [t.name for t in listed.tools], [first, second]

    start = time.monotonic()
    names, results = anyio.run(go_)
    assert names == ["execute_go_code"]
    for r in results:
        text = _text(r)
        assert r.is_error
        assert text.startswith("not run:\ngocode could not set up Go on this machine"), text
        assert proxy.removeprefix("http://") in text and "connection refused" in text, text
        assert "the Go module proxy must be reachable" in text and "call again" in text, text
        assert (r.meta or {})["io.gocode/run"]["phase"] == "setup"
    assert time.monotonic() - start < 300


async def _ignore(progress: float, total: float | None, message: str | None) -> None:
    pass


def test_the_kernel_asked_from_python_answers_as_the_launcher_does(module_cache, monkeypatch):
    """The tier a cold server states before the launcher exists comes from the same questions
    asked of the same kernel: both answers match, a faked old Landlock ABI included."""
    from gocode.run import hostprobe
    from gocode.run.sandbox import FAKE_ABI_ENV, launcher_for

    launcher = launcher_for(module_cache)
    for fake in (None, "2"):
        if fake is None:
            monkeypatch.delenv(FAKE_ABI_ENV, raising=False)
        else:
            monkeypatch.setenv(FAKE_ABI_ENV, fake)
        by_launcher = anyio.run(launcher.probe)
        doc = hostprobe.probe(int(fake) if fake else None)
        assert doc is not None
        assert doc == by_launcher.as_json() | {"userNamespacesError": doc["userNamespacesError"]}
        assert bool(doc["userNamespacesError"]) == bool(by_launcher.user_namespaces_error)


def test_a_toolbox_on_a_cold_machine_offers_its_tools_at_once_and_its_first_call_waits(tmp_path, monkeypatch):
    """The Python API as serve: entering a Toolbox returns with its definitions while the set-up
    is held; a call made then waits for it and is answered once it is released."""
    from gocode.toolbox import Toolbox

    go, gate, downloads = _held_go(tmp_path)
    for key, value in _cold_env(tmp_path, link=("gomod", "go-build"), go=go).items():
        monkeypatch.setenv(key, value)

    async def go_() -> tuple[list[str], bool, object]:
        async with Toolbox(_config(tmp_path)) as tools:
            names = [d["name"] for d in tools.definitions("openai-responses")]
            held = not gate.exists()
            async with anyio.create_task_group() as tg:
                results: list[object] = []

                async def call() -> None:
                    results.append(await tools.call("execute_go_code", {"code": DEMO_CODE}))

                tg.start_soon(call)
                with anyio.fail_after(120):
                    while not downloads.exists():
                        await anyio.sleep(0.05)
                gate.touch()
            return names, held, results[0]

    try:
        names, held, result = anyio.run(go_)
    finally:
        gate.touch()
    assert names == ["execute_go_code"] and held
    assert (result.is_error, result.text) == (False, WEATHER_OUT)


def test_gocode_exec_on_a_machine_it_cannot_set_up_says_so_on_stderr_and_exits_2(tmp_path):
    """The one-off command shows the set-up's progress on stderr, then why it failed (Go's own
    message and the fix), exit 2: gocode could not run, not the code failing."""
    import subprocess

    proxy = f"http://127.0.0.1:{free_port()}"
    env = _cold_env(tmp_path, link=(), GOPROXY=proxy)
    code = tmp_path / "demo.go"
    code.write_text(DEMO_CODE)
    r = subprocess.run(
        [GOCODE, "exec", "-c", str(_config(tmp_path)), str(code)],
        capture_output=True, text=True, timeout=300, env=env, cwd=str(tmp_path),
    )  # fmt: skip
    assert r.returncode == 2, r.stderr
    lines = r.stderr.splitlines()
    assert lines[:2] == [
        "gocode: setting up Go on this machine for gocode (once: later runs start at once)",
        f"gocode: [1/2] downloading the MCP Go SDK and its modules ({_go_version()}) …",
    ], r.stderr
    assert "gocode could not set up Go on this machine" in r.stderr and "connection refused" in r.stderr
    assert "Traceback" not in r.stderr and r.stdout == ""


def _go_version() -> str:
    from gocode.compile.modcache import find_toolchain

    return find_toolchain().version
