"""Run one built program: timeout, process-tree kill, output caps, and the result it gives.

Every program starts through :func:`launch` (the one place the sandbox wrapper can
take over). It runs in a new session and process group; the MCP servers it starts stay in
that group, so on a timeout — and after every normal exit, to sweep up orphans that npx or
uvx wrappers leave behind — the whole group is killed. Where the host lets gocode make
cgroups, every run also has one (the sandbox's, else one without a cap), and its end kills
whatever that cgroup holds: a process that left the group (``setsid``) too.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import os
import re
import signal
import socket
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gocode.files import dir_size
from gocode.run import owned
from gocode.run.cgroups import run_cgroups
from gocode.run.forwarder import serve_endpoint
from gocode.run.gotraceback import trim_traceback
from gocode.run.kept import head_and_tail, kept_label
from gocode.run.result import RunResult
from gocode.run.workdir import regroup

if TYPE_CHECKING:
    from gocode.run.kept import KeptFile
    from gocode.run.sandbox import Confinement

STDERR_LIMIT = 16 * 1024
REAP_WAIT_S = 10.0  # how long a killed program may take to be reaped
# Outside the sandbox (no launcher) a shell moves itself into the run's cgroup and execs the
# program. A cgroup it cannot join leaves the run as it was without one: its process group.
# The shell exports PWD of its own: the program gets the environment it was given.
SHELL = "/bin/sh"
_JOIN = '{ echo 0 >"$1"; } 2>/dev/null; %s; shift 2; exec "$@"'
# Called with each line the program prints on stdout (without its newline) while it runs.
LineFn = Callable[[str], Awaitable[None]]


# Opens the file long output is kept in (None: no room for it); called once, when output
# first passes the cap.
KeepFn = Callable[[], "KeptFile | None"]


class _Capped:
    """Keeps the first ``limit`` bytes of a stream and counts the rest.

    With ``keep`` (opens a file, see :func:`gocode.run.kept.open_kept`), a stream longer than
    ``limit`` is written there whole (up to the file's cap) and its last bytes are kept too, so
    the answer can show head and tail. ``on_line`` gets each complete line kept within
    ``limit``, as it arrives.
    """

    def __init__(
        self, limit: int, keep: KeepFn | None = None, cwd: Path | None = None, on_line: LineFn | None = None
    ) -> None:
        self.limit, self.buf, self.dropped = limit, bytearray(), 0
        self.keep, self.cwd, self.kept, self.total = keep, cwd, 0, 0
        self.tail_limit = limit // 4
        self.tail = bytearray()
        self.kept_file: KeptFile | None = None
        self.keep_note = ""  # why output past the cap was not kept
        self.on_line = on_line
        self._told = 0  # bytes of buf already handed to on_line

    async def drain(self, stream: asyncio.StreamReader) -> None:
        try:
            while chunk := await stream.read(65536):
                self.total += len(chunk)
                room = self.limit - len(self.buf)
                if room > 0:
                    self.buf += chunk[:room]
                self.dropped += max(0, len(chunk) - max(room, 0))
                if self.keep is not None and self.total > self.limit:
                    await self._spill(chunk)
                await self._tell(final=False)
            await self._tell(final=True)
        finally:
            if self.kept_file is not None:
                self.kept_file.file.close()

    async def _tell(self, final: bool) -> None:
        """Hand the complete lines kept so far to on_line (and a last partial one at the end)."""
        if self.on_line is None:
            return
        end = len(self.buf) if final else self.buf.rfind(b"\n", self._told) + 1
        if end <= self._told:
            return
        text = self.buf[self._told : end].decode("utf-8", "replace")
        self._told = end
        for line in text.removesuffix("\n").split("\n"):
            try:
                await self.on_line(line)
            except Exception:  # a listener that went away (a client hung up) must not stop the run
                self.on_line = None
                return

    async def _spill(self, chunk: bytes) -> None:
        assert self.keep is not None
        if self.kept_file is None:  # the head is in buf; the rest of this chunk follows it
            try:
                self.kept_file = await asyncio.to_thread(self.keep)
            except OSError as exc:  # the workspace's gocode-output is not a directory, …
                self.keep_note = f"output past the cap not kept: {exc}"
            if self.kept_file is None:
                self.keep = None
                return
            done = len(self.buf)
            self._write(bytes(self.buf))
            chunk = chunk[len(chunk) - (self.total - done) :]
        self._write(chunk)
        self.tail = (self.tail + chunk)[-self.tail_limit :]

    def _write(self, data: bytes) -> None:
        assert self.kept_file is not None
        room = self.kept_file.cap - self.kept
        if room > 0:
            try:
                self.kept_file.file.write(data[:room])
            except OSError:  # the disk is full: what is kept so far is what the answer names
                self.kept_file.cap = self.kept
                return
            self.kept += min(room, len(data))

    @property
    def spilled(self) -> bool:
        return self.kept_file is not None

    def text(self) -> str:
        return self.buf.decode("utf-8", "replace")

    def head_and_tail(self) -> str:
        """The head and the tail of a kept stream, with where the whole of it is."""
        head_b, tail_b = bytes(self.buf[: self.limit - self.tail_limit]), bytes(self.tail)
        assert self.kept_file is not None
        where = kept_label(self.kept_file.path, self.cwd) if self.cwd is not None else str(self.kept_file.path)
        return head_and_tail(head_b, tail_b, self.total, self.kept, where)


async def launch(
    binary: Path,
    env: Mapping[str, str],
    cwd: Path,
    confinement: Confinement | None = None,
    cgroup: Path | None = None,
    go_fd: int | None = None,
) -> tuple[asyncio.subprocess.Process, int | None]:
    """Start a program in its own session/process group: the one place programs start.

    Under a sandbox it starts the launcher, which confines itself (joining the sandbox's cgroup)
    and execs the program; the returned descriptor then yields the launcher's policy (or error)
    line, and EOF at exec. Without one, a ``cgroup`` is joined before the program starts.
    Cancelled meanwhile, it kills and reaps what it started before the cancellation goes on.
    ``go_fd`` (sandboxed only): the launcher sets up and waits for a byte there before it
    execs the program (:func:`launch_waiting`).
    """
    if confinement is None:
        argv = [str(binary)]
        if cgroup is not None and os.access(SHELL, os.X_OK):
            pwd = "PWD=$2; export PWD" if "PWD" in env else "unset PWD"
            argv = [SHELL, "-c", _JOIN % pwd, "sh", str(cgroup / "cgroup.procs"), env.get("PWD", ""), *argv]
        proc = await _start(
            *argv, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, env=dict(env), cwd=str(cwd), start_new_session=True,
        )  # fmt: skip
        return proc, None
    read_end, write_end = os.pipe()
    ours, theirs = socket.socketpair() if confinement.netns else (None, None)
    try:
        argv = [*confinement.argv_prefix, "-status-fd", str(write_end)]
        fds = [write_end]
        if theirs is not None:
            argv += ["-listen-sock", str(theirs.fileno())]
            fds.append(theirs.fileno())
        if go_fd is not None:
            argv += ["-go-fd", str(go_fd)]
            fds.append(go_fd)
        argv += ["--", str(confinement.program or binary)]
        proc = await _start(
            *argv, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, env=confinement.env, cwd=str(confinement.cwd or confinement.scratch),
            start_new_session=True, pass_fds=tuple(fds),
        )  # fmt: skip
    except BaseException:
        os.close(read_end)
        if ours is not None:
            ours.close()
        raise
    finally:
        os.close(write_end)
        if theirs is not None:
            theirs.close()
    if ours is not None:
        confinement.endpoint = asyncio.ensure_future(serve_endpoint(ours, confinement.port))
    return proc, read_end


@dataclass
class Launched:
    """A sandboxed launcher started before its program was built, waiting at its go-ahead pipe."""

    proc: asyncio.subprocess.Process
    status_fd: int | None
    go_fd: int | None  # the pipe's write end, until go() or abort()
    told: bool = False  # go() was called: the process and the status descriptor are the run's

    def go(self) -> tuple[asyncio.subprocess.Process, int | None]:
        """Tell it to confine itself and exec the program (now in place); the launch's outcome,
        which the run owns from now on (it reaps the process and closes the descriptor)."""
        if self.told or self.go_fd is None:
            raise OSError(errno.EBADF, "the launcher was already told or ended")
        self.told = True
        fd, self.go_fd = self.go_fd, None
        try:
            os.write(fd, b"g")
        except BrokenPipeError:
            pass  # it is gone already: its status line or exit status says why
        finally:
            os.close(fd)
        return self.proc, self.status_fd

    async def abort(self) -> None:
        """The run ends before its program starts: the launcher is ended and reaped, however
        often the caller is cancelled meanwhile. Once told to go it is the run's, whose end did
        that: nothing is touched again (a descriptor closed twice, or a group killed after its
        reaping, may be another run's)."""
        if self.told:
            return
        if self.go_fd is not None:
            os.close(self.go_fd)  # EOF: it exits without starting anything
            self.go_fd = None
        _kill_group(self.proc.pid)
        try:
            await owned.to_the_end(self.proc.wait(), REAP_WAIT_S)
        finally:
            if self.status_fd is not None:
                with contextlib.suppress(OSError):
                    os.close(self.status_fd)
                self.status_fd = None


async def launch_waiting(confinement: Confinement) -> Launched:
    """The launcher of a confined run started before its program exists: it claims and sets up
    what it can (its cgroup, its namespaces) and waits for :meth:`Launched.go`."""
    read_end, write_end = os.pipe()
    try:
        os.set_inheritable(read_end, False)
        program = confinement.program or confinement.scratch
        proc, status_fd = await launch(program, confinement.env, confinement.scratch, confinement, go_fd=read_end)
    except BaseException:
        os.close(write_end)
        raise
    finally:
        os.close(read_end)
    return Launched(proc, status_fd, write_end)


async def _start(*argv: str, **options: Any) -> asyncio.subprocess.Process:
    """``asyncio.create_subprocess_exec``, finished even when the caller is cancelled.

    Cancelled inside it, asyncio kills the child (not its group) and waits for it, but a second
    cancellation (anyio delivers one at every await of a cancelled scope) ends that wait: the
    run then gave back its user and cgroup before its child was reaped. Here the start runs to
    its end in a task of its own; a cancelled caller's child has its group killed and is reaped
    (within REAP_WAIT_S, however many cancellations follow) before the cancellation goes on."""
    started = asyncio.ensure_future(asyncio.create_subprocess_exec(*argv, **options))
    try:
        import anyio  # here: showing kept listings imports this module, not the SDK's stack

        with anyio.CancelScope(shield=True):
            proc = await asyncio.shield(started)
    except asyncio.CancelledError:
        await _stop_started(started)
        raise
    return proc


async def _stop_started(started: asyncio.Future[asyncio.subprocess.Process]) -> None:
    await owned.to_the_end(_reaped(started), REAP_WAIT_S)


async def _reaped(started: asyncio.Future[asyncio.subprocess.Process]) -> None:
    """Once started, the process's group killed and the process reaped."""
    try:
        proc = await started
    except Exception:
        return  # it did not start
    _kill_group(proc.pid)
    await proc.wait()


def _read_status(fd: int) -> dict[str, Any] | None:
    """The launcher's last JSON line (policy or error); None if it wrote nothing."""
    chunks = []
    with os.fdopen(fd, "rb") as f:
        while chunk := f.read(65536):
            chunks.append(chunk)
    for line in reversed(b"".join(chunks).decode("utf-8", "replace").splitlines()):
        with contextlib.suppress(ValueError):
            doc = json.loads(line)
            if isinstance(doc, dict):
                return doc
    return None


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


@contextlib.asynccontextmanager
async def _run_cgroup(confinement: Confinement | None) -> AsyncIterator[Path | None]:
    """The run's cgroup: the sandbox's (its to give back), else one of the run's own without a
    cap where the host lets gocode make one, emptied and removed however the run ends."""
    if confinement is not None:
        yield confinement.cgroup
        return
    cgroup = await owned.claim(lambda: run_cgroups.create(None), _remove_cgroup)
    try:
        yield cgroup
    finally:
        if cgroup is not None:
            await owned.release(lambda: run_cgroups.remove(cgroup))


def _remove_cgroup(cgroup: Path | None) -> None:
    if cgroup is not None:
        run_cgroups.remove(cgroup)


@contextlib.asynccontextmanager
async def _stopped(
    proc: asyncio.subprocess.Process,
    confinement: Confinement | None,
    watcher: asyncio.Future[None] | None,
    readers: asyncio.Future[Any],
    cgroup: Path | None,
) -> AsyncIterator[None]:
    """Owns a started program: on every way out (it ended, timed out, the run was cancelled or
    failed) its process group is killed and it is reaped before the body's caller goes on, so
    the run user and cgroup it held can be given back. A program that ended by itself still has
    its group killed: orphans of its servers. So is what its cgroup holds (a process that left
    the group), whose pipes would otherwise keep the output open."""
    try:
        yield
    except BaseException:
        readers.cancel()  # nobody reads the output of a cancelled run
        readers.add_done_callback(lambda f: None if f.cancelled() else f.exception())
        raise
    finally:
        _kill_group(proc.pid)
        if cgroup is not None:
            run_cgroups.kill(cgroup)
        if watcher is not None:
            watcher.cancel()
        if confinement is not None and confinement.endpoint is not None:
            confinement.endpoint.cancel()
        # Waited through every cancellation: the wait is what lets the caller give back the
        # program's user (a cancelled run's plain await would raise at once and skip it).
        # SIGKILL ends it within the bound.
        await owned.to_the_end(proc.wait(), REAP_WAIT_S)


async def run_program(
    binary: Path,
    env: Mapping[str, str],
    cwd: Path,
    *,
    timeout: float,
    max_output: int,
    confinement: Confinement | None = None,
    keep: KeepFn | None = None,
    on_line: LineFn | None = None,
    launched: Launched | None = None,
) -> RunResult:
    """Run a built program to completion or ``timeout``; never raises for the program's failures.

    With ``keep``, output beyond ``max_output`` is written whole to the file it opens (at most
    its cap) and the answer shows its head and tail and the path. ``on_line`` gets each line the
    program prints, as it prints it (within ``max_output``). However it ends (cancelled too,
    even while it starts), the program's process group and whatever its cgroup holds are killed
    and the program is reaped before it returns; a run outside the sandbox has its cgroup
    removed too, while ``confinement`` stays the caller's to close after that. ``launched``: its
    launcher, started with ``confinement`` before the program was built and waiting for it
    (:func:`launch_waiting`); the program is in place, and it is told to go.
    """
    start = time.monotonic()
    out, err = _Capped(max_output, keep, cwd, on_line), _Capped(STDERR_LIMIT)
    async with _run_cgroup(confinement) as cgroup:
        try:
            if launched is not None:
                proc, status_fd = launched.go()
            else:
                proc, status_fd = await launch(binary, env, cwd, confinement, cgroup)
        except OSError as exc:
            if exc.errno in (errno.EAGAIN, errno.ENOMEM):
                # gocode's own process could not start another: its user is at its process limit,
                # or the host out of memory for a moment. Nothing the program did.
                return RunResult(False, "resources", "", f"{_EXHAUSTED} starting the program: {exc.strerror} "
                                 "(gocode's user is at its process limit, RLIMIT_NPROC, or the host is out of memory)",
                                 run_ms=(time.monotonic() - start) * 1000)  # fmt: skip
            raise
        assert proc.stdout is not None and proc.stderr is not None
        readers = asyncio.gather(out.drain(proc.stdout), err.drain(proc.stderr))
        status = asyncio.ensure_future(asyncio.to_thread(_read_status, status_fd)) if status_fd is not None else None
        over_disk: list[int] = []
        watcher = asyncio.ensure_future(_watch_scratch(proc, confinement, over_disk)) if confinement else None
        timed_out = False
        # Nothing awaited since the launch: a cancellation lands inside, where the program is reaped.
        async with _stopped(proc, confinement, watcher, readers, cgroup):
            try:
                await asyncio.wait_for(proc.wait(), timeout)
            except TimeoutError:
                timed_out = True
        policy = await status if status is not None else None
        try:
            await asyncio.wait_for(readers, 5)
        except TimeoutError:
            readers.cancel()
    ended = _Ended(
        proc.returncode, timed_out, over_disk[0] if over_disk else None, policy, (time.monotonic() - start) * 1000
    )
    return _answer(ended, out, err, max_output, timeout, confinement)


@dataclass(frozen=True)
class _Ended:
    """How a program's process ended, as the runner saw it."""

    code: int | None  # its exit status (negative: the signal)
    timed_out: bool
    over_disk: int | None  # the cap it was killed for passing (negative: its workspace's)
    policy: dict[str, Any] | None  # the launcher's status line (sandboxed runs)
    run_ms: float


def _answer(
    ended: _Ended, out: _Capped, err: _Capped, max_output: int, timeout: float, confinement: Confinement | None
) -> RunResult:
    """The runner's answer: what the program printed and why it ended (pure, but for reading
    the kept file's path)."""
    output, truncated, kept = _output(out, max_output)
    raw_stderr = err.text()  # with the runtime's frames, which tell which limit was hit
    stderr = trim_traceback(raw_stderr)
    if err.dropped:
        stderr += f"\n[stderr truncated: {err.dropped} more bytes]"
    sandbox = None
    if confinement is not None:
        refused = _not_started(ended, stderr, raw_stderr, confinement)
        if refused is not None:
            return refused
        assert ended.policy is not None
        sandbox = {**ended.policy, "setting": confinement.decision.setting}
        if confinement.decision.warning:
            sandbox["warning"] = confinement.decision.warning
    ran = RunResult(
        False, "runtime", output, stderr, ended.code, run_ms=ended.run_ms, truncated=truncated, sandbox=sandbox, **kept
    )
    if ended.over_disk is not None:
        return replace(ran, phase="limit", exit_code=None, stderr=_append(stderr, _over_disk(ended.over_disk)))
    if ended.timed_out:
        killed = f"the program did not finish within {timeout:g} s and was killed (with every process it started)"
        return replace(ran, phase="timeout", exit_code=None, stderr=_append(stderr, killed))
    if ended.code == 0:
        return replace(ran, ok=True, phase="ok")
    if ended.code is not None and ended.code < 0:
        stderr = _append(stderr, f"killed by signal {signal.Signals(-ended.code).name}")
    if confinement is None:
        return replace(ran, stderr=stderr)
    if _THREAD_LIMIT.search(raw_stderr) and confinement.threads:
        # The program reached its own cap (a cgroup or a user per run): a retry would too.
        return replace(ran, phase="limit", stderr=_append(stderr, f"(sandbox: at most {confinement.threads} threads "
                       "and processes per run: codeMode.limits.threads)"))  # fmt: skip
    if _THREAD_LIMIT.search(raw_stderr):
        # A limit shared with other processes of its user: it may be free again soon.
        return replace(ran, phase="resources", stderr=_append(stderr, f"({_EXHAUSTED}: the threads of the user it "
                       "runs as, RLIMIT_NPROC, shared with that user's other processes)"))  # fmt: skip
    return replace(ran, stderr=_append(stderr, _limit_hint(raw_stderr, ended.code, confinement)))


def _output(out: _Capped, max_output: int) -> tuple[str, bool, dict[str, Any]]:
    """What a model reads of stdout, whether it was cut, and where it was kept whole."""
    output = out.text()
    truncated = out.dropped > 0 and not (out.spilled and out.kept == out.total)
    kept: dict[str, Any] = {"output_bytes": out.total}
    if out.spilled:
        assert out.kept_file is not None
        output = out.head_and_tail()
        kept["output_file"] = str(out.kept_file.path)
    elif truncated:
        why = f"; {out.keep_note}" if out.keep_note else ""
        output += f"\n[output truncated: {out.dropped} more bytes beyond the {max_output}-byte limit{why}]"
    return output, truncated, kept


def _not_started(ended: _Ended, stderr: str, raw_stderr: str, c: Confinement) -> RunResult | None:
    """The answer when the sandbox launcher did not start the program (None when it did)."""
    code, run_ms = ended.code, ended.run_ms
    if ended.policy is not None and ended.policy.get("error"):
        error = str(ended.policy["error"])
        if _exhausted(error):
            return RunResult(False, "resources", "", _exhaustion(error, c), code, run_ms=run_ms)
        return RunResult(False, "sandbox", "", error, code, run_ms=run_ms)
    if ended.policy is None:
        if _THREAD_LIMIT.search(raw_stderr):  # the launcher itself could not start a thread
            return RunResult(False, "resources", "", _exhaustion(stderr, c), code, run_ms=run_ms)
        return RunResult(
            False, "sandbox", "", stderr or "the sandbox launcher stopped before the program started", code,
            run_ms=run_ms,
        )  # fmt: skip
    return None


def _over_disk(cap: int) -> str:
    if cap < 0:
        return (
            f"the program filled its workspace past {(-cap - 1) / 1e6:.1f} MB, all its caps allow "
            "(codeMode.workspace.maxMB; totalMB for a model's sessions together; a workspace over a cap may only "
            "shrink) and was killed; delete files from it or run `gocode workspace clean`"
        )
    return (
        f"the program wrote more than {cap >> 20} MiB into its scratch directory "
        "(codeMode.limits.scratchMB) and was killed"
    )


def deleted_open_files(pgid: int) -> int:
    """Bytes held by deleted files the process group still has open (they no longer show in
    the directory, but still fill the disk)."""
    total = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            if int(stat.rsplit(")", 1)[1].split()[2]) != pgid:
                continue
            fds = os.listdir(f"/proc/{pid}/fd")
        except (OSError, ValueError, IndexError):
            continue
        for fd in fds:
            link = f"/proc/{pid}/fd/{fd}"
            with contextlib.suppress(OSError):
                if os.readlink(link).endswith(" (deleted)"):
                    st = os.stat(link)
                    total += max(st.st_blocks * 512, st.st_size)
    return total


_EXHAUSTED = "resources exhausted"
# The Go runtime, or fork/exec, refused a new thread or process (EAGAIN).
_THREAD_LIMIT = re.compile(r"failed to create new OS thread|pthread_create failed|resource temporarily unavailable")


def _exhausted(error: str) -> bool:
    return "resource temporarily unavailable" in error or "cannot allocate memory" in error


def _exhaustion(error: str, c: Confinement) -> str:
    """The launcher could not start the program's process (before the program ran): which limit."""
    if c.cgroup is not None:
        limit = f"the run's cgroup allows {c.threads} tasks (codeMode.limits.threads)"
    elif c.uid is not None and c.uid != 65534:
        limit = f"its user's RLIMIT_NPROC of {c.threads} (codeMode.limits.threads)"
    else:
        limit = "the process limit (RLIMIT_NPROC) of the user it runs as, shared with that user's other processes"
    return f"{_EXHAUSTED} before the program started: {error}\n({limit}; the host may be short of processes or memory)"


def _append(text: str, line: str) -> str:
    if not line:
        return text
    return (text.rstrip() + "\n" if text.strip() else "") + line


_ALLOCATOR_FRAMES = (
    "runtime.mallocgc",
    "runtime.(*mheap)",
    "runtime.gcAssistAlloc",
    "runtime.(*spanQueue)",
    "runtime.sysMap",
)


def _limit_hint(stderr: str, code: int | None, c: Confinement) -> str:
    """Which sandbox limit a failure looks like, with its value and where it is set."""
    lim = c.limits
    if "out of memory" in stderr or "cannot allocate memory" in stderr:
        return f"(sandbox: the memory limit is {lim['data'] >> 20} MiB: codeMode.limits.memoryMB)"
    if code == 2 and "SIGSEGV" in stderr and any(f in stderr for f in _ALLOCATOR_FRAMES):
        # At the limit the runtime does not always report "out of memory": mmap failures
        # inside the allocator or the collector can surface as a crash.
        return (
            f"(sandbox: the memory limit is {lim['data'] >> 20} MiB: codeMode.limits.memoryMB, "
            "probably reached: the runtime crashed while allocating or collecting)"
        )
    if "file too large" in stderr:
        return f"(sandbox: files may not exceed {lim['fsize'] >> 20} MiB: codeMode.limits.fileSizeMB)"
    if "too many open files" in stderr:
        return f"(sandbox: at most {lim['nofile']} open files: codeMode.limits.openFiles)"
    if code == -signal.SIGKILL:
        return f"(sandbox: the CPU-time limit is {lim['cpu']} s: codeMode.limits.cpuSeconds)"
    if "permission denied" in stderr and c.shrink_only:
        return (
            "(sandbox: the workspace is over its cap (codeMode.workspace.maxMB; totalMB for a model's sessions "
            "together), so until files are deleted from it a program may only read and delete there: delete files "
            "(os.Remove) or run `gocode workspace clean`)"
        )
    if "permission denied" in stderr:
        where = "its working directory (the workspace) and its" if c.cwd is not None else "its"
        # Runs of one model as users of their own: a file another run creates this moment is
        # the group's only after the watch's next pass.
        shared = (
            "; a file another run of this model has just created is writable within a second" if c.cwd_group else ""
        )
        return (
            f"(sandbox: the program may read and write only {where} scratch directory ($TMPDIR); "
            f"paths through `..` or a symlink that lead out of them are refused{shared})"
        )
    return ""


async def _watch_scratch(proc: asyncio.subprocess.Process, c: Confinement, over: list[int]) -> None:
    """Kill the program when its scratch directory (or its workspace) outgrows the limit
    (rlimits cannot cap a directory)."""
    while proc.returncode is None:
        await asyncio.sleep(0.2)
        used = await asyncio.to_thread(lambda: dir_size(c.scratch) + deleted_open_files(proc.pid))
        if used > c.scratch_limit:
            over.append(c.scratch_limit)
            _kill_group(proc.pid)
            return
        if c.cwd is not None and c.cwd_limit is not None and await asyncio.to_thread(dir_size, c.cwd) > c.cwd_limit:
            over.append(-c.cwd_limit - 1)  # negative: the workspace's cap (minus one, so a cap of 0 is told apart)
            _kill_group(proc.pid)
            return
        if c.cwd is not None and c.cwd_group is not None:
            # What the program creates (os.WriteFile(…, 0o644) gives its group no write) is
            # made its group's at once, for other runs of its model running now.
            await asyncio.to_thread(regroup, c.cwd, c.cwd_group)
