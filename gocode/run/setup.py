"""The one-off set-up a machine needs before its first program, done once however many wait.

A machine where gocode never ran has no Go module cache (the MCP Go SDK downloaded and compiled
with what programs use: a minute idle, minutes on a busy machine or from an empty Go module
cache) and no sandbox launcher (a ``go build``, seconds). :class:`SetUp` does both in a task
of its owner's task group, so a caller that stops waiting (a client that cancelled) does not
stop it, and every caller that comes meanwhile waits for that same set-up, seeing its
progress lines as they come and a line every :data:`HEARTBEAT_S` seconds between them (a
client that resets its timeout on progress keeps waiting; a person sees it is alive). A
failed set-up gives each waiter a :class:`SetUpError` naming the cause and the fix; the next
caller tries again (the network may be back, Go installed).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

import anyio
import anyio.from_thread
import anyio.to_thread
from anyio.abc import TaskGroup

from gocode.compile.modcache import ModuleCache, Progress
from gocode.errors import GocodeError, SetUpError
from gocode.run.sandbox import launcher_for

HEARTBEAT_S = 10.0

Notice = Callable[[str], Awaitable[None]]


class SetUp:
    """The Go module cache and, with ``launcher``, the sandbox launcher, set up once.

    ``modcache`` is called for the module cache (it raises when there is no Go toolchain);
    ``progress`` gets every line the set-up says (a command's stderr, serve's log).
    """

    def __init__(
        self, modcache: Callable[[], ModuleCache], *, launcher: bool, progress: Progress | None = None
    ) -> None:
        self._modcache = modcache
        self._launcher = launcher
        self._progress = progress
        self.lines: list[str] = []  # what the current (or last) attempt said, in order
        self.error: SetUpError | None = None  # how the last attempt failed
        self._finished: anyio.Event | None = None  # the current attempt's end (None: none started)
        self._changed = anyio.Event()  # set (and replaced) on each new line and at the end
        self._started_at = 0.0
        self._done = False  # seen set up once: it stays so (nothing here takes it back)

    @property
    def done(self) -> bool:
        """Whether the machine is set up (checked on disk: another process may have done it)."""
        if not self._done:
            try:
                ws = self._modcache()
                self._done = ws.ready and (not self._launcher or launcher_for(ws).built)
            except GocodeError:
                return False
        return self._done

    @property
    def running(self) -> bool:
        return self._finished is not None and not self._finished.is_set()

    def start(self, tg: TaskGroup) -> None:
        """Start the set-up in ``tg`` unless it is running or done."""
        if self.running or self.done:
            return
        self.lines, self.error = [], None
        self._finished = anyio.Event()
        self._started_at = time.monotonic()
        tg.start_soon(self._run, self._finished)

    async def wait(self, tg: TaskGroup, notice: Notice | None = None, within: float | None = None) -> bool:
        """Wait for the set-up (started in ``tg`` if needed): True once done, False if it still
        runs after ``within`` seconds. ``notice`` is awaited with each of its lines, the ones
        said before this caller came first, and with a line on how long it has taken every
        :data:`HEARTBEAT_S` seconds without one. Raises :class:`SetUpError` when it fails."""
        if self.done:
            return True
        self.start(tg)
        finished = self._finished
        assert finished is not None
        shown, quiet_since = 0, time.monotonic()
        with anyio.move_on_after(within if within is not None else float("inf")):
            while True:
                for line in self.lines[shown:]:
                    shown += 1
                    quiet_since = time.monotonic()
                    if notice is not None:
                        await notice(line)
                if finished.is_set():
                    break
                changed = self._changed
                with anyio.move_on_after(max(HEARTBEAT_S - (time.monotonic() - quiet_since), 0.0)):
                    await changed.wait()
                if not changed.is_set() and not finished.is_set():
                    quiet_since = time.monotonic()
                    if notice is not None:
                        await notice(self.status())
        if not finished.is_set():
            return False
        if self.error is not None:
            raise self.error
        return True

    def status(self) -> str:
        """What the set-up is doing and for how long, in one line."""
        # The stage's line without its trailing note: "[2/2] compiling the Go SDK, …".
        now = self.lines[-1].split(" (")[0].rstrip(" …") if self.lines else "starting"
        return f"still setting up Go on this machine (once), {time.monotonic() - self._started_at:.0f} s so far: {now}"

    async def _run(self, finished: anyio.Event) -> None:
        try:
            self._say("setting up Go on this machine for gocode (once: later runs start at once)")
            ws = self._modcache()
            if not ws.ready:
                # Abandoned on cancel (the owner closing): a thread cannot be stopped, and the
                # warm-up holds a file lock, so another process finishes or redoes it safely.
                await anyio.to_thread.run_sync(ws.ensure, self._say_from_thread, abandon_on_cancel=True)
            if self._launcher:
                launcher = launcher_for(ws)
                if not launcher.built:
                    self._say("building the sandbox launcher …")
                    await launcher.path()
            self._say(f"set up in {time.monotonic() - self._started_at:.1f} s")
        except (GocodeError, OSError) as exc:
            self.error = SetUpError(failure_text(exc))  # each waiter is told, with the cause
        finally:
            finished.set()
            self._wake()

    def _say(self, line: str) -> None:
        self.lines.append(line)
        if self._progress is not None:
            self._progress(line)
        self._wake()

    def _say_from_thread(self, line: str) -> None:
        anyio.from_thread.run_sync(self._say, line)

    def _wake(self) -> None:
        changed, self._changed = self._changed, anyio.Event()
        changed.set()


def failure_text(exc: BaseException) -> str:
    """What a failed set-up tells a caller: the cause as gocode found it, and how to go on."""
    return (
        f"gocode could not set up Go on this machine (a one-off step before the first program runs): "
        f"{str(exc).strip()}\n"
        "Fix the cause above and call again: the set-up is retried on the next call. "
        "`gocode warmup` runs the same set-up in a terminal, with its progress."
    )
