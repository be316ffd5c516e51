"""The workspace: a directory per model (or per client session) that programs keep files in.

Every run starts in it (its working directory, also ``$GOCODE_WORKSPACE``), so what one program
writes the next can read. Under the sandbox it is the one directory besides the run's scratch
that the program may write, granted to the launcher as a Landlock rule on the directory itself:
``..`` and symlinks that lead out of it reach nothing (the kernel checks the resolved path). It
is size-capped (``codeMode.workspace.maxMB``): a run that finds it over the cap is refused, and
a run that leaves it over the cap is told so. Output beyond ``maxOutputBytes`` is kept here too
(:data:`OUTPUT_DIR`), so a model can read what did not fit in its answer.

When programs run as users of their own (gocode as root), several runs of one model may use
the workspace at once, each as a different user. The model's workspace then belongs to a group
of its own (:func:`share`): the directory is that group's, setgid, group-writable and closed to
everyone else; every run of the model gets the group as its one supplementary group and umask
007. Another model's runs are kept out twice: their Landlock rule names only their own
workspace, and they are not in this group.
"""

from __future__ import annotations

import contextlib
import fcntl
import grp
import hashlib
import os
import re
import shutil
import stat
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gocode.config import WorkspaceConfig
from gocode.files import dir_size

WORKSPACE_ENV = "GOCODE_WORKSPACE"
ROOT_ENV = "GOCODE_WORKSPACES"
OUTPUT_DIR = "gocode-output"  # kept output of runs, the newest KEEP_OUTPUTS files
KEEP_OUTPUTS = 20
_SAFE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
# Groups for shared workspaces, one per model's workspace: no account, in the range above the
# run users (gocode.run.sandbox.RUN_UIDS, whose ids are also their primary groups).
GROUPS = range(0x70010000, 0x70010000 + 0x10000)
SHARED_MODE = 0o2770  # the group's, setgid (new files and directories stay the group's), no one else


def root(settings: WorkspaceConfig) -> Path:
    """Where workspaces live: the config's ``dir``, else ``$GOCODE_WORKSPACES``, else the user's state dir."""
    if settings.dir:
        return Path(settings.dir).expanduser()
    if env := os.environ.get(ROOT_ENV):
        return Path(env).expanduser()
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "gocode" / "workspaces"


def _name(text: str) -> str:
    """A directory name for a model ref or session id: itself when safe, else cleaned plus a hash."""
    if _SAFE.match(text) and text not in (".", ".."):
        return text
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._-")[:40] or "x"
    return f"{cleaned}-{hashlib.sha256(text.encode()).hexdigest()[:10]}"


def path_for(settings: WorkspaceConfig, model: str | None, session: str | None = None) -> Path:
    """The workspace of a model (``None``: the default one), or of one of its sessions."""
    base = root(settings) / _name(model or "default")
    if settings.scope == "session" and session:
        return base / "sessions" / _name(session)
    return base


@dataclass(frozen=True)
class Usage:
    path: Path
    used: int  # bytes
    cap: int  # bytes

    @property
    def over(self) -> bool:
        return self.used > self.cap

    def message(self) -> str:
        return (
            f"the workspace {self.path} holds {self.used / 1e6:.1f} MB, over its cap of {self.cap / 1e6:.0f} MB "
            "(codeMode.workspace.maxMB): delete files from it (os.Remove in a program) or run `gocode workspace clean`"
        )


def prepare(path: Path, owner: int | None = None) -> Path:
    """Create the workspace (private to its user); with ``owner``, hand it to the run's user."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    if owner is not None:
        # By directory descriptors and lchown: a symlink a program planted (or swapped in for a
        # directory during the walk) is never followed.
        for _dirpath, dirs, files, dir_fd in os.fwalk(path, follow_symlinks=False):
            for name in [*dirs, *files]:
                if os.lstat(name, dir_fd=dir_fd).st_uid != owner:
                    os.chown(name, owner, owner, dir_fd=dir_fd, follow_symlinks=False)
        if path.stat().st_uid != owner:
            os.chown(path, owner, owner)
    return path


def groups_usable() -> bool:
    """Whether the workspace groups are mapped in this user namespace (a rootless container maps few)."""
    try:
        lines = Path("/proc/self/gid_map").read_text().splitlines()
    except OSError:
        return False
    for line in lines:
        inside, _outside, count = (int(x) for x in line.split())
        if inside <= GROUPS.start and GROUPS.stop <= inside + count:
            return True
    return False


def share(path: Path, settings: WorkspaceConfig) -> int:
    """Make ``path`` usable by every run of its model, each a user of its own; returns the
    model's group, which those runs get as their supplementary group (needs root).

    The model's directory (the first beneath the root: a session's workspace shares its model's
    group) gets a group no other workspace under the root has; it and every directory down to
    ``path`` are :data:`SHARED_MODE`. What earlier runs left in ``path`` is made the group's and
    group read-write (a program's ``os.WriteFile(name, b, 0o644)`` gives the group no write).
    """
    base = root(settings)
    base.mkdir(parents=True, exist_ok=True, mode=0o700)
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        model = base / path.relative_to(base).parts[0]
    except (ValueError, IndexError):
        model = path
    gid = _model_group(base, model)
    below = [p for p in reversed(path.parents) if p.is_relative_to(model) and p != model]
    for d in [model, *below, *([path] if path != model else [])]:
        _own(d, gid, directory=True)
    regroup(path, gid)
    return gid


def _model_group(base: Path, model: Path) -> int:
    """The model directory's group, chosen once: one no sibling has, no account's, and
    starting from a hash of the path, so workspaces under two roots rarely meet."""
    st = model.stat()
    if st.st_gid in GROUPS:
        return st.st_gid
    fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # two gocode processes sharing the root choose one at a time
        st = model.stat()
        if st.st_gid in GROUPS:
            return st.st_gid
        taken = set()
        for sibling in base.iterdir():
            with contextlib.suppress(OSError):
                sibling_st = sibling.lstat()
                if stat.S_ISDIR(sibling_st.st_mode) and sibling != model:
                    taken.add(sibling_st.st_gid)
        start = int.from_bytes(hashlib.sha256(str(model.resolve()).encode()).digest()[:4]) % len(GROUPS)
        for i in range(len(GROUPS)):
            gid = GROUPS[(start + i) % len(GROUPS)]
            if gid not in taken and not _is_group(gid):
                os.chown(model, -1, gid)
                os.chmod(model, SHARED_MODE)
                return gid
        raise OSError(f"no free workspace group in {GROUPS.start}-{GROUPS.stop - 1}")
    finally:
        os.close(fd)


def _is_group(gid: int) -> bool:
    try:
        grp.getgrgid(gid)
    except KeyError:
        return False
    return True


def regroup(path: Path, gid: int) -> None:
    """Everything beneath ``path`` the group's and group read-write, without ever following a link.

    By directory descriptors (``os.fwalk``), never by path: a program running meanwhile may swap
    a directory for a symlink, and a path through it would lead outside."""
    for _dirpath, dirs, files, dir_fd in os.fwalk(path, follow_symlinks=False):
        for name in [*dirs, *files]:
            with contextlib.suppress(OSError):  # gone meanwhile (a concurrent run), or a socket
                _own(name, gid, directory=False, dir_fd=dir_fd)


def _own(entry: Path | str, gid: int, directory: bool, dir_fd: int | None = None) -> None:
    """One directory or regular file made the group's: directories :data:`SHARED_MODE`, files
    group read-write (no setuid/setgid bits). Symlinks and special files are left alone."""
    st = os.lstat(entry, dir_fd=dir_fd)
    if not (stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode)) or _shared(st, gid, directory):
        return
    # Checked again on the open file: a program running meanwhile may have swapped the entry
    # for a symlink, which O_NOFOLLOW refuses, so nothing outside is ever changed.
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
    fd = os.open(entry, flags, dir_fd=dir_fd)
    try:
        st = os.fstat(fd)
        if stat.S_ISREG(st.st_mode) and st.st_nlink > 1 and st.st_gid != gid:
            return  # also linked from elsewhere: not the workspace's to give away
        if not (stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode)) or _shared(st, gid, directory):
            return
        if directory and st.st_uid != os.geteuid():
            # gocode's, not a run user's: run users are reused across models, and an owner
            # could open the directory to others.
            os.fchown(fd, os.geteuid(), gid)
        elif st.st_gid != gid:
            os.fchown(fd, -1, gid)
        os.fchmod(fd, _wanted(st, directory))
    finally:
        os.close(fd)


def _wanted(st: os.stat_result, directory: bool) -> int:
    mode = stat.S_IMODE(st.st_mode)
    if directory:  # a workspace directory itself, or one on the way down to it
        return SHARED_MODE
    if stat.S_ISDIR(st.st_mode):
        return mode | 0o2070
    return (mode | 0o060) & ~0o6000


def _shared(st: os.stat_result, gid: int, directory: bool) -> bool:
    owner = st.st_uid == os.geteuid() or not directory
    return owner and st.st_gid == gid and stat.S_IMODE(st.st_mode) == _wanted(st, directory)


def usage(path: Path, settings: WorkspaceConfig) -> Usage:
    return Usage(path, dir_size(path) if path.exists() else 0, settings.max_mb << 20)


def output_file(path: Path, kind: str = "run", suffix: str = ".txt") -> Path:
    """A new file for one run's kept output (``kind`` ``result``: its result() value); the
    oldest of a kind beyond :data:`KEEP_OUTPUTS` are removed."""
    out = path / OUTPUT_DIR
    out.mkdir(exist_ok=True, mode=0o700)
    if path.stat().st_mode & stat.S_ISGID:  # a shared workspace (share): its runs read the files
        os.chmod(out, SHARED_MODE)
    old = sorted(out.glob(f"{kind}-*{suffix}"), key=lambda p: p.stat().st_mtime)
    for p in old[: max(0, len(old) - KEEP_OUTPUTS + 1)]:
        p.unlink(missing_ok=True)
    return out / f"{kind}-{time.strftime('%Y%m%d-%H%M%S')}-{os.urandom(3).hex()}{suffix}"


def listing(settings: WorkspaceConfig) -> list[dict[str, Any]]:
    """Every workspace under the root: its name, path, size and when it last changed."""
    base = root(settings)
    found: list[Path] = []
    if base.is_dir():
        for model in sorted(base.iterdir()):
            if model.is_dir():
                found.append(model)
                sessions = model / "sessions"
                if sessions.is_dir():
                    found.extend(sorted(p for p in sessions.iterdir() if p.is_dir()))
    out = []
    for p in found:
        files = sum(len(f) for _, _, f in os.walk(p))
        rel = p.relative_to(base)
        out.append(
            {
                "name": str(rel).replace(os.sep + "sessions" + os.sep, "/session:"),
                "path": str(p),
                "bytes": dir_size(p),
                "files": files,
                "modified": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(p.stat().st_mtime)),
            }
        )
    return out


def clean(settings: WorkspaceConfig, model: str | None) -> tuple[Path, int]:
    """Empty one model's workspace (its sessions' too); returns it and the bytes freed."""
    path = path_for(settings.model_copy(update={"scope": "model"}), model)
    freed = dir_size(path) if path.exists() else 0
    if path.exists():
        shutil.rmtree(path)
    return path, freed
