"""What an operator sees of a controller: whether it is ready, its metrics, its calls logged,
and the module cache's housekeeping, scheduled as programs run.

A :class:`~gocode.toolbox.Toolbox` has one :class:`Operations`; ``gocode serve`` answers its
``/readyz`` and ``/metrics`` from it (:mod:`gocode.serve.ops`). It lives at the facade's stage,
not in ``serve/``, because a toolbox used from Python counts and bounds the same way.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import anyio.to_thread
from anyio.abc import TaskGroup

from gocode.codemode import CodeMode
from gocode.compile import housekeeping
from gocode.errors import GocodeError
from gocode.mcp import logs
from gocode.mcp.metrics import LiveState, Metrics
from gocode.program.render import tools_import_path
from gocode.routes.handler import Answer
from gocode.run.limiter import RunLimiter
from gocode.run.runner import RunResult
from gocode.run.setup import SetUp

log = logging.getLogger("gocode.toolbox")  # the controller's logger, as operators filter it

# Cache housekeeping runs after the warm-up and then every this many programs or seconds.
HOUSEKEEPING_EVERY_RUNS = 200
HOUSEKEEPING_EVERY_S = 900.0

Warming = Callable[[], Awaitable[None]]


class Operations:
    """The operator's side of one controller. ``tg`` is its task group once entered (housekeeping
    runs there)."""

    def __init__(
        self, code_mode: CodeMode, limiter: RunLimiter, setup: SetUp, upstreams: Callable[[], dict[str, bool]]
    ) -> None:
        self.code_mode, self._setup = code_mode, setup
        self.tg: TaskGroup | None = None
        self.warm: anyio.Event | None = None  # the current warm-up's end (None: none started)
        self.warmed = False  # the first warm-up finished (later re-warms keep the process ready)
        self.warm_error: str | None = None
        self._runs_since_housekeeping = 0
        self._last_housekeeping = time.monotonic()
        self.metrics = Metrics(
            LiveState(
                running=lambda: limiter.running,
                waiting=lambda: limiter.waiting,
                limit=lambda: limiter.limit,
                queue=lambda: limiter.queue,
                upstreams=upstreams,
            )
        )

    def warm_up(self, tg: TaskGroup, build: Warming, settle: Warming) -> None:
        """Start a warm-up in ``tg``: ``build`` (the set-up, the bindings), then the controller is
        warm, ``settle`` (what the model is sent, now final), and the cache's housekeeping. A
        failure is logged and read by :meth:`readiness`; a call will report it properly."""
        self.warm = done = anyio.Event()  # before the task runs, so wait_warm() never misses it
        tg.start_soon(self._warm_up, build, settle, done)

    async def _warm_up(self, build: Warming, settle: Warming, done: anyio.Event) -> None:
        try:
            await build()
            self.warmed, self.warm_error = True, None
            await settle()
            await self.housekeep()
        except GocodeError as exc:
            log.warning("prewarm failed: %s", exc)
            self.warm_error = f"{exc.phase} error while warming up"
        finally:
            done.set()

    @property
    def warm_up_failed(self) -> bool:
        """The last warm-up failed and none is running."""
        return self.warm_error is not None and (self.warm is None or self.warm.is_set())

    async def wait_warm(self) -> None:
        """Wait for the current warm-up (if any) to finish."""
        if self.warm is not None:
            await self.warm.wait()

    def readiness(self, started: bool) -> tuple[bool, str]:
        """Whether this controller should get traffic, and if not why (no secrets: probes are
        public); ``started``: its servers were discovered. See :meth:`gocode.toolbox.Toolbox.readiness`."""
        if not started:
            return False, "starting: discovering the MCP servers"
        if not self.code_mode.settings.enabled:
            return True, "ready"
        if self.warm_error and not self.warmed:
            return False, self.warm_error
        if self._setup.running:
            return False, "warming up: setting up Go on this machine (once)"
        if self.warm is not None and not self.warmed:
            return False, "warming up: compiling the Go bindings"
        if self.warm is None and not _modcache_ready(self.code_mode):
            return False, "the Go module cache is not warmed up (run `gocode warmup`)"
        return True, "ready"

    # --- runs (gocode.routes.runs.RunHooks) ---------------------------------------------------

    def slot_waited(self, seconds: float) -> None:
        self.metrics.queue_wait_seconds.observe(seconds)

    def ran(self, result: RunResult) -> None:
        """One program's run counted; the cache's housekeeping started when it is due."""
        self.metrics.run(result.build_ms, result.run_ms, result.cached_binary, result.phase not in ("code", "busy"))
        self._runs_since_housekeeping += 1
        due = time.monotonic() - self._last_housekeeping >= HOUSEKEEPING_EVERY_S
        if (self._runs_since_housekeeping >= HOUSEKEEPING_EVERY_RUNS or due) and self.tg is not None:
            self._runs_since_housekeeping = 0
            self._last_housekeeping = time.monotonic()
            self.tg.start_soon(self.housekeep)

    def called(self, name: str, kind: str, answer: Answer | None, started: float, rid: str) -> None:
        """One tool call answered (``answer``), or cancelled by its client (None): counted and
        logged (``started``: its ``time.monotonic()``)."""
        run = answer.run if answer is not None else None
        if answer is None:
            phase, outcome = "cancelled", "cancelled"
        else:
            failed = bool(answer.result.is_error)
            phase = run.phase if run is not None else ("error" if failed else "ok")
            outcome = "busy" if phase == "busy" else ("error" if failed else "ok")
        self.metrics.call(kind, phase, outcome)
        fields: dict[str, Any] = {"request_id": rid}
        if run is not None:
            fields.update(
                build_ms=round(run.build_ms, 1), run_ms=round(run.run_ms, 1), cached_binary=run.cached_binary,
                sandbox_tier=(run.sandbox or {}).get("tier"), tool_calls=len(run.tool_calls),
            )  # fmt: skip
        logs.log_call(name, kind, phase, outcome, (time.monotonic() - started) * 1000, **fields)

    async def housekeep(self) -> dict[str, Any] | None:
        """Mark this controller's module cache and bindings used, and bound the cache (see
        :mod:`gocode.compile.housekeeping`; ``$GOCODE_CACHE_MAX_SIZE``, ``$GOCODE_CACHE_MAX_AGE``)."""
        self._last_housekeeping = time.monotonic()
        try:
            ws = self.code_mode.module_cache
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


def _modcache_ready(code_mode: CodeMode) -> bool:
    try:
        return code_mode.module_cache.ready
    except GocodeError:  # no Go toolchain: calls will say so
        return False
