"""Atomic file writes, shared by the renderer, the Go parser helper and the sandbox."""

from __future__ import annotations

from pathlib import Path


def write_file(path: Path, text: str) -> None:
    """Write atomically, so a concurrent reader never sees half a file."""
    tmp = path.with_name(f".{path.name}.{id(text):x}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
