"""Discovery: connect to each configured MCP server with the Python ``mcp`` client and list its tools.

For every server this learns the protocol era the Go program must use:
gocode first tries the ``initialize`` handshake, which every server from
2024-11-05 to 2025-11-25 speaks and which skips the ``server/discover`` probe that some
servers exit on; a server that refuses it is modern-only, and is reached through
``server/discover`` (2026-07-28) instead.

Servers are discovered concurrently, each within its own connect timeout; transient network
failures are retried (tenacity). Each tool of a listing is vetted on its own
(:mod:`gocode.mcp.listing`), and stdio servers run under :mod:`gocode.mcp.stdio`, which skips
non-JSON lines on their stdout. A server that fails is reported with its command (or URL), how
its process ended and the tail of its stderr, never with a traceback. Owns no state between calls.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import tempfile
from collections.abc import AsyncIterator, Callable, Iterable
from typing import IO, Any

import anyio
import httpx2
from mcp import Client
from mcp.client.session import MessageHandlerFnT
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED
from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt, wait_exponential

from gocode.config import Config, ServerConfig
from gocode.errors import DiscoveryError, ServerExited
from gocode.mcp import sdk_private
from gocode.mcp.backchannel import InFlight
from gocode.mcp.cache import RecentListings
from gocode.mcp.clientinfo import client_info
from gocode.mcp.httpstatus import StatusRecorder, describe_status, recording
from gocode.mcp.listing import DiscoveryResult, Listing, list_tools, server_tools
from gocode.mcp.oauth import connect_scope, oauth_for
from gocode.mcp.prestart import server_env
from gocode.mcp.stdio import exit_status, tolerant_stdio_client
from gocode.toolset import LEGACY_PROTOCOL, MODERN_PROTOCOL, ServerTools

STDERR_TAIL = 2000


def server_label(name: str) -> str:
    """A server as messages a model reads name it: by name only (see describe_server)."""
    return f"MCP server {name!r}"


def describe_server(name: str, server: ServerConfig) -> str:
    """A server as the operator's logs and command-line errors name it: with its command line
    or URL, which may carry secrets; never put in what a model reads (server_label)."""
    if server.type == "stdio":
        cmd = " ".join([server.command or "", *server.args])
        return f"MCP server {name!r} (command: {cmd})"
    return f"MCP server {name!r} ({server.type} {server.url})"


@contextlib.asynccontextmanager
async def open_client(
    name: str,
    server: ServerConfig,
    mode: str,
    errlog: IO[str] | None,
    *,
    read_timeout: float | None = None,
    message_handler: MessageHandlerFnT | None = None,
    on_end: Callable[[], None] | None = None,
    inflight: InFlight | None = None,
) -> AsyncIterator[Client]:
    """A connected :class:`mcp.Client` for one server, in the given negotiation mode.

    ``read_timeout`` bounds every request (discovery uses the server's connect timeout; a
    long-lived session leaves it unset and bounds each call itself). ``on_end`` is called when
    a stdio server's output ends (it exited). ``inflight``: the server's log messages, sampling
    and elicitation requests go to the client of the call they come during (see
    :mod:`gocode.mcp.backchannel`); without it they are not taken.
    """
    transport: Any
    opts: dict[str, Any] = {
        "mode": mode,
        "read_timeout_seconds": read_timeout,
        "message_handler": message_handler,
        "client_info": client_info(),
    }
    if inflight is not None:
        opts |= {"elicitation_callback": inflight.elicit, "logging_callback": inflight.log}
        if inflight.sampling:
            opts["sampling_callback"] = inflight.sample
    if server.type == "stdio":
        params = StdioServerParameters(
            command=server.command or "", args=list(server.args), env=server_env(server), cwd=server.cwd
        )
        async with Client(tolerant_stdio_client(name, params, errlog, on_end), **opts) as client:
            yield _results_as_sent(client)
    elif server.type == "http":
        sdk_private.tolerate_deep_messages()  # a tool nested too deep costs that tool, not the server
        # The SDK's own defaults for MCP over HTTP: 30 s, and 300 s to read a held-open stream.
        status = StatusRecorder(signs_in=server.auth is not None)
        http = httpx2.AsyncClient(
            auth=oauth_for(name, server),
            headers=dict(server.headers) or None,
            timeout=httpx2.Timeout(30, read=300),
            event_hooks={"response": [status.seen]},
        )
        async with http:
            transport = streamable_http_client(server.url or "", http_client=http)
            try:
                async with Client(transport, **opts) as client:
                    with recording(client, status):
                        yield _results_as_sent(client)
            except (Exception, BaseExceptionGroup) as exc:
                status.explain(exc)
                raise
    else:
        transport = sse_client(
            server.url or "", headers=dict(server.headers) or None, timeout=server.timeout, auth=oauth_for(name, server)
        )
        async with Client(transport, **opts) as client:
            yield _results_as_sent(client)


async def _accept_result(name: str, result: Any) -> None:
    return None


def _results_as_sent(client: Client) -> Client:
    """The client with the SDK's check of results against the tool's output schema turned off.

    The check raises on a result without structured content (a server that declares an output
    schema and answers in text, as many do), so the result was lost and the session dropped; the
    Go runtime decodes results itself, falls back to the text, and says what did not fit.
    """
    client.session.validate_tool_result = _accept_result  # type: ignore[method-assign]
    return client


@contextlib.asynccontextmanager
async def _open_within(
    name: str, server: ServerConfig, mode: str, errlog: IO[str] | None, **opts: Any
) -> AsyncIterator[Client]:
    """:func:`open_client`, with connecting (not the session's life) bounded by the server's ``timeout``.

    A cancel scope whose deadline is lifted once connected, because anyio scopes must be exited
    in the order they were entered: a ``fail_after`` around the enter alone would not be.
    """
    with anyio.CancelScope(deadline=anyio.current_time() + server.timeout) as scope:
        # An OAuth sign-in lifts the deadline while a person signs in (gocode.mcp.oauth).
        signing_in = connect_scope.set(scope)
        try:
            async with open_client(name, server, mode, errlog, **opts) as client:
                scope.deadline = math.inf
                yield client
        finally:
            connect_scope.reset(signing_in)
    if scope.cancelled_caught:
        raise TimeoutError(f"connecting took longer than {server.timeout:g} s")


@contextlib.asynccontextmanager
async def connect(
    name: str,
    server: ServerConfig,
    errlog: IO[str] | None,
    *,
    read_timeout: float | None = None,
    message_handler: MessageHandlerFnT | None = None,
    on_end: Callable[[], None] | None = None,
    inflight: InFlight | None = None,
) -> AsyncIterator[tuple[Client, str]]:
    """A connected client and the protocol version the Go program should pin for the server.

    The legacy handshake first; a server that refuses it gets the modern (discover) era.
    """
    armed = False  # on_end is about the session handed out, not a refused first attempt

    def ended() -> None:
        if armed and on_end is not None:
            on_end()

    opts: dict[str, Any] = {
        "read_timeout": read_timeout,
        "message_handler": message_handler,
        "on_end": ended,
        "inflight": inflight,
    }
    entered = False
    try:
        async with _open_within(name, server, "legacy", errlog, **opts) as client:
            entered = armed = True
            yield client, LEGACY_PROTOCOL
        return
    except (Exception, BaseExceptionGroup) as exc:
        # Only a protocol-level refusal of the handshake means "try the stateless era"; anything
        # else is a failure. (anyio task groups may wrap the MCPError in an exception group.)
        if entered or not all(sent_by_server(e) for e in leaves(exc)):
            raise
    async with _open_within(name, server, MODERN_PROTOCOL, errlog, **opts) as client:
        armed = True
        yield client, MODERN_PROTOCOL


def sent_by_server(exc: BaseException) -> bool:
    """An error the server sent back; not the connection closing (a server that died or went away)."""
    return isinstance(exc, MCPError) and not (exc.code == CONNECTION_CLOSED and exc.message == "Connection closed")


async def list_all_tools(client: Client) -> Listing:
    """Every tool, each vetted on its own (see :mod:`gocode.mcp.listing`); never from a cache."""
    return await list_tools(client)


def _transient(exc: BaseException) -> bool:
    for e in leaves(exc):
        if isinstance(e, FileNotFoundError | PermissionError | NotADirectoryError):
            return False
        if isinstance(e, httpx2.TransportError | ConnectionError):
            return True
    return False


def leaves(exc: BaseException) -> Iterable[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        for sub in exc.exceptions:
            yield from leaves(sub)
    else:
        yield exc


def _reason(exc: BaseException) -> str:
    """The most telling message in an exception (groups from anyio task groups unwrapped)."""
    msgs = []
    for e in leaves(exc):
        if isinstance(e, FileNotFoundError):
            msgs.append(f"command not found: {e.filename or e}")
        elif isinstance(e, TimeoutError):
            msgs.append("timed out")
        elif isinstance(e, httpx2.HTTPStatusError):
            msgs.append(f"{describe_status(e.response.status_code)} (from {e.request.url})")
        else:
            text = str(e) or type(e).__name__
            text = text if isinstance(e, MCPError) else f"{type(e).__name__}: {text}"
            if notes := getattr(e, "__notes__", None):  # the HTTP status (gocode.mcp.httpstatus)
                text += f" ({'; '.join(notes)})"
            msgs.append(text)
    return "; ".join(dict.fromkeys(msgs)) or type(exc).__name__


async def _discover_once(
    name: str, server: ServerConfig, errlog: IO[str] | None, recent: RecentListings | None = None
) -> ServerTools:
    async with connect(name, server, errlog, read_timeout=server.timeout) as (client, version):
        with anyio.fail_after(server.timeout):
            raw = await list_all_tools(client)
        tools = server_tools(name, server, raw, version, client.server_info)
        if recent is not None:
            recent.save(name, server, raw, version, tools.server_info)
        return tools


async def discover_server(name: str, server: ServerConfig, recent: RecentListings | None = None) -> ServerTools:
    """Tools of one server; raises :class:`DiscoveryError` naming the server, command and stderr."""
    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errlog:
        try:
            async for attempt in AsyncRetrying(
                stop=stop_after_attempt(3),
                wait=wait_exponential(multiplier=0.2, max=2),
                retry=retry_if_exception(_transient),
                reraise=True,
            ):
                with attempt:
                    return await _discover_once(name, server, errlog if server.type == "stdio" else None, recent)
        except DiscoveryError:
            raise
        except (Exception, BaseExceptionGroup) as exc:
            raise failure(name, server, exc, errlog) from None
    raise AssertionError("unreachable")


def failure(name: str, server: ServerConfig, exc: BaseException, errlog: IO[str] | None) -> DiscoveryError:
    """A server that failed to connect or list, described with its command (or URL), exit status
    and stderr tail."""
    reason = f"no answer within {server.timeout:g} s (the server's `timeout`)" if _is_timeout(exc) else _reason(exc)
    tail = ""
    if errlog is not None:
        with contextlib.suppress(OSError, ValueError):
            errlog.seek(0)
            tail = errlog.read()[-STDERR_TAIL:].strip()
    how, status, tail = exit_status(tail)
    went_away = reason == "Connection closed" or any(isinstance(e, ServerExited) for e in leaves(exc))
    if how is not None and went_away:  # it ended by itself: how it ended is the news
        reason = f"the server {how}"
    summary = f"{describe_server(name, server)} failed: {reason}"
    msg = summary + ("\nserver stderr (last lines):\n" + tail if tail else "")
    brief = f"{server_label(name)} failed: {reason}"
    return DiscoveryError(msg, server=name, summary=summary, brief=brief, stderr=tail, exit_status=status)


def _is_timeout(exc: BaseException) -> bool:
    return any(isinstance(e, TimeoutError) for e in leaves(exc))


async def discover(
    config: Config,
    servers: Iterable[str] | None = None,
    *,
    recent: RecentListings | None = None,
) -> DiscoveryResult:
    """Discover every configured server (or the named ones) concurrently; with ``recent``, keep
    each listing there (for :func:`gocode.mcp.browse.browse`)."""
    names = sorted(config.mcp_servers if servers is None else servers)
    result = DiscoveryResult()

    async def one(name: str) -> None:
        server = config.mcp_servers[name]
        try:
            result.servers.append(await discover_server(name, server, recent))
        except DiscoveryError as exc:
            result.failures[name] = exc

    await asyncio.gather(*(one(n) for n in names))
    result.servers.sort(key=lambda s: s.server)
    return result
