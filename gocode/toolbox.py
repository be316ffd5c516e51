"""The controller for agent loops: one model's tools, served for as long as the loop runs.

A :class:`Toolbox` is what ``gocode serve`` serves and what Python agent loops use directly::

    async with Toolbox("gocode.yaml", model="sonnet") as tools:
        definitions = tools.definitions("anthropic")       # or "openai", "gemini", "mcp", …
        result = await tools.call(name, arguments)          # a tool call the model made
        reply = result.anthropic(tool_use_id)               # or .openai(id), .text, …

It keeps one long-lived session per configured server (:mod:`gocode.mcp.supervisor`), offers
``execute_go_code`` (unless code mode is off for the model) plus every excluded tool as a
regular tool, and answers a call by its name's handler in the route table
(:mod:`gocode.routes`): Go code is built and run; a regular tool is passed through to its
server and its result comes back unchanged. When a server's tool list changes, the
declarations are regenerated and subscribers (``gocode serve`` notifies its clients) are told.
What an operator reads (readiness, metrics, housekeeping) is :mod:`gocode.operations`.
:class:`~gocode.blocking.SyncToolbox` wraps it for scripts without an event loop.

Calls may run concurrently: every program has its own directory and process, and a cancelled
call kills its program.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

import anyio
import anyio.to_thread
import mcp_types as types
from anyio.abc import TaskGroup
from mcp.shared.dispatcher import ProgressFnT
from mcp.shared.exceptions import MCPError

from gocode import tool_formats
from gocode.codemode import TOOL_NAME, CodeMode, module_cache_or_alias
from gocode.compile.modcache import ModuleCache, Progress
from gocode.config import Config, load_config
from gocode.errors import ConfigError, UnknownToolError
from gocode.mcp import logs
from gocode.mcp.backchannel import Caller
from gocode.mcp.cache import ListingCache
from gocode.mcp.loopback import Loopback
from gocode.mcp.metrics import Metrics
from gocode.mcp.supervisor import ChangeListener, Upstreams
from gocode.mcp.upstream import RETRY_FIRST_S, RETRY_MAX_S
from gocode.operations import Operations
from gocode.results import REQUEST_ID_META_KEY, ToolResult, error_result, run_to_result
from gocode.routes import saved as saved_route
from gocode.routes import table
from gocode.routes.handler import Answer, CallContext, CallProgress, Handler
from gocode.routes.runs import Runs, replay_offline
from gocode.routes.table import RouteTable, exposed_names
from gocode.run import step as stepping
from gocode.run.approvals import Approver
from gocode.run.limiter import RunLimiter
from gocode.run.runner import LineFn, RunResult
from gocode.run.setup import Notice, SetUp
from gocode.tools import saved
from gocode.tools.python import PYTHON_SERVER, PythonTool, PythonTools
from gocode.tools.saved import SavedProgram
from gocode.view.rules import SEARCH_TOOL_NAME

__all__ = ["START_WAIT_S", "TOOL_NAME", "ChangeListener", "Toolbox", "exposed_names", "replay_offline"]

log = logging.getLogger("gocode.toolbox")

# How long entering a toolbox waits for its servers; one still connecting after that (a hung
# server waits out its own `timeout`) is added when it answers, announced as a list change.
START_WAIT_S = 15.0


class Toolbox:
    """Tools for one model of a config, over long-lived server sessions. Use ``async with``.

    ``config`` is a :class:`~gocode.config.Config` or the path of a config file; ``model`` a
    model ref of it (``None``: ``defaults.model``, else the defaults). Entering connects to
    every server and, with ``prewarm``, starts building the Go bindings in the background so
    the first call only links.

    A server that fails to start (or dies later) does not stop the others: the toolbox starts
    with the servers that answered within ``start_wait`` seconds (with none, if none did;
    later ones are added when they answer), names the failed ones in
    :attr:`warnings`, and retries them in the background (``retry``: the first delay and the
    cap, in seconds, doubling and jittered) until it is closed. Calls to a server that is down
    fail at once with the reason; when one comes back with tools the toolbox did not have, the
    tool list is rebuilt and subscribers are told (:meth:`on_tools_changed`).

    A server's tool list is kept on disk for as long as the server's ``ttlMs`` allows
    (``listing_cache``: a :class:`~gocode.mcp.cache.ListingCache`, ``False`` for none), so a
    restarted toolbox does not list it again, and a server that is down has its functions.

    ``tools``: Python callables (or :func:`~gocode.tools.python.python_tool` descriptions) that
    become typed Go functions beside the servers' tools, as tools of the server ``python``
    (``python_server`` renames it); they run in this process when a program calls them (see
    :mod:`gocode.tools.python`). They need pooled sessions.

    ``approve`` decides programs that call tools needing approval (docs/approvals.md); without
    it they are refused, unless ``approval_by_client`` says the caller of each run asks its own
    client (what the declarations then tell the model).
    """

    def __init__(
        self,
        config: Config | str | os.PathLike[str],
        model: str | None = None,
        *,
        module_cache: ModuleCache | None = None,
        workspace: ModuleCache | None = None,  # deprecated: module_cache's old name
        prewarm: bool = True,
        pooled: bool = True,
        progress: Progress | None = None,
        retry: tuple[float, float] = (RETRY_FIRST_S, RETRY_MAX_S),
        start_wait: float = START_WAIT_S,
        listing_cache: ListingCache | Literal[False] | None = None,
        tools: list[Callable[..., Any] | PythonTool] | tuple[Callable[..., Any] | PythonTool, ...] = (),
        python_server: str = PYTHON_SERVER,
        stateless_step: bool = False,
        approve: Approver | None = None,
        approval_by_client: bool = False,
    ) -> None:
        self.config = config if isinstance(config, Config) else load_config(Path(config))
        self.python_tools = _python_tools(self.config, tools, python_server, pooled)
        self.model = model
        self.settings = self.config.code_mode_for(model)
        # Tool listings a server allows to be kept (ttlMs): None is the default directory.
        listings = ListingCache() if listing_cache is None else listing_cache or None
        self.code_mode = CodeMode(
            self.config, model, module_cache=module_cache_or_alias(module_cache, workspace, "Toolbox"),
            # Saved programs are Go functions too when programs reach this controller (pooled).
            offer_saved=self.settings.saved_programs and pooled,
            # Learned result shapes live beside the listings (none without a listing cache).
            shapes_cache=listings or False,
            # Whether a program held for approval can be approved here: by ``approve``, or by
            # the client of each call (`gocode serve` asks by elicitation).
            can_ask=approve is not None or approval_by_client,
        )  # fmt: skip
        self._prewarm = prewarm
        self.pooled = pooled
        # Offer step_go_code (client-owned tools over the stateless step protocol; needs pooled).
        self.stateless_step = stateless_step and pooled
        self._progress = progress
        self._routes = RouteTable()
        self._tg: TaskGroup | None = None
        self._stack: contextlib.AsyncExitStack | None = None
        self.upstreams = Upstreams(
            self.config.mcp_servers, listings, (self.python_tools,) if self.python_tools is not None else (),
            retry, start_wait, rebuild=self._rebuild, rewarm=self._rewarm,
            inferred_changed=self.code_mode.inferred_changed,
        )  # fmt: skip
        # The machine's one-off set-up (Go module cache, sandbox launcher), shared by the warm-up
        # and every call that comes before it is done; the launcher only for sandboxed runs.
        self._setup = SetUp(
            lambda: self.code_mode.module_cache, launcher=pooled and self.settings.sandbox != "off", progress=progress
        )
        self._sandbox_confirmed = False
        self.limiter = RunLimiter.for_settings(self.settings.max_concurrent_runs, self.settings.max_queued_runs)
        self.operations = Operations(self.code_mode, self.limiter, self._setup, self.upstreams.connected)
        # approve decides programs that can call tools needing approval (docs/approvals.md); None: refused.
        self.runs = Runs(
            self.config, self.code_mode, self.limiter, self._setup, self.set_up, self.operations,
            self.upstreams.retype, approve=approve, progress=progress,
        )  # fmt: skip

    @property
    def approve(self) -> Approver | None:
        return self.runs.approve

    @property
    def metrics(self) -> Metrics:
        return self.operations.metrics

    @property
    def _loopback(self) -> Loopback | None:
        return self.runs.loopback

    # --- lifecycle ----------------------------------------------------------------------------

    async def __aenter__(self) -> Toolbox:
        stack = contextlib.AsyncExitStack()
        await stack.__aenter__()
        try:
            self._tg = self.operations.tg = self.runs.tg = await stack.enter_async_context(anyio.create_task_group())
            stack.callback(self.upstreams.stop)
            self.upstreams.start(self._tg)
            # The endpoint starts while the servers do: it does not need their tools.
            if self.pooled:
                self.runs.loopback = Loopback(
                    self.upstreams.providers, self.settings.clamp_timeout(None), self.code_mode.allows,
                    search=self.code_mode.runtime_search,
                    shapes=self.code_mode.shapes,
                    offers=self.upstreams.offers,
                )  # fmt: skip
                await self.runs.loopback.start(self._tg)
            # Servers not connected by then keep connecting; their tools are announced later.
            await self.upstreams.wait_started()
            if self.settings.enabled and self.pooled:
                # The tier goes into the description; nothing is built for it (on a cold machine
                # the kernel is asked from Python, and the launcher confirms it after the set-up).
                await self.code_mode.resolve_sandbox()
            self._rebuild()
            self._rewarm()
        except BaseException:
            if self.runs.loopback is not None:  # serving in the task group: it would never end
                with anyio.CancelScope(shield=True):
                    await self.runs.loopback.stop()
            await stack.__aexit__(None, None, None)
            raise
        self._stack = stack
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        stack, self._stack = self._stack, None
        if stack is not None:
            assert self._tg is not None
            try:
                # Shielded: leaving because an enclosing scope was cancelled (serve's client hung
                # up) must still stop the endpoint and exit the task group this entered, in order.
                with anyio.CancelScope(shield=True):
                    if self.python_tools is not None:  # its calls in flight answered now, not waited for
                        self.python_tools.close()
                    loopback = self.runs.loopback
                    if loopback is not None and loopback.open_runs:
                        await loopback.stop()  # bounded (a few seconds); calls in flight still reach their servers
                    self.upstreams.stop()
                    if loopback is not None:
                        await loopback.stop()  # with no program left, while the sessions close
                    await anyio.sleep(0)  # let sessions begin closing (stdin EOF) before their tasks are cancelled
            finally:
                self._tg.cancel_scope.cancel()
                await stack.__aexit__(exc_type, exc, tb)

    def _rewarm(self) -> None:
        """Build the Go bindings again in the background (with ``prewarm``, once entered)."""
        if self._prewarm and self.settings.enabled and self._tg is not None:
            self.operations.warm_up(self._tg, self._warm_up, self.settle)

    async def _warm_up(self) -> None:
        assert self._tg is not None
        await self._setup.wait(self._tg)  # the same set-up a call coming meanwhile waits for
        await self._confirm_sandbox()
        await self.code_mode.prewarm(self._progress)
        if SEARCH_TOOL_NAME in self._routes.handlers or self.pooled:
            # Embedding a large tool set's descriptions takes seconds the first time: not on a call.
            await anyio.to_thread.run_sync(lambda: self.code_mode.search_index().load_models())

    def readiness(self) -> tuple[bool, str]:
        """Whether this toolbox should get traffic, and if not why (no secrets: probes are public).

        Ready once the servers were discovered and the Go module cache is warm (the first call
        only links). A server that dies later does not make it unready: the next call
        reconnects, and every replica shares the same servers (see ``gocode_upstream_up``).
        """
        return self.operations.readiness(self.upstreams.started)

    async def housekeep(self) -> dict[str, Any] | None:
        """See :meth:`gocode.operations.Operations.housekeep`."""
        return await self.operations.housekeep()

    async def set_up(self, notice: Notice | None = None, within: float | None = None) -> bool:
        """Wait for the machine's one-off set-up (the Go module cache, the sandbox launcher),
        starting it if nothing has: every caller meanwhile waits for the same one. ``notice``
        is awaited with its progress lines; False if it still runs after ``within`` seconds.
        Raises :class:`~gocode.run.setup.SetUpError` (the cause and the fix) when it fails."""
        if self._tg is None:
            raise RuntimeError("enter the toolbox first: async with Toolbox(...) as tools")
        if not await self._setup.wait(self._tg, notice, within):
            return False
        await self._confirm_sandbox()
        if self.operations.warm_up_failed:
            # The warm-up failed on the set-up a call has now done: warm up again, so the process
            # becomes ready (/readyz) instead of staying "not ready" for good.
            self._rewarm()
        return True

    async def _confirm_sandbox(self) -> None:
        """Once the launcher exists, check the tier found without it; a different one changes
        the description, and subscribers are told."""
        if self._sandbox_confirmed or not (self.settings.enabled and self.pooled):
            return
        self._sandbox_confirmed = True
        if await self.code_mode.confirm_sandbox():
            log.warning(
                "the sandbox launcher found another tier than the first probe: %s", self.code_mode.sandbox_state()
            )
            self._rebuild()
            await self.upstreams.tell()

    async def wait_warm(self) -> None:
        """Wait for the background warm-up started on entering (if any) to finish."""
        await self.operations.wait_warm()

    async def settle(self) -> None:
        """Finish everything that changes what the model is sent (the sandbox tier its
        description states), so the definitions stay as they are from here on; a later change
        (a server's tools) is announced to :meth:`on_tools_changed` listeners. Quick: the tier
        is found without the machine's set-up, which a first call waits for (:meth:`set_up`)."""
        if self.settings.enabled and self.pooled and not self.code_mode.sandbox_resolved:
            await self.code_mode.resolve_sandbox()
            self._rebuild()
            await self.upstreams.tell()

    # --- tools --------------------------------------------------------------------------------

    @property
    def warnings(self) -> list[str]:
        """Servers that are down and tools gocode could not use as listed (see ``CodeMode.warnings``)."""
        return self.code_mode.warnings

    def _rebuild(self) -> None:
        self.code_mode.use(self.upstreams.known(), self.upstreams.down())
        offer = table.Offer(stateless_step=self.stateless_step, save=self.save_program)
        self._routes = table.build(self.code_mode, self.upstreams.providers, self.runs, offer)

    def taken_names(self) -> set[str]:
        """Names a saved program may not take: the tools offered and every server's tool names."""
        view = self.code_mode.view
        tools = [*view.code_tools.tools(), *view.excluded]
        return self._routes.names() | {t.name for t in tools if t.server != saved.SAVED_SERVER}

    async def save_program(self, request: saved.SaveRequest) -> SavedProgram:
        """Check, build and keep a program as a tool; the tool list changes (listeners are told)."""
        program = await saved_route.save_program(self.code_mode, request, self.taken_names())
        self._rebuild()
        await self.upstreams.tell()
        return program

    def on_tools_changed(self, listener: ChangeListener) -> Callable[[], None]:
        """Call ``listener`` after the tool list changed; returns a function that unsubscribes."""
        return self.upstreams.on_tools_changed(listener)

    def tools(self, unasked: bool = False) -> list[types.Tool]:
        """The tools to offer, as MCP ``Tool`` objects (``unasked``: as a client that cannot approve reads them)."""
        return list(self._routes.unasked if unasked else self._routes.tools)

    def definitions(self, fmt: tool_formats.Format | str = "mcp") -> list[dict[str, Any]]:
        """The tools as plain dicts for a model API: see :data:`gocode.tool_formats.FORMATS`."""
        return tool_formats.convert(list(self._routes.tools), fmt)

    def route(self, name: str) -> Handler:
        """The handler of a tool name offered; raises :class:`UnknownToolError` for another."""
        return self._routes.handler(name)

    # --- calls --------------------------------------------------------------------------------

    async def execute(
        self,
        code: str,
        timeout: float | None = None,
        approve: Approver | None = None,
        session: str | None = None,
        *,
        dry_run: bool = False,
        on_line: LineFn | None = None,
        on_setup: Notice | None = None,
        setup_wait: float | None = None,
    ) -> RunResult:
        """Run Go code as ``execute_go_code`` does (also when code mode is off for the model).

        Every pooled run's calls are recorded under its ``run_id`` (see :mod:`gocode.run.recordstore`).
        ``dry_run``: no call reaches a server; each is answered with a stub shaped by the tool's
        output schema (zero values), so a program that would write can be checked first.
        ``on_line`` is awaited with each line the program prints, while it runs
        (:meth:`execute_stream` is the same as an async iterator).

        Pooled (the default): the program reaches the servers through this toolbox's sessions
        on the loopback endpoint, and the calls it makes are in ``RunResult.tool_calls``.
        At most :attr:`limiter` ``.limit`` programs build and run at once; the time a call
        waits for its turn counts against its timeout, and a call that finds the queue full
        gets a ``busy`` result at once (retryable).

        On a machine where gocode never ran, the first call waits for the one-off set-up
        (:meth:`set_up`; not counted against the timeout), ``on_setup`` awaited with its progress
        lines; with ``setup_wait``, at most that many seconds, then it answers with a retryable
        ``warming`` result saying what the set-up is doing. A failed set-up is a ``setup`` result
        naming the cause and the fix.
        """
        return await self.runs.execute(
            code, timeout, approve, session,
            dry_run=dry_run, on_line=on_line, on_setup=on_setup, setup_wait=setup_wait,
        )  # fmt: skip

    def execute_stream(self, code: str, timeout: float | None = None) -> AsyncIterator[str | RunResult]:
        """Run Go code as :meth:`execute` does, yielding each line the program prints as it prints
        it (``str``, without the newline), then the :class:`RunResult`. Leaving the loop early
        stops the program."""
        return self.runs.stream(code, timeout)

    async def replay(self, run_id: str, timeout: float | None = None, code: str | None = None) -> RunResult:
        """Run a recorded run's program again, every call answered from its recording (no server is
        called). Raises :class:`~gocode.run.recordstore.RecordingError` when the recording is missing or
        the tool set changed since it was made (naming what differs)."""
        return await self.runs.replay(run_id, timeout, code)

    async def step(
        self,
        code: str,
        tools: list[Any],
        continuation: str | None = None,
        results: list[Any] | None = None,
        timeout: float | None = None,
    ) -> stepping.StepResult:
        """One pass of the stateless step protocol (:mod:`gocode.run.step`, docs/stateless.md):
        ``tools`` the caller's own (:class:`~gocode.run.step.ClientTool` or dicts), then the last
        answer's ``continuation`` and a result for each call it listed (``{id, result, isError}``).
        Raises :class:`~gocode.run.step.StepError` for a refused continuation or bad answers."""
        return await self.runs.step(code, tools, continuation, results, timeout)

    def step_declarations(self, tools: list[Any]) -> stepping.Declarations:
        """The Go a step program for ``tools`` is written against (docs/stateless.md)."""
        return self.runs.step_declarations(tools)

    async def call_mcp(
        self,
        name: str,
        arguments: dict[str, Any] | None,
        progress: ProgressFnT | None = None,
        approve: Approver | None = None,
        session: str | None = None,
        *,
        notice: Notice | None = None,
        setup_wait: float | None = None,
        caller: Caller | None = None,
    ) -> tuple[types.CallToolResult, RunResult | None]:
        """Answer one call by its tool's handler: the MCP result (and the run, for Go code).

        A call running Go on a machine not set up yet waits for the set-up (:meth:`execute`), its lines sent to
        ``progress`` (numbered on with the program's printed lines) and ``notice``; ``setup_wait`` bounds it.
        ``caller``: the client a passed-through server may ask or log to (:mod:`gocode.mcp.backchannel`).
        Raises :class:`UnknownToolError` (a name not offered), :class:`MCPError` (a server's protocol error).
        """
        handler = self._routes.handler(name)
        rid = logs.current_request_id() or logs.new_request_id()
        token = logs.REQUEST_ID.set(rid)
        start = time.monotonic()
        ctx = CallContext(CallProgress(progress, notice), approve, session, caller)
        answer: Answer | None = None
        cancelled = False
        try:
            waited = await self.runs.wait_setup(ctx.reporter.note, setup_wait) if handler.runs_code else None
            answer = await handler.handle(arguments, ctx) if waited is None else Answer(run_to_result(waited), waited)
        except anyio.get_cancelled_exc_class():  # the client cancelled the call, or hung up
            cancelled = True
            raise
        finally:
            logs.REQUEST_ID.reset(token)
            if answer is not None or cancelled:  # counted and logged (None: cancelled)
                self.operations.called(name, handler.kind, answer, start, rid)
        assert answer is not None
        result, run = answer.result, answer.run
        return result.model_copy(update={"meta": {**(result.meta or {}), REQUEST_ID_META_KEY: rid}}), run

    async def call(self, name: str, arguments: dict[str, Any] | str | None = None) -> ToolResult:
        """Dispatch a tool call the model made; every failure is an error result, never an exception.

        ``arguments`` may be the JSON text some APIs hand back (OpenAI's ``function.arguments``).
        """
        if isinstance(arguments, str):
            try:
                arguments = _parse_arguments(arguments)
            except ValueError as exc:
                return ToolResult(name, error_result(f"the arguments of {name!r} are not a JSON object: {exc}"))
        try:
            result, run = await self.call_mcp(name, arguments)
        except UnknownToolError as exc:
            return ToolResult(name, error_result(str(exc)))
        except MCPError as exc:
            return ToolResult(name, error_result(f"{name}: {exc}"))
        return ToolResult(name, result, run)


def _python_tools(config: Config, tools: Any, server: str, pooled: bool) -> PythonTools | None:
    """The toolbox's Python tools under their server name (None without any), checked early."""
    if not tools:
        return None
    if isinstance(tools, dict) or not hasattr(tools, "__iter__") or callable(tools):
        raise ConfigError("tools= takes a list of Python callables")
    if not pooled:
        raise ConfigError(
            "Python tools run in the controller, which programs reach only with pooled sessions: drop pooled=False"
        )
    if server in config.mcp_servers:
        raise ConfigError(
            f"the config has a server named {server!r}, the name the Python tools are listed under; "
            f"rename that server in mcpServers or pass python_server='another-name'"
        )
    if not server or server.startswith("@"):
        raise ConfigError(f"python_server {server!r} is not a usable server name")
    return PythonTools(tools, server)


def _parse_arguments(text: str) -> dict[str, Any]:
    value = json.loads(text or "{}")
    if not isinstance(value, dict):
        raise ValueError(f"got {type(value).__name__}")
    return value
