"""Output kept whole in the workspace: ``gocode-output/``, made, pruned and written by descriptor.

A program's stdout beyond ``maxOutputBytes`` (``run-*.txt``) and a ``result()`` value too long
for the answer (``result-*.json``) are written here for the next program to read. The directory
sits in the workspace, where programs write what they like: it is opened with ``O_NOFOLLOW``
(a symlink in its place is removed, never followed), its files are listed, measured and removed
through its descriptor, and a new file is made with ``O_CREAT|O_EXCL|O_NOFOLLOW``. So whatever
a program left there (links, dangling links, directories or fifos named like kept files) at most
costs its own model the kept copy, with a note, and nothing outside the workspace is touched.

Kept files are bounded by size as well as number: together at most half the workspace cap,
and a new one never past the cap; the oldest make room for the newest.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import time
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from gocode.config import WorkspaceConfig
from gocode.run import workdir

OUTPUT_DIR = "gocode-output"
KEEP_OUTPUTS = 20  # of each kind
_KEPT = re.compile(r"^(run|result)-[0-9]{8}-[0-9]{6}-[0-9a-f]{6}\.(txt|json)$")
_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass
class KeptFile:
    """A new kept file, open for writing (the caller closes ``file``); at most ``cap`` bytes."""

    file: BinaryIO
    path: Path
    cap: int


def open_kept(
    workspace: Path, settings: WorkspaceConfig, file_cap: int, kind: str = "run", suffix: str = ".txt"
) -> KeptFile | None:
    """A new file for one run's kept output (``kind`` ``result``: its result() value), with room
    made by removing the oldest kept files; None when the workspace has no room left. Raises
    :class:`~gocode.run.workdir.WorkspaceError` when ``gocode-output`` is not a directory."""
    ws = workdir.open_workspace(workspace, settings)
    try:
        out = workdir.open_subdir(ws, OUTPUT_DIR, workspace / OUTPUT_DIR)
        try:
            if os.fstat(ws).st_mode & stat.S_ISGID:  # a shared workspace (workdir.share): its runs read the files
                os.fchmod(out, workdir.SHARED_MODE)
            room = _make_room(out, workdir.usage(workspace, settings), settings, file_cap, kind)
            if room <= 0:
                return None
            name, fd = _create(out, kind, suffix)
            return KeptFile(os.fdopen(fd, "wb"), workspace / OUTPUT_DIR / name, room)
        finally:
            os.close(out)
    finally:
        os.close(ws)


def _make_room(out: int, found: workdir.Usage, settings: WorkspaceConfig, file_cap: int, kind: str) -> int:
    """Remove the oldest kept files until a new one of up to ``file_cap`` bytes fits; its cap."""
    share = (settings.max_mb << 20) // 2
    want = min(file_cap, share)
    files = []  # (mtime, name, bytes, kind)
    with os.scandir(out) as it:
        for entry in it:
            if not _KEPT.match(entry.name) or not entry.is_file(follow_symlinks=False):
                continue  # anything else is the program's: never removed here
            with contextlib.suppress(OSError):
                st = entry.stat(follow_symlinks=False)
                size = max(st.st_blocks * 512, st.st_size, 4096)
                files.append((st.st_mtime, entry.name, size, entry.name.split("-", 1)[0]))
    files.sort()
    held = sum(f[2] for f in files)
    room = found.room
    same = sum(1 for f in files if f[3] == kind)
    for _mtime, name, size, what in files:
        if same < KEEP_OUTPUTS and held + want <= share and room >= want:
            break
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name, dir_fd=out)
        held, room = held - size, room + size
        same -= what == kind
    return min(want, room)


def _create(out: int, kind: str, suffix: str) -> tuple[str, int]:
    for _ in range(8):
        name = f"{kind}-{time.strftime('%Y%m%d-%H%M%S')}-{os.urandom(3).hex()}{suffix}"
        try:
            return name, os.open(name, _NEW, 0o640, dir_fd=out)
        except FileExistsError:
            continue  # taken (perhaps by something a program made): another name
    raise workdir.WorkspaceError(f"no free name for a kept {kind} file in {OUTPUT_DIR}")


def head_and_tail(head_b: bytes, tail_b: bytes, total: int, kept: int, where: str, what: str = "output") -> str:
    """What a model reads of a text kept in a file: its head, a line with its size and the
    file, its tail (pure)."""
    # Whole lines where there are lines: a model reads them more easily than cut ones.
    if (cut := head_b.rfind(b"\n")) > len(head_b) // 2:
        head_b = head_b[: cut + 1]
    if 0 <= (cut := tail_b.find(b"\n")) < len(tail_b) // 2:
        tail_b = tail_b[cut + 1 :]
    head, tail = head_b.decode("utf-8", "replace"), tail_b.decode("utf-8", "replace")
    whole = "kept whole" if kept == total else f"its first {kept} bytes kept (the workspace cap)"
    sep = "" if head.endswith("\n") else "\n"
    return (
        f"{head}{sep}[{what}: {total} bytes in all, {whole} in {where}; "
        f"shown: the first {len(head.encode())} and the last {len(tail.encode())} bytes; "
        "read the file in the next program for the rest]\n"
        f"{tail}"
    )


def kept_label(path: Path, cwd: Path) -> str:
    """How the answer names a kept file: as the program sees it, which starts in ``cwd`` and
    may not be able to reach it by its absolute path."""
    if path.is_relative_to(cwd):
        # The program reads it by the relative name; a person at a shell needs the whole path.
        return f"the file {path.relative_to(cwd)} of the working directory ({path} from a shell)"
    return str(path)
