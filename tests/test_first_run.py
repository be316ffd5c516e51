"""The first call on a machine: an empty Go build cache, nothing compiled yet.

The first call compiles what it needs (the SDK, the runtime, the packages programs are given
without an import, the bindings) and answers; the rest of the standard library is left to a
background process, and a program that imports more before that is built with ``go build``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from gocode.compile import modcache, stdbuild
from gocode.compile.modcache import STD_MARK, ModuleCache
from tests.conftest import demo_stdio, module_cache  # noqa: F401 (fixture)
from tests.test_cli import gocode


def stale(ws: ModuleCache, *packages: str) -> dict[str, bool]:
    """Whether each package would have to be compiled (``go list`` compiles nothing to say it)."""
    argv = [ws.toolchain.go, "list", "-trimpath", "-f", "{{.ImportPath}} {{.Stale}}", *packages]
    out = subprocess.run(argv, cwd=ws.dir, env=ws.go_env(), capture_output=True, text=True, check=True).stdout
    return {path: flag == "true" for path, flag in (line.split() for line in out.splitlines())}


@pytest.mark.go
def test_the_first_call_from_an_empty_build_cache_compiles_only_what_it_needs(tmp_path, module_cache):  # noqa: F811
    cache = tmp_path / "cache"
    # The modules as `go mod download` leaves them (so the test needs no network); the build
    # cache is empty: everything the call needs is compiled here.
    shutil.copytree(module_cache.cache / "gomod", cache / "gomod", symlinks=True)
    env = {"GOCODE_CACHE_DIR": str(cache), "GOCODE_STD_BACKGROUND": "0"}
    first = gocode("demo", "--json", "--sandbox", "off", env=env)
    assert first.returncode == 0, first.stderr
    doc = json.loads(first.stdout)
    assert doc["ok"] and doc["output"].startswith("City: "), doc
    assert doc["build_mode"] == "direct", doc

    ws = ModuleCache(module_cache.toolchain, cache)
    assert ws.ready and not ws.std_ready
    # What the demo needed is compiled; a standard package no program has imported is not.
    assert stale(ws, "fmt", "net/http", "image/png", "net/smtp") == {
        "fmt": False,
        "net/http": False,
        "image/png": True,
        "net/smtp": True,
    }

    # A program using a package outside the warmed set still gets its import added and is
    # built (with go build, which compiles that package).
    config = tmp_path / "gocode.json"
    config.write_text(json.dumps({"mcpServers": {"weather": demo_stdio()}}))
    code = "fmt.Println(png.BestCompression)\n"
    more = gocode("exec", "-c", str(config), "--json", "-", stdin=code, env=env)
    assert more.returncode == 0, more.stderr
    doc = json.loads(more.stdout)
    assert doc["output"] == "-3\n" and doc["build_mode"] == "go build (fallback)", doc


@pytest.mark.go
def test_the_background_build_compiles_the_standard_library_and_marks_it(tmp_path, module_cache):  # noqa: F811
    mark = tmp_path / STD_MARK
    # As the module cache starts it: isolated from gocode's own modules, with the module cache's environment.
    argv = [sys.executable, "-I", stdbuild.__file__, module_cache.toolchain.go, str(module_cache.dir), str(mark)]
    done = subprocess.run(argv, env=module_cache.go_env(), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert mark.is_file()
    assert stale(module_cache, "image/png", "net/smtp") == {"image/png": False, "net/smtp": False}


def test_a_long_silent_go_step_says_it_is_still_going(tmp_path, monkeypatch):
    # A stand-in `go` that works silently for a while, as the first compile does for minutes.
    go = tmp_path / "go"
    go.write_text("#!/bin/sh\nsleep 1\necho done\n")
    go.chmod(0o755)
    monkeypatch.setattr(modcache, "HEARTBEAT_S", 0.2)
    ws = ModuleCache(modcache.Toolchain(str(go), "go1.26.8"), tmp_path / "cache")
    ws.dir.mkdir(parents=True)
    said: list[str] = []
    ws._run_go(["build"], offline=True, what="compiling", beat=said.append)
    assert len(said) >= 3 and all(s.startswith("  … still compiling: ") and s.endswith(" s") for s in said), said
