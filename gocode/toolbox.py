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
clients) are told. :class:`SyncToolbox` wraps it for scripts without an event loop.

Calls may run concurrently: every program has its own directory and process, and a cancelled
call kills its program.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import logging
import os
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

import anyio
import anyio.from_thread
import mcp_types as types
from anyio.abc import TaskGroup
from mcp.shared.dispatcher import ProgressFnT
from mcp.shared.exceptions import MCPError

from gocode import tool_formats
from gocode.build import housekeeping
from gocode.build.workspace import Progress, Workspace
from gocode.codemode import TOOL_NAME, CodeMode
from gocode.config import Config, load_config
from gocode.errors import GocodeError
from gocode.mcp import logs
from gocode.mcp.cache import ListingCache
from gocode.mcp.discovery import server_label
from gocode.mcp.loopback import Loopback
from gocode.mcp.metrics import LiveState, Metrics
from gocode.mcp.upstream import RETRY_FIRST_S, RETRY_MAX_S, Upstream, UpstreamError
from gocode.program.render import tools_import_path
from gocode.run.limiter import Busy, RunLimiter, default_limit
from gocode.run.runner import RETRYABLE_PHASES, RunResult
from gocode.toolset import ToolInfo
from gocode.view.search import SEARCH_TOOL_NAME, search_tool_definition

log = logging.getLogger("gocode.toolbox")

# Cache housekeeping runs after the warm-up and then every this many programs or seconds.
HOUSEKEEPING_EVERY_RUNS = 200
HOUSEKEEPING_EVERY_S = 900.0

# Safe for every model API: OpenAI and Anthropic allow [A-Za-z0-9_-]{1,64}; Gemini also wants
# a letter or underscore first.
_SAFE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")
RUN_META_KEY = "io.gocode/run"
REQUEST_ID_META_KEY = "io.gocode/requestId"


class UnknownToolError(GocodeError, LookupError):
    """A call named a tool this toolbox does not offer."""

    phase = "call"


@dataclass(frozen=True)
class Route:
    """Where a tool name the client sees leads: Go code mode, or a server's own tool."""

    name: str
    tool: ToolInfo | None = None  # None: execute_go_code or search_go_tools (by name)


@dataclass(frozen=True)
class ToolResult:
    """The answer to one tool call, with converters for the common model APIs.

    ``result`` is the MCP ``CallToolResult`` (for a passed-through tool, the server's own);
    ``run`` is the program's :class:`~gocode.run.runner.RunResult` for ``execute_go_code``.
    """

    name: str
    result: types.CallToolResult
    run: RunResult | None = None

    @property
    def is_error(self) -> bool:
        return bool(self.result.is_error)

    @property
    def text(self) -> str:
        """The result as text (images and other parts described in brackets)."""
        return tool_formats.result_text(self.result)

    def openai(self, tool_call_id: str) -> dict[str, Any]:
        """A Chat Completions ``role: tool`` message."""
        return tool_formats.openai_tool_message(self.result, tool_call_id)

    def openai_responses(self, call_id: str) -> dict[str, Any]:
        """A Responses API ``function_call_output`` item."""
        return tool_formats.openai_responses_output(self.result, call_id)

    def anthropic(self, tool_use_id: str) -> dict[str, Any]:
        """A Messages API ``tool_result`` block (images kept as images)."""
        return tool_formats.anthropic_tool_result(self.result, tool_use_id)

    def gemini(self) -> dict[str, Any]:
        """A ``functionResponse`` part."""
        return tool_formats.gemini_function_response(self.result, self.name)


def error_result(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=message)], is_error=True)


def warming_up_result() -> types.CallToolResult:
    """The answer to a call that came while the server was still warming up, past its timeout."""
    return run_to_result(
        RunResult(False, "warming", stderr="gocode is still warming up (building the Go workspace); retry shortly")
    )


def run_to_result(run: RunResult) -> types.CallToolResult:
    """``execute_go_code``'s MCP result: the printed output, or the error a model can act on.

    Timings, phase, the sandbox in force and whether a retry may help go in ``_meta`` (for
    clients and logs; models do not see them). :meth:`Toolbox.call_mcp` adds the request id.
    """
    meta: dict[str, Any] = {
        RUN_META_KEY: {
            "phase": run.phase,
            "durationMs": round(run.duration_ms, 1),
            "buildMs": round(run.build_ms, 1),
            "runMs": round(run.run_ms, 1),
            "cachedBinary": run.cached_binary,
            "buildMode": run.build_mode,
            "truncated": run.truncated,
            "warnings": run.warnings,
            "pooled": run.pooled,
            "toolCalls": [c.as_json() for c in run.tool_calls],
            "sandbox": run.sandbox,
            "retryable": run.phase in RETRYABLE_PHASES,
        }
    }
    warning = (run.sandbox or {}).get("warning")
    if warning:  # a weaker sandbox than asked for is something the model's user must see
        note = f"\n[{warning}]"
        run = dataclasses.replace(run, output=run.output + note) if run.ok else run
    if run.ok:
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=run.output or "(the program printed nothing)")],
            structured_content={"output": run.output},
            _meta=meta,
        )
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=run.error_text())], is_error=True, _meta=meta
    )


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
    """

    def __init__(
        self,
        config: Config | str | os.PathLike[str],
        model: str | None = None,
        *,
        workspace: Workspace | None = None,
        prewarm: bool = True,
        pooled: bool = True,
        progress: Progress | None = None,
        retry: tuple[float, float] = (RETRY_FIRST_S, RETRY_MAX_S),
        start_wait: float = START_WAIT_S,
        listing_cache: ListingCache | Literal[False] | None = None,
    ) -> None:
        self.config = config if isinstance(config, Config) else load_config(Path(config))
        self.model = model
        self.settings = self.config.code_mode_for(model)
        self.code_mode = CodeMode(self.config, model, workspace=workspace)
        self._prewarm = prewarm
        self._retry = retry
        self._start_wait = start_wait
        self._started = False  # tool-list changes before the first build are part of it
        # Tool listings a server allows to be kept (ttlMs): None is the default directory.
        self._listing_cache = ListingCache() if listing_cache is None else listing_cache or None
        self.pooled = pooled
        self._loopback: Loopback | None = None
        self._progress = progress
        self._upstreams: dict[str, Upstream] = {}
        self._routes: dict[str, Route] = {}
        self._tools: list[types.Tool] = []
        self._listeners: list[ChangeListener] = []
        self._tg: TaskGroup | None = None
        self._stack: contextlib.AsyncExitStack | None = None
        self._warm: anyio.Event | None = None
        self._started = False
        self._warmed = False  # the first warm-up finished (later re-warms keep the process ready)
        self._warm_error: str | None = None
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
            for u in self._upstreams.values():
                self._tg.start_soon(u.supervise, *self._retry)
            # Servers not connected by then keep connecting; their tools are announced later.
            with anyio.move_on_after(self._start_wait):
                for u in self._upstreams.values():
                    await u.attempted.wait()
            self._started = True
            if self.settings.enabled and self.pooled and _workspace_ready(self.code_mode):
                # The tier goes into the description; on a cold cache the warm-up finds it later.
                await self.code_mode.resolve_sandbox()
            self._rebuild()
            if self.pooled:
                self._loopback = Loopback(
                    self._upstreams,
                    self.settings.clamp_timeout(None),
                    self.code_mode.allows,
                    search=self.code_mode.runtime_search,
                )
                await self._loopback.start(self._tg)
            if self._prewarm and self.settings.enabled:
                self._warm = anyio.Event()  # before the task runs, so wait_warm() never misses it
                self._tg.start_soon(self._prewarm_now, self._warm)
        except BaseException:
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
            if self._loopback is not None:
                await self._loopback.stop()
            self._stop_upstreams()
            await anyio.sleep(0)  # let sessions begin closing (stdin EOF) before their tasks are cancelled
            self._tg.cancel_scope.cancel()
            await stack.__aexit__(exc_type, exc, tb)

    def _stop_upstreams(self) -> None:
        for u in self._upstreams.values():
            u.shutdown()

    async def _prewarm_now(self, done: anyio.Event) -> None:
        try:
            await self.code_mode.prewarm(self._progress)
            if SEARCH_TOOL_NAME in self._routes or self.pooled:
                # Embedding a large tool set's descriptions takes seconds the first time: not on a call.
                await anyio.to_thread.run_sync(self.code_mode.search_index)
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

        Ready once the servers were discovered and the Go workspace is warm (the first call
        only links). A server that dies later does not make it unready: the next call
        reconnects, and every replica shares the same servers (see ``gocode_upstream_up``).
        """
        if not self._started:
            return False, "starting: discovering the MCP servers"
        if not self.settings.enabled:
            return True, "ready"
        if self._warm_error and not self._warmed:
            return False, self._warm_error
        if self._warm is not None and not self._warmed:
            return False, "warming up: compiling the Go bindings"
        if self._warm is None and not _workspace_ready(self.code_mode):
            return False, "the Go workspace is not warmed up (run `gocode warmup`)"
        return True, "ready"

    async def wait_warm(self) -> None:
        """Wait for the background warm-up started on entering (if any) to finish."""
        if self._warm is not None:
            await self._warm.wait()

    async def settle(self) -> None:
        """Finish everything that changes what the model is sent (the warm-up, the sandbox tier
        its description states), so the definitions stay as they are from here on; a later
        change (a server's tools) is announced to :meth:`on_tools_changed` listeners."""
        await self.wait_warm()
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
        known = [t for u in self._upstreams.values() if (t := u.known_tools) is not None]
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
        for name, info in exposed_names(list(view.excluded), reserved).items():
            routes[name] = Route(name, info)
            tools.append(_passthrough_tool(name, info))
        self._routes, self._tools = routes, tools

    async def _upstream_changed(self, server: str) -> None:
        if not self._started:
            return
        log.info("tools of %r changed; regenerating", server)
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

    async def execute(self, code: str, timeout: float | None = None) -> RunResult:
        """Run Go code as ``execute_go_code`` does (also when code mode is off for the model).

        Pooled (the default): the program reaches the servers through this toolbox's sessions
        on the loopback endpoint, and the calls it makes are in ``RunResult.tool_calls``.
        At most :attr:`limiter` ``.limit`` programs build and run at once; the time a call
        waits for its turn counts against its timeout, and a call that finds the queue full
        gets a ``busy`` result at once (retryable).
        """
        start = time.monotonic()
        budget = self.settings.clamp_timeout(timeout)
        try:
            async with self.limiter.slot(budget) as waited:
                self.metrics.queue_wait_seconds.observe(waited)
                # Not queued (or barely): the full timeout, so the limit the model was told holds.
                remaining = budget if waited < 0.05 else max(round(budget - waited, 1), 0.1)
                result = await self._execute(code, remaining)
        except Busy as exc:
            result = RunResult(False, "busy", stderr=str(exc), sandbox=self.code_mode.sandbox_state())
            waited = time.monotonic() - start
        if result.phase == "timeout" and waited >= 0.05:
            result.stderr += f" (the limit of {budget:g} s includes {waited:.1f} s spent waiting for a program slot)"
        result.duration_ms = (time.monotonic() - start) * 1000
        self.metrics.run(result.build_ms, result.run_ms, result.cached_binary, result.phase not in ("code", "busy"))
        self._runs_since_housekeeping += 1
        due = time.monotonic() - self._last_housekeeping >= HOUSEKEEPING_EVERY_S
        if (self._runs_since_housekeeping >= HOUSEKEEPING_EVERY_RUNS or due) and self._tg is not None:
            self._runs_since_housekeeping = 0
            self._last_housekeeping = time.monotonic()
            self._tg.start_soon(self.housekeep)
        return result

    async def housekeep(self) -> dict[str, Any] | None:
        """Mark this toolbox's workspace and bindings used, and bound the cache (see
        :mod:`gocode.build.housekeeping`; ``$GOCODE_CACHE_MAX_SIZE``, ``$GOCODE_CACHE_MAX_AGE``)."""
        self._last_housekeeping = time.monotonic()
        try:
            ws = self.code_mode.workspace
            state: Path = getattr(ws, "state", ws.dir)  # per-run files beside a read-only shared cache
            rel = tools_import_path(self.code_mode.package).removeprefix("gocodews/")
            policy = housekeeping.Policy.from_env()

            def work() -> dict[str, Any]:
                housekeeping.mark_used(ws.dir, [ws.dir / rel])
                housekeeping.mark_used(state, [state / rel])
                summary: dict[str, Any] = {"removed": [], "freedBytes": 0, "errors": []}
                for root, current in housekeeping.places(ws.cache, ws.dir, state):
                    one = housekeeping.prune(root, current, policy)
                    for key in summary:
                        summary[key] += one[key]
                return summary

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

    async def _execute(self, code: str, timeout: float) -> RunResult:
        if self._loopback is None:
            return await self.code_mode.execute(code, timeout, progress=self._progress)
        run = self._loopback.open_run()
        try:
            specs = self._loopback.specs(run, self.code_mode.code_servers())
            result = await self.code_mode.execute(
                code, timeout, progress=self._progress, specs=specs, sandbox_port=self._loopback.port
            )
        finally:
            self._loopback.close_run(run)
        result.pooled = True
        result.tool_calls = list(run.calls)
        return result

    async def call_mcp(
        self, name: str, arguments: dict[str, Any] | None, progress: ProgressFnT | None = None
    ) -> tuple[types.CallToolResult, RunResult | None]:
        """Dispatch one call: the MCP result (and the run, for Go code).

        Raises :class:`UnknownToolError` for a name not offered and :class:`MCPError` when a
        passed-through server answers with a protocol error (unknown tool, invalid params).
        """
        route = self.route(name)
        rid = logs.current_request_id() or logs.new_request_id()
        token = logs.REQUEST_ID.set(rid)
        start = time.monotonic()
        try:
            result, run = await self._dispatch(route, arguments, progress)
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
        self, route: Route, arguments: dict[str, Any] | None, progress: ProgressFnT | None
    ) -> tuple[types.CallToolResult, RunResult | None]:
        if route.tool is None and route.name == SEARCH_TOOL_NAME:
            text, failed = await anyio.to_thread.run_sync(self.code_mode.search_answer, arguments)
            return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=failed), None
        if route.tool is None:
            code = (arguments or {}).get("code")
            if not isinstance(code, str):
                return error_result(f"{TOOL_NAME} needs a string argument `code` (the Go statements to run)"), None
            run = await self.execute(code)
            return run_to_result(run), run
        try:
            return await self._upstreams[route.tool.server].call(
                route.tool.name, arguments, self.settings.clamp_timeout(None), progress
            ), None
        except UpstreamError as exc:
            return error_result(str(exc)), None

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


def _workspace_ready(code_mode: CodeMode) -> bool:
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


class SyncToolbox:
    """:class:`Toolbox` for code without an event loop: the same methods, blocking.

    The toolbox lives in an event loop on a background thread (an anyio blocking portal);
    use it as a context manager, or call :meth:`close`::

        with SyncToolbox("gocode.yaml", model="gpt-5") as tools:
            print(tools.call("execute_go_code", {"code": 'fmt.Println("hi")'}).text)
    """

    def __init__(self, config: Config | str | os.PathLike[str], model: str | None = None, **kwargs: Any) -> None:
        self._portal_cm = anyio.from_thread.start_blocking_portal()
        self._portal = self._portal_cm.__enter__()
        try:
            # Entered and left in one task of the portal, as the toolbox's task group requires.
            self._entered = self._portal.wrap_async_context_manager(Toolbox(config, model, **kwargs))
            self.toolbox: Toolbox = self._entered.__enter__()
        except BaseException:
            self._portal_cm.__exit__(None, None, None)
            raise
        self._closed = False

    def __enter__(self) -> SyncToolbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            try:
                self._entered.__exit__(None, None, None)
            finally:
                self._portal_cm.__exit__(None, None, None)

    def tools(self) -> list[types.Tool]:
        return self.toolbox.tools()

    def definitions(self, fmt: str = "mcp") -> list[dict[str, Any]]:
        return self.toolbox.definitions(fmt)

    def call(self, name: str, arguments: dict[str, Any] | str | None = None) -> ToolResult:
        return self._portal.call(self.toolbox.call, name, arguments)

    def execute(self, code: str, timeout: float | None = None) -> RunResult:
        return self._portal.call(self.toolbox.execute, code, timeout)

    def wait_warm(self) -> None:
        self._portal.call(self.toolbox.wait_warm)
