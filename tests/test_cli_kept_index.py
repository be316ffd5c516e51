"""``gocode search`` and ``describe`` a second time: no server started, the search index read from
where the first run kept it (gocode/search/kept_index.py), and built again when the listing changes.
Real CLI processes against the real demo server."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from gocode.paths import cache_dir
from gocode.search import semantic
from tests.conftest import ROOT

# Starts the demo server from a file the test deletes after the first run: a later run that
# started it would fail.
# Where python -X importtime says onnxruntime was imported (the models' runtime).
ONNXRUNTIME = re.compile(r"^import time: .*\|\s+onnxruntime$", re.M)
SERVER = "import runpy\nrunpy.run_module('gocode.demo.server', run_name='__main__')\n"


def gocode(*args: str, env: dict[str, str], importtime: bool = False) -> subprocess.CompletedProcess:
    flags = ["-X", "importtime"] if importtime else []
    return subprocess.run(
        [sys.executable, *flags, "-m", "gocode.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        cwd=ROOT,
    )


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    server = tmp_path / "server.py"
    server.write_text(SERVER)
    config = tmp_path / "gocode.json"
    servers = {"weather": {"command": sys.executable, "args": [str(server)]}}
    config.write_text(json.dumps({"mcpServers": servers, "defaults": {"codeMode": {"enabled": True}}}))
    cache = tmp_path / "cache"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "GOCODE_CACHE_DIR": str(cache)}
    for name in ("GOCODE_RECENT_LISTINGS", "GOCODE_STATE_DIR", "GOCODE_LIST_MAX_AGE"):
        env.pop(name, None)
    env["GOCODE_SEMANTIC_SEARCH"] = "0"  # BM25 alone here; the models' own cache is tested below
    return config, cache, env


def index_entries(cache: Path) -> list[Path]:
    return sorted((cache / "packages").glob("*.index"))


def test_a_second_search_or_describe_starts_no_server_and_reads_the_kept_index(setup) -> None:
    config, cache, env = setup
    c = ["-c", str(config)]
    first = gocode("search", *c, "weather", "in", "a", "city", env=env)
    assert first.returncode == 0, first.stderr
    assert "starting 1 server" in first.stderr
    assert first.stdout.splitlines()[0].split()[1] == "weather.get_weather"
    (entry,) = index_entries(cache)
    before = entry.stat()
    (config.parent / "server.py").unlink()  # from now on, starting the server fails
    second = gocode("search", *c, "weather", "in", "a", "city", env=env)
    assert second.returncode == 0, second.stderr
    assert "starting" not in second.stderr and "as listed up to" in second.stderr
    assert second.stdout == first.stdout
    described = gocode("describe", *c, "get_weather", env=env)
    assert described.returncode == 0, described.stderr
    assert "starting" not in described.stderr and "func getWeather(" in described.stdout
    # The same entry, read (reading touches it), not built again (a build writes a new directory).
    assert index_entries(cache) == [entry]
    after = entry.stat()
    assert after.st_ino == before.st_ino and after.st_mtime_ns > before.st_mtime_ns


def test_a_changed_listing_is_indexed_afresh(setup) -> None:
    config, cache, env = setup
    c = ["-c", str(config)]
    assert gocode("search", *c, "weather", env=env).returncode == 0
    (old,) = index_entries(cache)
    # The server's tools changed, as its next listing records them.
    (listing,) = (cache / "recent-tool-lists").glob("*.json")
    doc = json.loads(listing.read_text())
    for tool in doc["tools"]:
        if tool["name"] == "get_weather":
            tool["description"] = "Barometric pressure and temperature for a city."
    listing.write_text(json.dumps(doc))
    found = gocode("search", *c, "barometric", "pressure", env=env)
    assert found.returncode == 0, found.stderr
    assert "starting" not in found.stderr
    assert found.stdout.splitlines()[0].split()[1] == "weather.get_weather"
    entries = index_entries(cache)
    assert len(entries) == 2 and old in entries
    described = gocode("describe", *c, "get_weather", env=env)
    assert "Barometric pressure" in described.stdout


@pytest.mark.skipif(
    not all(semantic.installed(s) for s in semantic.MODELS), reason="the search models are not installed"
)
def test_a_query_asked_before_loads_no_model(setup) -> None:
    config, cache, env = setup
    cache.mkdir()
    (cache / "models").symlink_to(cache_dir() / "models")
    env = {**env, "GOCODE_SEMANTIC_SEARCH": "1"}
    c = ["-c", str(config)]
    first = gocode("search", *c, "what is the weather in Oslo", env=env, importtime=True)
    assert first.returncode == 0, first.stderr
    assert ONNXRUNTIME.search(first.stderr)  # the models embedded the tools and the query
    second = gocode("search", *c, "what is the weather in Oslo", env=env, importtime=True)
    assert second.returncode == 0, second.stderr
    assert not ONNXRUNTIME.search(second.stderr)
    assert second.stdout == first.stdout
    vectors = cache / "search-vectors"
    assert len(list(vectors.glob("*-query-*.npy"))) == len(semantic.MODELS)
    # A new query: its vectors computed by a child while the command reads the tools.
    other = gocode("search", *c, "temperature of my city", env=env, importtime=True)
    assert other.returncode == 0 and "weather.get_weather" in other.stdout, other.stderr
    assert not ONNXRUNTIME.search(other.stderr)
    assert len(list(vectors.glob("*-query-*.npy"))) == 2 * len(semantic.MODELS)


def _fake_model(tmp_path, monkeypatch):
    """One search model, installed as far as search can tell, whose loading gives a stand-in
    that counts what it is asked to embed: the child's copy embeds, the parent's must not."""
    import numpy as np

    _no_other_threads()

    monkeypatch.setenv("GOCODE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv(semantic.DISABLE_ENV, "1")
    spec = semantic.MODELS[0]
    model_dir = semantic.model_dir(spec)
    model_dir.mkdir(parents=True)
    (model_dir / "model.onnx").write_bytes(b"")
    (model_dir / "tokenizer.json").write_bytes(b"")
    monkeypatch.setattr(semantic, "MODELS", (spec,))

    class Fake:
        def __init__(self) -> None:
            self.spec, self._np, self.asked = spec, np, 0

        def embed(self, texts, *, query=False, batch=32):
            self.asked += 1
            return np.full((len(texts), 384), 0.5, dtype=np.float32)

    fake = Fake()
    monkeypatch.setattr(semantic, "_load", lambda s, threads=None: fake)
    return spec, fake


def _no_other_threads() -> None:
    """embed_query_ahead forks only while no other thread runs (a child would not have them).
    An earlier test's event loop may have left a thread that is still ending (anyio stops its
    worker threads after the loop returns): wait for it, so the result does not depend on which
    test ran before this one, or on how busy the machine is."""
    for thread in threading.enumerate():
        if thread is not threading.current_thread():
            thread.join(60)
    assert threading.active_count() == 1, f"threads left running by an earlier test: {threading.enumerate()}"


def test_a_query_embedded_ahead_is_waited_for_not_embedded_again(tmp_path, monkeypatch) -> None:
    spec, fake = _fake_model(tmp_path, monkeypatch)
    semantic.embed_query_ahead("weather in oslo")  # forks: the child embeds and keeps it
    got = semantic.query_vector(semantic.Model(spec), "weather in oslo")
    assert fake.asked == 0 and float(got[0]) == 0.5 and not semantic._ahead


def test_a_child_that_already_kept_the_query_is_still_reaped(tmp_path, monkeypatch) -> None:
    # The child may write its file before the parent looks: the parent must still wait for it,
    # or it is left a zombie and a later search waits on a stale pid.
    spec, fake = _fake_model(tmp_path, monkeypatch)
    semantic.embed_query_ahead("weather in oslo")
    (pid,) = semantic._ahead
    path = semantic._query_path(spec, "weather in oslo")
    for _ in range(600):  # bounded: the child writes within a second or so
        if path.is_file():
            break
        time.sleep(0.05)
    assert path.is_file()
    got = semantic.query_vector(semantic.Model(spec), "weather in oslo")
    assert fake.asked == 0 and float(got[0]) == 0.5 and not semantic._ahead
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # already reaped


@pytest.mark.skipif(
    not all(semantic.installed(s) for s in semantic.MODELS), reason="the search models are not installed"
)
def test_a_search_that_fails_while_the_models_load_exits_cleanly(setup) -> None:
    """The models start loading before the config is read; a process that exited meanwhile
    used to abort inside onnxruntime (exit 134) instead of saying what was wrong (exit 2)."""
    _, cache, env = setup
    cache.mkdir()
    (cache / "models").symlink_to(cache_dir() / "models")
    env = {**env, "GOCODE_SEMANTIC_SEARCH": "1"}
    for n in range(3):
        got = gocode("search", "-c", str(cache / "missing.yaml"), f"a question not asked before {n}", env=env)
        assert got.returncode == 2 and "config file not found" in got.stderr, got.stderr
