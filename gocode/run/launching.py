"""One built and approved program on its way: prepared, confined, launched and finished.

A sandboxed start costs as much as a quarter of a warm call (on a 2-core host about 25 ms:
the run's user, cgroup and directory claimed, the launcher joining the cgroup, which waits for
the kernel's RCU, and making the namespaces), and none of it needs the program. So a run whose
code type-checked may :meth:`Launching.start_early` while its program compiles and links: the
confinement is made and the launcher started with ``-go-fd``; it sets up everything it can and
waits. When the build is done and the run approved, the program is put in the run directory
and the launcher told to go (the last steps, Landlock and seccomp, need the file to exist).
Whatever ends the run before that (a build error, a refusal, a cancellation) closes the pipe:
the launcher exits, is reaped, and what it claimed is given back.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from gocode.compile.modcache import BuildResult, ModuleCache
from gocode.config import CodeModeConfig
from gocode.errors import SandboxError
from gocode.program.plan import Plan
from gocode.run import owned
from gocode.run import workdir as workdirs
from gocode.run.env import unsandboxed_env, with_run_settings
from gocode.run.kept import KeptFile, open_kept
from gocode.run.reach import RESULT_FILE_ENV, Reach, read_result
from gocode.run.result import RunResult, finish, keep_value
from gocode.run.runner import Launched, LineFn, launch_waiting, run_program
from gocode.run.sandbox import Confinement, Unconfined, place_program

# How long a run's end waits for its early set-up to be undone (the set-up, the launcher's
# reaping and the releases); it is undone regardless.
DISCARD_WAIT_S = 60.0


@dataclass
class _Ready:
    """What the launch step has before the program exists: its workspace, environment and
    confinement (or why it runs without one), or the answer that ends the run there."""

    found: workdirs.Usage | None = None
    env: dict[str, str] = field(default_factory=dict)
    confinement: Confinement | None = None
    unconfined: Unconfined | None = None
    failed: RunResult | None = None
    launched: Launched | None = None  # the launcher, started early and waiting for the program


@dataclass
class Launching:
    """One run's launch step. :meth:`launch` prepares, confines, launches and finishes it; with
    :meth:`start_early` first, the preparing and the launcher's set-up overlap the build."""

    module_cache: ModuleCache
    settings: CodeModeConfig
    reach: Reach
    workdir: Path | None
    timeout: float
    on_line: LineFn | None
    program_env: Mapping[str, str] | None
    godebug: str
    _early: asyncio.Future[_Ready] | None = None

    def start_early(self) -> None:
        """Prepare and confine the run, and start its launcher waiting, in the background."""
        if self._early is None:
            self._early = asyncio.ensure_future(self._prepare(early=True))

    async def discard(self) -> None:
        """The run ends before its program starts: an early set-up is waited for, its launcher
        ended and reaped, and what its confinement claimed given back, however many times the
        caller is cancelled meanwhile (:func:`owned.to_the_end`; a cancellation is raised after)."""
        early, self._early = self._early, None
        if early is not None:
            await owned.to_the_end(_undone(early), DISCARD_WAIT_S)

    async def launch(self, build: BuildResult, plan: Plan, start: float) -> RunResult:
        assert build.binary is not None
        early, self._early = self._early, None
        try:
            # The early set-up is never cancelled halfway: what it claims, discard() gives back.
            ready = await asyncio.shield(early) if early is not None else await self._prepare()
        except BaseException:
            if early is not None:
                self._early = early
                await self.discard()
            raise
        if ready.failed is not None:
            return replace(ready.failed, plan=plan.as_json(), build_ms=build.duration_ms,
                           duration_ms=(time.monotonic() - start) * 1000)  # fmt: skip
        if ready.confinement is not None:  # confined: the program's own copy in its run directory
            try:
                await asyncio.to_thread(place_program, build.binary, ready.confinement)
            except BaseException:
                await owned.to_the_end(_give_back(ready), DISCARD_WAIT_S)
                raise
        ran = await self._started(build.binary, ready)
        left = await asyncio.to_thread(workdirs.usage, self.workdir, self.settings.workdir) if self.workdir else None
        found = ready.found
        before_after = (found, left) if found is not None and left is not None else None
        return finish(ran, build, start, ready.unconfined, before_after)

    async def _prepare(self, *, early: bool = False) -> _Ready:
        """The workspace ready, the environment and the confinement made; ``early``: the program
        is not built yet, and a confined run's launcher is started, waiting for it."""
        workdir, settings = self.workdir, self.settings
        try:
            found = await asyncio.to_thread(workdirs.ready, workdir, settings.workdir) if workdir else None
        except OSError as exc:
            return _Ready(
                failed=RunResult(False, "sandbox", stderr=f"the workspace {workdir} cannot be prepared: {exc}")
            )
        servers_json = json.dumps(self.reach.servers())
        env = unsandboxed_env(os.environ, servers_json, self.reach.server_envs())
        if workdir is not None:
            env[workdirs.WORKSPACE_ENV] = str(workdir)
        try:
            # A workspace at or over its cap may only shrink: the sandbox lets the program read
            # and delete there, never write (the watch below is for the unsandboxed rest).
            full = found is not None and found.room <= 0
            got = await self.reach.confine(self.module_cache, settings, servers_json, self.timeout, workdir, full)
        except SandboxError as exc:
            return _Ready(failed=RunResult(False, "sandbox", stderr=str(exc)))
        confinement, unconfined = (got, None) if isinstance(got, Confinement) else (None, got)
        ready = _Ready(found, with_run_settings(env, self.program_env, self.godebug), confinement, unconfined)
        if confinement is not None:
            if found is not None:
                confinement.cwd_limit = found.used + max(found.room, 0)
            confinement.env = with_run_settings(confinement.env, self.program_env, self.godebug)
            if early:
                try:
                    ready.launched = await launch_waiting(confinement)
                except OSError:
                    pass  # started with the program instead, whose launch answers for it
                except BaseException:
                    await confinement.aclose()
                    raise
        return ready

    async def _started(self, binary: Path, ready: _Ready) -> RunResult:
        """The launch step: what the run claimed is given back on every way out, a cancelled run's too."""
        workdir, settings, confinement = self.workdir, self.settings, ready.confinement
        env = ready.env
        async with contextlib.AsyncExitStack() as claims:
            if confinement is not None:
                claims.push_async_callback(confinement.aclose)
            if ready.launched is not None:  # reaped before the claims go (a no-op once the run reaped it)
                claims.push_async_callback(ready.launched.abort)
            result_file = self.reach.result_file(claims)
            if result_file is not None:  # no controller to take the value of result(): a file
                env[RESULT_FILE_ENV] = str(result_file)
            ran = await run_program(
                binary,
                env,
                workdir or Path.cwd(),
                timeout=self.timeout,
                max_output=settings.max_output_bytes,
                confinement=confinement,
                # A kept output is a file like any other: at most fileSizeMB, and never past the cap.
                keep=_keeper(workdir, settings) if workdir is not None else None,
                on_line=self.on_line,
                launched=ready.launched,
            )
            if result_file is not None and ran.ok:
                ran = replace(ran, result=read_result(result_file, settings.limits.file_size_mb << 20))
                if workdir is not None:
                    ran = await asyncio.to_thread(keep_value, ran, workdir, settings)
        return ran


async def _undone(early: asyncio.Future[_Ready]) -> None:
    """Once the early set-up is done, what it claimed given back."""
    await asyncio.wait({early})
    if not early.cancelled() and early.exception() is None:
        await _give_back(early.result())


async def _give_back(ready: _Ready) -> None:
    """An early launcher ended and reaped, then its confinement's claims given back (and the
    endpoint it opened in the program's namespace no longer served)."""
    if ready.launched is not None:
        await ready.launched.abort()
    if ready.confinement is not None:
        if ready.confinement.endpoint is not None:
            ready.confinement.endpoint.cancel()
        await ready.confinement.aclose()


def _keeper(workdir: Path, settings: CodeModeConfig) -> Callable[[], KeptFile | None]:
    """Opens the file a run's long output is kept in (when it first passes the cap)."""
    file_cap = settings.limits.file_size_mb << 20
    return lambda: open_kept(workdir, settings.workdir, file_cap)
