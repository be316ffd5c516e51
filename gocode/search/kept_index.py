"""A tool set's search index, kept on disk beside its kept Go IR, so a command that searches does
not build it again.

Building BM25's index over a thousand tools takes about half a second (splitting names,
stemming, finding the words that name servers); opening a kept one takes milliseconds. An entry
is a directory ``<gocode cache>/packages/<key>.index/`` holding tantivy's files and a pickle of
what else the index computed per tool; its key covers the tool set (as the kept IR's does:
:func:`gocode.schema.kept.entry_key`) and a hash of the source of gocode's view and schema
modules, tantivy's version and the Python that pickles it, so a changed listing or a changed
gocode builds afresh. An entry is written whole into a temporary directory and renamed into
place, so a reader never sees half of one; a missing, torn or foreign entry is built again. The
newest :data:`MAX_ENTRIES` are kept.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
import shutil
import tempfile
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

from gocode.schema import kept
from gocode.toolset import ToolSet

T = TypeVar("T")

SUFFIX = ".index"
STATE_FILE = "state.pickle"
MAX_ENTRIES = 16

# How tools are indexed (this package) and what the model view says of them (gocode/view).
_SOURCES = (Path(__file__).resolve().parent, Path(__file__).resolve().parent.parent / "view")


@cache
def index_fingerprint() -> str:
    """A hash of what the index depends on besides the tools: the source of gocode's search
    and view packages (how tools are indexed) and of its schema package (their Go names), tantivy's
    version (the index format) and the Python that pickles the rest."""
    import tantivy

    h = hashlib.sha256(f"{kept.builder_fingerprint()} {getattr(tantivy, '__version__', '')}".encode())
    for path in sorted(p for d in _SOURCES for p in d.glob("*.py")):
        h.update(f"{path.parent.name}/{path.name}".encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def entry_dir(toolset: ToolSet, root: Path | None = None) -> Path:
    """Where the search index of ``toolset`` is kept (it may not be there yet)."""
    key = hashlib.sha256(f"{kept.entry_key(toolset)} {index_fingerprint()}".encode()).hexdigest()[:32]
    return (root or kept.packages_root()) / f"{key}{SUFFIX}"


def load_or_build(
    directory: Path,
    build: Callable[[str | None], T],
    reopen: Callable[[str, dict[str, Any]], T],
    state: Callable[[T], dict[str, Any]],
) -> T:
    """The index kept in ``directory``, reopened by ``reopen(directory, state)``; else
    ``build(path)`` writes a new one into a fresh directory (``state(index)``, the part tantivy
    does not hold, is pickled beside it) that replaces the kept one. When the cache cannot be
    written the index is built in memory (``build(None)``)."""
    # Whatever a missing, torn or foreign entry raises while read, the answer is to build.
    with contextlib.suppress(Exception):
        saved = pickle.loads((directory / STATE_FILE).read_bytes())  # gocode's own cache: see the module doc
        if isinstance(saved, dict):
            index = reopen(str(directory), saved)
            with contextlib.suppress(OSError):
                os.utime(directory)  # recently used: kept longest
            return index
    try:
        directory.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=directory.parent, prefix=".tmp-"))
    except OSError:  # a cache that cannot be written costs a build each time, nothing more
        return build(None)
    try:
        index = build(str(tmp))
        (tmp / STATE_FILE).write_bytes(pickle.dumps(state(index), protocol=pickle.HIGHEST_PROTOCOL))
        _replace(tmp, directory)
    except Exception:  # a full or read-only disk: built in memory instead
        shutil.rmtree(tmp, ignore_errors=True)
        return build(None)
    _prune(directory.parent)
    # Read back from where it now lives, not from the temporary directory it was written in
    # (unless another process pruned it meanwhile).
    with contextlib.suppress(Exception):
        return reopen(str(directory), state(index))
    return build(None)


def _replace(tmp: Path, directory: Path) -> None:
    """Move the new entry into place; one another process kept meanwhile (the same index, by
    its key) or a torn one is removed first."""
    try:
        os.rename(tmp, directory)
    except OSError:
        shutil.rmtree(directory, ignore_errors=True)
        try:
            os.rename(tmp, directory)
        except OSError:
            shutil.rmtree(tmp, ignore_errors=True)
            if not (directory / STATE_FILE).is_file():
                raise


def _prune(root: Path) -> None:
    with contextlib.suppress(OSError):
        entries = sorted(root.glob(f"*{SUFFIX}"), key=lambda p: p.stat().st_mtime, reverse=True)
        for old in entries[MAX_ENTRIES:]:
            shutil.rmtree(old, ignore_errors=True)
