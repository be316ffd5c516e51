"""Emptying and removing a cgroup and everything below it: the end of every process in it.

A process that left its run's process group (``setsid``, a double fork) is out of reach of
``killpg``, but not of its cgroup. Clearing a cgroup kills every process in it and in the
cgroups below it (``cgroup.kill`` where cgroup v2 has it, else each process the cgroups list,
round after round until none is left: a fork in flight shows in the next round), then removes
the cgroups deepest first. The work is bounded: at most :data:`TREE_LIMIT` cgroups, and a
wait the caller gives. This module never touches a cgroup it is not given, and never kills a
process that is not in one of them (a pid read from a list may be reused by the time it is
signalled: the process is pinned with a pidfd and its cgroup checked first).
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

TREE_LIMIT = 256  # cgroups cleared below one (a program may make its own below its run's)
KILL_WAIT_S = 2.0  # how long killed processes may take to leave their cgroup


def clear(path: Path, wait: float = KILL_WAIT_S, kill: bool = True) -> bool:
    """Kill every process in the cgroup ``path`` and below it (unless ``kill`` is false: then
    only empty cgroups go), then remove them, deepest first; True when ``path`` is gone.
    Waits at most ``wait`` seconds for killed processes to leave; raises nothing."""
    tree = _tree(path)
    if not tree:
        return not path.exists()
    if kill:
        _kill_tree(tree, wait)
    for cgroup in tree:
        with contextlib.suppress(OSError):  # still busy, or already gone: the caller sees which
            cgroup.rmdir()
    return not path.exists()


def kill_all(path: Path, wait: float = 0.0) -> bool:
    """SIGKILL every process in the cgroup ``path`` and below it until none is left (True) or
    ``wait`` seconds have passed (False); with no ``wait``, one round."""
    tree = _tree(path)
    return _kill_tree(tree, wait) if tree else True


def _kill_tree(tree: list[Path], wait: float) -> bool:
    deadline = time.monotonic() + wait
    top = tree[-1]
    names = [_names(cgroup, top.parent) for cgroup in tree]
    while True:
        _write(top / "cgroup.kill", "1\n")  # cgroup v2 (Linux 5.14+): the kernel kills the subtree
        pids = {pid for cgroup in tree for pid in _procs(cgroup)}
        if not pids:
            return True
        for pid in pids:
            _kill_member(pid, names)
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.005)


def _write(path: Path, text: str) -> None:
    """Write a cgroup file that exists (never create one)."""
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
        try:
            os.write(fd, text.encode())
        finally:
            os.close(fd)


def _tree(path: Path) -> list[Path]:
    """``path`` and the cgroups below it (at most TREE_LIMIT), children before their parents."""
    if not path.is_dir():
        return []
    found, i = [path], 0
    while i < len(found) and len(found) < TREE_LIMIT:
        with contextlib.suppress(OSError), os.scandir(found[i]) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False) and len(found) < TREE_LIMIT:
                    found.append(Path(entry.path))
        i += 1
    return found[::-1]


def _procs(cgroup: Path) -> list[int]:
    """The processes a cgroup lists (never pid 0 or below, which would signal a whole group,
    and never this process)."""
    try:
        text = (cgroup / "cgroup.procs").read_text()
    except OSError:
        return []
    me = os.getpid()
    return [pid for pid in (int(w) for w in text.split() if w.isdigit()) if pid > 0 and pid != me]


def _names(cgroup: Path, above: Path) -> tuple[str, ...]:
    """The trailing names that identify ``cgroup`` in /proc/PID/cgroup, from the top of the tree
    down (its name is unique: gocode's directory, or a run's random one); matched by their tail,
    as a cgroup namespace shows a process's path from its own root."""
    return cgroup.relative_to(above).parts


def _kill_member(pid: int, names: list[tuple[str, ...]]) -> None:
    """SIGKILL ``pid`` if it is (still) in one of the cgroups named."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    except OSError:  # no pidfds (Linux < 5.3): the cgroup check below is all there is
        fd = -1
    try:
        if not _member(pid, names):
            return
        if fd >= 0:
            signal.pidfd_send_signal(fd, signal.SIGKILL)
        else:
            os.kill(pid, signal.SIGKILL)
    except OSError:  # gone meanwhile, or not ours to signal
        pass
    finally:
        if fd >= 0:
            os.close(fd)


def _member(pid: int, names: list[tuple[str, ...]]) -> bool:
    try:
        lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
    except OSError:
        return False
    for line in lines:
        parts = Path(line.split(":", 2)[-1]).parts
        if any(parts[-len(n) :] == n for n in names):
            return True
    return False
