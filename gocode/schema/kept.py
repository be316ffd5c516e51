"""The Go IR of a tool set, kept on disk so a command that shows tools does not build it again.

Building the IR of a few hundred tools takes seconds (names, doc text, one declaration per
shape); reading it back takes a few tens of milliseconds. An entry is keyed by the tool set
(its digest and the order of its tools, which naming follows) and by a hash of the source of
the modules that build the IR, so a changed tool list or a changed gocode builds afresh. The
entries are pickles under ``<gocode cache>/packages/``, a directory gocode already trusts with
the programs it builds and runs; the newest :data:`MAX_ENTRIES` are kept.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import pickle
import sys
from functools import cache
from pathlib import Path

from gocode.files import replace_file
from gocode.schema.builder import build_package
from gocode.schema.ir import Package
from gocode.toolset import ToolSet

PACKAGES_DIR = "packages"
MAX_ENTRIES = 16

_SOURCES = (Path(__file__).resolve().parent, Path(__file__).resolve().parent.parent / "toolset.py")


@cache
def builder_fingerprint() -> str:
    """A hash of what the IR depends on besides the tools: the source of gocode's schema
    package and tool-set types, and the Python that pickles it."""
    h = hashlib.sha256(f"{sys.version_info[:2]} {pickle.HIGHEST_PROTOCOL}".encode())
    files = sorted(p for src in _SOURCES for p in ([src] if src.is_file() else src.glob("*.py")))
    for path in files:
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def entry_key(toolset: ToolSet) -> str:
    """The key of a tool set's kept entries (its IR here, its search index in gocode.view)."""
    order = [[s.server, [t.name for t in s.tools]] for s in toolset.servers]
    blob = json.dumps([toolset.digest(), order, builder_fingerprint()], separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


def packages_root() -> Path:
    """The directory of the kept entries."""
    from gocode.paths import cache_dir, state_dir

    return (state_dir() or cache_dir()) / PACKAGES_DIR


def package_for(toolset: ToolSet, root: Path | None = None) -> Package:
    """``build_package(toolset)``, read from the kept entry when there is one."""
    path = (root or packages_root()) / f"{entry_key(toolset)}.pickle"
    # Whatever a missing, torn or foreign entry raises while read, the answer is to build.
    with contextlib.suppress(Exception):
        kept = pickle.loads(path.read_bytes())  # gocode's own cache: see the module doc
        if isinstance(kept, Package) and kept.digest == toolset.digest():
            with contextlib.suppress(OSError):
                os.utime(path)  # recently used: kept longest
            return kept
    package = build_package(toolset)
    _keep(path, package)
    return package


def _keep(path: Path, package: Package) -> None:
    with contextlib.suppress(OSError):  # a cache that cannot be written costs a build, nothing more
        path.parent.mkdir(parents=True, exist_ok=True)
        replace_file(path, pickle.dumps(package, protocol=pickle.HIGHEST_PROTOCOL))
        entries = sorted(path.parent.glob("*.pickle"), key=lambda p: p.stat().st_mtime, reverse=True)
        for old in entries[MAX_ENTRIES:]:
            with contextlib.suppress(OSError):
                old.unlink()
