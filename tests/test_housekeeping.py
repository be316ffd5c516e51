"""Cache housekeeping on a private cache directory laid out as gocode lays it out: least recently
used out beyond the size, old entries out beyond the age, never one in use (recently touched,
locked, or the current module cache); and `gocode cache info|prune` on it."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gocode.compile import housekeeping as hk

MiB = 1 << 20
NOW = time.time()
HOUR = 3600.0
DAY = 86400.0


def put(path: Path, size: int, idle: float) -> Path:
    """A file of ``size`` bytes (really allocated) last used ``idle`` seconds ago."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(os.urandom(size))
    os.utime(path, (NOW - idle, NOW - idle))
    return path


def age_dir(path: Path, idle: float) -> None:
    for p in [*path.rglob("*"), path]:
        os.utime(p, (NOW - idle, NOW - idle))


@pytest.fixture
def tmp(tmp_path: Path) -> Path:
    """The temp directory housekeeping looks in for leftover sandbox run directories."""
    t = tmp_path / "tmp"
    put(t / "gocode-run-dead" / "prog", 100, 3 * HOUR)
    age_dir(t / "gocode-run-dead", 3 * HOUR)
    put(t / "gocode-run-live" / "prog", 100, 10)
    put(t / "unrelated" / "file", 100, 30 * DAY)
    return t


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    c = tmp_path / "cache"
    cur = c / "ws-current"
    put(cur / "go.mod", 100, 10)
    put(cur / "bin" / "oldest", 3 * MiB, 5 * DAY)
    put(cur / "bin" / "older", 3 * MiB, 3 * DAY)
    put(cur / "bin" / "recent", 3 * MiB, 2 * HOUR)
    put(cur / "bin" / "in-use", 3 * MiB, 60)  # touched a minute ago: a run may be starting it
    put(cur / "runs" / "r-left" / "main.go", 100, 2 * HOUR)  # a killed process's leftover
    put(cur / "runs" / "r-live" / "main.go", 100, 5)  # a build under way
    put(cur / "tools" / "t-stale" / "tools.go", 100, 30 * DAY)
    put(cur / "tools" / "t-live" / "tools.go", 100, 30 * DAY)
    for d, idle in (
        ("runs/r-left", 2 * HOUR),
        ("runs/r-live", 5),
        ("tools/t-stale", 30 * DAY),
        ("tools/t-live", 30 * DAY),
    ):
        age_dir(cur / d, idle)
    hk.mark_used(cur, [cur / "tools" / "t-live"])  # a live controller's tool set
    put(c / "ws-other" / "bin" / "x", 2 * MiB, 20 * DAY)  # another gocode version's module cache
    age_dir(c / "ws-other", 20 * DAY)
    (c / "ws-other.lock").touch()
    put(c / "ws-warming" / "go.mod", 100, 20 * DAY)  # old, but its lock is held: warm-up under way
    age_dir(c / "ws-warming", 20 * DAY)
    (c / "ws-warming.lock").touch()
    put(c / "go-build" / "ab" / "cache-entry", MiB, 30 * DAY)  # Go's build cache: old, unused
    put(c / "search-vectors" / "model-stale.npy", 100, 30 * DAY)  # a tool set long gone
    put(c / "search-vectors" / "model-live.npy", 100, 10)  # loaded a moment ago
    put(c / "models" / "model" / "model.onnx", 100, 30 * DAY)  # the search model: fetched once, kept
    put(c / "search-models" / "model-old-ort.onnx", 100, 30 * DAY)  # optimised by an older onnxruntime
    put(c / "search-models" / "model-live.onnx", 100, 10)  # loaded a moment ago
    return c


def names(summary: dict) -> set[str]:
    return {Path(e["path"]).name for e in summary["removed"]}


@pytest.mark.parametrize(
    ("max_mib", "gone"),
    [
        # Oldest binaries first until under the size; leftover run dirs go in any case.
        (10, {"oldest", "older"}),
        # Binaries alone cannot get there (one is in use): then the least recently used module cache.
        (5, {"oldest", "older", "recent", "ws-other"}),
    ],
)
def test_size_bound_removes_least_recently_used_first_never_in_use(cache, tmp, max_mib, gone):
    policy = hk.Policy(max_bytes=max_mib * MiB, max_age_s=None)
    with open(cache / "ws-warming.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        summary = hk.prune(cache, cache / "ws-current", policy, now=NOW, tmp=tmp)
    assert names(summary) == gone | {"r-left", "gocode-run-dead"}
    assert sorted(p.name for p in tmp.iterdir()) == ["gocode-run-live", "unrelated"]
    bins = {p.name for p in (cache / "ws-current" / "bin").iterdir()}
    assert bins == {"oldest", "older", "recent", "in-use"} - gone
    assert (cache / "ws-warming").is_dir() and (cache / "ws-current" / "runs" / "r-live").is_dir()
    assert (cache / "go-build" / "ab" / "cache-entry").is_file()
    assert (cache / "ws-other.lock").exists() == ("ws-other" not in gone) and not summary["errors"]
    assert summary["keptBytes"] <= max_mib * MiB


def test_age_bound_and_the_grace_period(cache, tmp):
    summary = hk.prune(cache, cache / "ws-current", hk.Policy(max_bytes=None, max_age_s=4 * DAY), now=NOW, tmp=tmp)
    # Unused for 4 days or more: the oldest binary, the other module cache, the stale bindings, the
    # unlocked warming module cache, the stale search vectors and optimised graph; not the bindings
    # a live controller marked used, not the vectors or graph just loaded, never the search model.
    assert names(summary) == {
        "oldest", "ws-other", "t-stale", "ws-warming", "r-left", "gocode-run-dead", "model-stale.npy", "cache-entry",
        "model-old-ort.onnx",
    }  # fmt: skip
    assert (cache / "search-models" / "model-live.onnx").is_file()
    assert (cache / "ws-current" / "tools" / "t-live").is_dir()
    assert (cache / "search-vectors" / "model-live.npy").is_file()
    assert (cache / "models" / "model" / "model.onnx").is_file()


def test_in_use_is_never_removed_even_when_everything_must_go(cache, tmp):
    summary = hk.prune(cache, cache / "ws-current", hk.Policy(max_bytes=0, max_age_s=0), now=NOW, tmp=tmp)
    left = {p.name for p in (cache / "ws-current" / "bin").iterdir()}
    assert left == {"in-use"}
    assert (cache / "ws-current" / "go.mod").is_file() and "ws-current" not in names(summary)
    assert (cache / "ws-current" / "runs" / "r-live").is_dir() and (tmp / "gocode-run-live").is_dir()


def test_dry_run_removes_nothing(cache, tmp):
    summary = hk.prune(cache, cache / "ws-current", hk.Policy(max_bytes=0), dry_run=True, now=NOW, tmp=tmp)
    assert summary["dryRun"] and "oldest" in names(summary)
    assert (cache / "ws-current" / "bin" / "oldest").is_file()


def test_sizes_and_ages_parse():
    assert hk.parse_size("500M") == 500 * MiB and hk.parse_size("2G") == 2 << 30 and hk.parse_size("1.5GiB")
    assert hk.parse_age("7d") == 7 * DAY and hk.parse_age("30m") == 1800
    with pytest.raises(ValueError):
        hk.parse_size("lots")
    with pytest.raises(ValueError):
        hk.parse_age("7")


@pytest.mark.go
def test_cache_cli(cache, tmp):
    env = {**os.environ, "GOCODE_CACHE_DIR": str(cache), "TMPDIR": str(tmp)}
    gocode = [sys.executable, "-m", "gocode.cli"]
    info = subprocess.run([*gocode, "cache", "info", "--json"], env=env, capture_output=True, text=True, timeout=60)
    assert info.returncode == 0, info.stderr
    doc = json.loads(info.stdout)
    # This gocode's own module cache is not in the fixture: every ws-* there is another one's.
    assert doc["cache"] == str(cache) and doc["removable"]["module-cache"]["count"] == 3
    assert doc["goBuildCacheBytes"] >= MiB

    dry = subprocess.run(
        [*gocode, "cache", "prune", "--max-age", "10d", "--dry-run", "--json"], env=env, capture_output=True,
        text=True, timeout=60,
    )  # fmt: skip
    assert dry.returncode == 0, dry.stderr
    # ws-current was marked used just now (by whatever gocode uses it), so it stays.
    removed = {Path(e["path"]).name for e in json.loads(dry.stdout)["removed"]}
    stale = {"model-stale.npy", "model-old-ort.onnx", "cache-entry"}
    assert removed == {"ws-other", "ws-warming", "gocode-run-dead", *stale}
    assert (cache / "ws-other").is_dir()

    bad = subprocess.run([*gocode, "cache", "prune", "--max-size", "lots"], env=env, capture_output=True, text=True)
    assert bad.returncode == 2 and "not a size" in bad.stderr

    real = subprocess.run([*gocode, "cache", "prune", "--max-age", "10d"], env=env, capture_output=True, text=True)
    assert real.returncode == 0 and "removed 6 entries" in real.stdout, real.stdout + real.stderr
    assert not (cache / "ws-other").exists()


def test_the_go_build_cache_is_bounded_but_keeps_what_importcfgs_link(tmp_path):
    """Go trims its build cache only by age: gocode bounds its size too, least recently used
    first, and never removes export data a module cache's importcfg names (direct builds link it)."""
    c = tmp_path / "cache"
    gb = c / "go-build"
    linked = put(gb / "aa" / "aa01-d", 2 * MiB, 40 * DAY)  # the standard library's: old but linked
    tool = put(gb / "bb" / "bb01-d", 2 * MiB, 40 * DAY)  # a tool set's export data
    old = put(gb / "cc" / "cc01-d", 2 * MiB, 3 * DAY)
    newer = put(gb / "dd" / "dd01-a", 2 * MiB, 2 * DAY)
    fresh = put(gb / "ee" / "ee01-d", 2 * MiB, 10)  # used just now
    put(gb / "trim.txt", 10, 40 * DAY)  # Go's own bookkeeping
    put(c / "ws-current" / "std.importcfg", 0, 10).write_text(f"packagefile fmt={linked}\n")
    put(c / "ws-current" / "tools" / "t1" / "importcfg", 0, 10).write_text(f"packagefile gocodews/tools/t1={tool}\n")
    policy = hk.Policy(max_bytes=None, max_age_s=None, gocache_max_bytes=17 * MiB // 2)
    summary = hk.prune(c, c / "ws-current", policy, now=NOW, tmp=tmp_path / "none")
    assert names(summary) == {"cc01-d"}  # the oldest unlinked one: then 8 MiB are left, under 8.5
    assert linked.is_file() and tool.is_file() and newer.is_file() and fresh.is_file() and not old.exists()
    summary = hk.prune(c, c / "ws-current", hk.Policy(max_age_s=DAY), now=NOW, tmp=tmp_path / "none")
    assert names(summary) == {"dd01-a"} and (gb / "trim.txt").is_file() and linked.is_file()


@pytest.mark.fast
def test_one_summary_over_the_cache_and_the_state_dir(cache, tmp, tmp_path):
    """Beside a shared cache, built programs live in the state dir: both are bounded, in one
    summary, and the temp directory's leftovers are counted once."""
    state = tmp_path / "state" / "ws-current"
    put(state / "go.mod", 100, 10)
    put(state / "bin" / "stale", MiB, 20 * DAY)
    policy = hk.Policy(max_bytes=None, max_age_s=4 * DAY)
    summary = hk.prune_places(cache, cache / "ws-current", state, policy, dry_run=True, now=NOW, tmp=tmp)
    removed = [Path(e["path"]).name for e in summary["removed"]]
    assert sorted(removed) == sorted(
        ["oldest", "ws-other", "t-stale", "ws-warming", "r-left", "gocode-run-dead", "model-stale.npy", "cache-entry",
         "model-old-ort.onnx", "stale"]
    )  # fmt: skip
    assert summary["freedBytes"] == sum(e["bytes"] for e in summary["removed"]) and not summary["errors"]
