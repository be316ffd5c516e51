"""Compile the whole standard library into the build cache, in the background.

Run as a script (``python -I stdbuild.py GO MODCACHE_DIR MARK``) by the module cache after its
first build, detached, so the first call does not wait for the ~300 standard packages no
program has imported yet. Direct builds list the whole standard library once this is done
(``MARK`` exists); before it, they list what the runtime, the auto-imported packages and the
tool set need, and ``go build`` compiles anything else a program imports. Only the standard
library is imported here: running it costs no import of gocode.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import subprocess
import sys
from pathlib import Path


def build_std(go: str, ws_dir: Path, mark: Path) -> int:
    """List the standard library's export data (compiling it); write ``mark`` when it is all there."""
    with open(mark.with_name(mark.name + ".lock"), "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return 0  # another process is already at it
        if mark.is_file():
            return 0
        with contextlib.suppress(OSError):
            os.nice(19)  # behind anything a user waits for
        proc = subprocess.run(
            # The module cache's build flags (LIST_FLAGS there): the same build-cache entries.
            [go, "list", "-trimpath", "-buildvcs=false", "-export", "-deps", "-f", "{{.ImportPath}}", "std"],
            cwd=ws_dir,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        if proc.returncode != 0:
            return 1
        tmp = mark.with_name(f".{mark.name}-{os.getpid()}")
        tmp.write_text("ok\n")
        tmp.replace(mark)
        return 0


if __name__ == "__main__":
    sys.exit(build_std(sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])))
