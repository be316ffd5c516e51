"""The type check of the model's code: the Go-side helper (``go_templates/gofix``, Go's own parser
and type checker), kept running. Not ``go fix``: the helper prepares and checks a program.

One :class:`GoFix` per module cache. The helper is built once from the shipped source (cached
by the source's hash, next to the module cache's other binaries) and started on first use; it
answers one JSON line per request, in order. Calls are serialised by a thread lock and made
from a worker thread, so any event loop (or none) may call, and concurrent callers queue.
A helper that died is started again on the next call.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import select
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from gocode.errors import CheckTimeout, ToolchainError
from gocode.files import write_file
from gocode.resources import package_sources

# One request is milliseconds; anything near this is code built to stall the checker.
CALL_TIMEOUT = 30.0


def sources() -> dict[str, str]:
    return package_sources("gofix")


KEEP_VERSIONS = 4  # other gocode versions sharing the cache may still use theirs


def _prune(d: Path, keep: Path) -> None:
    """Remove all but the newest helper versions (binaries with their source directories)."""
    old = sorted((p for p in d.glob("gofix-*") if p != keep), key=lambda p: p.stat().st_mtime, reverse=True)
    for binary in old[KEEP_VERSIONS - 1 :]:
        binary.unlink(missing_ok=True)
        shutil.rmtree(d / ("src" + binary.name.removeprefix("gofix-")), ignore_errors=True)


class GoFix:
    """A running helper for one module cache directory; safe to share across threads and event loops."""

    def __init__(self, go: str, ws_dir: Path, env: dict[str, str]) -> None:
        self.go, self.ws_dir, self.env = go, ws_dir, env
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._binary: Path | None = None

    # --- building ------------------------------------------------------------------------

    def source_dir(self) -> Path:
        """The helper's package in the module cache (written once per version of its source), so a
        warm-up can compile it in the same ``go build`` as other packages."""
        files = sources()
        digest = hashlib.sha256(json.dumps(files, sort_keys=True).encode()).hexdigest()[:16]
        src = self.ws_dir / "gofix" / f"src{digest}"
        if not all((src / name).is_file() for name in files):
            src.mkdir(parents=True, exist_ok=True)
            for name, text in files.items():
                write_file(src / name, text)
        return src

    def binary(self) -> Path:
        """The helper, built on first need (about 2 s with a warm build cache)."""
        if self._binary is not None and self._binary.is_file():
            return self._binary
        src = self.source_dir()
        digest = src.name.removeprefix("src")
        binary = self.ws_dir / "gofix" / f"gofix-{digest}"
        if not binary.is_file():
            tmp = binary.with_name(f".{binary.name}-{os.getpid()}-{threading.get_ident()}")
            proc = subprocess.run(
                [self.go, "build", "-trimpath", "-buildvcs=false", "-o", str(tmp), f"./gofix/src{digest}"],
                cwd=self.ws_dir, env=self.env, capture_output=True, text=True,
            )  # fmt: skip
            if proc.returncode != 0:
                raise ToolchainError(f"building gocode's Go parser helper failed:\n{proc.stderr or proc.stdout}")
            tmp.replace(binary)
            with contextlib.suppress(OSError):  # another process may be pruning too
                _prune(binary.parent, keep=binary)
        self._binary = binary
        return binary

    # --- calls ---------------------------------------------------------------------------

    def call_sync(self, request: dict[str, Any], timeout: float | None = None) -> dict[str, Any]:
        """The helper's answer to ``request``. ``timeout``: the caller's own bound (its run's
        build budget), the queue behind other callers included; past it the helper is stopped
        as past CALL_TIMEOUT, and :class:`TimeoutError` raised."""
        line = (json.dumps(request) + "\n").encode()
        end = None if timeout is None else time.monotonic() + timeout
        if not self._lock.acquire(timeout=-1 if timeout is None else timeout):
            raise TimeoutError(f"the type check waited {timeout:g} s for the helper")
        try:
            for attempt in (1, 2):
                proc = self._started()
                assert proc.stdin is not None and proc.stdout is not None
                wait = CALL_TIMEOUT if end is None else max(min(CALL_TIMEOUT, end - time.monotonic()), 0)
                answer: bytes | None
                try:
                    proc.stdin.write(line)
                    proc.stdin.flush()
                    ready, _, _ = select.select([proc.stdout], [], [], wait)
                    answer = proc.stdout.readline() if ready else None
                except (BrokenPipeError, OSError):
                    answer = b""
                if answer is None:
                    # Hostile or pathological code must not hold every other caller.
                    self._stop()
                    if wait < CALL_TIMEOUT:
                        raise TimeoutError(f"the type check did not end within {timeout:g} s")
                    raise CheckTimeout(f"checking the code took longer than {CALL_TIMEOUT:g} s")
                if answer:
                    doc: dict[str, Any] = json.loads(answer)
                    if "fatal" in doc:
                        raise ToolchainError(f"gocode's Go parser helper failed: {doc['fatal']}")
                    return doc
                self._stop()
                if attempt == 2:
                    raise ToolchainError("gocode's Go parser helper exited unexpectedly (twice in a row)")
        finally:
            self._lock.release()
        raise AssertionError("unreachable")

    async def call(self, request: dict[str, Any], timeout: float | None = None) -> dict[str, Any]:
        return await asyncio.to_thread(self.call_sync, request, timeout)

    def _started(self) -> subprocess.Popen[bytes]:
        if self._proc is None or self._proc.poll() is not None:
            self._proc = subprocess.Popen(
                [str(self.binary())], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                env={"PATH": os.environ.get("PATH", ""), "GOGC": "200"}, start_new_session=True,
            )  # fmt: skip
        return self._proc

    def _stop(self) -> None:
        if self._proc is not None:
            self._proc.kill()
            self._proc.wait()
            self._proc = None

    def close(self) -> None:
        """Stop the helper (it is also stopped when its stdin closes with this process)."""
        with self._lock:
            self._stop()
