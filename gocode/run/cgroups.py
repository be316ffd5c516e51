"""A pids cgroup per sandboxed run, where the host lets gocode make one.

The pids controller's ``pids.max`` caps the tasks (processes and threads) of one cgroup, so a
run's thread bomb ends at its own limit whoever else runs as the same user. gocode makes a
directory of its own below its cgroup (cgroup v2 when ``pids`` is enabled for its subtree,
else a writable cgroup v1 ``pids`` hierarchy), one child per run; the launcher moves itself in
before anything else, and the child is removed after the run. Where neither exists the
per-run users of :mod:`gocode.run.sandbox` (RLIMIT_NPROC) are the mechanism.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import threading
import time
import uuid
from pathlib import Path
from typing import Literal

ROOT = Path("/sys/fs/cgroup")
# Tests of hosts without cgroups: the per-run users are then the mechanism.
FAKE_NO_CGROUP_ENV = "GOCODE_SANDBOX_FAKE_NOCGROUP"


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


class RunCgroups:
    """Makes and removes the per-run cgroups (thread-safe)."""

    def __init__(self, root: Path = ROOT) -> None:
        self._root = root
        self._found: tuple[Path, str] | Literal[False] | None = False  # False: not looked yet
        self._home: Path | None = None
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

    def create(self, max_tasks: int) -> Path | None:
        """A new cgroup capped at ``max_tasks`` tasks, or None where the host offers none."""
        found = self._find()
        if found is None:
            return None
        try:
            with self._lock:
                if self._home is None:
                    home = found[0] / f"gocode-{os.getpid()}"
                    home.mkdir(exist_ok=True)
                    if found[1].startswith("cgroup v2"):  # the runs below it get the controller too
                        (home / "cgroup.subtree_control").write_text("+pids\n")
                    atexit.register(_rmdir, home)
                    self._home = home
            run = self._home / f"run-{uuid.uuid4().hex[:12]}"
            run.mkdir()
            (run / "pids.max").write_text(f"{max_tasks}\n")
            return run
        except OSError:
            return None

    def remove(self, path: Path) -> None:
        """Remove a run's cgroup once its tasks are gone (they were killed just before: the
        last threads may take a moment to exit, so a busy cgroup is retried off the loop)."""
        if not _rmdir(path):
            threading.Thread(target=_rmdir_patiently, args=(path,), daemon=True).start()


def _rmdir_patiently(path: Path) -> None:
    for _ in range(250):
        if _rmdir(path):
            return
        time.sleep(0.02)


def _rmdir(path: Path) -> bool:
    try:
        path.rmdir()
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return True


run_cgroups = RunCgroups()
