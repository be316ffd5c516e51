"""An MCP server behind OAuth, with its own authorization server, for tests/test_oauth.py.

``python -m tests.servers.oauth_server PORT VARIANT`` serves on 127.0.0.1:PORT: the MCP endpoint
``/mcp`` (one tool, ``echo``; JSON answers), its protected resource metadata, authorization
server metadata, ``/register``, ``/authorize`` (which redirects at once, as if the person
agreed) and ``/token``. ``GET /hits`` counts the requests by path. VARIANT is how it lies:

- ``ok``: it does not;
- ``token-elsewhere``: its metadata puts the token endpoint on another host (``localhost``);
- ``authorize-elsewhere``: and the authorization endpoint;
- ``token-plain-http``: the token endpoint on a host that is not loopback, over http;
- ``wrong-state``: ``/authorize`` redirects with a state of its own;
- ``garbage-token``: ``/token`` answers 200 with text that is not a token;
- ``refuse-go``: ``/mcp`` refuses the token from Go's HTTP client (a direct program's session),
  as if it had expired between the controller's sign-in and the program's call.
"""

from __future__ import annotations

import json
import secrets
import sys
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

PORT = int(sys.argv[1])
VARIANT = sys.argv[2]
BASE = f"http://127.0.0.1:{PORT}"
TOKEN = "tok-" + secrets.token_hex(16)
HITS: Counter[str] = Counter()


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass

    def _send(self, status: int, body: Any = None, headers: dict[str, str] | None = None) -> None:
        data = b"" if body is None else body.encode() if isinstance(body, str) else json.dumps(body).encode()
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        if body is not None:
            self.send_header("Content-Type", "text/plain" if isinstance(body, str) else "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        HITS[url.path] += 1
        if url.path == "/hits":
            self._send(200, dict(HITS))
        elif url.path == "/.well-known/oauth-protected-resource/mcp":
            self._send(200, {"resource": f"{BASE}/mcp", "authorization_servers": [BASE]})
        elif url.path == "/.well-known/oauth-authorization-server":
            token_host = {"token-elsewhere": f"http://localhost:{PORT}", "token-plain-http": "http://as.example"}
            authorize_host = f"http://localhost:{PORT}" if VARIANT == "authorize-elsewhere" else BASE
            self._send(200, {
                "issuer": BASE, "authorization_endpoint": f"{authorize_host}/authorize",
                "token_endpoint": f"{token_host.get(VARIANT, BASE)}/token",
                "registration_endpoint": f"{BASE}/register", "response_types_supported": ["code"],
                "code_challenge_methods_supported": ["S256"], "token_endpoint_auth_methods_supported": ["none"],
            })  # fmt: skip
        elif url.path == "/authorize":
            q = parse_qs(url.query)
            state = "forged-state" if VARIANT == "wrong-state" else q["state"][0]
            back = q["redirect_uri"][0] + "?" + urlencode({"code": "the-code", "state": state})
            self._send(302, headers={"Location": back})
        else:
            self._send(404 if url.path != "/mcp" else 405, "")

    def do_POST(self) -> None:
        url = urlsplit(self.path)
        HITS[url.path] += 1
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if url.path == "/register":
            self._send(201, {"client_id": "client-1", "redirect_uris": json.loads(body)["redirect_uris"]})
        elif url.path == "/token":
            if VARIANT == "garbage-token":
                self._send(200, {"access": ["not", "a", "token"], "note": "\x1b[31mgarbage"})
            else:
                self._send(200, {"access_token": TOKEN, "token_type": "Bearer", "expires_in": 3600})
        elif url.path == "/mcp":
            self._mcp(body)
        else:
            self._send(404, "")

    def do_DELETE(self) -> None:
        self._send(405, "")

    def _mcp(self, body: bytes) -> None:
        refused = VARIANT == "refuse-go" and self.headers.get("User-Agent", "").startswith("Go-http-client")
        if refused or self.headers.get("Authorization") != f"Bearer {TOKEN}":
            meta = f"{BASE}/.well-known/oauth-protected-resource/mcp"
            self._send(401, {"error": "invalid_token"}, {"WWW-Authenticate": f'Bearer resource_metadata="{meta}"'})
            return
        HITS["/mcp authorized"] += 1
        msg = json.loads(body)
        if "id" not in msg:
            self._send(202)
            return
        method, params = msg["method"], msg.get("params") or {}
        if method == "initialize":
            result: Any = {
                "protocolVersion": params.get("protocolVersion", "2025-06-18"),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "oauth-test", "version": "1.0.0"},
            }
        elif method == "tools/list":
            schema = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
            result = {"tools": [{"name": "echo", "description": "Echo the text.", "inputSchema": schema}]}
        elif method == "tools/call":
            result = {"content": [{"type": "text", "text": "echo: " + str(params["arguments"]["text"])}]}
        else:
            self._send(200, {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "no such method"}})
            return
        self._send(200, {"jsonrpc": "2.0", "id": msg["id"], "result": result})


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
