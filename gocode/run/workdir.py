"""The workspace: a directory per model (or per client session) that programs keep files in.

Every run starts in it (its working directory, also ``$GOCODE_WORKSPACE``), so what one program
writes the next can read. Under the sandbox it is the one directory besides the run's scratch
that the program may write, granted to the launcher as a Landlock rule on the directory itself:
``..`` and symlinks that lead out of it reach nothing (the kernel checks the resolved path). It
is size-capped (``codeMode.workspace.maxMB``): a run that finds it over the cap is refused, and
a run that leaves it over the cap is told so. Output beyond ``maxOutputBytes`` is kept here too
(:data:`OUTPUT_DIR`), so a model can read what did not fit in its answer.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
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


class WorkspaceFull(Exception):
    """The workspace is over its cap."""


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
        # lchown and a walk that does not follow links: a symlink a program planted is never followed.
        for dirpath, dirs, files in os.walk(path):
            for name in [*dirs, *files]:
                entry = os.path.join(dirpath, name)
                if os.lstat(entry).st_uid != owner:
                    os.lchown(entry, owner, owner)
        if path.stat().st_uid != owner:
            os.chown(path, owner, owner)
    return path


def usage(path: Path, settings: WorkspaceConfig) -> Usage:
    return Usage(path, dir_size(path) if path.exists() else 0, settings.max_mb << 20)


def output_file(path: Path) -> Path:
    """A new file for one run's kept output; the oldest beyond :data:`KEEP_OUTPUTS` are removed."""
    out = path / OUTPUT_DIR
    out.mkdir(exist_ok=True, mode=0o700)
    old = sorted(out.glob("run-*.txt"), key=lambda p: p.stat().st_mtime)
    for p in old[: max(0, len(old) - KEEP_OUTPUTS + 1)]:
        p.unlink(missing_ok=True)
    return out / f"run-{time.strftime('%Y%m%d-%H%M%S')}-{os.urandom(3).hex()}.txt"


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
