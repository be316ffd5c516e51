"""File helpers shared across stages: atomic writes (the renderer, the Go parser helper, the
sandbox) and disk use (the runner's scratch limit, the workspace cap)."""

from __future__ import annotations

import os
from pathlib import Path


def write_file(path: Path, text: str) -> None:
    """Write atomically, so a concurrent reader never sees half a file."""
    tmp = path.with_name(f".{path.name}.{id(text):x}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def dir_size(path: Path | str, dir_fd: int | None = None) -> int:
    """Bytes used beneath ``path`` (relative to ``dir_fd`` when given); every entry counts at
    least one 4 KiB block (inodes are not free).

    By directory descriptors (``os.fwalk``): the directories measured may be a program's, which
    can swap one for a symlink during the walk; a path through it would measure elsewhere."""
    total = 0
    for _root, dirs, files, fd in os.fwalk(path, follow_symlinks=False, onerror=lambda _e: None, dir_fd=dir_fd):
        for name, is_dir in [*((f, False) for f in files), *((d, True) for d in dirs)]:
            try:
                st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except OSError:
                continue
            total += max(st.st_blocks * 512, 0 if is_dir else st.st_size, 4096)
    return total
