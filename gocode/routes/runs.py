"""The controller's runs: a program built and run in its turn, reaching its tools through the
toolbox's loopback endpoint, its calls recorded (or answered from a recording, or by the
caller of a step), and the saved programs it calls run inside its turn.

Every handler that runs Go comes here (``execute_go_code``, a saved program, ``step_go_code``),
as do :meth:`gocode.toolbox.Toolbox.execute`, ``replay`` and ``step``.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any, Protocol

import anyio
import anyio.to_thread
import mcp_types as types
from anyio.abc import TaskGroup

from gocode.codemode import CodeMode, ToolState
from gocode.compile.modcache import Progress
from gocode.config import Config
from gocode.errors import Busy, SetUpError
from gocode.mcp.backchannel import Caller
from gocode.mcp.loopback import Loopback
from gocode.mcp.loopback import Run as LoopbackRun
from gocode.mcp.provider import ToolProvider
from gocode.program.plan import Plan
from gocode.results import saved_answer
from gocode.run import recordstore
from gocode.run import step as stepping
from gocode.run.approvals import ANY_TOOL, ApprovalRequest, Approver
from gocode.run.interceptor import Interceptor, Mode
from gocode.run.limiter import RunLimiter
from gocode.run.reach import ControllerLoopback
from gocode.run.runner import LineFn, RunResult
from gocode.run.setup import Notice, SetUp
from gocode.schema.builder import build_package
from gocode.schema.ir import Package
from gocode.tools import saved
from gocode.tools.declared import DeclaredTools
from gocode.tools.saved import SavedProgram
from gocode.toolset import ToolSet
from gocode.view.modelview import render_full

log = logging.getLogger("gocode.toolbox")  # the controller's logger, as operators filter it

# Waits for the machine's set-up (the Go module cache, the sandbox launcher): True once done,
# False while it still runs after ``within`` seconds; raises SetUpError when it failed.
SetUpWait = Callable[[Notice | None, float | None], Awaitable[bool]]


class RunHooks(Protocol):
    """What the operator side hears of runs (metrics, housekeeping): see :mod:`gocode.operations`."""

    def slot_waited(self, seconds: float) -> None: ...

    def ran(self, result: RunResult) -> None: ...


@dataclass(frozen=True)
class Pass:
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
    caller: Caller | None = None  # the client of the call that runs it: its tools' servers may ask it (sampling, ...)

    def taking(self, state: ToolState) -> Pass:
        return self if self.state is not None else replace(self, state=state)


class Runs:
    """The runs of one toolbox. ``loopback`` is its endpoint once entered (None: not pooled, or
    not entered); ``tg`` its task group once entered (its set-up can be waited for)."""

    def __init__(
        self,
        config: Config,
        code_mode: CodeMode,
        limiter: RunLimiter,
        setup: SetUp,
        set_up: SetUpWait,
        hooks: RunHooks,
        retype: Callable[[], Awaitable[None]],
        *,
        approve: Approver | None = None,
        progress: Progress | None = None,
    ) -> None:
        self.config, self.code_mode, self.limiter = config, code_mode, limiter
        self.settings = code_mode.settings
        self._setup, self._set_up, self._hooks, self._retype = setup, set_up, hooks, retype
        self.approve = approve
        self._progress = progress
        self.loopback: Loopback | None = None
        self.tg: TaskGroup | None = None

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
        how: Pass | None = None,
        caller: Caller | None = None,
    ) -> RunResult:
        """A program run in its turn (see :meth:`gocode.toolbox.Toolbox.execute`). ``caller``:
        the client of the call, whom the servers of the program's tools may ask during it."""
        start = time.monotonic()
        waited_for = await self.wait_setup(on_setup, setup_wait)
        if waited_for is not None:
            return waited_for
        budget = self.settings.clamp_timeout(timeout)
        try:
            async with self.limiter.slot(budget) as waited:
                self._hooks.slot_waited(waited)
                # Not queued (or barely): the full timeout, so the limit the model was told holds.
                remaining = budget if waited < 0.05 else max(round(budget - waited, 1), 0.1)
                how = how or Pass("dry-run" if dry_run else "live", caller=caller)
                result = await self._run(code, remaining, how, approve or self.approve, session, on_line)
            if how.mode == "live":
                await self._retype()
        except Busy as exc:
            result = RunResult(False, "busy", stderr=str(exc), sandbox=self.code_mode.sandbox_state())
            waited = time.monotonic() - start
        if result.phase == "timeout" and waited >= 0.05:
            note = f" (the limit of {budget:g} s includes {waited:.1f} s spent waiting for a program slot)"
            result = dataclasses.replace(result, stderr=result.stderr + note)
        result = dataclasses.replace(result, duration_ms=(time.monotonic() - start) * 1000)
        self._hooks.ran(result)
        return result

    async def stream(self, code: str, timeout: float | None = None) -> AsyncIterator[str | RunResult]:
        """See :meth:`gocode.toolbox.Toolbox.execute_stream`."""
        if self.tg is None:
            raise RuntimeError("enter the toolbox first: async with Toolbox(...) as tools")
        send, receive = anyio.create_memory_object_stream[str | RunResult](math.inf)
        scope = anyio.CancelScope()

        async def produce() -> None:
            with scope:
                async with send:
                    result = await self.execute(code, timeout, on_line=send.send)
                    await send.send(result)

        self.tg.start_soon(produce)
        try:
            async with receive:
                async for item in receive:
                    yield item
        finally:
            scope.cancel()

    async def wait_setup(self, notice: Notice | None, within: float | None) -> RunResult | None:
        """None once the machine is set up (or the toolbox is not open), else the result to
        answer with (failed, or still running), its duration the time waited."""
        if self.tg is None or self._setup.done:
            return None
        start = time.monotonic()
        sandbox = self.code_mode.sandbox_state()
        try:
            if await self._set_up(notice, within):
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

    async def _run(
        self,
        code: str,
        timeout: float,
        how: Pass,
        approve: Approver | None,
        session: str | None,
        on_line: LineFn | None = None,
    ) -> RunResult:
        if self.loopback is None:
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
        reach: list[Plan] = []  # what this run was checked (and approved) for, saved programs' tools included
        run = self.loopback.open_run(ic, self._providers(how, state, reach, session), caller=how.caller)

        def foresee(plan: Plan) -> None:
            run.foreseen = plan.allows
            reach[:] = [saved.expand_plan(plan, state.saved_programs)]

        try:
            specs = self.loopback.specs(
                run, [*self.code_mode.code_servers(state.view), *(p.name for p in how.providers)]
            )
            result = await self.code_mode.execute(
                code,
                timeout,
                progress=self._progress,
                reach=ControllerLoopback(specs, self.loopback.port),
                package=how.package,
                on_line=on_line,
                # A step pass runs again from the top: math/rand's global functions then give the
                # same numbers every pass (seeded with 1), so they cannot make it diverge.
                godebug="randautoseed=0" if how.mode == "step" else "",
                program_env=program_env(how),
                approve=approve,
                on_plan=foresee,
                session=session,
                calls_servers=how.mode not in ("dry-run", "replay"),
                state=state,
            )
        finally:
            await self.loopback.close_run(run)
        result = await with_calls(result, run, self.code_mode, session)
        if how.interceptor is None:  # a step's calls travel in its continuation instead
            local = tuple(s.server for s in toolset.servers if s.server not in self.config.mcp_servers)
            recording = recordstore.Recording(
                recordstore.new_run_id(), code, toolset, ic.calls, mode=how.mode, local=local, not_kept=ic.not_kept
            )
            result = dataclasses.replace(result, run_id=await keep(recording))
        return result

    def _providers(
        self, how: Pass, state: ToolState, reach: list[Plan], session: str | None
    ) -> dict[str, ToolProvider]:
        """The run's own providers: its client-owned tools, and the saved programs it can call."""
        providers: dict[str, ToolProvider] = {p.name: p for p in how.providers}
        if programs := state.saved_programs:

            async def run_saved(
                program: SavedProgram, arguments: dict[str, Any], chain: tuple[str, ...], limit: float
            ) -> types.CallToolResult:
                covered = reach[0] if reach else None
                return await self._run_saved(program, arguments, chain, limit, covered, session, state, how.caller)

            # This run's own: a saved program it calls knows which ones it is inside.
            providers[saved.SAVED_SERVER] = saved.SavedCalls(list(programs.values()), run_saved, how.chain)
        return providers

    async def _run_saved(
        self,
        program: SavedProgram,
        arguments: dict[str, Any],
        chain: tuple[str, ...],
        timeout: float,
        covered: Plan | None,
        session: str | None,
        state: ToolState,
        caller: Caller | None = None,
    ) -> types.CallToolResult:
        """A program's call of a saved program: run it with ``arguments``, answer with its
        ``result()`` value (structured, for a declared Output) or what it printed.

        It runs inside the calling program's turn (no second slot: a slot held while waiting
        for another could never be given back) and needs no approval of its own when the caller
        was checked for everything it can reach (``covered``). ``program`` and ``state`` are the
        calling run's: the code that runs is the code that was approved."""
        if changed := saved.changed_text(program, state.infos):
            return saved.error_text(changed)

        def within(request: ApprovalRequest) -> bool:
            if covered is None:
                return False
            names = set(covered.names())
            return covered.is_any or (ANY_TOOL not in request.tools and all(t in names for t in request.tools))

        code = saved.with_input(program.source, None)
        how = Pass("live", state=state, chain=chain, saved_input=json.dumps(arguments), caller=caller)
        run = await self._run(code, timeout, how, within, session)
        return saved_answer(program, run)

    async def replay(self, run_id: str, timeout: float | None = None, code: str | None = None) -> RunResult:
        """See :meth:`gocode.toolbox.Toolbox.replay`."""
        recording = await anyio.to_thread.run_sync(recordstore.load, run_id)
        changed = recordstore.differences(recording.toolset, self.code_mode.view.code_tools)
        if changed:
            raise recordstore.RecordingError(f"run {run_id} was recorded against other tools: {'; '.join(changed)}")
        ic = Interceptor("replay", recording.calls)
        result = await self.execute(recording.code if code is None else code, timeout, how=Pass("replay", ic))
        return recordstore.settle(dataclasses.replace(result, run_id=run_id), ic, recording.not_kept)

    def step_declarations(self, tools: list[Any], can_ask: bool | None = None) -> stepping.Declarations:
        """See :meth:`gocode.toolbox.Toolbox.step_declarations`; ``can_ask`` as in
        :meth:`gocode.codemode.CodeMode.approval_comments`."""
        client = stepping.client_tools(tools)
        package = build_package(ToolSet((*self.code_mode.state.view.code_tools.servers, client)))
        functions: dict[str, str] = {}
        for f in package.funcs:
            if f.server == client.server:
                functions.setdefault(f.tool, f.name)
        return stepping.Declarations(render_full(package, self.code_mode.shape_comments(can_ask)), functions)

    async def step(
        self,
        code: str,
        tools: list[Any],
        continuation: str | None = None,
        results: list[Any] | None = None,
        timeout: float | None = None,
    ) -> stepping.StepResult:
        """See :meth:`gocode.toolbox.Toolbox.step`."""
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
        bound = stepping.Bound.of(state)
        bound.check(known)  # before any side effect: a pass that cannot be carried on is not started
        clients = frozenset((client.server, t.name) for t in client.tools)
        ic = Interceptor("step", known, client=clients, budget=bound, refusal=state.refused or None)
        how = Pass("step", ic, current, (DeclaredTools(client, "the caller"),), build_package(toolset))
        result = await stepping.drive(ic, lambda: self.execute(code, timeout, how=how), stepping.grace())
        return stepping.outcome(ic, state, result, secret)


def program_env(how: Pass) -> dict[str, str] | None:
    """What a run adds to its program's environment: a saved program's input; on a step pass,
    the grace period, which also has its runtime report when it can only wait (rt/idle.go)."""
    env = {saved.INPUT_ENV: how.saved_input} if how.saved_input is not None else {}
    if how.mode == "step":
        env[stepping.IDLE_ENV] = f"{stepping.grace():g}"
    return env or None


async def with_calls(result: RunResult, run: LoopbackRun, code_mode: CodeMode, session: str | None) -> RunResult:
    """The finish of a run through the loopback: the calls it made and, when it succeeded, the
    value it gave result() (kept in the workspace when too long for the answer)."""
    result = dataclasses.replace(result, pooled=True, tool_calls=list(run.calls))
    if not result.ok:
        return result
    result = dataclasses.replace(result, result=run.result)
    return await anyio.to_thread.run_sync(code_mode.keep_result, result, session)


async def keep(recording: recordstore.Recording) -> str:
    try:
        await anyio.to_thread.run_sync(recordstore.save, recording)
    except OSError as exc:  # a full disk must not fail the run
        log.warning("could not record run %s: %s", recording.run_id, exc)
        return ""
    return recording.run_id


async def replay_offline(
    config: Config, model: str | None, run_id: str, timeout: float | None = None, code: str | None = None
) -> RunResult:
    """Replay a recorded run without starting, dialing or calling any server.

    The program is built against the tool set it was recorded with and reaches a loopback
    endpoint that answers every call from the recording and refuses any other. Raises
    :class:`~gocode.run.recordstore.RecordingError` when the recording is missing or names a server
    the config no longer has. (That the servers' tools are unchanged is checked by
    :meth:`gocode.toolbox.Toolbox.replay`, which has live sessions.)
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
    result = dataclasses.replace(await with_calls(result, run, code_mode, None), run_id=run_id)
    return recordstore.settle(result, ic, recording.not_kept)
