"""Every resource a program or an HTTP client can drive is bounded, tested against real listeners:
the loopback endpoint (bodies, a run's gate), `gocode serve`'s HTTP port (half-open connections
before the token, sessions per client) and a real sandboxed Go program flooding the loopback
while serve's memory is measured."""

from __future__ import annotations

import json
import os
import re
import socket
import time
from pathlib import Path

import anyio
import httpx2
import pytest

from tests import test_ops as ops
from tests.http_clients import LIST, closed_by_server, connect, head, loopback, post, response

INIT = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}  # fmt: skip
ACCEPT = "application/json, text/event-stream"

pytestmark = pytest.mark.go

# The documented limits of the loopback (docs/sandbox.md): the largest body, and per run the
# requests admitted at once and those that may wait.
MAX_BODY = 4 * 1024 * 1024
MAX_REQUESTS_PER_RUN = 16
MAX_WAITING_PER_RUN = 256


def jsonrpc_error(body: bytes) -> str:
    doc = json.loads(body)
    assert doc["jsonrpc"] == "2.0" and doc["id"] is None, doc
    return doc["error"]["message"]


# --- the loopback endpoint ------------------------------------------------------------------


def test_loopback_refuses_a_body_over_the_cap_before_reading_it():
    with loopback() as lb:
        run = lb.open_run()
        port = lb.loopback.port
        # Declared too large: refused at once, with nothing of the body sent.
        with connect(port) as s:
            s.sendall(head(run.token, MAX_BODY + 1))
            status, headers, body = response(s)
        assert status == 413 and headers["connection"] == "close"
        assert f"at most {MAX_BODY}" in jsonrpc_error(body)
        # Chunked: counted as read, refused as soon as it passes the cap.
        with connect(port) as s:
            s.sendall(head(run.token, None))
            chunk = b"x" * 65536
            sent = 0
            try:
                while sent <= MAX_BODY + len(chunk):
                    s.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    sent += len(chunk)
            except (BrokenPipeError, ConnectionResetError):
                pass
            status, _, body = response(s)
        assert status == 413 and "over" in jsonrpc_error(body)
        # A body at the cap is still served.
        pad = b" " * (MAX_BODY - len(LIST))
        status, _, body = post(port, run.token, LIST + pad)
        assert status == 200 and json.loads(body)["result"]["tools"], body[:200]


def test_a_runs_gate_admits_a_few_queues_some_and_refuses_the_rest():
    with loopback() as lb:
        run = lb.open_run()
        port = lb.loopback.port
        held = []
        try:
            # Requests whose bodies never come hold their places (and then their wait).
            for _ in range(MAX_REQUESTS_PER_RUN + MAX_WAITING_PER_RUN):
                s = connect(port)
                s.sendall(head(run.token, 10))
                held.append(s)
            deadline = time.monotonic() + 30
            while run.gate.waiting < MAX_WAITING_PER_RUN and time.monotonic() < deadline:
                time.sleep(0.05)
            assert run.gate.requests == MAX_REQUESTS_PER_RUN and run.gate.waiting == MAX_WAITING_PER_RUN
            status, headers, body = post(port, run.token, LIST)
            assert status == 429 and headers["retry-after"] == "1"
            assert "too many requests from this program at once" in jsonrpc_error(body)
            # Another run has a gate of its own.
            other = lb.open_run()
            assert post(port, other.token, LIST)[0] == 200
            # The run ends: what waits is refused, and nothing is left held.
            lb.close_run(run)
            status, _, body = response(held[-1])
            assert status == 503 and "run has ended" in jsonrpc_error(body)
        finally:
            for s in held:
                s.close()


# --- gocode serve: connections before the token, sessions -------------------------------------


def low_fd_gocode(tmp: Path, nofile: int) -> str:
    """`gocode` under a low open-files limit (soft and hard), so a flood reaches it quickly."""
    wrapper = tmp / "gocode-low-fd"
    wrapper.write_text(f'#!/bin/sh\nexec prlimit --nofile={nofile}:{nofile} "{ops.GOCODE}" "$@"\n')
    wrapper.chmod(0o755)
    return str(wrapper)


def legit_call(url: str, timeout: float) -> str:
    async def go() -> str:
        with anyio.fail_after(timeout):
            async with ops.client(url) as c:
                r = await c.call_tool("execute_go_code", {"code": 'fmt.Println("legit")'})
                return "".join(p.text for p in r.content if hasattr(p, "text"))

    return anyio.run(go)


def test_half_open_connections_before_the_token_are_shed_and_calls_still_answered(tmp_path, monkeypatch):
    """~1,500 half-sent requests against a serve holding 1,024 descriptors: without limits they
    held every descriptor (EMFILE), calls hung and the accept loop logged without end."""
    monkeypatch.setattr(ops, "GOCODE", low_fd_gocode(tmp_path, 1024))
    s = ops.start(
        tmp_path, "--log-format", "json", "--header-timeout", "3", env={"GOCODE_TOKEN": ops.TOKEN}, server="weather"
    )
    port = int(s.url.rsplit(":", 1)[1])
    held: list[socket.socket] = []
    try:
        log_before = s.stderr.stat().st_size
        for _ in range(1500):  # bounded; each sends half a request and nothing more
            c = socket.create_connection(("127.0.0.1", port), timeout=10)
            c.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            held.append(c)
        start = time.monotonic()
        assert legit_call(s.url, 45) == "legit\n"
        assert time.monotonic() - start < 45
        # Each half-open connection is closed by the server: shed, or at its header timeout.
        assert all(closed_by_server(c, 10) for c in held[-50:])
        fds = len(os.listdir(f"/proc/{s.proc.pid}/fd"))
        assert fds < 400, fds
        grown = s.stderr.stat().st_size - log_before
        assert grown < 20_000, s.stderr.read_text()[-2000:]
        assert "Traceback" not in s.stderr.read_text()
    finally:
        for c in held:
            c.close()
        ops.stop(s)


def test_sessions_are_capped_per_client_and_expire_when_idle(tmp_path, monkeypatch):
    monkeypatch.delenv("FORWARDED_ALLOW_IPS", raising=False)  # no proxy named: none trusted
    s = ops.start(
        tmp_path, "--max-sessions-per-client", "3", "--session-idle-timeout", "3",
        env={"GOCODE_TOKEN": ops.TOKEN}, server="weather",
    )  # fmt: skip
    headers = {"Accept": ACCEPT, "Authorization": f"Bearer {ops.TOKEN}"}
    url = s.url + "/mcp"
    try:
        with (
            httpx2.Client(timeout=20) as a,
            httpx2.Client(timeout=20, transport=httpx2.HTTPTransport(local_address="127.0.0.2")) as b,
        ):
            opened = []
            for _ in range(3):
                r = a.post(url, json=INIT, headers=headers)
                assert r.status_code == 200, r.text
                opened.append(r.headers["mcp-session-id"])
            r = a.post(url, json=INIT, headers=headers)
            assert r.status_code == 429 and "--max-sessions-per-client 3" in jsonrpc_error(r.content)
            # A client cannot claim another address: X-Forwarded-For counts only from a proxy named
            # in FORWARDED_ALLOW_IPS (uvicorn would trust any loopback peer's by default).
            spoofed = a.post(url, json=INIT, headers={**headers, "X-Forwarded-For": "203.0.113.9"})
            assert spoofed.status_code == 429, spoofed.text
            # Another client is not held up by this one.
            assert b.post(url, json=INIT, headers=headers).status_code == 200
            # A session closed by its client frees its place at once.
            assert a.delete(url, headers={**headers, "Mcp-Session-Id": opened.pop()}).status_code < 300
            assert a.post(url, json=INIT, headers=headers).status_code == 200
            # Idle sessions expire: their ids answer 404 and the client may open new ones.
            time.sleep(4)
            gone = a.post(url, json=LIST_REQUEST, headers={**headers, "Mcp-Session-Id": opened[0]})
            assert gone.status_code == 404
            for _ in range(3):
                assert a.post(url, json=INIT, headers=headers).status_code == 200
    finally:
        ops.stop(s)


LIST_REQUEST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}


# --- a sandboxed program flooding the loopback ------------------------------------------------

FLOOD = r"""
import "net/http"
import "bytes"
import "sync"
var specs map[string]struct {
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
}
json.Unmarshal([]byte(os.Getenv("GOCODE_SERVERS")), &specs)
spec := specs["SERVER"]
pad := bytes.Repeat([]byte("x"), 4<<20-256)
body := append(append([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_city","arguments":{"pad":"`), pad...), []byte(`"}}}`)...)
codes := map[int]int{}
var mu sync.Mutex
var wg sync.WaitGroup
for i := 0; i < 200; i++ {
	wg.Add(1)
	go func() {
		defer wg.Done()
		req, _ := http.NewRequest("POST", spec.URL, bytes.NewReader(body))
		for k, v := range spec.Headers {
			req.Header.Set(k, v)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			codes[-1]++
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		codes[resp.StatusCode]++
	}()
}
wg.Wait()
fmt.Println(len(body), codes)
"""


def memory_mb(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) // 1024
    raise AssertionError(f"no {field} for {pid}")


def test_a_sandboxed_program_flooding_the_loopback_leaves_serve_memory_flat(tmp_path):
    """200 concurrent 4 MiB posts from one program: serve went from ~220 MB to a 2.2 GB peak
    (1.4 GB after) before the loopback read bodies only within a run's gate."""
    s = ops.start(tmp_path, env={"GOCODE_TOKEN": ops.TOKEN}, server="weather")
    try:
        err, out, _ = ops.call(s.url, 'fmt.Println("warm")')
        assert not err and out == "warm\n"
        base = memory_mb(s.proc.pid, "VmRSS")
        Path(f"/proc/{s.proc.pid}/clear_refs").write_text("5")  # the peak counts from here
        err, out, meta = ops.call(s.url, FLOOD.replace('specs["SERVER"]', 'specs["weather"]'))
        assert not err, out
        assert meta["io.gocode/run"]["sandbox"]["tier"] in ("netns", "landlock")
        size, codes = out.split(" ", 1)
        answered = {int(k): int(v) for k, v in re.findall(r"(-?\d+):(\d+)", codes)}
        # Every request was answered (served or told to retry), none left hanging or reset.
        assert int(size) <= 4 << 20 and sum(answered.values()) == 200 and set(answered) <= {200, 429}, out
        peak, after = memory_mb(s.proc.pid, "VmHWM"), memory_mb(s.proc.pid, "VmRSS")
        assert peak - base < 300, (base, peak, after)
        assert after - base < 200, (base, peak, after)
        assert ops.call(s.url, 'fmt.Println("after")')[1] == "after\n"
    finally:
        ops.stop(s)
