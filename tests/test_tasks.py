"""Tools that run only as MCP tasks (``execution.taskSupport: "required"``): called as tasks from
Go in pooled mode (the controller's session, gocode/mcp/tasks.py) and in direct mode (the
program's own session, go_templates/rt/tasks.go), and passed through ``gocode serve`` to a
Python SDK client; against the real server-everything (``simulate-research-query``) and a
server of tasks that behave well and badly (tests/servers/task_server.py)."""

from __future__ import annotations

import contextlib
import http.client
import http.server
import json
import re
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from gocode import Toolbox, calling
from gocode.errors import CallError, UpstreamError
from gocode.mcp import stdio, tasks, tasksupport
from gocode.toolbox import TOOL_NAME
from tests.conftest import EVERYTHING, ROOT, background, code_mode, config_from, free_port, need, run

TASKS = ROOT / "tests" / "servers" / "task_server.py"
GOCODE = str(Path(sys.executable).parent / "gocode")
TOKEN = "test-token-" + uuid.uuid4().hex


def task_server(log: Path) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(TASKS), "--log", str(log)]}


def logged(log: Path) -> list[tuple[str, str]]:
    """The task requests the server received: (method, task id), in order."""
    if not log.exists():
        return []
    return [(d["method"], d["taskId"]) for d in map(json.loads, log.read_text().splitlines())]


async def cancelled(log: Path, task_id: str, limit: float = 30) -> bool:
    """Whether the server receives tasks/cancel for the task within ``limit`` seconds."""
    with anyio.move_on_after(limit):
        while ("tasks/cancel", task_id) not in logged(log):
            await anyio.sleep(0.05)
        return True
    return False


def last_task(log: Path) -> str:
    return [t for m, t in logged(log) if m == "tools/call"][-1]


# --- pure ---------------------------------------------------------------------------------------


@pytest.mark.fast
def test_task_support_is_read_and_dropped_from_what_gocode_offers():
    assert tasksupport.task_support({"execution": {"taskSupport": "required"}}) == "required"
    assert tasksupport.task_support({"execution": {"taskSupport": "optional"}}) == "optional"
    for odd in ({}, {"execution": None}, {"execution": "required"}, {"execution": {"taskSupport": ["required"]}}):
        assert tasksupport.task_support(odd) == "forbidden"
    tool = {"name": "t", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "required"}}
    assert tasksupport.as_plain_tool(tool) == {"name": "t", "inputSchema": {"type": "object"}}


@pytest.mark.fast
@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (None, "is not a task"),
        ({"status": "working"}, "no usable taskId"),
        ({"taskId": "x" * 257, "status": "working"}, "no usable taskId"),
        ({"taskId": 7, "status": "working"}, "no usable taskId"),
        ({"taskId": "t", "status": "exploded"}, "has the status 'exploded'"),
        ({"taskId": "t", "status": {"nested": 1}}, "has the status {'nested': 1}"),
    ],
)
def test_a_task_the_server_reports_is_checked(raw, reason):
    with pytest.raises(UpstreamError, match=re.escape(reason)):
        tasks.parse_task(raw, "MCP server 's'", "tool", "the task created")


@pytest.mark.fast
def test_a_polled_tasks_message_is_progress_once():
    def state(status: str, message: str = "") -> tasks.TaskState:
        return tasks.TaskState(id="t", status=status, message=message, poll_s=1.0)

    # Ending with the last stage's message kept says nothing new (it was said while working).
    assert not tasks.news(state("working", "Generating report..."), state("completed", "Generating report..."))
    assert tasks.news(state("working", "Analyzing..."), state("working", "Generating report..."))
    assert tasks.news(state("working"), state("input_required"))
    assert not tasks.news(state("working"), state("working"))


@pytest.mark.fast
def test_a_tasks_poll_interval_and_message_are_bounded():
    task = tasks.parse_task(
        {"taskId": "t", "status": "working", "pollInterval": 0, "statusMessage": "m" * 5000}, "", "", ""
    )
    assert task.poll_s == tasks.POLL_MIN_S and len(task.message) == tasks.MAX_MESSAGE_CHARS
    assert (
        tasks.parse_task({"taskId": "t", "status": "working", "pollInterval": 1e12}, "", "", "").poll_s
        == tasks.POLL_MAX_S
    )
    assert tasks.parse_task({"taskId": "t", "status": "working", "pollInterval": "x"}, "", "", "").poll_s == 1.0


# --- the controller's session (passthrough, gocode call, pooled programs) -------------------------


def passthrough(servers: dict[str, Any], timeout: float = 60) -> Any:
    """Code mode off: every tool passed through, each call bounded by ``timeout``."""
    return config_from(servers, defaults={"codeMode": {"enabled": False, "timeout": timeout}})


def test_task_tools_called_through_the_controller(tmp_path):
    log = tmp_path / "tasks.log"

    async def go() -> None:
        async with Toolbox(passthrough({"tasks": task_server(log)}), prewarm=False) as box:
            r = await box.call("research", {"topic": "x", "steps": 2})
            assert not r.is_error and r.text == "done x", r.text
            first = last_task(log)
            assert {m for m, _ in logged(log)} == {"tools/call", "tasks/result", "tasks/get"}
            assert {t for _, t in logged(log)} == {first}

            # An optional one is called plainly.
            calls = len(logged(log))
            r = await box.call("either", {"topic": "y", "steps": 1})
            assert not r.is_error and r.text == "done y" and len(logged(log)) == calls

            # A hostile server: a status that is none, another task's state, tasks/result failing.
            # Each ends its call with the reason, its task is cancelled, and the session goes on.
            r = await box.call("garbage", {})
            assert r.is_error and "the task created for 'garbage' has the status 'exploded'" in r.text, r.text
            assert await cancelled(log, last_task(log))
            r = await box.call("wrongid", {})
            assert r.is_error and "tasks/get for 'wrongid' answered about another task" in r.text, r.text
            assert await cancelled(log, last_task(log))
            r = await box.call("broken", {})
            assert r.is_error and "it broke" in r.text, r.text
            r = await box.call("research", {"topic": "again", "steps": 1})
            assert not r.is_error and r.text == "done again"

    anyio.run(go)


def test_a_task_that_never_ends_is_bounded_by_the_call_timeout_and_cancelled(tmp_path):
    log = tmp_path / "tasks.log"

    async def go() -> None:
        async with Toolbox(passthrough({"tasks": task_server(log)}, timeout=2), prewarm=False) as box:
            started = time.monotonic()
            r = await box.call("forever", {})
            assert r.is_error and "tool 'forever' did not answer within 2 s" in r.text, r.text
            assert time.monotonic() - started < 2 + tasks.CANCEL_TIMEOUT_S
            assert await cancelled(log, last_task(log))

    anyio.run(go)


def test_a_task_result_over_the_line_limit_is_bounded_like_any_result(tmp_path, monkeypatch):
    """A result is read through the same transport whichever request it answers: one over the
    stdio line limit is skipped, and the call ends at its timeout, the session still usable."""
    monkeypatch.setattr(stdio, "LINE_LIMIT", 1 << 20)
    log = tmp_path / "tasks.log"

    async def go() -> None:
        async with Toolbox(passthrough({"tasks": task_server(log)}, timeout=3), prewarm=False) as box:
            r = await box.call("huge", {"size": 100_000})
            assert not r.is_error and r.text == "x" * 100_000
            r = await box.call("huge", {"size": 2 << 20})
            assert r.is_error and "tool 'huge' did not answer within 3 s" in r.text, r.text[:200]
            r = await box.call("research", {"topic": "after", "steps": 1})
            assert not r.is_error and r.text == "done after"

    anyio.run(go)


def test_gocode_call_calls_a_task_tool_as_a_task(tmp_path):
    log = tmp_path / "tasks.log"
    config = config_from({"tasks": task_server(log)}, defaults={"codeMode": {"timeout": 2}})

    async def go() -> None:
        called = await calling.call_tool(config, "tasks", "research", args_json='{"topic": "cli", "steps": 1}')
        assert not called.result.is_error and called.result.content[0].text == "done cli"  # type: ignore[union-attr]
        called = await calling.call_tool(config, "tasks", "garbage")
        assert called.result.is_error and "has the status 'exploded'" in called.result.content[0].text  # type: ignore[union-attr]
        with pytest.raises(CallError, match="did not answer within 2 s"):
            await calling.call_tool(config, "tasks", "forever")
        # A session (and its server) per call, each numbering its tasks from 1: the garbage
        # task and the one that never ended are cancelled, the finished one is not.
        assert [m for m, _ in logged(log)].count("tasks/cancel") == 2
        assert logged(log)[-1] == ("tasks/cancel", "task-1")

    anyio.run(go)


# --- gocode serve, to a Python SDK client ----------------------------------------------------------


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[tuple[str, Path]]:
    folder = tmp_path_factory.mktemp("serve-tasks")
    log = folder / "tasks.log"
    config = folder / "gocode.json"
    config.write_text(json.dumps({
        "mcpServers": {"everything": {"command": need(EVERYTHING)}, "tasks": task_server(log)},
        "defaults": {"codeMode": {"enabled": False}},
    }))  # fmt: skip
    port = free_port()
    with background([GOCODE, "serve", "-c", str(config), "--transport", "http", "--port", str(port)], port,
                    env={"GOCODE_TOKEN": TOKEN}):  # fmt: skip
        yield f"http://127.0.0.1:{port}/mcp", log


def serve_client(url: str) -> Client:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"})
    return Client(streamable_http_client(url, http_client=http), mode="legacy")


def test_serve_passes_a_task_tool_through_with_its_progress(served):
    url, _ = served
    seen: list[tuple[float, str | None]] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        seen.append((value, message))

    async def go() -> None:
        async with serve_client(url) as client:
            listed = {t.name: t for t in (await client.list_tools()).tools}
            assert listed["simulate-research-query"].execution is None  # gocode makes the task
            result = await client.call_tool("simulate-research-query", {"topic": "go"}, progress_callback=progress)
            assert not result.is_error
            part = result.content[0]
            assert isinstance(part, types.TextContent) and part.text.startswith("# Research Report: go\n")
            # The server's own progress for the call's token, as it sent it.
            seen.clear()
            result = await client.call_tool("research", {"topic": "p", "steps": 3}, progress_callback=progress)
            assert not result.is_error and seen == [(1.0, "step 1"), (2.0, "step 2"), (3.0, "step 3")]

    anyio.run(go)


def test_serve_status_messages_reach_the_client_as_progress(served):
    url, _ = served
    seen: list[str | None] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        seen.append(message)

    async def go() -> None:
        async with serve_client(url) as client:
            await client.call_tool("simulate-research-query", {"topic": "go"}, progress_callback=progress)

    anyio.run(go)
    assert_stages(seen)


STAGES = ["Gathering sources...", "Analyzing content...", "Synthesizing findings...", "Generating report..."]


def assert_stages(seen: list[str | None]) -> None:
    """Status messages seen as progress: the task's stages as polled (every pollInterval, 1 s
    here, as long as a stage), so some, in order, each once."""
    assert seen and all(m in STAGES for m in seen), seen
    assert seen == sorted(set(seen), key=STAGES.index), seen


def test_a_task_asks_the_client_of_its_call(served):
    """A task that needs input (status input_required) asks while tasks/result waits: the
    elicitation reaches the client of the call, and its answer the task."""
    url, _ = served
    asked: list[str] = []

    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"interpretation": "historical"})

    async def go() -> None:
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"})
        client = Client(streamable_http_client(url, http_client=http), mode="legacy", elicitation_callback=elicit)
        async with client:
            result = await client.call_tool("simulate-research-query", {"topic": "rome", "ambiguous": True})
            part = result.content[0]
            assert isinstance(part, types.TextContent) and "- **Clarification**: historical" in part.text, part

    anyio.run(go)
    assert len(asked) == 1 and "rome" in asked[0]


def test_a_client_that_cancels_cancels_the_task(served):
    url, log = served

    async def go() -> None:
        async with serve_client(url) as client:
            with anyio.move_on_after(1):
                await client.call_tool("forever", {})
                pytest.fail("a task that never ends answered")
            assert await cancelled(log, last_task(log))

    anyio.run(go)


# --- Go: pooled and direct -------------------------------------------------------------------------

STREAM = """
var seen []string
out, err := callToolStream(ctx, "everything.simulate-research-query", map[string]any{"topic": "go"},
	func(p ToolProgress) { seen = append(seen, p.Message) })
if err != nil {
	return err
}
fmt.Println(strings.HasPrefix(fmt.Sprint(out), "# Research Report: go"))
fmt.Println(strings.Join(seen, "|"))
report, err := simulateResearchQuery(ctx, SimulateResearchQueryInput{Topic: "typed"})
if err != nil {
	return err
}
fmt.Println(strings.HasPrefix(report, "# Research Report: typed"))
"""


def assert_stream(output: str) -> None:
    lines = output.splitlines()
    assert lines[0] == lines[2] == "true", output
    assert_stages(lines[1].split("|"))


ENDS = """
short, cancel := context.WithTimeout(ctx, time.Second)
defer cancel()
_, err := callTool(short, "tasks.forever", nil)
fmt.Println(errors.Is(err, context.DeadlineExceeded))
_, err = callTool(ctx, "tasks.garbage", nil)
fmt.Println(err)
"""


def go_config(log: Path) -> Any:
    return config_from(
        {"everything": {"command": need(EVERYTHING)}, "tasks": task_server(log)},
        defaults={"codeMode": {"sandbox": "off"}},
    )


@pytest.mark.go
def test_go_pooled_calls_task_tools_and_its_end_cancels_them(module_cache, tmp_path):
    log = tmp_path / "tasks.log"

    async def go() -> None:
        async with Toolbox(go_config(log), module_cache=module_cache) as box:
            r = await box.call(TOOL_NAME, {"code": STREAM})
            assert r.run is not None and r.run.ok, r.text
            assert_stream(r.run.output)
            r = await box.call(TOOL_NAME, {"code": ENDS})
            assert r.run is not None and r.run.ok, r.text
            lines = r.run.output.splitlines()
            assert lines[0] == "true"
            forever = next(t for m, t in logged(log) if m == "tools/call")
            assert await cancelled(log, forever)
            assert "the task created for 'garbage' has the status 'exploded'" in lines[1]

    anyio.run(go)


@pytest.mark.go
def test_go_direct_calls_task_tools_and_its_end_cancels_them(module_cache, tmp_path):
    log = tmp_path / "tasks.log"
    cm = code_mode(go_config(log), module_cache)
    r = run(cm, STREAM, 60)
    assert r.ok, r.error_text()
    assert_stream(r.output)
    r = run(cm, ENDS, 60)
    assert r.ok, r.error_text()
    lines = r.output.splitlines()
    assert lines[0] == "true"
    assert "the server's task for garbage: the task has the status exploded, not one of" in lines[1], lines[1]
    created = [t for m, t in logged(log) if m == "tools/call"]
    assert [t for m, t in logged(log) if m == "tasks/cancel"] == created  # both, before the program exited


# --- Go direct over streamable HTTP ---------------------------------------------------------------


class Recorder(http.server.ThreadingHTTPServer):
    """A loopback proxy in front of an MCP server over HTTP that notes, for each POST, the
    JSON-RPC method and the protocol version header, and passes the answer on as it streams."""

    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that hangs up on a stream it no longer needs

    def __init__(self, upstream: int) -> None:
        self.upstream = upstream
        self.seen: list[tuple[str, str | None]] = []
        super().__init__(("127.0.0.1", 0), _Forward)


class _Forward(http.server.BaseHTTPRequestHandler):
    server: Recorder
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def _forward(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.command == "POST":
            self.server.seen.append(
                (json.loads(body).get("method", "(answer)"), self.headers.get("Mcp-Protocol-Version"))
            )
        up = http.client.HTTPConnection("127.0.0.1", self.server.upstream, timeout=60)
        up.request(self.command, self.path, body, {k: v for k, v in self.headers.items() if k.lower() != "host"})
        resp = up.getresponse()
        self.send_response(resp.status)
        for k, v in resp.getheaders():
            if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                self.send_header(k, v)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        with contextlib.suppress(OSError):
            while chunk := resp.read1(65536):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
        up.close()

    do_GET = do_POST = do_DELETE = _forward


@pytest.fixture
def everything_http() -> Iterator[Recorder]:
    port = free_port()
    with background([need(EVERYTHING), "streamableHttp"], port, env={"PORT": str(port)}):
        proxy = Recorder(port)
        threading.Thread(target=proxy.serve_forever, daemon=True).start()
        try:
            yield proxy
        finally:
            proxy.shutdown()
            proxy.server_close()


ECHO_TOO = """
plain, err := echo(ctx, EchoInput{Message: "plain"})
if err != nil {
	return err
}
fmt.Println(plain)
"""

CUT_SHORT = """
short, cancel := context.WithTimeout(ctx, 1500*time.Millisecond)
defer cancel()
_, err := simulateResearchQuery(short, SimulateResearchQueryInput{Topic: "cut"})
fmt.Println(errors.Is(err, context.DeadlineExceeded))
"""


@pytest.mark.go
def test_go_direct_calls_task_tools_over_streamable_http(module_cache, everything_http):
    url = f"http://127.0.0.1:{everything_http.server_address[1]}/mcp"
    cm = code_mode(
        config_from({"everything": {"type": "http", "url": url}}, defaults={"codeMode": {"sandbox": "off"}}),
        module_cache,
    )
    everything_http.seen.clear()  # discovery's requests are the controller's
    r = run(cm, STREAM + ECHO_TOO, 60)
    assert r.ok, r.error_text()
    assert_stream(r.output)
    assert r.output.splitlines()[-1] == "Echo: plain"
    seen = list(everything_http.seen)
    assert seen[0] == ("initialize", None)
    # After initialize, each request names the version the server settled on, as the SDK's own
    # streamable connection would: the server validates it and answers by it.
    versions = {v for m, v in seen[1:]}
    assert len(versions) == 1 and re.fullmatch(r"\d{4}-\d\d-\d\d", str(next(iter(versions)))), seen
    methods = [m for m, _ in seen]
    assert "tasks/result" in methods and methods.count("tools/call") == 3, methods

    everything_http.seen.clear()
    r = run(cm, CUT_SHORT, 60)
    assert r.ok, r.error_text()
    assert r.output.strip() == "true"
    assert "tasks/cancel" in [m for m, _ in everything_http.seen], everything_http.seen
