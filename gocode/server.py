"""``gocode serve``: one model's tools as an MCP server, over stdio or streamable HTTP.

The server lists ``execute_go_code`` (unless code mode is off for the model) and every
excluded tool under its own name and schema, and dispatches calls to a :class:`Toolbox`.
When an upstream tool list changes, clients are told: sessions on the handshake era get
``notifications/tools/list_changed``; 2026-07-28 clients get the event on their
``subscriptions/listen`` stream.

Over HTTP the server binds 127.0.0.1 unless told otherwise and, with a token set, refuses
every request without ``Authorization: Bearer <token>`` (compared in constant time).
"""

from __future__ import annotations

import hmac
import logging
import socket
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.server.session import ServerSession
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from gocode.loopback import bearer_token, send_unauthorized
from gocode.toolbox import Toolbox, UnknownToolError

log = logging.getLogger("gocode.server")

TOKEN_ENV = "GOCODE_TOKEN"
MCP_PATH = "/mcp"
NOTIFY_TIMEOUT_S = 2.0

Scope = MutableMapping[str, Any]
ASGIApp = Callable[[Scope, Any, Any], Awaitable[None]]


class ToolServer:
    """The MCP server for one :class:`Toolbox`, and the clients to tell about changes."""

    def __init__(self, toolbox: Toolbox) -> None:
        self.toolbox = toolbox
        self.bus = InMemorySubscriptionBus()
        # Handshake-era sessions, one per connection (keyed by its client params, which are
        # per-connection), to notify when the tool list changes.
        self._sessions: dict[int, ServerSession] = {}
        self.server: Server[Any] = Server(
            "gocode",
            version=_version(),
            # The usage rules, for clients that hide tool definitions behind their own search.
            instructions=(
                "Call execute_go_code with Go code that uses the tools as typed functions; its description "
                "declares them.\n" + toolbox.code_mode.rules()
                if toolbox.settings.enabled
                else None
            ),
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_subscriptions_listen=ListenHandler(self.bus),
        )
        self.server.add_notification_handler("notifications/initialized", types.NotificationParams, self._initialized)
        self.unsubscribe = toolbox.on_tools_changed(self._tools_changed)

    def initialization_options(self) -> Any:
        return self.server.create_initialization_options(NotificationOptions(tools_changed=True))

    def _remember(self, ctx: ServerRequestContext[Any]) -> None:
        if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS and ctx.session.client_params is not None:
            self._sessions.setdefault(id(ctx.session.client_params), ctx.session)

    async def _initialized(self, ctx: ServerRequestContext[Any], params: types.NotificationParams) -> None:
        self._remember(ctx)

    async def _list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        self._remember(ctx)
        return types.ListToolsResult(tools=self.toolbox.tools())

    async def _call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        self._remember(ctx)
        gone = _disconnect_event(ctx)

        async def progress(value: float, total: float | None, message: str | None) -> None:
            # A passed-through tool's progress goes on to our client (a no-op unless it asked).
            await ctx.session.report_progress(value, total, message)

        result: types.CallToolResult | None = None
        try:
            async with anyio.create_task_group() as tg:

                async def call() -> None:
                    nonlocal result
                    result, _ = await self.toolbox.call_mcp(params.name, params.arguments, progress)
                    tg.cancel_scope.cancel()

                async def hang_up() -> None:
                    # No event store is configured, so a client that hung up can never get this
                    # result: stop the program rather than let it run to its timeout.
                    assert gone is not None
                    await gone.wait()
                    log.info("client disconnected; cancelling %s", params.name)
                    tg.cancel_scope.cancel()

                tg.start_soon(call)
                if gone is not None:
                    tg.start_soon(hang_up)
        except* UnknownToolError as group:
            raise MCPError(code=types.INVALID_PARAMS, message=str(group.exceptions[0])) from None
        except* MCPError as group:
            raise group.exceptions[0] from None
        if result is None:
            raise MCPError(code=types.INTERNAL_ERROR, message="the client disconnected; the call was cancelled")
        return result

    async def _tools_changed(self) -> None:
        await self.bus.publish(ToolsListChanged())
        for key, session in list(self._sessions.items()):
            try:
                with anyio.fail_after(NOTIFY_TIMEOUT_S):
                    await session.send_tool_list_changed()
            except Exception:  # the connection is gone: forget it
                self._sessions.pop(key, None)

    async def run_stdio(self) -> None:
        async with stdio_server() as (read, write):
            await self.server.run(read, write, self.initialization_options())

    def http_app(self, host: str, token: str | None) -> ASGIApp:
        return HttpGuard(self.server.streamable_http_app(streamable_http_path=MCP_PATH, host=host), token)


DISCONNECTED_KEY = "gocode.disconnected"


class HttpGuard:
    """ASGI middleware: the bearer token check, and noticing when a client hangs up.

    With a token, every HTTP request must carry ``Authorization: Bearer <token>``. Every HTTP
    request also gets an event in its scope that is set when the client disconnects; a call
    whose client hung up is cancelled (see :meth:`ToolServer._call_tool`).
    """

    def __init__(self, app: ASGIApp, token: str | None) -> None:
        self.app = app
        self.expected = token

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self.expected is not None:
            given = bearer_token(scope)
            if given is None or not hmac.compare_digest(given.encode(), self.expected.encode()):
                await send_unauthorized(send)
                return
        gone = anyio.Event()
        scope[DISCONNECTED_KEY] = gone

        async def watched_receive() -> Any:
            message = await receive()
            if message.get("type") == "http.disconnect":
                gone.set()
            return message

        await self.app(scope, watched_receive, send)


def _disconnect_event(ctx: ServerRequestContext[Any]) -> anyio.Event | None:
    scope = getattr(ctx.request, "scope", None)
    event = scope.get(DISCONNECTED_KEY) if isinstance(scope, dict) else None
    return event if isinstance(event, anyio.Event) else None


def bind(host: str, port: int) -> socket.socket:
    """A listening socket (port 0: any free port), so the real address is known before serving."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


async def serve_http(tool_server: ToolServer, sock: socket.socket, host: str, token: str | None) -> None:
    import uvicorn  # a dependency of mcp; imported here so stdio serving does not pay for it

    config = uvicorn.Config(tool_server.http_app(host, token), log_level="warning", lifespan="on")
    await uvicorn.Server(config).serve(sockets=[sock])


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("gocode")
    except PackageNotFoundError:
        return "0"
