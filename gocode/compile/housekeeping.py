"""Keeping the cache directory bounded: what is in it, what may go, and removing it.

What gocode leaves in its cache (``gocode.compile.modcache.cache_dir()``) and temp directory, and what
housekeeping does with each:

- ``ws-<key>/bin/<hash>``: built programs, reused when the same code meets the same tool set.
  Least recently used first once the cache is over its size, and any unused for longer than
  the maximum age. Using one touches it (the module cache does, on a cache hit).
- ``ws-<key>/`` of another gocode version or layout: removed whole once unused for the
  maximum age (a live controller touches its module cache's ``.used`` file, see
  :func:`mark_used`), or sooner, least recently used first, when removing binaries alone does
  not get the cache under its size.
- ``ws-<key>/tools/t<digest>/``: the bindings of one tool set; removed when unused for the
  maximum age (never the current one of a live controller, which marks it used).
- ``ws-<key>/runs/r<id>/`` and ``$TMPDIR/gocode-run-*/``: per-run directories, removed after
  every run; these are leftovers of killed processes, removed after the grace period.
- ``search-vectors/*.npy``: a tool set's vectors for search by meaning, and those of queries
  asked before (gocode.search.semantic); removed when unused for the maximum age (loading one
  touches it).
- ``search-models/*``: the search models' graphs as onnxruntime optimised them, one per model,
  onnxruntime version and machine (gocode.search.semantic); removed when unused for the maximum
  age (loading one touches it), so those of an older onnxruntime go.
- ``models/``: the search models, fetched by the warm-up: reported, never pruned.
- ``go-build/??/*``: Go's build cache (``GOCACHE``). Go trims it only by age (five days, once
  a day) and never by size, and every new tool set adds to it, so it gets its own bounds: files
  unused for the maximum age go, then least recently used ones while it is over its size
  (``$GOCODE_GOCACHE_MAX_SIZE``, default 1 GiB; Go refreshes a file's time when it uses it,
  at most hourly). Never a file an importcfg of a module cache names (the standard library's and
  each tool set's export data that direct builds link against). A missing entry only costs Go
  a rebuild.
- ``gomod/`` (the module cache, needed offline): reported, never pruned.
- ``templates/``: the Go templates compiled by jinja2 (gocode.program.render), one small file
  per template, rewritten when its source changes: never pruned.

Nothing used within the grace period (default 1 h) is removed, nor a module cache whose lock is
held (warm-up under way), nor the module cache of the running gocode. A read-only cache is
reported and left alone. :func:`plan` is pure; :func:`scan` and :func:`remove` do the I/O.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shutil
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from gocode.paths import OPTIMIZED_MODELS_DIR, VECTORS_DIR, state_dir

Kind = Literal["binary", "module-cache", "bindings", "run-dir", "vectors", "search-model", "go-build"]

DEFAULT_MAX_BYTES = 2 << 30
DEFAULT_GOCACHE_MAX_BYTES = 1 << 30
GOCACHE_MAX_SIZE_ENV = "GOCODE_GOCACHE_MAX_SIZE"
DEFAULT_MAX_AGE_S = 14 * 86400.0
DEFAULT_GRACE_S = 3600.0
MAX_SIZE_ENV = "GOCODE_CACHE_MAX_SIZE"
MAX_AGE_ENV = "GOCODE_CACHE_MAX_AGE"
USED_MARK = ".used"
RUN_DIR_PREFIX = "gocode-run-"


@dataclass(frozen=True)
class Entry:
    """One thing housekeeping may remove, as a unit."""

    path: Path
    kind: Kind
    size: int
    last_used: float  # epoch seconds
    locked: bool = False  # in use right now (a held lock): never removed

    def as_json(self, now: float) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "kind": self.kind,
            "bytes": self.size,
            "idleSeconds": round(max(0.0, now - self.last_used)),
        }


@dataclass(frozen=True)
class Policy:
    """The bounds: total size of the removable entries, age, and the grace period."""

    max_bytes: int | None = DEFAULT_MAX_BYTES
    max_age_s: float | None = DEFAULT_MAX_AGE_S
    grace_s: float = DEFAULT_GRACE_S
    gocache_max_bytes: int | None = DEFAULT_GOCACHE_MAX_BYTES  # go-build/, counted apart

    @classmethod
    def from_env(cls, environ: dict[str, str] | os._Environ[str] | None = None) -> Policy:
        env = os.environ if environ is None else environ
        size, age, gocache = env.get(MAX_SIZE_ENV), env.get(MAX_AGE_ENV), env.get(GOCACHE_MAX_SIZE_ENV)
        return cls(
            max_bytes=parse_size(size) if size else DEFAULT_MAX_BYTES,
            max_age_s=parse_age(age) if age else DEFAULT_MAX_AGE_S,
            gocache_max_bytes=parse_size(gocache) if gocache else DEFAULT_GOCACHE_MAX_BYTES,
        )


_UNITS = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
_AGE_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_size(text: str) -> int:
    """``500M``, ``2G``, ``1.5GiB``, ``1048576`` → bytes; raises ValueError."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*", text.lower())
    if not m:
        raise ValueError(f"not a size: {text!r} (write e.g. 500M or 2G)")
    return int(float(m[1]) * _UNITS[m[2]])


def parse_age(text: str) -> float:
    """``7d``, ``12h``, ``30m``, ``90s``, ``2w`` → seconds; raises ValueError."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*", text.lower())
    if not m:
        raise ValueError(f"not an age: {text!r} (write e.g. 7d, 12h or 30m)")
    return float(m[1]) * _AGE_UNITS[m[2]]


def tree_size(path: Path) -> int:
    if path.is_file() or path.is_symlink():
        with contextlib.suppress(OSError):
            return path.lstat().st_blocks * 512
        return 0
    total = 0
    for root, _dirs, files in os.walk(path, onerror=lambda _e: None):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(root, name)).st_blocks * 512
    return total


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _lock_held(lock: Path) -> bool:
    """Whether another process holds the module cache's lock (it is warming up)."""
    try:
        with open(lock, "r+") as fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                return True
            fcntl.flock(fh, fcntl.LOCK_UN)
    except OSError:
        return False
    return False


def places(cache: Path, current: Path | None, state: Path | None = None) -> list[tuple[Path, Path | None]]:
    """The (root, current module cache) pairs to keep bounded: the cache, and the state directory
    (``$GOCODE_STATE_DIR``: per-run files and built programs beside a shared, read-only cache)
    when it is elsewhere. A root gocode cannot write to (a read-only shared cache) is left out."""
    out: list[tuple[Path, Path | None]] = []
    if os.access(cache, os.W_OK):
        out.append((cache, current))
    if state is not None and current is not None and state != current and os.access(state.parent, os.W_OK):
        out.append((state.parent, state))
    return out


def mark_used(modcache_dir: Path, bindings_dirs: Iterable[Path] = ()) -> None:
    """Tell housekeeping in every process that this module cache (and these bindings) are in use."""
    for d in (modcache_dir, *bindings_dirs):
        with contextlib.suppress(OSError):
            if d.is_dir():
                (d / USED_MARK).touch()


def _modcache_last_used(ws: Path) -> float:
    stamps = [_mtime(ws / USED_MARK), _mtime(ws / ".ready"), _mtime(ws)]
    with contextlib.suppress(OSError):
        stamps += [_mtime(b) for b in (ws / "bin").iterdir()]
    return max(stamps)


def scan(cache: Path, current: Path | None, tmp: Path | None = None, *, leftovers: bool = True) -> list[Entry]:
    """Everything under ``cache`` (and, with ``leftovers``, leftover run dirs in ``tmp``) that
    housekeeping may remove.

    ``current`` is the module cache of the running gocode: its binaries, bindings and leftover
    run directories are entries, the module cache itself is not.
    """
    entries: list[Entry] = []
    for ws in sorted(cache.glob("ws-*")):
        if not ws.is_dir():
            continue
        if ws != current:
            entries.append(
                Entry(
                    ws,
                    "module-cache",
                    tree_size(ws),
                    _modcache_last_used(ws),
                    _lock_held(ws.with_name(ws.name + ".lock")),
                )
            )
            continue
        for sub, kind in (("bin", "binary"), ("tools", "bindings"), ("runs", "run-dir")):
            with contextlib.suppress(OSError):
                for p in (ws / sub).iterdir():
                    used = max(_mtime(p), _mtime(p / USED_MARK)) if p.is_dir() else _mtime(p)
                    entries.append(Entry(p, kind, tree_size(p), used))  # type: ignore[arg-type]
    with contextlib.suppress(OSError):
        for p in (cache / VECTORS_DIR).glob("*.npy"):
            entries.append(Entry(p, "vectors", p.stat().st_size, _mtime(p)))
    with contextlib.suppress(OSError):
        # Every file: a kept graph, or one a killed process left half-written.
        for p in (cache / OPTIMIZED_MODELS_DIR).iterdir():
            if p.is_file():
                entries.append(Entry(p, "search-model", p.stat().st_size, _mtime(p)))
    entries += _go_build_entries(cache)
    tmp = tmp if tmp is not None else Path(tempfile.gettempdir())
    with contextlib.suppress(OSError):
        for p in tmp.glob(RUN_DIR_PREFIX + "*") if leftovers else ():
            if p.is_dir():
                entries.append(Entry(p, "run-dir", tree_size(p), _mtime(p)))
    return entries


# An importcfg line naming a compiled package: ``packagefile <import path>=<file>``.
_PACKAGEFILE = re.compile(rb"^packagefile [^=\n]*=([^\n]*)$", re.MULTILINE)


def linked_from_importcfgs(cache: Path) -> set[str]:
    """The build-cache files the module caches' importcfgs name (direct builds read them).

    Read as bytes with one pattern: a long-lived cache holds hundreds of tool sets, each with
    importcfgs of hundreds of lines, and this runs in a thread beside the event loop (a
    Python loop per line held the interpreter for most of a second).
    """
    keep: set[bytes] = set()
    roots = [cache]
    if (state := state_dir()) is not None:  # bindings kept beside a read-only cache
        roots.append(state)
    patterns = ("ws-*/std.importcfg", "ws-*/seed.importcfg", "ws-*/tools/*/importcfg*")
    cfgs = [cfg for r in roots for pattern in patterns for cfg in r.glob(pattern)]
    for cfg in cfgs:
        with contextlib.suppress(OSError):
            keep.update(_PACKAGEFILE.findall(cfg.read_bytes()))
    return {os.path.normpath(os.fsdecode(target.strip())) for target in keep}


def _go_build_entries(cache: Path) -> list[Entry]:
    root = cache / "go-build"
    if not root.is_dir():
        return []
    keep = linked_from_importcfgs(cache)
    entries = []
    with contextlib.suppress(OSError), os.scandir(root) as subs:
        for sub in subs:
            if len(sub.name) != 2 or not sub.is_dir(follow_symlinks=False):  # Go's own files (trim.txt, README)
                continue
            with contextlib.suppress(OSError), os.scandir(sub.path) as files:
                for f in files:
                    with contextlib.suppress(OSError):
                        st = f.stat(follow_symlinks=False)
                        path = os.path.normpath(f.path)
                        entries.append(Entry(Path(path), "go-build", st.st_blocks * 512, st.st_mtime, path in keep))
    return entries


def plan(entries: list[Entry], policy: Policy, now: float) -> list[Entry]:
    """Which entries to remove (pure): past the age, then least recently used until under the size
    (binaries before module caches, which cost a warm-up to recreate).

    Never one used within the grace period or locked. Bindings, search vectors, optimised
    search models and run directories go only by age (the first two are small, one optimised
    graph per model is in use; a run directory's age is its run's).
    """

    def removable(e: Entry) -> bool:
        return not e.locked and now - e.last_used >= policy.grace_s

    doomed: dict[Path, Entry] = {}
    for e in entries:
        if not removable(e):
            continue
        too_old = policy.max_age_s is not None and now - e.last_used >= policy.max_age_s
        if too_old or e.kind == "run-dir":
            doomed[e.path] = e
    if policy.gocache_max_bytes is not None:
        gocache = sum(e.size for e in entries if e.kind == "go-build" and e.path not in doomed)
        for e in sorted((e for e in entries if e.kind == "go-build"), key=lambda e: e.last_used):
            if gocache <= policy.gocache_max_bytes:
                break
            if e.path not in doomed and removable(e):
                doomed[e.path] = e
                gocache -= e.size
    if policy.max_bytes is not None:
        total = sum(e.size for e in entries if e.path not in doomed and e.kind != "go-build")
        # Binaries first (one build to recreate), then whole module caches (a warm-up each).
        for kind in ("binary", "module-cache"):
            for e in sorted(entries, key=lambda e: e.last_used):
                if total <= policy.max_bytes:
                    break
                if e.kind == kind and e.path not in doomed and removable(e):
                    doomed[e.path] = e
                    total -= e.size
    return sorted(doomed.values(), key=lambda e: e.last_used)


def remove(entries: list[Entry]) -> tuple[list[Entry], list[str]]:
    """Delete the entries; returns those removed and one message per failure (read-only cache …)."""
    removed, errors = [], []
    for e in entries:
        try:
            if e.path.is_dir() and not e.path.is_symlink():
                shutil.rmtree(e.path)
                if e.kind == "module-cache":
                    e.path.with_name(e.path.name + ".lock").unlink(missing_ok=True)
            else:
                e.path.unlink(missing_ok=True)
            removed.append(e)
        except OSError as exc:
            errors.append(f"{e.path}: {exc.strerror or exc}")
    return removed, errors


def prune(
    cache: Path,
    current: Path | None,
    policy: Policy,
    *,
    dry_run: bool = False,
    now: float | None = None,
    tmp: Path | None = None,
    leftovers: bool = True,
) -> dict[str, Any]:
    """Scan, plan and (unless ``dry_run``) remove; a JSON-ready summary."""
    now = time.time() if now is None else now
    entries = scan(cache, current, tmp, leftovers=leftovers)
    doomed = plan(entries, policy, now)
    removed, errors = (doomed, []) if dry_run else remove(doomed)
    kept = [e for e in entries if e not in set(removed)]
    return {
        "dryRun": dry_run,
        "removed": [e.as_json(now) for e in removed],
        "freedBytes": sum(e.size for e in removed),
        "keptBytes": sum(e.size for e in kept),
        "errors": errors,
        "policy": _policy_json(policy),
    }


def prune_places(
    cache: Path,
    current: Path | None,
    state: Path | None,
    policy: Policy,
    *,
    dry_run: bool = False,
    now: float | None = None,
    tmp: Path | None = None,
) -> dict[str, Any]:
    """:func:`prune` in every place kept bounded (:func:`places`: the cache, and the state
    directory beside a shared cache), as one summary; the temp directory's leftover run
    directories are looked for once, not once per place."""
    summary: dict[str, Any] = {
        "dryRun": dry_run,
        "removed": [],
        "freedBytes": 0,
        "keptBytes": 0,
        "errors": [],
        "policy": _policy_json(policy),
    }
    for i, (root, in_use) in enumerate(places(cache, current, state)):
        one = prune(root, in_use, policy, dry_run=dry_run, now=now, tmp=tmp, leftovers=i == 0)
        for key in ("removed", "freedBytes", "keptBytes", "errors"):
            summary[key] += one[key]
    return summary


def _policy_json(policy: Policy) -> dict[str, Any]:
    return {
        "maxBytes": policy.max_bytes,
        "maxAgeSeconds": policy.max_age_s,
        "graceSeconds": policy.grace_s,
        "goBuildCacheMaxBytes": policy.gocache_max_bytes,
    }


def info(cache: Path, current: Path | None, tmp: Path | None = None) -> dict[str, Any]:
    """What the cache holds, by kind (JSON-ready)."""
    now = time.time()
    policy = Policy.from_env()
    entries = scan(cache, current, tmp)
    by_kind: dict[str, dict[str, int]] = {}
    for e in entries:
        if e.kind == "go-build":
            continue  # reported whole below
        k = by_kind.setdefault(e.kind, {"count": 0, "bytes": 0})
        k["count"] += 1
        k["bytes"] += e.size
    modcaches = [
        {"path": str(e.path), "bytes": e.size, "idleSeconds": round(now - e.last_used), "current": False}
        for e in entries
        if e.kind == "module-cache"
    ]
    if current is not None and current.is_dir():
        modcaches.append({"path": str(current), "bytes": tree_size(current), "idleSeconds": 0, "current": True})
    return {
        "cache": str(cache),
        "removable": by_kind,
        "removableBytes": sum(e.size for e in entries if e.kind != "go-build"),
        "moduleCaches": sorted(modcaches, key=lambda w: w["path"]),
        "goBuildCacheBytes": tree_size(cache / "go-build"),
        "moduleCacheBytes": tree_size(cache / "gomod"),
        "searchModelBytes": tree_size(cache / "models"),
        "policy": _policy_json(policy),
    }
