"""The controller for agent loops: one model's tools, served for as long as the loop runs.

A :class:`Toolbox` is what ``gocode serve`` serves and what Python agent loops use directly::

    async with Toolbox("gocode.yaml", model="sonnet") as tools:
        definitions = tools.definitions("anthropic")       # or "openai", "gemini", "mcp", …
        result = await tools.call(name, arguments)          # a tool call the model made
        reply = result.anthropic(tool_use_id)               # or .openai(id), .text, …

It keeps one long-lived session per configured server (:mod:`gocode.mcp.upstream`), offers
``execute_go_code`` (unless code mode is off for the model) plus every excluded tool as a
regular tool, and dispatches calls by name: Go code is built and run; a regular tool is
passed through to its server and its result comes back unchanged. When a server's tool list
changes, the declarations are regenerated and subscribers (``gocode serve`` notifies its
clients) are told. :class:`~gocode.blocking.SyncToolbox` wraps it for scripts without an event loop.

Calls may run concurrently: every program has its own directory and process, and a cancelled
call kills its program.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import logging
import math
import os
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, replace
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
from gocode.codemode import TOOL_NAME, CodeMode, ToolState
from gocode.compile import housekeeping
from gocode.compile.modcache import ModuleCache, Progress
from gocode.config import Config, load_config
from gocode.errors import (
    Busy,
    ConfigError,
    GocodeError,
    SavedProgramError,
    SetUpError,
    ToolProviderError,
    UnknownToolError,
)
from gocode.mcp import logs
from gocode.mcp.cache import ListingCache
from gocode.mcp.discovery import server_label
from gocode.mcp.loopback import Loopback
from gocode.mcp.loopback import Run as LoopbackRun
from gocode.mcp.metrics import LiveState, Metrics
from gocode.mcp.provider import ToolProvider
from gocode.mcp.upstream import RETRY_FIRST_S, RETRY_MAX_S, Upstream
from gocode.program.plan import Plan
from gocode.program.render import tools_import_path
from gocode.results import REQUEST_ID_META_KEY, ToolResult, error_result, run_to_result, saved_answer
from gocode.run import recordstore
from gocode.run import step as stepping
from gocode.run.approvals import ANY_TOOL, ApprovalRequest, Approver
from gocode.run.interceptor import Interceptor, Mode
from gocode.run.limiter import RunLimiter, default_limit
from gocode.run.reach import ControllerLoopback
from gocode.run.runner import LineFn, RunResult
from gocode.run.setup import Notice, SetUp
from gocode.schema.builder import build_package
from gocode.schema.ir import Package
from gocode.search.answer import search_tool_definition
from gocode.tools import saved
from gocode.tools.declared import DeclaredTools
from gocode.tools.python import PYTHON_SERVER, PythonTool, PythonTools
from gocode.tools.saved import SAVE_TOOL_NAME, SavedProgram
from gocode.toolset import ToolInfo, ToolSet
from gocode.view.rules import SEARCH_TOOL_NAME

log = logging.getLogger("gocode.toolbox")

# Cache housekeeping runs after the warm-up and then every this many programs or seconds.
HOUSEKEEPING_EVERY_RUNS = 200
HOUSEKEEPING_EVERY_S = 900.0

# Safe for every model API: OpenAI and Anthropic allow [A-Za-z0-9_-]{1,64}; Gemini also wants
# a letter or underscore first.
_SAFE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")


@dataclass(frozen=True)
class Route:
    """Where a tool name the client sees leads: Go code mode, or a server's own tool."""

    name: str
    tool: ToolInfo | None = None  # None: execute_go_code or search_go_tools (by name)
    saved: SavedProgram | None = None  # a saved program, run as Go code with its input


def exposed_names(tools: list[ToolInfo], reserved: set[str]) -> dict[str, ToolInfo]:
    """A name per passed-through tool that every model API accepts and that no other tool has.

    A tool keeps its own name when it can; one that clashes (the same tool name on two
    servers) or is not a valid function name becomes ``server_tool``, cleaned and, if still
    taken, suffixed with a short hash. Deterministic for a given set of tools (pure).
    """
    out: dict[str, ToolInfo] = {}
    counts: dict[str, int] = {}
    for t in tools:
        counts[t.name] = counts.get(t.name, 0) + 1
    for t in sorted(tools, key=lambda t: (t.server, t.name)):
        name = t.name
        if counts[name] > 1 or name in reserved or not _SAFE_NAME.match(name):
            name = _clean(f"{t.server}_{t.name}")
        if name in out or name in reserved:
            digest = hashlib.sha256(f"{t.server}\0{t.name}".encode()).hexdigest()[:8]
            name = _clean(name[:55] + "_" + digest)
        out[name] = t
    return out


def _clean(name: str) -> str:
    name = re.sub(r"[^A-Za-z0-9_-]+", "_", name).strip("_-") or "tool"
    if not re.match(r"[A-Za-z_]", name):
        name = "t_" + name
    return name[:64]


ChangeListener = Callable[[], Awaitable[None]]

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
    """

    def __init__(
        self,
        config: Config | str | os.PathLike[str],
        model: str | None = None,
        *,
        workspace: ModuleCache | None = None,
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
    ) -> None:
        self.config = config if isinstance(config, Config) else load_config(Path(config))
        self.python_tools = _python_tools(self.config, tools, python_server, pooled)
        self.model = model
        self.settings = self.config.code_mode_for(model)
        # Tool listings a server allows to be kept (ttlMs): None is the default directory.
        self._listing_cache = ListingCache() if listing_cache is None else listing_cache or None
        self.code_mode = CodeMode(
            self.config, model, workspace=workspace,
            # Saved programs are Go functions too when programs reach this controller (pooled).
            offer_saved=self.settings.saved_programs and pooled,
            # Learned result shapes live beside the listings (none without a listing cache).
            shapes_cache=self._listing_cache or False,
        )  # fmt: skip
        self._prewarm = prewarm
        # Decides programs that can call tools needing approval (docs/approvals.md); None: refused.
        self.approve = approve
        self._retry = retry
        self._start_wait = start_wait
        self._started = False  # tool-list changes before the first build are part of it
        self.pooled = pooled
        # Offer step_go_code (client-owned tools over the stateless step protocol; needs pooled).
        self.stateless_step = stateless_step and pooled
        self._loopback: Loopback | None = None
        self._progress = progress
        self._upstreams: dict[str, Upstream] = {}
        self._providers: dict[str, ToolProvider] = {}
        self._routes: dict[str, Route] = {}
        self._tools: list[types.Tool] = []
        self._listeners: list[ChangeListener] = []
        self._tg: TaskGroup | None = None
        self._stack: contextlib.AsyncExitStack | None = None
        self._warm: anyio.Event | None = None
        self._started = False
        self._warmed = False  # the first warm-up finished (later re-warms keep the process ready)
        self._warm_error: str | None = None
        # The machine's one-off set-up (Go module cache, sandbox launcher), shared by the warm-up
        # and every call that comes before it is done; the launcher only for sandboxed runs.
        self._setup = SetUp(
            lambda: self.code_mode.workspace,
            launcher=pooled and self.settings.sandbox != "off",
            progress=progress,
        )
        self._sandbox_confirmed = False
        self._runs_since_housekeeping = 0
        self._last_housekeeping = time.monotonic()
        limit = self.settings.max_concurrent_runs or default_limit()
        queue = self.settings.max_queued_runs if self.settings.max_queued_runs is not None else 4 * limit
        self.limiter = RunLimiter(limit, queue)
        self.metrics = Metrics(
            LiveState(
                running=lambda: self.limiter.running,
                waiting=lambda: self.limiter.waiting,
                limit=lambda: self.limiter.limit,
                queue=lambda: self.limiter.queue,
                upstreams=lambda: {n: u.connected for n, u in self._upstreams.items()},
            )
        )

    # --- lifecycle ----------------------------------------------------------------------------

    async def __aenter__(self) -> Toolbox:
        stack = contextlib.AsyncExitStack()
        await stack.__aenter__()
        try:
            self._tg = await stack.enter_async_context(anyio.create_task_group())
            stack.callback(self._stop_upstreams)
            self._upstreams = {
                name: Upstream(name, server, self._tg, self._upstream_changed, self._listing_cache)
                for name, server in sorted(self.config.mcp_servers.items())
            }
            providers: dict[str, ToolProvider] = dict(self._upstreams)
            if self.python_tools is not None:
                providers[self.python_tools.name] = self.python_tools
            self._providers = providers
            for u in self._upstreams.values():
                self._tg.start_soon(u.supervise, *self._retry)
            # The endpoint starts while the servers do: it does not need their tools.
            if self.pooled:
                self._loopback = Loopback(
                    self._providers,
                    self.settings.clamp_timeout(None),
                    self.code_mode.allows,
                    search=self.code_mode.runtime_search,
                    shapes=self.code_mode.shapes,
                )
                await self._loopback.start(self._tg)
            # Servers not connected by then keep connecting; their tools are announced later.
            with anyio.move_on_after(self._start_wait):
                for u in self._upstreams.values():
                    await u.attempted.wait()
            self._started = True
            if self.settings.enabled and self.pooled:
                # The tier goes into the description; nothing is built for it (on a cold machine
                # the kernel is asked from Python, and the launcher confirms it after the set-up).
                await self.code_mode.resolve_sandbox()
            self._rebuild()
            if self._prewarm and self.settings.enabled:
                self._warm = anyio.Event()  # before the task runs, so wait_warm() never misses it
                self._tg.start_soon(self._prewarm_now, self._warm)
        except BaseException:
            if self._loopback is not None:  # serving in the task group: it would never end
                with anyio.CancelScope(shield=True):
                    await self._loopback.stop()
            await stack.__aexit__(None, None, None)
            raise
        self._stack = stack
        self._started = True
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
                    loopback = self._loopback
                    if loopback is not None and loopback.open_runs:
                        await loopback.stop()  # bounded (a few seconds); calls in flight still reach their servers
                    self._stop_upstreams()
                    if loopback is not None:
                        await loopback.stop()  # with no program left, while the sessions close
                    await anyio.sleep(0)  # let sessions begin closing (stdin EOF) before their tasks are cancelled
            finally:
                self._tg.cancel_scope.cancel()
                await stack.__aexit__(exc_type, exc, tb)

    def _stop_upstreams(self) -> None:
        for u in self._upstreams.values():
            u.shutdown()

    async def _prewarm_now(self, done: anyio.Event) -> None:
        try:
            assert self._tg is not None
            await self._setup.wait(self._tg)  # the same set-up a call coming meanwhile waits for
            await self._confirm_sandbox()
            await self.code_mode.prewarm(self._progress)
            if SEARCH_TOOL_NAME in self._routes or self.pooled:
                # Embedding a large tool set's descriptions takes seconds the first time: not on a call.
                await anyio.to_thread.run_sync(lambda: self.code_mode.search_index().load_models())
            self._warmed, self._warm_error = True, None
            if self.pooled and not self.code_mode.sandbox_resolved:
                await self.code_mode.resolve_sandbox()
                self._rebuild()  # the description now states the sandbox tier
                await self._tell_listeners()
            await self.housekeep()
        except GocodeError as exc:  # a call will report it properly; the warm-up only logs it
            log.warning("prewarm failed: %s", exc)
            self._warm_error = f"{exc.phase} error while warming up"
        finally:
            done.set()

    def readiness(self) -> tuple[bool, str]:
        """Whether this toolbox should get traffic, and if not why (no secrets: probes are public).

        Ready once the servers were discovered and the Go module cache is warm (the first call
        only links). A server that dies later does not make it unready: the next call
        reconnects, and every replica shares the same servers (see ``gocode_upstream_up``).
        """
        if not self._started:
            return False, "starting: discovering the MCP servers"
        if not self.settings.enabled:
            return True, "ready"
        if self._warm_error and not self._warmed:
            return False, self._warm_error
        if self._setup.running:
            return False, "warming up: setting up Go on this machine (once)"
        if self._warm is not None and not self._warmed:
            return False, "warming up: compiling the Go bindings"
        if self._warm is None and not _modcache_ready(self.code_mode):
            return False, "the Go module cache is not warmed up (run `gocode warmup`)"
        return True, "ready"

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
        if self._warm_error is not None and self._prewarm and (self._warm is None or self._warm.is_set()):
            # The warm-up failed on the set-up a call has now done: warm up again, so the process
            # becomes ready (/readyz) instead of staying "not ready" for good.
            self._warm = anyio.Event()
            self._tg.start_soon(self._prewarm_now, self._warm)
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
            await self._tell_listeners()

    async def wait_warm(self) -> None:
        """Wait for the background warm-up started on entering (if any) to finish."""
        if self._warm is not None:
            await self._warm.wait()

    async def settle(self) -> None:
        """Finish everything that changes what the model is sent (the sandbox tier its
        description states), so the definitions stay as they are from here on; a later change
        (a server's tools) is announced to :meth:`on_tools_changed` listeners. Quick: the tier
        is found without the machine's set-up, which a first call waits for (:meth:`set_up`)."""
        if self.settings.enabled and self.pooled and not self.code_mode.sandbox_resolved:
            await self.code_mode.resolve_sandbox()
            self._rebuild()
            await self._tell_listeners()

    # --- tools --------------------------------------------------------------------------------

    @property
    def warnings(self) -> list[str]:
        """Servers that are down and tools gocode could not use as listed (see ``CodeMode.warnings``)."""
        return self.code_mode.warnings

    def _rebuild(self) -> None:
        known = [t for u in self._providers.values() if (t := u.known_tools) is not None]
        down = {u.name: e.brief for u in self._upstreams.values() if (e := u.error) is not None}
        for u in self._upstreams.values():
            if not u.attempted.is_set():
                down[u.name] = f"{server_label(u.name)} is still starting (its tools come when it answers)"
        self.code_mode.use(known, down)
        view = self.code_mode.view
        active = self.code_mode.active  # enabled: auto decides per tool set
        reserved = {TOOL_NAME, SEARCH_TOOL_NAME} if active else set()
        routes: dict[str, Route] = {}
        tools: list[types.Tool] = []
        if active:
            routes[TOOL_NAME] = Route(TOOL_NAME)
            tools.append(types.Tool.model_validate(self.code_mode.tool_definition()))
            if not self.code_mode.complete():  # the description shows less than every declaration
                routes[SEARCH_TOOL_NAME] = Route(SEARCH_TOOL_NAME)
                tools.append(types.Tool.model_validate(search_tool_definition()))
            if self.stateless_step:
                reserved.add(stepping.STEP_TOOL_NAME)
                routes[stepping.STEP_TOOL_NAME] = Route(stepping.STEP_TOOL_NAME)
                tools.append(types.Tool.model_validate(stepping.tool_definition(self.code_mode.rules())))
        # A saved program is offered as itself below, never as a passed-through tool.
        excluded = [t for t in view.excluded if t.server != saved.SAVED_SERVER]
        for name, info in exposed_names(excluded, reserved).items():
            routes[name] = Route(name, info)
            tools.append(_passthrough_tool(name, info))
        if active and self.settings.saved_programs:
            routes[SAVE_TOOL_NAME] = Route(SAVE_TOOL_NAME)
            tools.append(types.Tool.model_validate(saved.save_tool_definition()))
            # The programs this tool set was built with (one read of the store for both).
            for program in self.code_mode.state.stored.values():
                if program.name not in routes:  # a tool that came later keeps its name
                    routes[program.name] = Route(program.name, saved=program)
                    tools.append(types.Tool.model_validate(program.tool()))
        self._routes, self._tools = routes, tools

    def taken_names(self) -> set[str]:
        """Names a saved program may not take: the tools offered and every server's tool names."""
        names = {n for n, r in self._routes.items() if r.saved is None}
        view = self.code_mode.view
        tools = [*view.code_tools.tools(), *view.excluded]
        return names | {t.name for t in tools if t.server != saved.SAVED_SERVER}

    async def save_program(self, request: saved.SaveRequest) -> SavedProgram:
        """Check, build and keep a program as a tool; the tool list changes (listeners are told)."""
        saved.check_name(request.name, self.taken_names())
        store = self.code_mode.saved_store()
        if request.name in store.names() and not request.replace:
            raise SavedProgramError(
                f"a saved program named {request.name!r} exists; pass replace (--force) to overwrite it"
            )
        program = await saved.derive(
            self.code_mode.workspace,
            self.code_mode.package,
            request.name,
            request.code,
            request.description,
            tools=self.code_mode.tool_infos,
            saved={p.name: p for p in store.all()},
        )
        store.store(program, replace=request.replace)
        self._rebuild()
        await self._tell_listeners()
        return program

    async def _upstream_changed(self, server: str) -> None:
        if not self._started:
            return
        log.info("tools of %r changed; regenerating", server)
        await self._regenerate()

    async def _retype(self) -> None:
        """After a run: when the result types inferred from what tools returned changed (one
        typed after enough calls, or learned again after a result that did not fit), the Go
        and the definitions change, and listeners are told as for a server's new tools."""
        if self._started and self.code_mode.inferred_changed():
            log.info("result types inferred from the tools' results changed; regenerating")
            await self._regenerate()

    async def _regenerate(self) -> None:
        self._rebuild()
        if self._prewarm and self.settings.enabled and self._tg is not None:
            self._warm = anyio.Event()
            self._tg.start_soon(self._prewarm_now, self._warm)
        await self._tell_listeners()

    async def _tell_listeners(self) -> None:
        for listener in list(self._listeners):
            try:
                await listener()
            except Exception as exc:  # one broken listener must not stop the others
                log.warning("tool-list listener failed: %s", exc)

    def on_tools_changed(self, listener: ChangeListener) -> Callable[[], None]:
        """Call ``listener`` after the tool list changed; returns a function that unsubscribes."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def tools(self) -> list[types.Tool]:
        """The tools to offer the model, as MCP ``Tool`` objects."""
        return list(self._tools)

    def definitions(self, fmt: tool_formats.Format | str = "mcp") -> list[dict[str, Any]]:
        """The tools as plain dicts for a model API: see :data:`gocode.tool_formats.FORMATS`."""
        return tool_formats.convert(self._tools, fmt)

    def route(self, name: str) -> Route:
        try:
            return self._routes[name]
        except KeyError:
            known = ", ".join(self._routes) or "none"
            raise UnknownToolError(f"unknown tool {name!r} (tools: {known})") from None

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
        _pass: _Pass | None = None,
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
        start = time.monotonic()
        if self._tg is not None and not self._setup.done:
            waited_for = await self._wait_setup(on_setup, setup_wait)
            if waited_for is not None:
                return waited_for
        budget = self.settings.clamp_timeout(timeout)
        try:
            async with self.limiter.slot(budget) as waited:
                self.metrics.queue_wait_seconds.observe(waited)
                # Not queued (or barely): the full timeout, so the limit the model was told holds.
                remaining = budget if waited < 0.05 else max(round(budget - waited, 1), 0.1)
                how = _pass or _Pass("dry-run" if dry_run else "live")
                result = await self._execute(code, remaining, how, approve or self.approve, session, on_line)
            if how.mode == "live":
                await self._retype()
        except Busy as exc:
            result = RunResult(False, "busy", stderr=str(exc), sandbox=self.code_mode.sandbox_state())
            waited = time.monotonic() - start
        if result.phase == "timeout" and waited >= 0.05:
            note = f" (the limit of {budget:g} s includes {waited:.1f} s spent waiting for a program slot)"
            result = dataclasses.replace(result, stderr=result.stderr + note)
        result = dataclasses.replace(result, duration_ms=(time.monotonic() - start) * 1000)
        self.metrics.run(result.build_ms, result.run_ms, result.cached_binary, result.phase not in ("code", "busy"))
        self._runs_since_housekeeping += 1
        due = time.monotonic() - self._last_housekeeping >= HOUSEKEEPING_EVERY_S
        if (self._runs_since_housekeeping >= HOUSEKEEPING_EVERY_RUNS or due) and self._tg is not None:
            self._runs_since_housekeeping = 0
            self._last_housekeeping = time.monotonic()
            self._tg.start_soon(self.housekeep)
        return result

    async def _wait_setup(self, notice: Notice | None, within: float | None) -> RunResult | None:
        """None once the machine is set up, else the result to answer with (failed, or still
        running), its duration the time waited."""
        start = time.monotonic()
        sandbox = self.code_mode.sandbox_state()
        try:
            if await self.set_up(notice, within):
                return None
            result = RunResult(
                False,
                "warming",
                stderr=f"{self._setup.status()}. This call waited {within:g} s for it; call again in a minute "
                "(the set-up goes on meanwhile, and later calls start at once)",
                sandbox=sandbox,
            )
        except SetUpError as exc:
            result = RunResult(False, "setup", stderr=str(exc), sandbox=sandbox)
        return dataclasses.replace(result, duration_ms=(time.monotonic() - start) * 1000)

    async def housekeep(self) -> dict[str, Any] | None:
        """Mark this toolbox's module cache and bindings used, and bound the cache (see
        :mod:`gocode.compile.housekeeping`; ``$GOCODE_CACHE_MAX_SIZE``, ``$GOCODE_CACHE_MAX_AGE``)."""
        self._last_housekeeping = time.monotonic()
        try:
            ws = self.code_mode.workspace
            state = ws.state  # per-run files beside a read-only shared cache
            rel = tools_import_path(self.code_mode.package).removeprefix("gocodews/")
            policy = housekeeping.Policy.from_env()

            def work() -> dict[str, Any]:
                housekeeping.mark_used(ws.dir, [ws.dir / rel])
                housekeeping.mark_used(state, [state / rel])
                return housekeeping.prune_places(ws.cache, ws.dir, state, policy)

            summary = await anyio.to_thread.run_sync(work)
        except (GocodeError, OSError, ValueError) as exc:  # a bad bound or an unreadable cache must not stop calls
            log.warning("cache housekeeping failed: %s", exc)
            return None
        if summary["removed"] or summary["errors"]:
            log.info(
                "cache housekeeping removed %d entries (%d bytes)%s",
                len(summary["removed"]), summary["freedBytes"],
                f"; could not remove {len(summary['errors'])}" if summary["errors"] else "",
            )  # fmt: skip
        return summary

    async def execute_stream(self, code: str, timeout: float | None = None) -> AsyncIterator[str | RunResult]:
        """Run Go code as :meth:`execute` does, yielding each line the program prints as it prints
        it (``str``, without the newline), then the :class:`RunResult`. Leaving the loop early
        stops the program."""
        if self._tg is None:
            raise RuntimeError("enter the toolbox first: async with Toolbox(...) as tools")
        send, receive = anyio.create_memory_object_stream[str | RunResult](math.inf)
        scope = anyio.CancelScope()

        async def produce() -> None:
            with scope:
                async with send:
                    result = await self.execute(code, timeout, on_line=send.send)
                    await send.send(result)

        self._tg.start_soon(produce)
        try:
            async with receive:
                async for item in receive:
                    yield item
        finally:
            scope.cancel()

    async def _execute(
        self,
        code: str,
        timeout: float,
        how: _Pass,
        approve: Approver | None,
        session: str | None,
        on_line: LineFn | None = None,
    ) -> RunResult:
        if self._loopback is None:
            if how.mode != "live":
                return RunResult(False, "code", stderr=f"a {how.mode} run needs pooled sessions (Toolbox(pooled=True))")
            return await self.code_mode.execute(
                code, timeout, progress=self._progress, approve=approve, session=session, on_line=on_line,
                state=how.state,
            )  # fmt: skip
        # Taken once, before the build: the approval is decided on it and the run given only it.
        state = how.state or self.code_mode.state
        how = how.taking(state)
        toolset = state.view.code_tools
        ic = how.interceptor or Interceptor(
            how.mode, tools={(t.server, t.name): t for t in toolset.tools()}, max_bytes=recordstore.recording_cap()
        )
        providers: dict[str, ToolProvider] = {p.name: p for p in how.providers}
        programs = state.saved_programs
        reach: list[Plan] = []  # what this run was checked (and approved) for, saved programs' tools included
        if programs:

            async def run_saved(
                program: SavedProgram, arguments: dict[str, Any], chain: tuple[str, ...], limit: float
            ) -> types.CallToolResult:
                covered = reach[0] if reach else None
                return await self._run_saved(program, arguments, chain, limit, covered, session, state)

            # This run's own: a saved program it calls knows which ones it is inside.
            providers[saved.SAVED_SERVER] = saved.SavedCalls(list(programs.values()), run_saved, how.chain)
        run = self._loopback.open_run(ic, providers)

        def foresee(plan: Plan) -> None:
            run.foreseen = plan.allows
            reach[:] = [saved.expand_plan(plan, programs)]

        try:
            specs = self._loopback.specs(
                run, [*self.code_mode.code_servers(state.view), *(p.name for p in how.providers)]
            )
            result = await self.code_mode.execute(
                code,
                timeout,
                progress=self._progress,
                reach=ControllerLoopback(specs, self._loopback.port),
                package=how.package,
                on_line=on_line,
                # A step pass runs again from the top: math/rand's global functions then give the
                # same numbers every pass (seeded with 1), so they cannot make it diverge.
                godebug="randautoseed=0" if how.mode == "step" else "",
                program_env={saved.INPUT_ENV: how.saved_input} if how.saved_input is not None else None,
                approve=approve,
                on_plan=foresee,
                session=session,
                calls_servers=how.mode not in ("dry-run", "replay"),
                state=state,
            )
        finally:
            await self._loopback.close_run(run)
        result = await _with_calls(result, run, self.code_mode, session)
        if how.interceptor is None:  # a step's calls travel in its continuation instead
            local = tuple(s.server for s in toolset.servers if s.server not in self.config.mcp_servers)
            recording = recordstore.Recording(
                recordstore.new_run_id(), code, toolset, ic.calls, mode=how.mode, local=local, not_kept=ic.not_kept
            )
            result = dataclasses.replace(result, run_id=await _keep(recording))
        return result

    async def replay(self, run_id: str, timeout: float | None = None, code: str | None = None) -> RunResult:
        """Run a recorded run's program again, every call answered from its recording (no server is
        called). Raises :class:`~gocode.run.recordstore.RecordingError` when the recording is missing or
        the tool set changed since it was made (naming what differs)."""
        recording = await anyio.to_thread.run_sync(recordstore.load, run_id)
        changed = recordstore.differences(recording.toolset, self.code_mode.view.code_tools)
        if changed:
            raise recordstore.RecordingError(f"run {run_id} was recorded against other tools: {'; '.join(changed)}")
        ic = Interceptor("replay", recording.calls)
        result = await self.execute(recording.code if code is None else code, timeout, _pass=_Pass("replay", ic))
        return recordstore.settle(dataclasses.replace(result, run_id=run_id), ic, recording.not_kept)

    async def step(
        self,
        code: str,
        tools: list[Any],
        continuation: str | None = None,
        results: list[Any] | None = None,
        timeout: float | None = None,
    ) -> stepping.StepResult:
        """One pass of the stateless step protocol (see :mod:`gocode.run.step`, docs/stateless.md).

        ``tools``: the caller's own tools (:class:`~gocode.run.step.ClientTool` or dicts with
        name, description, inputSchema, outputSchema), typed Go functions like the servers' tools.
        The first call passes no continuation; each later one passes the last answer's
        ``continuation`` and a result for every call it listed (``{id, result, isError}``).
        Raises :class:`~gocode.run.step.StepError` for a refused continuation or bad answers.
        """
        client = stepping.client_tools(tools)
        current = self.code_mode.state  # the package below and the run's tools from one tool set
        toolset = ToolSet((*current.view.code_tools.servers, client))
        digest, secret = toolset.digest(), await anyio.to_thread.run_sync(stepping.key)
        if continuation:
            state = stepping.decode(continuation, secret, stepping.program_hash(code), digest)
            known = stepping.apply_answers(state, list(results or []))
        elif results:
            raise stepping.StepError("results were given without the continuation of the step that asked for them")
        else:
            state, known = stepping.State(stepping.program_hash(code), digest), []
        clients = frozenset((client.server, t.name) for t in client.tools)
        ic = Interceptor("step", known, client=clients, admit=stepping.within_bound(state))
        how = _Pass("step", ic, current, (DeclaredTools(client, "the caller"),), build_package(toolset))
        result = await stepping.drive(ic, lambda: self.execute(code, timeout, _pass=how), stepping.grace())
        return stepping.outcome(ic, state, result, secret)

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
    ) -> tuple[types.CallToolResult, RunResult | None]:
        """Dispatch one call: the MCP result (and the run, for Go code).

        A call that runs Go code on a machine not set up yet waits for the set-up (see
        :meth:`execute`): its lines go to ``progress`` (as progress notifications, numbered on
        with the program's printed lines) and to ``notice``; ``setup_wait`` bounds the wait.
        Raises :class:`UnknownToolError` for a name not offered and :class:`MCPError` when a
        passed-through server answers with a protocol error (unknown tool, invalid params).
        """
        route = self.route(name)
        rid = logs.current_request_id() or logs.new_request_id()
        token = logs.REQUEST_ID.set(rid)
        start = time.monotonic()
        try:
            reporter = _CallProgress(progress, notice)
            result, run = await self._dispatch(route, arguments, reporter, approve, session, setup_wait)
        except anyio.get_cancelled_exc_class():  # the client cancelled the call, or hung up
            kind = "code" if route.tool is None else "passthrough"
            self.metrics.call(kind, "cancelled", "cancelled")
            logs.log_call(name, kind, "cancelled", "cancelled", (time.monotonic() - start) * 1000, request_id=rid)
            raise
        finally:
            logs.REQUEST_ID.reset(token)
        meta = dict(result.meta or {})
        meta[REQUEST_ID_META_KEY] = rid
        result = result.model_copy(update={"meta": meta})
        kind = "code" if route.tool is None else "passthrough"
        phase = run.phase if run is not None else ("error" if result.is_error else "ok")
        outcome = "busy" if phase == "busy" else ("error" if result.is_error else "ok")
        self.metrics.call(kind, phase, outcome)
        fields: dict[str, Any] = {"request_id": rid}
        if run is not None:
            fields.update(
                build_ms=round(run.build_ms, 1), run_ms=round(run.run_ms, 1), cached_binary=run.cached_binary,
                sandbox_tier=(run.sandbox or {}).get("tier"), tool_calls=len(run.tool_calls),
            )  # fmt: skip
        logs.log_call(name, kind, phase, outcome, (time.monotonic() - start) * 1000, **fields)
        return result, run

    async def _dispatch(
        self,
        route: Route,
        arguments: dict[str, Any] | None,
        reporter: _CallProgress,
        approve: Approver | None,
        session: str | None,
        setup_wait: float | None,
    ) -> tuple[types.CallToolResult, RunResult | None]:
        progress = reporter.progress
        runs_code = route.saved is not None or (route.tool is None and route.name != SEARCH_TOOL_NAME)
        if runs_code and self._tg is not None and not self._setup.done:
            waited = await self._wait_setup(reporter.note, setup_wait)
            if waited is not None:
                return run_to_result(waited), waited
        if route.tool is None and route.name == stepping.STEP_TOOL_NAME:
            return await self._step_call(arguments or {}), None
        if route.tool is None and route.name == SEARCH_TOOL_NAME:
            text, failed = await anyio.to_thread.run_sync(self.code_mode.search_answer, arguments)
            return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=failed), None
        if route.saved is not None:
            # The program and everything it reaches as of now: replacing one meanwhile changes nothing here.
            state = self.code_mode.state
            program = state.stored.get(route.saved.name, route.saved)
            if changed := saved.differences(program, state.infos):
                return error_result(_changed_text(program.name, changed)), None
            code = saved.with_input(program.source, None)
            how = _Pass("live", state=state, chain=(program.name,), saved_input=json.dumps(arguments or {}))
            run = await self.execute(code, approve=approve, session=session, _pass=how)
            # Its answer as its definition promises (the Output as structured content), with the run's _meta.
            return saved_answer(program, run).model_copy(update={"meta": run_to_result(run).meta}), run
        if route.tool is None and route.name == SAVE_TOOL_NAME:
            try:
                program = await self.save_program(saved.SaveRequest.parse(arguments))
            except SavedProgramError as exc:
                return error_result(str(exc)), None
            text = (
                f"saved: tool {program.name!r} is offered from now on, input schema {json.dumps(program.input_schema)}"
            )
            return types.CallToolResult(content=[types.TextContent(type="text", text=text)]), None
        if route.tool is None:
            source = (arguments or {}).get("code")
            if not isinstance(source, str):
                return error_result(f"{TOOL_NAME} needs a string argument `code` (the Go statements to run)"), None
            run = await self.execute(
                source, approve=approve, session=session, on_line=reporter.line if progress else None
            )
            return run_to_result(run), run
        try:
            return await self._providers[route.tool.server].call(
                route.tool.name, arguments, self.settings.clamp_timeout(None), progress
            ), None
        except ToolProviderError as exc:
            return error_result(str(exc)), None

    async def _run_saved(
        self,
        program: SavedProgram,
        arguments: dict[str, Any],
        chain: tuple[str, ...],
        timeout: float,
        covered: Plan | None,
        session: str | None,
        state: ToolState,
    ) -> types.CallToolResult:
        """A program's call of a saved program: run it with ``arguments``, answer with its
        ``result()`` value (structured, for a declared Output) or what it printed.

        It runs inside the calling program's turn (no second slot: a slot held while waiting
        for another could never be given back) and needs no approval of its own when the caller
        was checked for everything it can reach (``covered``). ``program`` and ``state`` are the
        calling run's: the code that runs is the code that was approved."""
        if changed := saved.differences(program, state.infos):
            return saved.error_text(_changed_text(program.name, changed))

        def within(request: ApprovalRequest) -> bool:
            if covered is None:
                return False
            names = set(covered.names())
            return covered.is_any or (ANY_TOOL not in request.tools and all(t in names for t in request.tools))

        code = saved.with_input(program.source, None)
        how = _Pass("live", state=state, chain=chain, saved_input=json.dumps(arguments))
        run = await self._execute(code, timeout, how, within, session)
        return saved_answer(program, run)

    async def _step_call(self, arguments: dict[str, Any]) -> types.CallToolResult:
        """``step_go_code``: one pass, its answer as structured content (and the same JSON as text)."""
        name = stepping.STEP_TOOL_NAME
        code, tools = arguments.get("code"), arguments.get("tools", [])
        continuation, results = arguments.get("continuation"), arguments.get("results") or []
        if not isinstance(code, str):
            return error_result(f"{name} needs a string argument `code` (the Go statements to run)")
        if continuation is not None and not isinstance(continuation, str):
            return error_result(f"{name}: `continuation` must be the string the last step returned")
        try:
            got = await self.step(code, tools, continuation, results)
        except stepping.StepError as exc:
            return error_result(f"{name}: {exc}")
        doc = got.as_json()
        failed = got.status == "error" or (got.run is not None and got.status == "done" and not got.run.ok)
        meta = run_to_result(got.run).meta if got.run is not None else None
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=json.dumps(doc))],
            structured_content=doc,
            is_error=failed,
            _meta=meta,
        )

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


def _changed_text(name: str, changed: list[str]) -> str:
    return (
        f"saved program {name!r} was saved against other tools: {'; '.join(changed)}. "
        "Check it against the current declarations and save it again (replace) to use it"
    )


class _CallProgress:
    """One call's progress notifications, numbered from 1 (the text as the message): the
    set-up's lines while the call waits for it, then the lines its program prints. The set-up's
    lines also go to ``notice`` (serve logs them to the client)."""

    def __init__(self, progress: ProgressFnT | None, notice: Notice | None) -> None:
        self.progress = progress
        self._notice = notice
        self._count = 0

    async def line(self, text: str) -> None:
        if self.progress is not None:
            self._count += 1
            await self.progress(self._count, None, text)

    async def note(self, text: str) -> None:
        await self.line(text)
        if self._notice is not None:
            await self._notice(text)


async def replay_offline(
    config: Config, model: str | None, run_id: str, timeout: float | None = None, code: str | None = None
) -> RunResult:
    """Replay a recorded run without starting, dialing or calling any server.

    The program is built against the tool set it was recorded with and reaches a loopback
    endpoint that answers every call from the recording and refuses any other. Raises
    :class:`~gocode.run.recordstore.RecordingError` when the recording is missing or names a server
    the config no longer has. (That the servers' tools are unchanged is checked by
    :meth:`Toolbox.replay`, which has live sessions.)
    """
    recording = await anyio.to_thread.run_sync(recordstore.load, run_id)
    if missing := recordstore.servers_missing(recording, set(config.mcp_servers)):
        raise recordstore.RecordingError(f"run {run_id} used servers the config no longer has: {', '.join(missing)}")
    code_mode = CodeMode(config, model)
    code_mode.use(list(recording.toolset.servers))
    served = [DeclaredTools(s, "the recording") for s in recording.toolset.servers if s.tools]
    ic = Interceptor("replay", recording.calls)
    async with anyio.create_task_group() as tg:
        loopback = Loopback({}, code_mode.settings.clamp_timeout(None), code_mode.allows)
        await loopback.start(tg)
        run = loopback.open_run(ic, {p.name: p for p in served})

        def foresee(plan: Plan) -> None:
            run.foreseen = plan.allows

        try:
            result = await code_mode.execute(
                recording.code if code is None else code,
                timeout,
                reach=ControllerLoopback(loopback.specs(run, sorted(p.name for p in served)), loopback.port),
                package=build_package(recording.toolset),
                on_plan=foresee,
                calls_servers=False,
            )
        finally:
            await loopback.close_run(run)
            await loopback.stop()
            tg.cancel_scope.cancel()
    result = dataclasses.replace(await _with_calls(result, run, code_mode, None), run_id=run_id)
    return recordstore.settle(result, ic, recording.not_kept)


async def _with_calls(result: RunResult, run: LoopbackRun, code_mode: CodeMode, session: str | None) -> RunResult:
    """The finish of a run through the loopback: the calls it made and, when it succeeded, the
    value it gave result() (kept in the workspace when too long for the answer)."""
    result = dataclasses.replace(result, pooled=True, tool_calls=list(run.calls))
    if not result.ok:
        return result
    result = dataclasses.replace(result, result=run.result)
    return await anyio.to_thread.run_sync(code_mode.keep_result, result, session)


@dataclass(frozen=True)
class _Pass:
    """How one program's calls are answered (see :class:`~gocode.run.interceptor.Interceptor`)."""

    mode: Mode
    interceptor: Interceptor | None = None  # None: a fresh one for ``mode``, recorded afterwards
    # The tool set and saved programs the outermost call took (None: take the current one now):
    # the saved programs it runs are that set's, whatever is saved or replaced meanwhile.
    state: ToolState | None = None
    providers: tuple[DeclaredTools, ...] = ()  # this run's own tools (client-owned ones)
    package: Package | None = None  # bindings beyond the tool set's (client-owned tools)
    chain: tuple[str, ...] = ()  # the saved programs this run is inside (outermost first)
    saved_input: str | None = None  # a saved program's input (JSON), given at run time: one build serves every input

    def taking(self, state: ToolState) -> _Pass:
        return self if self.state is not None else replace(self, state=state)


async def _keep(recording: recordstore.Recording) -> str:
    try:
        await anyio.to_thread.run_sync(recordstore.save, recording)
    except OSError as exc:  # a full disk must not fail the run
        log.warning("could not record run %s: %s", recording.run_id, exc)
        return ""
    return recording.run_id


def _modcache_ready(code_mode: CodeMode) -> bool:
    try:
        return code_mode.workspace.ready
    except GocodeError:  # no Go toolchain: calls will say so
        return False


def _parse_arguments(text: str) -> dict[str, Any]:
    value = json.loads(text or "{}")
    if not isinstance(value, dict):
        raise ValueError(f"got {type(value).__name__}")
    return value


def _passthrough_tool(name: str, info: ToolInfo) -> types.Tool:
    """The server's own tool definition under the name the client sees."""
    raw = dict(info.definition) or info.as_json()
    raw["name"] = name
    raw.setdefault("inputSchema", {"type": "object"})
    try:
        return types.Tool.model_validate(raw)
    except ValueError:  # fields this SDK cannot model: keep the ones that matter
        return types.Tool.model_validate(info.as_json() | {"name": name})
