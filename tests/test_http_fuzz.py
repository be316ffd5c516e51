"""A bounded fuzz of the two HTTP doors: the loopback endpoint programs call, and `gocode serve`'s
MCP endpoint. Random body sizes (empty to past the cap), random and malformed JSON-RPC, deep
nesting, raw bytes, wrong or missing tokens and lengths, chunked and slow bodies, half-open
requests and bursts of concurrent ones, on loopback only and bounded in count and time. After
them the listener must still answer a legitimate request, its memory must be bounded, and
nothing may have escaped as an unhandled exception."""

from __future__ import annotations

import json
import logging
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gocode.mcp.loopback import CONTROLLER_SERVER, SERVER_HEADER
from tests import test_ops as ops
from tests.http_clients import LIST, closed_by_server, loopback, post, response

pytestmark = pytest.mark.go  # serve's fuzz builds and runs a program at its end

MAX_BODY = 4 * 1024 * 1024  # the loopback's documented cap (docs/sandbox.md), and serve's default
INIT = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "fuzz", "version": "1"}},
}  # fmt: skip
EXAMPLES = 40
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=10), inner, max_size=5),
    max_leaves=20,
)
methods = st.sampled_from(
    ["tools/list", "tools/call", "initialize", "ping", "notifications/initialized", "resources/list", "x/y", ""]
)


@st.composite
def messages(draw: st.DrawFn) -> bytes:
    """A JSON-RPC message (maybe wrong in shape), a batch, or JSON that is no message at all."""
    message: dict = {"jsonrpc": draw(st.sampled_from(["2.0", "1.0", None])), "method": draw(methods)}
    if draw(st.booleans()):
        message["id"] = draw(st.integers() | st.text(max_size=8) | st.none() | st.lists(st.integers(), max_size=2))
    if draw(st.booleans()):
        message["params"] = draw(json_values)
    if message["method"] == "tools/call" and draw(st.booleans()):
        message["params"] = {
            "name": draw(st.sampled_from(["result", "search_tools", "x"])),
            "arguments": draw(json_values),
        }
    doc = draw(st.sampled_from(["one", "batch", "other"]))
    if doc == "batch":
        return json.dumps([message, message]).encode()
    if doc == "other":
        return json.dumps(draw(json_values)).encode()
    return json.dumps(message).encode()


@dataclass(frozen=True)
class Request:
    body: bytes
    token: str  # "valid", "wrong" or "none"
    framing: str  # "length", "chunked", "short" (declares more than it sends), "half-open", "slow"


@st.composite
def requests(draw: st.DrawFn) -> Request:
    kind = draw(st.sampled_from(["message", "truncated", "bytes", "nested", "big"]))
    if kind == "message":
        body = draw(messages())
    elif kind == "truncated":
        whole = draw(messages())
        body = whole[: draw(st.integers(0, max(0, len(whole) - 1)))]
    elif kind == "bytes":
        body = draw(st.binary(max_size=2048))
    elif kind == "nested":
        depth = draw(st.integers(100, 200_000))
        body = b"[" * depth + b"]" * depth
    else:  # empty to past the cap
        size = draw(st.integers(0, MAX_BODY + 65536))
        body = b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"p":"' + b"x" * size + b'"}}'
    token = draw(st.sampled_from(["valid", "valid", "wrong", "none"]))
    framing = draw(st.sampled_from(["length", "length", "chunked", "short", "half-open", "slow"]))
    return Request(body, token, framing)


def headers(host: str, token: str | None, framing: str, length: int) -> bytes:
    lines = ["POST /mcp HTTP/1.1", f"Host: {host}", "Content-Type: application/json",
             "Accept: application/json, text/event-stream", f"{SERVER_HEADER}: {CONTROLLER_SERVER}"]  # fmt: skip
    if token is not None:
        lines.append(f"Authorization: Bearer {token}")
    if framing == "chunked":
        lines.append("Transfer-Encoding: chunked")
    else:
        lines.append(f"Content-Length: {length + (100 if framing == 'short' else 0)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


@dataclass
class Target:
    port: int
    token: str
    legit: Callable[[], int]  # one legitimate request: its status
    stall_token: str  # the token of requests whose bodies never end
    held: list[socket.socket]  # requests whose body never ends, closed at the end
    half_open: list[socket.socket]  # requests whose headers never end, closed at the end


def exercise(target: Target, req: Request) -> None:
    """Send one request as drawn; when it is complete, it must get an answer that is not a 5xx."""
    # A body that never ends holds its run's place until the body timeout: a run of its own.
    valid = target.stall_token if req.framing == "short" else target.token
    token = {"valid": valid, "wrong": "not-" + target.token, "none": None}[req.token]
    s = socket.create_connection(("127.0.0.1", target.port), timeout=10)
    head = headers(f"127.0.0.1:{target.port}", token, req.framing, len(req.body))
    try:
        if req.framing == "half-open":
            s.sendall(head[: len(head) // 2])
            target.half_open.append(s)
            return
        s.sendall(head)
        try:
            if req.framing == "chunked":
                for i in range(0, len(req.body), 65536):
                    part = req.body[i : i + 65536]
                    s.sendall(b"%x\r\n%s\r\n" % (len(part), part))
                s.sendall(b"0\r\n\r\n")
            elif req.framing == "slow":
                for i in range(0, len(req.body), max(1, len(req.body) // 3)):
                    s.sendall(req.body[i : i + max(1, len(req.body) // 3)])
                    time.sleep(0.02)
            else:
                s.sendall(req.body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # refused before the whole body was sent (a declared size over the cap)
        if req.framing == "short":
            target.held.append(s)  # the rest of its body never comes: the server's body timeout
            return
        status, _, body = response(s, 20)
        # Only a request refused before its body was read may see its connection closed first.
        assert status != 0 or req.token != "valid" or len(req.body) > MAX_BODY, ("no answer", req, len(req.body))
        assert status < 500 or status == 503, (status, body[:300])
    finally:
        if s not in target.held and s not in target.half_open:
            s.close()


def burst(target: Target, n: int) -> None:
    """``n`` legitimate requests at once: each answered (served, or told to retry)."""
    statuses: list[int] = []
    threads = [threading.Thread(target=lambda: statuses.append(target.legit())) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert len(statuses) == n and set(statuses) <= {200, 429}, statuses


def list_tools(port: int, token: str) -> Callable[[], int]:
    """A legitimate loopback request: the controller's tools."""
    return lambda: post(port, token, LIST, 30)[0]


def open_and_close_session(port: int, token: str) -> Callable[[], int]:
    """A legitimate serve request: a session opened (its answer's status) and closed again."""

    def go() -> int:
        auth = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}
        url = f"http://127.0.0.1:{port}/mcp"
        r = httpx2.post(url, json=INIT, headers=auth, timeout=30)
        if sid := r.headers.get("mcp-session-id"):
            httpx2.delete(url, headers={**auth, "Mcp-Session-Id": sid}, timeout=30)
        return r.status_code

    return go


class Errors(logging.Handler):
    """Unhandled exceptions logged in this process (uvicorn's "Exception in ASGI application")."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info and not record.name.startswith("mcp.server.streamable_http"):
            self.records.append(record)


@pytest.fixture
def errors() -> Iterator[Errors]:
    handler = Errors()
    logging.getLogger().addHandler(handler)
    yield handler
    logging.getLogger().removeHandler(handler)


def rss_mb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) // 1024
    raise AssertionError("no VmRSS")


def fuzz(target: Target) -> None:
    """Hypothesis's examples against ``target``, each a request and, at times, a burst beside it."""

    @SETTINGS
    @given(req=requests(), n=st.integers(1, 40), bursting=st.booleans())
    def one(req: Request, n: int, bursting: bool) -> None:
        exercise(target, req)
        if bursting:
            burst(target, n)

    one()


def test_fuzz_the_loopback_endpoint(errors):
    start = time.monotonic()
    with loopback() as lb:
        run = lb.open_run()
        stalling = lb.open_run()
        target = Target(lb.loopback.port, run.token, list_tools(lb.loopback.port, run.token), stalling.token, [], [])
        base = rss_mb()
        try:
            fuzz(target)
            # Still serving, memory bounded, the half-open requests closed by the server in time.
            status, _, body = post(target.port, run.token, LIST)
            assert status == 200 and json.loads(body)["result"]["tools"]
            assert rss_mb() - base < 300, (base, rss_mb())
            assert all(closed_by_server(s, 15) for s in target.half_open[-5:])  # the header timeout
        finally:
            for s in target.held + target.half_open:
                s.close()
    assert not errors.records, [r.getMessage() for r in errors.records]
    assert time.monotonic() - start < 90


def test_fuzz_the_serve_endpoint(tmp_path):
    s = ops.start(
        tmp_path, "--log-format", "json", "--header-timeout", "2", "--body-timeout", "2",
        env={"GOCODE_TOKEN": ops.TOKEN}, server="weather",
    )  # fmt: skip
    port = int(s.url.rsplit(":", 1)[1])
    target = Target(port, ops.TOKEN, open_and_close_session(port, ops.TOKEN), ops.TOKEN, [], [])
    base = ops_memory(s.proc.pid)
    try:
        fuzz(target)
        assert all(closed_by_server(c, 5) for c in (target.held + target.half_open)[-5:])
        err, out, _ = ops.call(s.url, 'fmt.Println("still here")')
        assert not err and out == "still here\n"
        assert ops_memory(s.proc.pid) - base < 300
    finally:
        for c in target.held + target.half_open:
            c.close()
        ops.stop(s)
    log = s.stderr.read_text()
    assert "Traceback" not in log and "Exception in ASGI application" not in log, log[-3000:]
    assert len(log) < 200_000


def ops_memory(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) // 1024
    raise AssertionError(f"no VmRSS for {pid}")
