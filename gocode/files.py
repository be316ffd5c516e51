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


def dir_size(path: Path) -> int:
    """Bytes used beneath ``path``; every entry counts at least one 4 KiB block (inodes are not free)."""
    total = 0
    for root, dirs, files in os.walk(path, onerror=lambda _e: None):
        for name in files + dirs:
            try:
                st = os.lstat(os.path.join(root, name))
            except OSError:
                continue
            total += max(st.st_blocks * 512, 0 if name in dirs else st.st_size, 4096)
    return total
