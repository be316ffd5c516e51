"""The workspace: a directory per model (or per client session) that programs keep files in.

Every run starts in it (its working directory, also ``$GOCODE_WORKSPACE``), so what one program
writes the next can read. Under the sandbox it is the one directory besides the run's scratch
that the program may write, granted to the launcher as a Landlock rule on the directory itself:
``..`` and symlinks that lead out of it reach nothing (the kernel checks the resolved path). It
is size-capped (``codeMode.workspace.maxMB``): a run that finds it over the cap is refused, and
a run that leaves it over the cap is told so. Output beyond ``maxOutputBytes`` is kept here too
(:mod:`gocode.run.kept`), so a model can read what did not fit in its answer.

When programs run as users of their own (gocode as root), several runs of one model may use
the workspace at once, each as a different user. The model's workspace then belongs to a group
of its own (:func:`share`): the directory is that group's, setgid, group-writable and closed to
everyone else; every run of the model gets the group as its one supplementary group and umask
007. Another model's runs are kept out twice: their Landlock rule names only their own
workspace, and they are not in this group.

Everything beneath a workspace is a program's to change, at any moment: gocode never follows a
path through it. The directories down to the workspace are opened one by one with
``O_NOFOLLOW`` (:func:`open_workspace`, which replaces a symlink planted on the way), and what
lies inside is walked, changed, created and removed by directory descriptors only.
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
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gocode.config import WorkspaceConfig
from gocode.errors import WorkspaceError
from gocode.files import MAX_DEPTH, TOO_DEEP, dir_size, walk

WORKSPACE_ENV = "GOCODE_WORKSPACE"
ROOT_ENV = "GOCODE_WORKSPACES"
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
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


def owner(settings: WorkspaceConfig, source: str | None) -> str:
    """Whose workspaces these are: the config's ``codeMode.workspace.id``, else a short hash of
    the config file's resolved path, else (a config built in code) of the working directory.
    Two projects whose configs name the same model so never share a workspace."""
    if settings.id:
        return settings.id
    where = Path(source) if source and Path(source).is_file() else Path.cwd()
    return hashlib.sha256(str(where.resolve()).encode()).hexdigest()[:10]


def path_for(settings: WorkspaceConfig, model: str | None, session: str | None = None, key: str | None = None) -> Path:
    """The workspace of a model (``None``: the default one), or of one of its sessions, for the
    config ``key`` names (:func:`owner`); without ``key``, the unkeyed ``DIR/<model>``."""
    name = _name(model or "default")
    base = root(settings) / (f"{name}--{key}" if key else name)
    if settings.scope == "session" and session:
        return base / "sessions" / _name(session)
    return base


def open_workspace(path: Path, settings: WorkspaceConfig) -> int:
    """A descriptor of the workspace ``path`` (under the root), made if missing, each directory
    on the way opened with ``O_NOFOLLOW``: a symlink a program planted there (``sessions``, in a
    model's workspace) is removed and replaced by a directory, never followed. The caller closes it."""
    base = root(settings)
    base.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        parts = path.relative_to(base).parts
    except ValueError:
        raise WorkspaceError(f"the workspace {path} is not under the workspaces' root {base}") from None
    fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in parts:
            child = open_subdir(fd, part, path)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_subdir(parent: int, name: str, where: Path, mode: int = 0o700) -> int:
    """The directory ``name`` in ``parent`` (made if missing) by descriptor, never through a
    symlink: a symlink there (dangling or not) is removed and a directory made instead; anything
    else not a directory raises :class:`WorkspaceError`."""
    for _ in range(3):  # a program may swap the entry meanwhile: a few tries, then refuse
        try:
            return os.open(name, _DIR_FLAGS, dir_fd=parent)
        except FileNotFoundError:
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, mode, dir_fd=parent)
        except OSError:
            try:
                st = os.stat(name, dir_fd=parent, follow_symlinks=False)
            except FileNotFoundError:
                continue
            if stat.S_ISDIR(st.st_mode):
                raise  # a directory that cannot be opened (its mode): the error says why
            if not stat.S_ISLNK(st.st_mode):
                raise WorkspaceError(
                    f"{where}: {name} is {_kind(st.st_mode)}, not a directory; remove it (os.Remove in a program) "
                    "or run `gocode workspace clean`"
                ) from None
            with contextlib.suppress(FileNotFoundError):
                os.unlink(name, dir_fd=parent)  # the link itself, not what it points at
    raise WorkspaceError(f"{where}: {name} keeps changing while gocode opens it; try again")


def _kind(mode: int) -> str:
    for test, what in (
        (stat.S_ISREG, "a file"),
        (stat.S_ISFIFO, "a fifo"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a device"),
        (stat.S_ISBLK, "a device"),
        (stat.S_ISLNK, "a symlink"),
    ):
        if test(mode):
            return what
    return "not a directory"


@dataclass(frozen=True)
class Usage:
    path: Path
    used: int  # bytes
    cap: int  # bytes
    total: int = 0  # bytes of the model's workspaces together (its sessions'), when scoped by session
    total_cap: int = 0  # 0: no cap beyond ``cap`` (one workspace per model)

    @property
    def over(self) -> bool:
        return self.used > self.cap or (self.total_cap > 0 and self.total > self.total_cap)

    @property
    def room(self) -> int:
        """Bytes that may still be written before a cap is reached (negative: over it)."""
        room = self.cap - self.used
        return min(room, self.total_cap - self.total) if self.total_cap else room

    def grew(self, before: Usage) -> bool:
        return self.used > before.used or self.total > before.total

    def message(self) -> str:
        if self.used >= TOO_DEEP:
            held = f"the workspace {self.path} has directories nested more than {MAX_DEPTH} deep, too deep to measure"
        elif self.used > self.cap:
            held = f"the workspace {self.path} holds {self.used / 1e6:.1f} MB, over its cap of {self.cap / 1e6:.0f} MB "
            held += "(codeMode.workspace.maxMB)"
        else:
            held = (
                f"the workspaces of this model's sessions hold {self.total / 1e6:.1f} MB together, over their cap of "
                f"{self.total_cap / 1e6:.0f} MB (codeMode.workspace.totalMB)"
            )
        return (
            f"{held}: delete files from it (os.Remove in a program: a run may shrink a workspace over its cap, "
            "not grow it) or run `gocode workspace clean`"
        )


def prepare(path: Path, settings: WorkspaceConfig, owner: int | None = None) -> Path:
    """Create the workspace (private to its user); with ``owner``, hand it to the run's user."""
    fd = open_workspace(path, settings)
    try:
        if owner is not None:
            # By directory descriptors and lchown: a symlink a program planted (or swapped in for a
            # directory during the walk) is never followed.
            for dir_fd, name, st, _deep in walk(".", fd):
                if st.st_uid != owner:
                    with contextlib.suppress(FileNotFoundError):
                        os.chown(name, owner, owner, dir_fd=dir_fd, follow_symlinks=False)
            if os.fstat(fd).st_uid != owner:
                os.fchown(fd, owner, owner)
    finally:
        os.close(fd)
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
    os.close(open_workspace(path, settings))  # made, with nothing but directories on the way
    try:
        model = base / path.relative_to(base).parts[0]
    except (ValueError, IndexError):
        model = path
    gid = _model_group(base, model)
    fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in path.relative_to(base).parts:
            child = open_subdir(fd, part, path)
            os.close(fd)
            fd = child
            _own_fd(fd, gid, directory=True)
        regroup(path, gid, dir_fd=fd)
    finally:
        os.close(fd)
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


def regroup(path: Path, gid: int, dir_fd: int | None = None) -> None:
    """Everything beneath ``path`` (or the directory ``dir_fd``) the group's and group
    read-write, without ever following a link.

    By directory descriptors (:func:`gocode.files.walk`), never by path: a program running
    meanwhile may swap a directory for a symlink, and a path through it would lead outside."""
    top: Path | str = "." if dir_fd is not None else path
    for fd, name, _st, _deep in walk(top, dir_fd):
        with contextlib.suppress(OSError):  # gone meanwhile (a concurrent run), or a socket
            _own(name, gid, directory=False, dir_fd=fd)


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
        _own_fd(fd, gid, directory)
    finally:
        os.close(fd)


def _own_fd(fd: int, gid: int, directory: bool) -> None:
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
    """How full the workspace is; with ``scope: session``, its model's workspaces together too."""
    used = dir_size(path) if path.is_dir() else 0
    base = root(settings)
    model = base / path.relative_to(base).parts[0] if path.is_relative_to(base) and path != base else path
    if model == path:  # one workspace per model: maxMB is its cap
        return Usage(path, used, settings.max_mb << 20)
    total = dir_size(model) if model.is_dir() else 0
    return Usage(path, used, settings.max_mb << 20, total, settings.total_cap)


def listing(settings: WorkspaceConfig) -> list[dict[str, Any]]:
    """Every workspace under the root: its name, path, size and when it last changed.

    Entries are taken as they are (``lstat``): a symlink a program planted is no workspace."""
    base = root(settings)
    found: list[Path] = []
    for model in _subdirs(base):
        found.append(model)
        found.extend(_subdirs(model / "sessions") if "sessions" in {p.name for p in _subdirs(model)} else [])
    out = []
    for p in found:
        files = sum(not stat.S_ISDIR(st.st_mode) for _, _, st, _ in walk(p))
        rel = p.relative_to(base)
        out.append(
            {
                "name": str(rel).replace(os.sep + "sessions" + os.sep, "/session:"),
                "path": str(p),
                "bytes": dir_size(p),
                "files": files,
                "modified": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(p.lstat().st_mtime)),
            }
        )
    return out


def _subdirs(path: Path) -> list[Path]:
    try:
        with os.scandir(path) as it:
            return sorted(Path(e.path) for e in it if e.is_dir(follow_symlinks=False))
    except OSError:
        return []


def clean(settings: WorkspaceConfig, model: str | None, key: str | None = None) -> tuple[Path, int]:
    """Empty one model's workspace (its sessions' too); returns it and the bytes freed.

    ``shutil.rmtree`` removes by directory descriptors and never follows a link."""
    path = path_for(settings.model_copy(update={"scope": "model"}), model, key=key)
    if not path.is_dir() or path.is_symlink():
        return path, 0
    freed = dir_size(path)
    try:
        shutil.rmtree(path)
    except RecursionError:  # a tree deeper than Python recurses: rm walks it without following links
        subprocess.run(["rm", "-rf", "--", str(path)], check=True)
    return path, freed


def ready(path: Path, settings: WorkspaceConfig) -> Usage:
    """The prepare step of a run in ``path``: the workspace made (an ``OSError`` when it cannot
    be) and what it holds before the run. A workspace over its cap still runs programs, which
    may shrink it but not grow it: how a model deletes files to get out."""
    prepare(path, settings)
    return usage(path, settings)
