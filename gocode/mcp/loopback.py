"""The pooled-session endpoint: programs reach the controller's server sessions over loopback HTTP.

A controller (``gocode serve``, the Python API, ``gocode exec``) keeps one long-lived session
per server (:mod:`gocode.mcp.upstream`) and may offer other tools, like Python functions; each
server name leads to a :class:`~gocode.mcp.provider.ToolProvider`. Instead of starting the
servers itself, a program gets, for every server, a streamable-HTTP spec pointing here — ``http://127.0.0.1:PORT/mcp`` with
two headers: the run's bearer token and the server's name. The program still talks through
real Go SDK sessions, but connects in milliseconds and never starts a server. ``/mcp`` answers
in plain JSON, the cheapest exchange; a call that wants progress notifications (``callToolStream``)
goes to ``/mcp-stream`` (``streamUrl`` in the spec), which answers as an SSE stream.

The pseudo-server ``@gocode`` is the controller itself: a program's ``searchTools``, the
value it gives ``result()``, its ``readResource``, ``listResources`` and ``getPrompt``
(:mod:`gocode.mcp.loopoffers`), and on a step pass the runtime's reports of whether the program
can still go on (``idle``, handed to the run's interceptor) reach it there.

Every run gets a fresh token, valid only while it runs; a request without a live token gets
401. What a run may hold is bounded before its bodies are read: a body over
:data:`MAX_BODY` gets 413, and each run's :class:`~gocode.mcp.admission.RunGate` admits a few
requests (and bytes of body) at once, queues some more and refuses the rest with 429 (see
docs/sandbox.md); the listener's connections are bounded by :mod:`gocode.mcp.httplimits`,
and at its cap the run with the most requests waiting at its gate gives one up. The calls a program makes are recorded per run (tool, duration, error) and returned with
its result; a call still running when its run ends (the program finished or was killed at its
timeout) is cancelled. The endpoint is stateless (no MCP sessions to keep) and answers in plain JSON,
which is the cheapest exchange for the Go client.
"""

from __future__ import annotations

import contextlib
import functools
import hmac
import json
import logging
import secrets
import socket
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
import mcp_types as types
import uvicorn
from anyio.abc import TaskGroup
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.dispatcher import ProgressFnT
from mcp.shared.exceptions import MCPError
from starlette.applications import Starlette
from starlette.routing import Route

from gocode.errors import AdmissionRefused, ToolProviderError
from gocode.mcp import logs, loopoffers
from gocode.mcp.admission import RunGate
from gocode.mcp.backchannel import Caller
from gocode.mcp.clientinfo import client_version
from gocode.mcp.httplimits import ConnectionLimits, limit_accept_errors, uvicorn_options
from gocode.mcp.intercept import CallInterceptor, Forward, IdleReport
from gocode.mcp.offers import Offers
from gocode.mcp.provider import ToolProvider
from gocode.mcp.shapes import ShapeRecorder
from gocode.mcp.tasksupport import as_plain_tool
from gocode.mcp.toolcall import ToolCall, error_message
from gocode.toolset import LEGACY_PROTOCOL, ServerTools

SERVER_HEADER = "X-Gocode-Server"
RUN_KEY = "gocode.run"
# A program's searchTools reaches the controller's search index as this pseudo-server's one
# tool. Searching in the controller keeps one index and one ranking for the model's
# search_go_tools and for programs (embedding the catalogue would copy every description into
# every binary and need a second search engine in Go). No configured server can have this
# name (server names start with a letter or digit).
SEARCH_SERVER = "@gocode"
CONTROLLER_SERVER = SEARCH_SERVER  # also where result() sends its value
SEARCH_TOOL = "search_tools"
RESULT_TOOL = "result"
IDLE_TOOL = "idle"  # a step pass's runtime reports its goroutines' state (go_templates/rt/idle.go)
SEARCH_LIMIT = 10
RESULT_LIMIT = 1 << 20  # bytes of JSON a program's result() may hand back
MCP_PATH = "/mcp"
STREAM_PATH = "/mcp-stream"
CLOSE_WAIT_S = 1.0  # how long closing a run waits for its cancelled calls to unwind
# The largest request body a program may post (a tool's arguments, result()'s value): above
# RESULT_LIMIT, and the MCP SDK's own default.
MAX_BODY = 4 * 1024 * 1024

Learn = Callable[[types.CallToolResult], Awaitable[None]]  # records a live result's shape

# (query, limit) -> matches as JSON objects (see rt.ToolMatch), best first.
SearchFn = Callable[[str, int], list[dict[str, Any]]]


log = logging.getLogger("gocode.mcp.loopback")


@dataclass
class Run:
    """A program's pass to the endpoint: its token, and the calls it made."""

    token: str
    calls: list[ToolCall] = field(default_factory=list)
    result: Any = None  # the value the program gave result(), if any
    # The calls in flight, cancelled when the run closes: nobody is left to read their answers.
    scopes: set[anyio.CancelScope] = field(default_factory=set)
    # Every call goes through it when set: recorded, answered from a record, or held for the
    # caller (see gocode.run.interceptor).
    interceptor: CallInterceptor | None = None
    # Providers for this run only, by server name: tools the caller declared for it (client-owned
    # tools) or the servers of a replayed recording. They need no code-mode permission: they
    # exist only for the run that declared them.
    providers: dict[str, ToolProvider] = field(default_factory=dict)
    # What the program can call, from its static plan (set before it starts): a call it did not
    # declare is refused, so an approval covers exactly what was shown. None: not known yet.
    foreseen: Callable[[str, str], bool] | None = None
    request_id: str | None = None  # the execute_go_code call it belongs to, for log lines
    caller: Caller | None = None  # that call's client: the servers of its tools may ask it (backchannel)
    gate: RunGate = field(default_factory=RunGate)  # what it may have under way at the endpoint
    # The URIs of the links and embedded resources each server's tools returned: the server's
    # to read (gocode.mcp.loopoffers).
    returned: dict[str, set[str]] = field(default_factory=dict)


class _QuietServer(uvicorn.Server):
    # The controller owns signals (Ctrl-C, SIGTERM); this server is stopped with exit_now().
    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self._wake = anyio.Event()  # made in the controller's event loop (Loopback.start)

    def capture_signals(self) -> Any:
        return contextlib.nullcontext()

    def exit_now(self) -> None:
        self.should_exit = True
        self._wake.set()

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        if self.server_state.connections or self.server_state.tasks:
            await super().shutdown(sockets)  # lets requests under way finish (a tenth of a second and more)
            return
        # Nothing under way: uvicorn would still wait its tenth of a second for connections to wind down.
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        await self.lifespan.shutdown()

    async def main_loop(self) -> None:
        # uvicorn's own loop, except that it wakes at once when told to exit instead of at its
        # next tenth of a second (a one-off gocode exec waits for that on its way out).
        counter = 0
        should_exit = await self.on_tick(counter)
        while not should_exit:
            counter = (counter + 1) % 864000
            with anyio.move_on_after(0.1):
                await self._wake.wait()
            should_exit = await self.on_tick(counter)


class Loopback:
    """An MCP endpoint on 127.0.0.1 in front of the controller's tool providers (server sessions,
    Python functions, …), by server name."""

    def __init__(
        self,
        providers: Mapping[str, ToolProvider],
        call_timeout: float,
        allows: Callable[[str, str], bool],
        search: SearchFn | None = None,
        shapes: ShapeRecorder | None = None,
        offers: Offers | None = None,
    ) -> None:
        self.providers = providers
        self.offers = offers  # the servers' resources and prompts (readResource, getPrompt)
        self.shapes = shapes  # learns what each tool's results look like
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
        self._app = _Guard(_app(mcp_server), self)

    async def start(self, tg: TaskGroup) -> None:
        """Listen on a free loopback port and serve in ``tg`` until :meth:`stop`."""
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        sock.listen(256)
        self.port = sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}{MCP_PATH}"
        config = uvicorn.Config(
            self._app,
            log_level="warning",
            lifespan="on",
            access_log=False,
            timeout_graceful_shutdown=1,
            ws="none",  # programs speak HTTP only; uvicorn's websocket support is imports on every start
            proxy_headers=False,  # a program's X-Forwarded-For names nothing
            **uvicorn_options(ConnectionLimits(), shed=self._shed_waiting),
        )
        limit_accept_errors()
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
        """Stop serving, waiting a little for a clean shutdown."""
        if self._server is not None:
            self._server.exit_now()
            with anyio.move_on_after(3):
                await self._stopped.wait()

    # --- runs ---------------------------------------------------------------------------------

    def open_run(
        self,
        interceptor: CallInterceptor | None = None,
        providers: dict[str, ToolProvider] | None = None,
        caller: Caller | None = None,
    ) -> Run:
        # The endpoint serves requests in tasks of its own: the call's request id goes with the run.
        run = Run(
            secrets.token_urlsafe(24),
            interceptor=interceptor,
            providers=dict(providers or {}),
            request_id=logs.current_request_id(),
            caller=caller,
        )
        self._runs[run.token] = run
        return run

    @property
    def open_runs(self) -> int:
        """Programs that may still call through this endpoint (opened and not closed)."""
        return len(self._runs)

    async def close_run(self, run: Run) -> None:
        """End a run: its token stops working, and calls still in flight are cancelled (and
        recorded in ``run.calls``, waiting at most a second for them to unwind)."""
        self._runs.pop(run.token, None)
        run.gate.close()
        for scope in list(run.scopes):
            scope.cancel()
        with anyio.move_on_after(CLOSE_WAIT_S, shield=True):  # also when the caller is being cancelled
            while run.scopes:
                await anyio.sleep(0.01)

    def _shed_waiting(self, cap: int) -> bool:
        """The listener's ``cap`` connections are all taken: the run holding the most requests
        gives up its newest waiting one (429) when it holds more than its share of the cap, so
        one run's pile cannot keep other runs' calls out."""
        heaviest = max(self._runs.values(), key=lambda run: run.gate.held, default=None)
        share = cap // max(1, len(self._runs))
        if heaviest is None or heaviest.gate.held <= share:
            return False
        return heaviest.gate.shed(
            f"the endpoint is out of connections and this program holds the most requests "
            f"({heaviest.gate.requests} under way and {heaviest.gate.waiting} waiting, more than its share "
            f"of {share}): wait for answers before sending more"
        )

    def lookup(self, token: str | None) -> Run | None:
        if not token:
            return None
        run = self._runs.get(token)
        # The dict lookup found it; compare again in constant time so timing reveals nothing.
        return run if run is not None and hmac.compare_digest(run.token, token) else None

    def specs(self, run: Run, servers: list[str]) -> dict[str, dict[str, Any]]:
        """GOCODE_SERVERS for a program: every server through this endpoint, with the run's token."""
        names = [*servers, CONTROLLER_SERVER]
        return {
            name: {
                "transport": "http",
                "url": self.url,
                "streamUrl": self.url.removesuffix(MCP_PATH) + STREAM_PATH,
                "headers": {"Authorization": f"Bearer {run.token}", SERVER_HEADER: name},
                "protocolVersion": LEGACY_PROTOCOL,
                "connectTimeout": 10,
                "clientVersion": client_version(),
            }
            for name in names
        }

    # --- MCP handlers -------------------------------------------------------------------------

    def _target(self, ctx: ServerRequestContext[Any]) -> tuple[ToolProvider, ServerTools, Run]:
        request = ctx.request
        scope = getattr(request, "scope", {})
        run = scope.get(RUN_KEY)
        name = request.headers.get(SERVER_HEADER, "") if request is not None else ""
        provider = (run.providers.get(name) if run is not None else None) or self.providers.get(name)
        known = provider.known_tools if provider is not None else None
        if (
            provider is None
            or run is None
            or known is None
            or not any(self._allows(run, name, t.name) for t in known.tools)
        ):
            raise MCPError(code=types.INVALID_PARAMS, message=f"unknown server {name!r}")
        return provider, known, run

    def _allows(self, run: Run, server: str, tool: str) -> bool:
        if server in run.providers:
            known = run.providers[server].known_tools
            return known is not None and any(t.name == tool for t in known.tools)
        return self.allows(server, tool)

    def _reaches(self, run: Run, server: str) -> bool:
        """Whether the run may reach ``server`` at all: it may call one of its tools."""
        provider = self.providers.get(server)
        known = provider.known_tools if provider is not None else None
        return known is not None and any(self._allows(run, server, t.name) for t in known.tools)

    def _learner(self, run: Run, server: str, tool: str) -> Learn | None:
        """What records a live result's shape, or None where nothing is learned."""
        shapes = self.shapes
        if shapes is None or server in run.providers:
            return None

        async def learn(result: types.CallToolResult) -> None:
            if not result.is_error:
                # A worker thread: a result is untrusted and may be megabytes (parsing it,
                # redacting its head, writing the file), and the loop serves everyone else.
                await anyio.to_thread.run_sync(shapes.observe, server, tool, result)

        return learn

    def _is_controller(self, ctx: ServerRequestContext[Any]) -> bool:
        request = ctx.request
        return request is not None and request.headers.get(SERVER_HEADER, "") == CONTROLLER_SERVER

    async def _list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        if self._is_controller(ctx):
            tools = [types.Tool(name=RESULT_TOOL, input_schema={"type": "object", "properties": {"value": {}}})]
            if self.search is not None:
                schema = {"type": "object", "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}}}
                tools.append(types.Tool(name=SEARCH_TOOL, input_schema=schema))
            return types.ListToolsResult(tools=tools)
        _, known, run = self._target(ctx)
        tools = [
            types.Tool.model_validate(as_plain_tool(t.definition) or t.as_json())
            for t in known.tools
            if self._allows(run, known.server, t.name)
        ]
        return types.ListToolsResult(tools=tools)

    async def _call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        if self._is_controller(ctx):
            if params.name == RESULT_TOOL:
                return self._result(ctx, params)
            if params.name == IDLE_TOOL:
                return self._idle(ctx, params)
            run = getattr(ctx.request, "scope", {}).get(RUN_KEY)
            if params.name in loopoffers.TOOLS and isinstance(run, Run):
                reaches = functools.partial(self._reaches, run)
                return await loopoffers.answer(
                    self.offers, params.name, params.arguments, reaches, run.returned, run.calls
                )
            # Ranking by meaning runs a model: off the event loop.
            return await anyio.to_thread.run_sync(self._search, ctx, params)
        provider, known, run = self._target(ctx)
        server = known.server
        if not any(t.name == params.name for t in known.tools):
            raise MCPError(code=types.INVALID_PARAMS, message=f"server {server!r} has no tool {params.name!r}")
        if not self._allows(run, server, params.name):
            raise MCPError(
                code=types.INVALID_PARAMS,
                message=f"tool {params.name!r} of server {server!r} is not in code mode",
            )
        if run.foreseen is None or not run.foreseen(server, params.name):
            refused = (
                f"tool {params.name!r} of server {server!r} is not among the tools this program was "
                "checked (and approved) for; call tools through their functions or callTool with a constant name"
            )
            run.calls.append(ToolCall(server, params.name, 0.0, refused))
            return types.CallToolResult(content=[types.TextContent(type="text", text=refused)], is_error=True)
        start = time.monotonic()
        error: str | None = None
        result: types.CallToolResult | None = None
        rid = logs.REQUEST_ID.set(run.request_id)  # what the upstream logs meanwhile carries it too
        try:
            with anyio.CancelScope() as scope:
                run.scopes.add(scope)
                try:
                    # Shapes are learned from live answers of the controller's own providers only:
                    # a replayed, stubbed or client-given result would teach a shape no server gave.
                    learn = self._learner(run, server, params.name)
                    if run.interceptor is not None:
                        result = await run.interceptor.call(
                            server,
                            params.name,
                            params.arguments,
                            _forward(provider, params, self.call_timeout, _progress(ctx), learn, run.caller),
                        )
                    else:
                        result = await provider.call(
                            params.name, params.arguments, self.call_timeout, _progress(ctx), caller=run.caller
                        )
                        if learn is not None:
                            await learn(result)
                finally:
                    run.scopes.discard(scope)
            if result is None:
                error = "cancelled: the program's run ended"
                return types.CallToolResult(content=[types.TextContent(type="text", text=error)], is_error=True)
            if result.is_error:
                error = error_message(result)
            else:
                loopoffers.remember(run.returned, server, result)
            return result
        except MCPError as exc:
            error = str(exc)
            raise
        except ToolProviderError as exc:
            error = str(exc)
            return types.CallToolResult(content=[types.TextContent(type="text", text=str(exc))], is_error=True)
        finally:
            ms = (time.monotonic() - start) * 1000
            run.calls.append(ToolCall(server, params.name, ms, error))
            log.info(
                "tool %s.%s %s in %.0f ms", server, params.name, "failed" if error else "ok", ms,
                extra={"server": server, "tool": params.name, "error": error, "duration_ms": round(ms, 1)},
            )  # fmt: skip
            logs.REQUEST_ID.reset(rid)

    def _result(self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
        """result(v): keep the program's structured result in its run (the last one wins)."""
        run = getattr(ctx.request, "scope", {}).get(RUN_KEY)
        args = params.arguments or {}
        if run is None or "value" not in args:
            raise MCPError(code=types.INVALID_PARAMS, message="result needs a value")
        size = len(json.dumps(args["value"]))
        if size > RESULT_LIMIT:
            text = (
                f"the value is {size} bytes of JSON; at most {RESULT_LIMIT} are accepted: write it to a file "
                "(the working directory persists between calls) or print it (long output is kept there whole)"
            )
            return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)
        run.result = args["value"]
        return types.CallToolResult(content=[])

    def _idle(self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
        """A step pass's report of the program's state, for its interceptor (not one of its calls:
        not recorded). Other runs have nothing to do with it."""
        run = getattr(ctx.request, "scope", {}).get(RUN_KEY)
        report = IdleReport.parse(params.arguments)
        if run is None or report is None:
            raise MCPError(code=types.INVALID_PARAMS, message="idle needs a verdict and the calls started and finished")
        if run.interceptor is not None:
            run.interceptor.idle(report)
        return types.CallToolResult(content=[])

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


def _app(server: Server[Any]) -> Starlette:
    """The endpoint's two doors to one server: plain JSON at /mcp, SSE at /mcp-stream."""
    # Loopback only: requests naming another host are refused (DNS rebinding).
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["127.0.0.1:*", "localhost:*"],
        allowed_origins=["http://127.0.0.1:*", "http://localhost:*"],
    )
    plain = StreamableHTTPSessionManager(
        app=server, json_response=True, stateless=True, security_settings=security, max_request_body_size=MAX_BODY
    )
    streamed = StreamableHTTPSessionManager(
        app=server, json_response=False, stateless=True, security_settings=security, max_request_body_size=MAX_BODY
    )

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        async with plain.run(), streamed.run():
            yield

    routes = [
        Route(MCP_PATH, endpoint=StreamableHTTPASGIApp(plain)),
        Route(STREAM_PATH, endpoint=StreamableHTTPASGIApp(streamed)),
    ]
    return Starlette(routes=routes, lifespan=lifespan)


def _progress(ctx: ServerRequestContext[Any]) -> ProgressFnT | None:
    """Pass a tool's progress on to the program, when its request asked for progress."""
    meta = ctx.meta or {}
    if meta.get("progress_token") is None and meta.get("progressToken") is None:
        return None

    async def forward(progress: float, total: float | None, message: str | None) -> None:
        await ctx.session.report_progress(progress, total, message)

    return forward


def _forward(
    provider: ToolProvider,
    params: types.CallToolRequestParams,
    timeout: float,
    progress: ProgressFnT | None,
    learn: Learn | None = None,
    caller: Caller | None = None,
) -> Forward:
    """The call to the provider, its failures as results (so they are recorded like any answer)."""

    async def forward() -> types.CallToolResult:
        try:
            result = await provider.call(params.name, params.arguments, timeout, progress, caller=caller)
        except ToolProviderError as exc:
            return types.CallToolResult(content=[types.TextContent(type="text", text=str(exc))], is_error=True)
        if learn is not None:
            await learn(result)
        return result

    return forward


class _Guard:
    """ASGI middleware: only requests carrying a live run's token get through, within the run's
    gate, with a body no larger than :data:`MAX_BODY` (read here, before the SDK parses it)."""

    def __init__(self, app: Any, loopback: Loopback) -> None:
        self.app, self.loopback = app, loopback

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        run = self.loopback.lookup(bearer_token(scope))
        if run is None:
            await send_unauthorized(send)
            return
        scope[RUN_KEY] = run
        declared = declared_length(scope)
        if declared is not None and declared < 0:
            await send_refusal(send, 400, "the Content-Length header is not a number of bytes")
            return
        if declared is not None and declared > MAX_BODY:
            await send_refusal(send, 413, f"the request body is {declared} bytes; at most {MAX_BODY} are accepted")
            return
        if scope.get("method") != "POST":  # no body, no tool call (a GET stream may last the run)
            await self.app(scope, receive, send)
            return
        chunked = any(k.lower() == b"transfer-encoding" for k, _ in scope.get("headers", ()))
        try:
            # Chunked: it may be as large as the cap, so it reserves that much.
            async with run.gate.admit(declared if declared is not None else MAX_BODY if chunked else 0):
                messages = await read_body(receive, MAX_BODY)
                if messages is None:
                    await send_refusal(send, 413, f"the request body is over {MAX_BODY} bytes, the most accepted")
                    return
                if messages[0].get("type") != "http.request":
                    return  # nobody left to answer
                if run.gate.closed:
                    raise AdmissionRefused("the program's run has ended")

                async def replay() -> Any:
                    return messages.pop(0) if messages else await receive()

                await self.app(scope, replay, send)
        except AdmissionRefused as exc:
            await send_refusal(send, 503 if run.gate.closed else 429, str(exc), retry_after=not run.gate.closed)


def declared_length(scope: Any) -> int | None:
    """The request's ``Content-Length`` (-1 when it is not a number), None when it has none."""
    value = next((v for k, v in scope.get("headers", ()) if k.lower() == b"content-length"), None)
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        return -1


async def read_body(receive: Any, limit: int) -> list[Any] | None:
    """The request's body as one ``http.request`` message (or the disconnect that came before its
    end), or None as soon as the body passes ``limit``."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message.get("type") != "http.request":
            return [message]  # the client left before its body ended
        body = message.get("body", b"")
        size += len(body)
        if size > limit:
            return None
        chunks.append(body)
        if not message.get("more_body", False):
            break
    return [{"type": "http.request", "body": b"".join(chunks), "more_body": False}]


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
        (b"connection", b"close"),  # its body (if any) is never read: nothing to keep the connection for
    ]
    await send({"type": "http.response.start", "status": 401, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def send_refusal(send: Any, status: int, message: str, retry_after: bool = False) -> None:
    """A request refused before it was read: a JSON-RPC error (no id: nothing was parsed) with
    ``status``, and the connection closed after it (its body may be unread)."""
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": message}}).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),
    ]
    if retry_after:
        headers.append((b"retry-after", b"1"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
