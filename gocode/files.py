"""File helpers shared across stages: atomic writes (the renderer, the Go parser helper, the
sandbox, the caches and kept files) and disk use (the runner's scratch limit, the workspace cap)."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

# How deep a walk of a program's directory goes: one descriptor per level stays open (and the
# walk is a loop, not a recursion), so a program's deep tree costs the controller a bounded number
# of descriptors. A directory deeper down is not walked; it counts as TOO_DEEP bytes.
MAX_DEPTH = 128
TOO_DEEP = 1 << 40
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def write_file(path: Path, text: str) -> None:
    """Write atomically, so a concurrent reader never sees half a file."""
    tmp = path.with_name(f".{path.name}.{id(text):x}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def replace_file(path: Path, data: bytes, prefix: str = ".tmp-") -> None:
    """Write ``data`` to a new file beside ``path`` (mode 0600) and rename it over ``path``: a
    reader sees the old file or the new one, never part of one, and a failed write leaves none."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=prefix)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def walk(path: Path | str, dir_fd: int | None = None) -> Iterator[tuple[int, str, os.stat_result, bool]]:
    """Every entry beneath the directory ``path`` (relative to ``dir_fd`` when given), as
    ``(parent descriptor, name, lstat, too_deep)``; ``too_deep``: a directory past
    :data:`MAX_DEPTH`, not walked.

    By directory descriptors, each opened with ``O_NOFOLLOW``: the directories walked may be a
    program's, which can swap one for a symlink meanwhile; a path through it would lead
    elsewhere. ``path`` itself must be a directory, not a symlink (else nothing is yielded)."""
    try:
        top = os.open(path, _DIR, dir_fd=dir_fd)
    except OSError:
        return
    stack: list[tuple[int, Iterator[os.DirEntry[str]]]] = []
    try:
        stack.append((top, os.scandir(top)))
    except OSError:
        os.close(top)
        return
    try:
        while stack:
            fd, entries = stack[-1]
            try:
                entry = next(entries, None)
            except OSError:
                entry = None
            if entry is None:
                stack.pop()
                os.close(fd)
                continue
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue  # gone meanwhile
            if not stat.S_ISDIR(st.st_mode):
                yield fd, entry.name, st, False
                continue
            deep = len(stack) >= MAX_DEPTH
            yield fd, entry.name, st, deep
            if deep:
                continue
            try:
                child = os.open(entry.name, _DIR, dir_fd=fd)
            except OSError:
                continue  # swapped for a link or a file meanwhile, or gone: not followed
            try:
                stack.append((child, os.scandir(child)))
            except OSError:
                os.close(child)
    finally:
        for fd, _entries in stack:
            os.close(fd)


def dir_size(path: Path | str, dir_fd: int | None = None) -> int:
    """Bytes used beneath ``path`` (relative to ``dir_fd`` when given); every entry counts at
    least one 4 KiB block (inodes are not free), a directory too deep to walk :data:`TOO_DEEP`."""
    total = 0
    for _fd, _name, st, deep in walk(path, dir_fd):
        is_dir = stat.S_ISDIR(st.st_mode)
        total += TOO_DEEP if deep else max(st.st_blocks * 512, 0 if is_dir else st.st_size, 4096)
    return total
