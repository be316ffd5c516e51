"""A pids cgroup per run, where the host lets gocode make one.

The pids controller's ``pids.max`` caps the tasks (processes and threads) of one cgroup, so a
run's thread bomb ends at its own limit whoever else runs as the same user. gocode makes a
directory of its own below its cgroup (cgroup v2 when ``pids`` is enabled for its subtree,
else a writable cgroup v1 ``pids`` hierarchy), one child per run; the launcher moves itself in
before anything else (outside the sandbox, a shell does: see :func:`gocode.run.runner.launch`).
Where neither exists the per-run users of :mod:`gocode.run.sandbox` (RLIMIT_NPROC) are the
mechanism.

A run's cgroup is also how all of its processes end: one that left the run's process group
(``setsid``) is still in it, so the run's end kills whatever its cgroup holds before removing
it (:mod:`gocode.run.cgroupclear`). Runs outside the sandbox get one too, without a cap.

gocode's directory is named for its controller: ``gocode-<pid>-<start>-<pidns>`` (the process's
start time in clock ticks after boot, and its pid namespace's inode), removed at exit. A
controller that crashed cannot remove its own, so the next one to make its directory sweeps
the stale ones first (:func:`sweep`): a directory whose controller is gone, or whose pid is now
another process's (another start time), is emptied and removed; a live controller's, one of
another pid namespace and one named by an older gocode (``gocode-<pid>``, whose pid is then
all there is to go by: kept while that pid lives, removed only when empty) are never killed in.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import re
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from gocode.run.cgroupclear import KILL_WAIT_S, clear, kill_all

ROOT = Path("/sys/fs/cgroup")
# Tests of hosts without cgroups: the per-run users are then the mechanism.
FAKE_NO_CGROUP_ENV = "GOCODE_SANDBOX_FAKE_NOCGROUP"
SWEEP_LIMIT = 64  # stale directories cleared per sweep (the rest wait for the next controller)
SWEEP_S = 5.0  # how long one sweep may take in all
_HOME = re.compile(r"gocode-(\d+)(?:-(\d+)-(\d+))?")

log = logging.getLogger("gocode.run.cgroups")


def _own_paths() -> dict[str, str]:
    """This process's cgroup per hierarchy: ``""`` for v2, else the v1 controller list."""
    out: dict[str, str] = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _id, controllers, path = line.split(":", 2)
            out[controllers] = path
    return out


def _writable(path: Path) -> bool:
    return path.is_dir() and os.access(path, os.W_OK) and os.access(path / "cgroup.procs", os.W_OK)


def find_base(root: Path = ROOT) -> tuple[Path, str] | None:
    """Where run cgroups can be made (their parent) and which mechanism that is, or None."""
    own = _own_paths()
    if "" in own:  # cgroup v2: pids must be enabled for the children of our cgroup
        mine = root / own[""].lstrip("/")
        try:
            enabled = (mine / "cgroup.subtree_control").read_text().split()
        except OSError:
            enabled = []
        if "pids" in enabled and _writable(mine):
            return mine, "cgroup v2 pids.max"
    for controllers, path in own.items():
        if "pids" in controllers.split(","):
            v1 = root / "pids" / path.lstrip("/")
            if _writable(v1):
                return v1, "cgroup v1 pids.max"
    return None


@dataclass(frozen=True)
class Controller:
    """Who a gocode directory belongs to: a process, told from a later one with its pid by its
    start time, in a pid namespace (where that pid means that process)."""

    pid: int
    start: int
    pidns: int

    @property
    def home(self) -> str:
        return f"gocode-{self.pid}-{self.start}-{self.pidns}"


def start_time(pid: int) -> int | None:
    """When the process ``pid`` started (clock ticks after boot), None if there is none."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return int(stat.rsplit(")", 1)[1].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def this_controller() -> Controller | None:
    start = start_time(os.getpid())
    try:
        pidns = os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return None
    return Controller(os.getpid(), start, pidns) if start is not None else None


def verdict(name: str, me: Controller) -> Literal["keep", "kill", "empty"]:
    """What a sweep does with the gocode directory ``name``: keep it (its controller may live),
    kill what is in it and remove it (its controller is gone), or remove it only if empty."""
    m = _HOME.fullmatch(name)
    if m is None:
        return "keep"
    pid = int(m[1])
    if m[2] is None:  # an older gocode's name: a live pid may be its controller
        return "keep" if _exists(pid) else "empty"
    if int(m[3]) != me.pidns:  # that pid is another process here
        return "keep"
    if not _exists(pid):
        return "kill"
    start = start_time(pid)  # unreadable (another user's, /proc mounted hidepid): may be it
    return "kill" if start is not None and start != int(m[2]) else "keep"


def _exists(pid: int) -> bool:
    """Whether a process ``pid`` exists (a signal 0 tells, where /proc may hide it)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):  # not ours to signal; a name no pid has: keep it
        return True
    return True


def sweep(base: Path, me: Controller, budget: float = SWEEP_S) -> int:
    """Empty and remove the gocode directories below ``base`` whose controllers are gone (at
    most SWEEP_LIMIT, within ``budget`` seconds); the number removed. Errors are logged."""
    deadline = time.monotonic() + budget
    try:
        names = sorted(e.name for e in os.scandir(base) if e.name.startswith("gocode-") and e.name != me.home)
    except OSError as exc:
        log.warning("sweeping stale cgroups in %s: %s", base, exc)
        return 0
    removed = tried = 0
    for name in names:
        if (what := verdict(name, me)) == "keep":
            continue
        left = deadline - time.monotonic()
        if tried >= SWEEP_LIMIT or left <= 0:
            log.info("stale cgroups in %s: the rest are left to the next controller", base)
            break
        tried += 1
        if clear(base / name, wait=min(KILL_WAIT_S, left), kill=what == "kill"):
            removed += 1
        elif what == "kill":
            log.warning("the stale cgroup %s could not be removed (its processes did not exit)", base / name)
    if removed:
        log.info("removed %d stale gocode cgroups in %s", removed, base)
    return removed


class RunCgroups:
    """Makes and removes the per-run cgroups (thread-safe)."""

    def __init__(self, root: Path = ROOT) -> None:
        self._root = root
        self._found: tuple[Path, str] | Literal[False] | None = False  # False: not looked yet
        self._home: Path | None = None
        self._swept = False
        self._lock = threading.Lock()

    def mechanism(self) -> str | None:
        found = self._find()
        return found[1] if found else None

    def _find(self) -> tuple[Path, str] | None:
        if os.environ.get(FAKE_NO_CGROUP_ENV):
            return None
        with self._lock:
            if self._found is False:
                self._found = find_base(self._root)
            return self._found or None

    def create(self, max_tasks: int | None) -> Path | None:
        """A new cgroup for one run, capped at ``max_tasks`` tasks (None: no cap, only to find its
        processes at its end), or None where the host offers none."""
        found = self._find()
        if found is None:
            return None
        try:
            run = self._make_home(*found) / f"run-{uuid.uuid4().hex[:12]}"
            run.mkdir()
        except OSError:
            return None
        try:
            if max_tasks is not None:
                (run / "pids.max").write_text(f"{max_tasks}\n")
        except OSError:
            _rmdir(run)
            return None
        return run

    def _make_home(self, base: Path, mechanism: str) -> Path:
        """gocode's own directory, made (after a sweep of the stale ones) the first time."""
        with self._lock:
            if self._home is not None and self._home.is_dir():
                return self._home
            me = this_controller()
            if me is not None and not self._swept:
                self._swept = True
                sweep(base, me)
            home = base / (me.home if me is not None else f"gocode-{os.getpid()}")
            home.mkdir(exist_ok=True)
            if mechanism.startswith("cgroup v2"):  # the runs below it get the controller too
                (home / "cgroup.subtree_control").write_text("+pids\n")
            if self._home is None:
                atexit.register(_clear_at_exit, home, os.getpid())
            self._home = home
            return home

    def remove(self, path: Path) -> None:
        """Kill whatever is left in a run's cgroup (a process that left the run's process group
        is still in it), then remove it; one whose last processes are slow to exit is retried
        off the caller's thread."""
        if not clear(path):
            threading.Thread(target=_clear_patiently, args=(path,), daemon=True).start()

    def kill(self, path: Path) -> None:
        """One round of SIGKILL to every process in a run's cgroup, without waiting (the run's
        end, at once: :meth:`remove` follows and waits)."""
        kill_all(path)


def _clear_at_exit(home: Path, owner: int) -> None:
    """Empty and remove gocode's directory as its controller exits (a forked child that exits
    is not its controller: the runs in it are its parent's)."""
    if os.getpid() == owner:
        clear(home, wait=1.0)


def _clear_patiently(path: Path) -> None:
    for _ in range(250):
        if clear(path, wait=0.0):
            return
        time.sleep(0.02)
    log.warning("the run cgroup %s could not be removed (its processes did not exit)", path)


def _rmdir(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.rmdir()


run_cgroups = RunCgroups()
