"""The ``h1:`` hash of a module zip, as Go's checksum database records it.

The spec (golang.org/x/mod/sumdb/dirhash, ``Hash1``): for every file, sorted by name, a line
``"<sha256 hex>  <name>\\n"``; the hash is the SHA-256 of those lines, base64-encoded, after ``h1:``.
A name holding a newline cannot be summed that way and is refused, as Go refuses it.
"""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path

CHUNK = 1 << 20


def hash_lines(files: dict[str, str]) -> str:
    """``h1:`` over ``{name: sha256 hex}``."""
    summary = hashlib.sha256()
    for name in sorted(files):
        if "\n" in name:
            raise ValueError(f"a file name holds a newline: {name!r}")
        summary.update(f"{files[name]}  {name}\n".encode())
    return "h1:" + base64.b64encode(summary.digest()).decode()


def hash_zip(path: Path) -> str:
    """``h1:`` of the files in the zip at ``path`` (directory entries are not files and are left out)."""
    files: dict[str, str] = {}
    with zipfile.ZipFile(path) as zf:
        for info in zf.infolist():
            if info.is_dir():
                continue
            if info.filename in files:
                raise ValueError(f"the zip holds {info.filename!r} twice")
            digest = hashlib.sha256()
            with zf.open(info) as fh:
                while chunk := fh.read(CHUNK):
                    digest.update(chunk)
            files[info.filename] = digest.hexdigest()
    return hash_lines(files)
