"""``GOCODE_STATE_DIR``: a replica's runs and built programs apart from the shared Go cache, which
may then be read-only (see docs/deploy.md). Real builds with ``gocode exec``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
import yaml

from deploy.cluster import can_unshare_mounts
from gocode.paths import cache_dir
from tests.conftest import ROOT

pytestmark = pytest.mark.go

GOCODE = str(Path(sys.executable).parent / "gocode")


def dynamic_config(tmp_path: Path, tool: str) -> Path:
    """A server offering one tool named ``tool``: a tool set no cache has seen when the name is new."""
    state = tmp_path / "tools.json"
    state.write_text(json.dumps([tool]))
    server = {
        "command": sys.executable,
        "args": ["-m", "tests.servers.dynamic_server"],
        "cwd": str(ROOT),
        "env": {"DYNAMIC_STATE": str(state)},
    }
    config = tmp_path / "gocode.yaml"
    config.write_text(yaml.safe_dump({"mcpServers": {"dyn": server}}))
    return config


def new_tool_name() -> str:
    """Lowercase letters only, so the Go function has the same name."""
    return "greet" + "".join(chr(ord("a") + int(c, 16)) for c in uuid.uuid4().hex[:10])


def call_code(tool: str) -> str:
    return f"r, err := {tool}(ctx)\nif err != nil {{\n\treturn err\n}}\nfmt.Println(r.Result)\n"


def exec_go(config: Path, code: str, state: Path, read_only_cache: bool = False) -> subprocess.CompletedProcess[str]:
    argv = [GOCODE, "exec", "-c", str(config), "-"]
    if read_only_cache:
        # The cache is read-only for this process alone (a private mount namespace).
        argv = ["unshare", "-m", "sh", "-c", 'mount --bind -o ro "$0" "$0" && exec "$@"', str(cache_dir()), *argv]
    env = {**os.environ, "GOCODE_STATE_DIR": str(state)}
    return subprocess.run(argv, input=code, env=env, cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_runs_and_programs_go_to_the_state_dir(tmp_path):
    tool = new_tool_name()
    config, state = dynamic_config(tmp_path, tool), tmp_path / "state"
    ok = exec_go(config, call_code(tool), state)
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout == f"hello from {tool}\n"
    (ws,) = state.glob("ws-*")
    assert len(list((ws / "bin").iterdir())) == 1
    assert list((ws / "runs").iterdir()) == []  # removed after the build
    assert not (cache_dir() / ws.name / "bin" / next((ws / "bin").iterdir()).name).exists()
    # A compile error takes the `go build` path, which sees the run's source through -overlay.
    bad = exec_go(config, "unused := 1\n", state)
    assert bad.returncode == 1
    assert "model.go:1:1: declared and not used: unused" in bad.stderr, bad.stderr


def test_a_new_tool_set_on_a_read_only_cache(tmp_path):
    """Bindings the cache has never seen: written to the state dir, compiled by go build."""
    if not can_unshare_mounts():
        pytest.skip("this host allows no private mount namespace (unshare -m), so the cache cannot be made read-only")
    tool = new_tool_name()
    config, state = dynamic_config(tmp_path, tool), tmp_path / "state"
    ok = exec_go(config, call_code(tool), state, read_only_cache=True)
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout == f"hello from {tool}\n"
    (ws,) = state.glob("ws-*")
    (bindings,) = (ws / "tools").iterdir()
    assert (bindings / "tools.go").is_file()
    assert not (cache_dir() / ws.name / "tools" / bindings.name).exists()
    bad = exec_go(config, "unused := 1\n", state, read_only_cache=True)
    assert "model.go:1:1: declared and not used: unused" in bad.stderr, bad.stderr
