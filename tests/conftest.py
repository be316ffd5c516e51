"""Shared fixtures: real servers (the bundled demo server, server-everything, mcp-server-time)
and one warmed Go module cache for the whole session.

Tests marked ``go`` need the Go toolchain. The sample servers are installed by ``make test``
(see the Makefile); a missing one fails the test that needs it with the command to run,
rather than skipping it silently.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import settings

from gocode.codemode import CodeMode
from gocode.compile.modcache import ModuleCache
from gocode.config import Config, parse_config
from gocode.program.code import ModelCode
from gocode.program.render import tools_import_path
from gocode.schema.ir import Package
from gocode.view.modelview import render_full

ROOT = Path(__file__).resolve().parent.parent
# Programs keep files in a workspace (docs/workspace.md): the tests' own, never the user's.
os.environ.setdefault("GOCODE_WORKSPACES", tempfile.mkdtemp(prefix="gocode-test-workspaces-"))
# Tests on caches of their own do not leave a standard-library compile running behind them.
os.environ.setdefault("GOCODE_STD_BACKGROUND", "0")
# Property tests without their own example count: 300 random examples in the full run; `make
# test-fast` passes --hypothesis-profile=fast, whose 60 keep the fast lane under a minute.
settings.register_profile("full", max_examples=300)
settings.register_profile("fast", max_examples=60)
settings.load_profile("full")
EVERYTHING = ROOT / ".cache" / "npm" / "node_modules" / ".bin" / "mcp-server-everything"
TIME_SERVER = Path(sys.executable).parent / "mcp-server-time"


def load_script(relpath: str, name: str) -> ModuleType:
    """Import one of the repo's scripts (bench/, examples/) by path, under ``name``."""
    spec = importlib.util.spec_from_file_location(name, ROOT / relpath)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def config_from(servers: dict, **extra: object) -> Config:
    return parse_config(json.dumps({"mcpServers": servers, **extra}), "<test>.json")


def demo_stdio() -> dict:
    return {"command": sys.executable, "args": ["-m", "gocode.demo.server"], "cwd": str(ROOT)}


def need(path: Path) -> str:
    if not path.exists():
        pytest.fail(f"{path} is missing: run `make setup` (it installs the sample MCP servers)")
    return str(path)


@pytest.fixture(scope="session")
def module_cache() -> ModuleCache:
    ws = ModuleCache()
    # Complete (as `gocode warmup` makes it): direct builds then see the whole standard library.
    ws.warmup(lambda msg: print(msg, file=sys.stderr), full=True)
    return ws


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, proc: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return
        time.sleep(0.1)
    raise TimeoutError(f"port {port} did not open")


@contextlib.contextmanager
def background(cmd: list[str], port: int, env: dict | None = None) -> Iterator[subprocess.Popen]:
    proc = subprocess.Popen(
        cmd, cwd=ROOT, env={**os.environ, **(env or {})}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True,
    )  # fmt: skip
    try:
        wait_port(port, proc)
        yield proc
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, 9)
        proc.wait()


@pytest.fixture(scope="session")
def demo_http_url() -> Iterator[str]:
    port = free_port()
    with background([sys.executable, "-m", "gocode.demo.server", "--transport", "http", "--port", str(port)], port):
        yield f"http://127.0.0.1:{port}/mcp"


@pytest.fixture(scope="session")
def demo_sse_url() -> Iterator[str]:
    port = free_port()
    with background([sys.executable, "-m", "gocode.demo.server", "--transport", "sse", "--port", str(port)], port):
        yield f"http://127.0.0.1:{port}/sse"


def code_mode(config: Config, module_cache: ModuleCache, model: str | None = None) -> CodeMode:
    cm = CodeMode(config, model, module_cache=module_cache)
    asyncio.run(cm.refresh())
    return cm


@pytest.fixture(scope="session")
def demo_cm(module_cache: ModuleCache) -> CodeMode:
    return code_mode(config_from({"weather": demo_stdio()}), module_cache)


def run(cm: CodeMode, code: str, timeout: float | None = None):
    return asyncio.run(cm.execute(code, timeout))


def processes_with_env(marker: str) -> list[str]:
    """Live processes whose environment contains ``marker`` (from /proc; no ps needed)."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes()
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        if marker.encode() in environ and ") Z " not in stat:
            found.append(f"{pid}: {cmdline}")
    return found


def wait_gone(marker: str, timeout: float = 60.0) -> list[str]:
    deadline = time.monotonic() + timeout
    while (left := processes_with_env(marker)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


def assert_go_package_clean(module_cache: ModuleCache, pkg: Package, scratch: Path) -> None:
    """A program referencing every generated function builds; the bindings and the runtime
    are gofmt-clean and pass ``go vet``; the declarations the model sees are gofmt-clean Go."""
    code = "".join(f"_ = {f.name}\n" for f in pkg.funcs)
    build = asyncio.run(module_cache.build(pkg, ModelCode(code)))
    assert build.ok, build.output
    rel = tools_import_path(pkg).removeprefix("gocodews/")
    fmt = subprocess.run(
        ["gofmt", "-l", str(module_cache.dir / rel), str(module_cache.dir / "rt")], capture_output=True, text=True
    )
    assert fmt.stdout == "" and fmt.returncode == 0, fmt.stdout + fmt.stderr
    vet = subprocess.run(
        [module_cache.toolchain.go, "vet", f"./{rel}", "./rt"], cwd=module_cache.dir, env=module_cache.go_env(),
        capture_output=True, text=True,
    )  # fmt: skip
    assert vet.returncode == 0, vet.stderr
    decls = scratch / "decls.go"
    decls.write_text('package x\n\nimport "context"\n\n' + render_full(pkg))
    fmt = subprocess.run(["gofmt", "-l", str(decls)], capture_output=True, text=True)
    assert fmt.stdout == "" and fmt.returncode == 0, fmt.stdout + fmt.stderr


# --- the fast lane ------------------------------------------------------------------------------
#
# `make test-fast` runs the tests marked `fast` (a module's `pytestmark` or one test's mark):
# pure code, no Go toolchain, no servers, no processes. A new test is in the full lane only
# until marked; one marked fast that uses a fixture needing Go or servers is a collection error,
# and one that starts a process anyway fails at that point, so nothing slow hides in the lane.

SLOW_FIXTURES = {"module_cache", "demo_cm", "demo_http_url", "demo_sse_url"}
SLOW_MARKERS = {"go", "net"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("fast") is None:
            continue
        slow = sorted(SLOW_FIXTURES & set(getattr(item, "fixturenames", ())))
        slow += sorted(m for m in SLOW_MARKERS if item.get_closest_marker(m) is not None)
        if slow:
            raise pytest.UsageError(f"{item.nodeid} is marked fast but needs {', '.join(slow)}")


def _no_processes(*_args: object, **_kwargs: object) -> None:
    raise RuntimeError("a test marked fast started a process: drop `fast` (it belongs in the full lane)")


@pytest.fixture(autouse=True)
def _fast_tests_start_no_process(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    if request.node.get_closest_marker("fast") is not None:
        monkeypatch.setattr(subprocess.Popen, "_execute_child", _no_processes)
        monkeypatch.setenv("GOCODE_SEMANTIC_SEARCH", "0")  # pure: BM25 alone, no model


@pytest.fixture(autouse=True)
def _own_result_shapes(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    # Shapes learned from one test's calls must not show in another test's model view.
    monkeypatch.setenv("GOCODE_SHAPES_DIR", str(tmp_path_factory.mktemp("shapes")))


@pytest.fixture(autouse=True)
def _own_recent_listings(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    # What `gocode list` kept of a server in another test, or an earlier run on this machine,
    # must not answer for it here (a test expecting the server to start would see the old list).
    monkeypatch.setenv("GOCODE_RECENT_LISTINGS", str(tmp_path_factory.mktemp("listings")))


@pytest.fixture(autouse=True)
def _own_workspaces(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    # Files one test's programs keep (codeMode.workspace, on by default) must not reach another
    # test's, nor the user's own workspaces.
    monkeypatch.setenv("GOCODE_WORKSPACES", str(tmp_path_factory.mktemp("workspaces")))
