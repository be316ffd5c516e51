"""Long-lived sessions to the configured MCP servers, for a controller that serves many calls.

``gocode serve`` and the Python API keep one :class:`Upstream` per server: it discovers the
server's tools over the session it keeps, passes regular (excluded) tool calls through, and
reports ``notifications/tools/list_changed`` (legacy era) or a ``subscriptions/listen`` event
(2026-07-28 era) so the controller can regenerate the Go declarations.

Each session lives in a task of its own, because anyio requires a client's context to be
entered and left in the same task. A session that dies (the server crashed, the network went
away) is reopened by :meth:`Upstream.supervise`, which retries a server that is down with a
bounded, jittered backoff until the controller shuts down; meanwhile a call to it fails at
once with the reason. A call already sent is never retried, since tools may have side effects.
"""

from __future__ import annotations

import logging
import random
import tempfile
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, cast

import anyio
import mcp_types as types
from anyio.abc import TaskGroup
from mcp import Client
from mcp.shared.dispatcher import ProgressFnT
from mcp.shared.exceptions import MCPError

from gocode.config import ServerConfig
from gocode.errors import DiscoveryError, UpstreamError
from gocode.mcp.backchannel import Caller, InFlight
from gocode.mcp.cache import ListingCache
from gocode.mcp.discovery import (
    ServerExited,
    connect,
    describe_server,
    failure,
    leaves,
    list_all_tools,
    sent_by_server,
    server_label,
    server_tools,
)
from gocode.mcp.httpstatus import with_status
from gocode.mcp.listing import absorb
from gocode.mcp.tasks import ProgressRoutes, call_task
from gocode.mcp.tasksupport import task_support
from gocode.toolset import MODERN_PROTOCOL, ServerTools

log = logging.getLogger("gocode.mcp.upstream")

ChangeCallback = Callable[[str], Awaitable[None]]
T = TypeVar("T")

LISTEN_RETRY_FIRST_S = 0.5  # pause before subscribing again to tool-list changes, doubling
LISTEN_RETRY_MAX_S = 30.0

_NOTICES = (
    types.ResourceUpdatedNotification,
    types.ResourceListChangedNotification,
    types.PromptListChangedNotification,
)

RETRY_FIRST_S = 1.0  # the first retry of a server that is down, doubling up to RETRY_MAX_S
RETRY_MAX_S = 30.0


class Upstream:
    """One configured server behind one long-lived client session (a :class:`~gocode.mcp.provider.ToolProvider`)."""

    def __init__(
        self,
        name: str,
        server: ServerConfig,
        tg: TaskGroup,
        on_change: ChangeCallback,
        cache: ListingCache | None = None,
    ) -> None:
        self.name = name
        self.server = server
        self._tg = tg
        self._on_change = on_change
        self._client: Client | None = None
        self._tools: ServerTools | None = None
        self._error: DiscoveryError | None = None
        self._stop = anyio.Event()
        self._lock = anyio.Lock()
        self._ended = anyio.Event()  # set when the current session (or attempt) is over
        self._closing = False
        self._attempts = 0  # connection attempts over (each ends connected or with _error)
        self.attempted = anyio.Event()  # the first connection attempt of supervise() is over
        # Tools known without a session (a cached listing): a server that is down still has
        # its functions, and calls to them fail with the reason instead of not compiling.
        self._cache = cache
        hit = cache.load(name, server) if cache is not None else None
        self.cached: ServerTools | None = (
            server_tools(name, server, hit.listing, hit.protocol_version, hit.server_info) if hit else None
        )
        self.listed_from_cache = False  # whether the current session's tools came from the cache
        self.inflight = InFlight(name)  # the calls in flight, whose clients the server's requests reach
        self.task_progress = ProgressRoutes()  # the progress of the task calls in flight (gocode.mcp.tasks)
        # Who hears of this server's resources and prompts changing (gocode.mcp.offers).
        self.notices: list[Callable[[types.ServerNotification], Awaitable[None]]] = []

    @property
    def tools(self) -> ServerTools:
        """The tools listed when the session opened, or at the last change (else the cached ones)."""
        tools = self._tools or self.cached
        if tools is None:
            raise self._error or DiscoveryError(f"{server_label(self.name)} is not connected")
        return tools

    @property
    def known_tools(self) -> ServerTools | None:
        """:attr:`tools`, or None when this server has never listed any."""
        return self._tools or self.cached

    @property
    def error(self) -> DiscoveryError | None:
        """Why the server is down (None while it is up)."""
        return None if self._client is not None else self._error

    @property
    def connected(self) -> bool:
        """Whether the session is open now (a closed one is reopened in the background)."""
        return self._client is not None

    async def start(self, *, retrying: bool = False) -> None:
        """Connect and list tools; raises :class:`DiscoveryError` when the server fails.

        ``retrying``: the server keeps failing, so its last error stands (calls fail at once)
        until this attempt succeeds; otherwise calls wait for the attempt.

        An attempt that ended while this one waited its turn (a call arriving during the
        supervisor's reconnect) answers for it: its session, or its error. Starting another
        at once would double the caller's wait and the server's restarts.
        """
        seen = self._attempts
        async with self._lock:
            if self._client is not None:
                return
            if self._attempts != seen and self._error is not None:
                raise self._error
            if not retrying:
                self._error = None
            self._stop = anyio.Event()
            self._ended = ended = anyio.Event()
            ready = anyio.Event()
            self._tg.start_soon(self._run, ready, self._stop, ended)
            await ready.wait()
            self._attempts += 1
            if self._client is None:
                raise self._error or DiscoveryError(f"{server_label(self.name)} closed at once")

    async def _run(self, ready: anyio.Event, stop: anyio.Event, ended: anyio.Event) -> None:
        client: Client | None = None
        exited = anyio.Event()  # the server's output ended: it exited (or is being stopped)
        with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errlog:
            errlog_for = errlog if self.server.type == "stdio" else None
            try:
                async with connect(
                    self.name,
                    self.server,
                    errlog_for,
                    message_handler=self._message,
                    on_end=exited.set,
                    inflight=self.inflight,
                ) as (c, version):
                    self._tools = await self._list(c, version)
                    self._client = client = c
                    self._error = None
                    ready.set()
                    async with anyio.create_task_group() as tg:
                        if version == MODERN_PROTOCOL:
                            tg.start_soon(self._listen, c)
                        await _first(stop, exited)
                        tg.cancel_scope.cancel()
                    if exited.is_set() and not stop.is_set():
                        raise ServerExited("the server's output ended (it exited)")
            except (Exception, BaseExceptionGroup) as exc:
                if self._client is client:
                    self._client = None  # calls from now on answer with the error, not a dead session
                self._error = failure(self.name, self.server, exc, errlog_for)
                if ready.is_set():
                    log.warning("%s", self._error)
            finally:
                if self._client is client:  # not a newer session started after stop()
                    self._client = None
                ready.set()
                ended.set()

    async def _list(self, client: Client, version: str) -> ServerTools:
        """The session's tools: from the cache while the server's ttlMs says they are fresh."""
        hit = self._cache.load(self.name, self.server) if self._cache is not None else None
        self.listed_from_cache = hit is not None and hit.protocol_version == version
        if hit is not None and self.listed_from_cache:
            absorb(client, hit.listing.tools)
            return server_tools(self.name, self.server, hit.listing, version, hit.server_info)
        with anyio.fail_after(self.server.timeout):
            listing = await list_all_tools(client)
        tools = server_tools(self.name, self.server, listing, version, client.server_info)
        if self._cache is not None:
            self._cache.save(self.name, self.server, listing, version, tools.server_info)
        return tools

    async def _message(self, message: types.ServerNotification | Exception) -> None:
        if isinstance(message, types.ProgressNotification):
            await self.task_progress.deliver(message.params)
        elif isinstance(message, types.ToolListChangedNotification):
            if self._cache is not None:
                self._cache.drop(self.name, self.server)
            self._tg.start_soon(self.relist)
        elif isinstance(message, _NOTICES):
            for listener in list(self.notices):
                self._tg.start_soon(_tell, listener, message)

    async def _listen(self, client: Client) -> None:
        # The 2026-07-28 era has no spontaneous notifications: changes come on a listen stream.
        # Its capabilities are not known without a handshake (the SDK assumes none), so every
        # such session subscribes; a server without subscriptions says so and is left alone.
        # A stream that fails or ends while the session lives is said so and reopened, with a
        # growing pause, and the tools are listed again (a change may have come meanwhile).
        delay = LISTEN_RETRY_FIRST_S
        said = ""  # the last reason logged: a server failing the same way is named once
        while True:
            try:
                async with client.listen(tools_list_changed=True) as sub:
                    async for _ in sub:
                        delay = LISTEN_RETRY_FIRST_S
                        self._tg.start_soon(self.relist)
                reason = "the server ended it"
            except MCPError as exc:
                if exc.code == types.METHOD_NOT_FOUND:
                    log.info("%s does not offer tool-list subscriptions", describe_server(self.name, self.server))
                    return
                reason = " ".join(str(exc).split()) or type(exc).__name__
            except Exception as exc:
                reason = " ".join(str(exc).split()) or type(exc).__name__
            if self._client is not client:
                return  # the session itself is over; it reports its own end
            log.log(
                logging.WARNING if reason != said else logging.DEBUG,
                "%s: the tool-list subscription stopped (%s); subscribing again in %g s",
                describe_server(self.name, self.server), reason, delay,
            )  # fmt: skip
            said = reason
            await anyio.sleep(delay)
            delay = min(delay * 2, LISTEN_RETRY_MAX_S)
            self._tg.start_soon(self.relist)

    async def relist(self) -> None:
        """List the tools again (after a change notification) and tell the controller."""
        client = self._client
        if client is None or self._tools is None:
            return
        try:
            with anyio.fail_after(self.server.timeout):
                raw = await list_all_tools(client)
        except (Exception, BaseExceptionGroup) as exc:
            log.warning("re-listing the tools of %s failed: %s", describe_server(self.name, self.server), exc)
            return
        new = server_tools(self.name, self.server, raw, self._tools.protocol_version, client.server_info)
        if self._cache is not None:
            self._cache.save(self.name, self.server, raw, new.protocol_version, new.server_info)
        if new != self._tools:
            self._tools = new
            await self._on_change(self.name)

    async def call(
        self,
        tool: str,
        arguments: dict[str, Any] | None,
        timeout: float,
        progress: ProgressFnT | None = None,
        caller: Caller | None = None,
    ) -> types.CallToolResult:
        """Call a tool as it is; the server's protocol errors are raised as :class:`MCPError`.

        ``progress`` receives the server's progress notifications for this call; ``caller`` its
        log messages, sampling and elicitation requests (see :mod:`gocode.mcp.backchannel`).
        """
        client = await self._connected()
        try:
            with anyio.fail_after(timeout), self.inflight.call(caller):
                # A call without arguments still sends an object: servers validate against the
                # tool's object schema and reject a missing or null one.
                args = {} if arguments is None else arguments
                if self._task_support(tool) == "required":
                    return await call_task(
                        client.session, tool, args, label=server_label(self.name), routes=self.task_progress,
                        progress=progress, meta=self._opt_in(caller),
                    )  # fmt: skip
                return await client.call_tool(tool, args, progress_callback=progress, meta=self._opt_in(caller))
        except UpstreamError:
            raise  # the server answered, with what is not an answer (gocode.mcp.tasks): the session is fine
        except MCPError as exc:
            if sent_by_server(exc):
                raise with_status(client, exc) from None
            self.stop(client)  # the server went away: the next call starts a new session
            raise UpstreamError(
                f"{server_label(self.name)}: the connection closed during {tool!r} "
                "(the server exited?); a new session is opened, so the call may be retried"
            ) from None
        except TimeoutError:
            raise UpstreamError(
                f"{server_label(self.name)}: tool {tool!r} did not answer within {timeout:g} s"
            ) from None
        except (Exception, BaseExceptionGroup) as exc:
            if all(sent_by_server(e) for e in leaves(exc)):
                first = next(iter(leaves(exc)))
                raise (with_status(client, first) if isinstance(first, MCPError) else first) from None
            self.stop(client)  # the session is unusable; the next call reconnects
            raise UpstreamError(f"{server_label(self.name)}: calling {tool!r} failed: {exc}") from None

    def _task_support(self, tool: str) -> str:
        known = self._tools
        found = next((t for t in known.tools if t.name == tool), None) if known is not None else None
        return task_support(found.definition) if found is not None else "forbidden"

    async def _connected(self) -> Client:
        """The open session, started if there is none; a server that is down (and retried in the
        background) is answered at once."""
        if self._client is None:
            if self._error is not None:
                raise UpstreamError(f"unavailable: {self._error.brief}") from None
            try:
                await self.start()
            except DiscoveryError as exc:
                raise UpstreamError(f"unavailable: {exc.brief}") from None
        client = self._client
        assert client is not None
        return client

    async def use(self, what: str, request: Callable[[Client], Awaitable[T]], timeout: float | None = None) -> T:
        """One request other than a tool call on the session (``what`` names it in errors):
        resources, prompts, completions, within ``timeout`` (the server's own by default). The
        server's protocol errors are raised as :class:`MCPError`; a server that is down or
        slow, as :class:`UpstreamError`."""
        timeout = self.server.timeout if timeout is None else timeout
        client = await self._connected()
        try:
            with anyio.fail_after(timeout):
                return await request(client)
        except MCPError as exc:
            if sent_by_server(exc):
                raise with_status(client, exc) from None
            self.stop(client)
            raise UpstreamError(f"{server_label(self.name)}: the connection closed during {what}") from None
        except TimeoutError:
            raise UpstreamError(f"{server_label(self.name)}: {what} did not answer within {timeout:g} s") from None
        except (Exception, BaseExceptionGroup) as exc:
            if all(sent_by_server(e) for e in leaves(exc)):
                first = next(iter(leaves(exc)))
                raise (with_status(client, first) if isinstance(first, MCPError) else first) from None
            self.stop(client)
            raise UpstreamError(f"{server_label(self.name)}: {what} failed: {exc}") from None

    def capabilities(self) -> types.ServerCapabilities | None:
        """What the open session's server declared (None when not connected)."""
        client = self._client
        try:
            return client.server_capabilities if client is not None else None
        except Exception:  # a 2026-07-28 session that has not said
            return None

    def _opt_in(self, caller: Caller | None) -> types.RequestParamsMeta | None:
        # A 2026-07-28 server logs only for a request that opts in; the caller's own level is
        # applied when the message reaches it, so every level is asked for here.
        tools = self._tools
        if caller is None or tools is None or tools.protocol_version != MODERN_PROTOCOL:
            return None
        return cast(types.RequestParamsMeta, {types.LOG_LEVEL_META_KEY: "debug"})

    def stop(self, client: Client | None = None) -> None:
        """Close the session (in its own task); the next call opens a new one.

        With ``client``, only if that is still the current session: a call that failed on a
        session closed meanwhile must not close the one opened since (or being opened).
        """
        if client is not None and client is not self._client:
            return
        self._client = None
        self._stop.set()

    def shutdown(self) -> None:
        """Close the session for good: :meth:`supervise` stops retrying."""
        self._closing = True
        self.stop()

    async def supervise(self, retry_first: float = RETRY_FIRST_S, retry_max: float = RETRY_MAX_S) -> None:
        """Connect, and keep the server connected until :meth:`shutdown`: reopen a session that
        ended at once, and retry one that fails with a doubling, jittered delay (at most
        ``retry_max``). :attr:`attempted` is set once the first attempt is over.

        Whenever a (re)connected server's tools differ from those known before (none, or a
        cached listing), the controller is told, as for a list change.
        """
        delay = retry_first
        backoff = False
        reported = ""
        while not self._closing:
            if self.attempted.is_set():
                await self._ended.wait()
                if self._closing:
                    return
            if self._client is None:
                if backoff:
                    # Jitter over the upper half, so servers that failed together spread out.
                    await anyio.sleep(delay * (0.5 + random.random() / 2))
                    delay = min(delay * 2, retry_max)
                    if self._closing:
                        return
                before = self.known_tools
                first = not self.attempted.is_set()
                try:
                    await self.start(retrying=backoff)
                except DiscoveryError as exc:
                    self.attempted.set()
                    if exc.summary != reported:  # once per reason, not once per retry
                        reported = exc.summary
                        tail = f"\nserver stderr (last lines):\n{exc.stderr}" if exc.stderr else ""
                        log.warning("%s; retrying in the background%s", exc.summary, tail)
                    if first:  # "still starting" becomes the reason it failed
                        await self._on_change(self.name)
                    backoff = True
                    continue
                self.attempted.set()
                if reported:
                    log.warning("%s is back", describe_server(self.name, self.server))
                backoff, delay, reported = False, retry_first, ""
                if self._tools != before:
                    await self._on_change(self.name)


async def _tell(
    listener: Callable[[types.ServerNotification], Awaitable[None]], notice: types.ServerNotification
) -> None:
    await listener(notice)


async def _first(*events: anyio.Event) -> None:
    """Wait until one of the events is set."""
    async with anyio.create_task_group() as tg:
        for event in events:

            async def wait(e: anyio.Event = event) -> None:
                await e.wait()
                tg.cancel_scope.cancel()

            tg.start_soon(wait)
