"""An MCP server over HTTP that answers with an error status: the controller's errors say the
status and what to check in the config (``gocode.mcp.httpstatus``), at discovery and during a
session. The real demo server behind a small real HTTP gate that checks the token."""

from __future__ import annotations

import http.server
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator

import anyio
import pytest

from gocode.errors import DiscoveryError
from gocode.mcp.discovery import discover_server
from gocode.mcp.httpstatus import describe_status
from gocode.mcp.upstream import Upstream
from tests.conftest import background, config_from, free_port

TOKEN = "Bearer good-token"


class Gate:
    """A reverse proxy in front of ``upstream`` that answers 401 to a wrong token, 404 off /mcp,
    and 401 to every call once ``revoked`` (a token that expired mid-session)."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self.revoked = False
        gate = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                self.send_error(405)  # no standalone stream through the gate

            def do_DELETE(self) -> None:
                self.relay(b"")

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.path != "/mcp":
                    self.send_error(404)
                elif self.headers.get("Authorization") != TOKEN or (gate.revoked and b"tools/call" in body):
                    self.send_error(401)
                else:
                    self.relay(body)

            def relay(self, body: bytes) -> None:
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")}
                req = urllib.request.Request(gate.upstream, data=body or None, headers=headers, method=self.command)
                try:
                    with urllib.request.urlopen(req, timeout=30) as resp:
                        status, out, reply_headers = resp.status, resp.read(), resp.headers.items()
                except urllib.error.HTTPError as exc:
                    status, out, reply_headers = exc.code, exc.read(), exc.headers.items()
                self.send_response(status)
                for k, v in reply_headers:
                    if k.lower() not in ("content-length", "transfer-encoding", "connection", "date", "server"):
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"


@pytest.fixture(scope="module")
def gate() -> Iterator[Gate]:
    port = free_port()
    with background([sys.executable, "-m", "gocode.demo.server", "--transport", "http", "--port", str(port)], port):
        g = Gate(f"http://127.0.0.1:{port}/mcp")
        thread = threading.Thread(target=g.httpd.serve_forever, daemon=True)
        thread.start()
        try:
            yield g
        finally:
            g.httpd.shutdown()
            g.httpd.server_close()


def server(url: str, token: str = TOKEN) -> dict:
    return {"type": "http", "url": url, "headers": {"Authorization": token}, "timeout": 20}


def discovery_error(spec: dict) -> str:
    cfg = config_from({"w": spec})
    with pytest.raises(DiscoveryError) as info:
        anyio.run(discover_server, "w", cfg.mcp_servers["w"])
    return str(info.value)


@pytest.mark.fast
def test_statuses_are_described_with_what_to_check():
    assert describe_status(401) == "HTTP 401 Unauthorized: check the server's headers (its token) in the config"
    assert describe_status(403).startswith("HTTP 403 Forbidden: check the server's headers")
    assert describe_status(404) == "HTTP 404 Not Found: check the server's url in the config (is it the MCP endpoint?)"
    assert describe_status(502) == "HTTP 502 Bad Gateway"
    assert describe_status(599) == "HTTP 599"


def test_discovery_says_the_status_and_the_hint(gate: Gate):
    assert "HTTP 401 Unauthorized: check the server's headers (its token)" in discovery_error(
        server(gate.url + "/mcp", "Bearer wrong")
    )
    assert "HTTP 404 Not Found: check the server's url" in discovery_error(server(gate.url + "/nope"))


def test_a_call_refused_mid_session_says_the_status(gate: Gate):
    cfg = config_from({"w": server(gate.url + "/mcp")})

    async def go() -> str:
        async with anyio.create_task_group() as tg:

            async def changed(_name: str) -> None:
                pass

            up = Upstream("w", cfg.mcp_servers["w"], tg, changed)
            await up.start()
            ok = await up.call("get_weather", {"city": "Oslo"}, 20)
            assert not ok.is_error
            gate.revoked = True
            try:
                try:
                    await up.call("get_weather", {"city": "Oslo"}, 20)
                except Exception as exc:
                    return str(exc)
                return "no error"
            finally:
                gate.revoked = False
                up.stop()
                tg.cancel_scope.cancel()

    assert "HTTP 401 Unauthorized: check the server's headers (its token)" in anyio.run(go)
