"""The pooled-session endpoint: programs reach the controller's server sessions over loopback HTTP.

A controller (``gocode serve``, the Python API, ``gocode exec``) keeps one long-lived session
per server (:mod:`gocode.mcp.upstream`). Instead of starting the servers itself, a program gets,
for every server, a streamable-HTTP spec pointing here — ``http://127.0.0.1:PORT/mcp`` with
two headers: the run's bearer token and the server's name. The program still talks through
real Go SDK sessions, but connects in milliseconds and never starts a server.

Every run gets a fresh token, valid only while it runs; a request without a live token gets
401. The calls a program makes are recorded per run (tool, duration, error) and returned with
its result. The endpoint is stateless (no MCP sessions to keep) and answers in plain JSON,
which is the cheapest exchange for the Go client.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import logging
import secrets
import socket
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
import mcp_types as types
import uvicorn
from anyio.abc import TaskGroup
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.shared.exceptions import MCPError

from gocode.mcp import logs
from gocode.mcp.upstream import Upstream, UpstreamError
from gocode.run.runner import ToolCall
from gocode.toolset import LEGACY_PROTOCOL

SERVER_HEADER = "X-Gocode-Server"
RUN_KEY = "gocode.run"
# A program's searchTools reaches the controller's search index as this pseudo-server's one
# tool. Searching in the controller keeps one index and one ranking for the model's
# search_go_tools and for programs (embedding the catalogue would copy every description into
# every binary and need a second search engine in Go). No configured server can have this
# name (server names start with a letter or digit).
SEARCH_SERVER = "@gocode"
SEARCH_TOOL = "search_tools"
SEARCH_LIMIT = 10

# (query, limit) -> matches as JSON objects (see rt.ToolMatch), best first.
SearchFn = Callable[[str, int], list[dict[str, Any]]]


log = logging.getLogger("gocode.mcp.loopback")


@dataclass
class Run:
    """A program's pass to the endpoint: its token, and the calls it made."""

    token: str
    calls: list[ToolCall] = field(default_factory=list)
    request_id: str | None = None  # the execute_go_code call it belongs to, for log lines


class _QuietServer(uvicorn.Server):
    # The controller owns signals (Ctrl-C, SIGTERM); this server is stopped with should_exit.
    def capture_signals(self) -> Any:
        return contextlib.nullcontext()


class Loopback:
    """An MCP endpoint on 127.0.0.1 in front of the controller's upstream sessions."""

    def __init__(
        self,
        upstreams: Mapping[str, Upstream],
        call_timeout: float,
        allows: Callable[[str, str], bool],
        search: SearchFn | None = None,
    ) -> None:
        self.upstreams = upstreams
        self.search = search
        self.call_timeout = call_timeout
        # Only code-mode tools: not the excluded ones, not a server's disabledTools. The
        # endpoint is a (sandboxed) program's door; the tool set is what it may open.
        self.allows = allows
        self._runs: dict[str, Run] = {}
        self._server: _QuietServer | None = None
        self.url = ""
        self.port = 0
        mcp_server: Server[Any] = Server(
            "gocode-loopback", on_list_tools=self._list_tools, on_call_tool=self._call_tool
        )
        app = mcp_server.streamable_http_app(streamable_http_path="/mcp", stateless_http=True, json_response=True)
        self._app = _Guard(app, self)

    async def start(self, tg: TaskGroup) -> None:
        """Listen on a free loopback port and serve in ``tg`` until :meth:`stop`."""
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        sock.listen(256)
        self.port = sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        config = uvicorn.Config(
            self._app, log_level="warning", lifespan="on", access_log=False, timeout_graceful_shutdown=1
        )
        self._server = _QuietServer(config)
        self._stopped = anyio.Event()

        async def serve() -> None:
            try:
                assert self._server is not None
                await self._server.serve(sockets=[sock])
            finally:
                sock.close()
                self._stopped.set()

        tg.start_soon(serve)
        while not self._server.started and not self._stopped.is_set():
            await anyio.sleep(0.005)

    async def stop(self) -> None:
        """Stop serving (uvicorn checks every 0.1 s), waiting a little for a clean shutdown."""
        if self._server is not None:
            self._server.should_exit = True
            with anyio.move_on_after(3):
                await self._stopped.wait()

    # --- runs ---------------------------------------------------------------------------------

    def open_run(self) -> Run:
        # The endpoint serves requests in tasks of its own: the call's request id goes with the run.
        run = Run(secrets.token_urlsafe(24), request_id=logs.current_request_id())
        self._runs[run.token] = run
        return run

    def close_run(self, run: Run) -> None:
        self._runs.pop(run.token, None)

    def lookup(self, token: str | None) -> Run | None:
        run = self._runs.get(token) if token else None
        # The dict lookup found it; compare again in constant time so timing reveals nothing.
        return run if run is not None and hmac.compare_digest(run.token, token) else None

    def specs(self, run: Run, servers: list[str]) -> dict[str, dict[str, Any]]:
        """GOCODE_SERVERS for a program: every server through this endpoint, with the run's token."""
        names = [*servers, SEARCH_SERVER] if self.search is not None else servers
        return {
            name: {
                "transport": "http",
                "url": self.url,
                "headers": {"Authorization": f"Bearer {run.token}", SERVER_HEADER: name},
                "protocolVersion": LEGACY_PROTOCOL,
                "connectTimeout": 10,
            }
            for name in names
        }

    # --- MCP handlers -------------------------------------------------------------------------

    def _target(self, ctx: ServerRequestContext[Any]) -> tuple[Upstream, Run]:
        request = ctx.request
        scope = getattr(request, "scope", {})
        run = scope.get(RUN_KEY)
        name = request.headers.get(SERVER_HEADER, "") if request is not None else ""
        upstream = self.upstreams.get(name)
        known = upstream.known_tools if upstream is not None else None
        if upstream is None or run is None or known is None or not any(self.allows(name, t.name) for t in known.tools):
            raise MCPError(code=types.INVALID_PARAMS, message=f"unknown server {name!r}")
        return upstream, run

    def _is_search(self, ctx: ServerRequestContext[Any]) -> bool:
        request = ctx.request
        name = request.headers.get(SERVER_HEADER, "") if request is not None else ""
        return name == SEARCH_SERVER and self.search is not None

    async def _list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        if self._is_search(ctx):
            schema = {"type": "object", "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}}}
            return types.ListToolsResult(tools=[types.Tool(name=SEARCH_TOOL, input_schema=schema)])
        upstream, _ = self._target(ctx)
        tools = [
            types.Tool.model_validate(t.definition or t.as_json())
            for t in upstream.tools.tools  # known: _target checked
            if self.allows(upstream.name, t.name)
        ]
        return types.ListToolsResult(tools=tools)

    async def _call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        if self._is_search(ctx):
            # Ranking by meaning runs a model: off the event loop.
            return await anyio.to_thread.run_sync(self._search, ctx, params)
        upstream, run = self._target(ctx)
        if not self.allows(upstream.name, params.name):
            raise MCPError(
                code=types.INVALID_PARAMS,
                message=f"tool {params.name!r} of server {upstream.name!r} is not in code mode",
            )
        start = time.monotonic()
        error: str | None = None
        rid = logs.REQUEST_ID.set(run.request_id)  # what the upstream logs meanwhile carries it too
        try:
            result = await upstream.call(params.name, params.arguments, self.call_timeout)
            if result.is_error:
                error = "isError"
            return result
        except MCPError as exc:
            error = str(exc)
            raise
        except UpstreamError as exc:
            error = str(exc)
            return types.CallToolResult(content=[types.TextContent(type="text", text=str(exc))], is_error=True)
        finally:
            ms = (time.monotonic() - start) * 1000
            run.calls.append(ToolCall(upstream.name, params.name, ms, error))
            log.info(
                "tool %s.%s %s in %.0f ms", upstream.name, params.name, "failed" if error else "ok", ms,
                extra={"server": upstream.name, "tool": params.name, "error": error, "duration_ms": round(ms, 1)},
            )  # fmt: skip
            logs.REQUEST_ID.reset(rid)

    def _search(self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
        """searchTools: the code-mode tools best matching a query (the index holds no other tools)."""
        scope = getattr(ctx.request, "scope", {})
        run = scope.get(RUN_KEY)
        if run is None or params.name != SEARCH_TOOL or self.search is None:
            raise MCPError(code=types.INVALID_PARAMS, message=f"unknown tool {params.name!r}")
        args = params.arguments or {}
        query, limit = args.get("query"), args.get("limit", SEARCH_LIMIT)
        start = time.monotonic()
        if not isinstance(query, str) or not query.strip():
            error = "searchTools needs a non-empty query (what you want to do, in a few words)"
            run.calls.append(ToolCall(SEARCH_SERVER, SEARCH_TOOL, 0.0, error))
            return types.CallToolResult(content=[types.TextContent(type="text", text=error)], is_error=True)
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            limit = SEARCH_LIMIT
        matches = self.search(query[:1000], min(limit, SEARCH_LIMIT))
        run.calls.append(ToolCall(SEARCH_SERVER, SEARCH_TOOL, (time.monotonic() - start) * 1000, None))
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=json.dumps({"matches": matches}))],
            structured_content={"matches": matches},
        )


class _Guard:
    """ASGI middleware: only requests carrying a live run's token get through."""

    def __init__(self, app: Any, loopback: Loopback) -> None:
        self.app, self.loopback = app, loopback

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            run = self.loopback.lookup(bearer_token(scope))
            if run is None:
                await send_unauthorized(send)
                return
            scope[RUN_KEY] = run
        await self.app(scope, receive, send)


def bearer_token(scope: Any) -> str | None:
    """The credentials of an ``Authorization: Bearer …`` header (scheme case-insensitive), if any."""
    given = next((v for k, v in scope.get("headers", ()) if k.lower() == b"authorization"), b"")
    scheme, _, credentials = given.decode("latin-1").partition(" ")
    return credentials.strip() if scheme.lower() == "bearer" else None


async def send_unauthorized(send: Any) -> None:
    body = json.dumps(
        {"error": "unauthorized", "message": "a valid `Authorization: Bearer <token>` header is required"}
    ).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"www-authenticate", b'Bearer realm="gocode"'),
        (b"content-length", str(len(body)).encode()),
    ]
    await send({"type": "http.response.start", "status": 401, "headers": headers})
    await send({"type": "http.response.body", "body": body})
