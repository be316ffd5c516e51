"""How a program reaches its tools (gocode.run.reach): each strategy answers the run's steps
alone, so no step asks which kind it has. Pure parts only; the runs themselves are in
test_exec.py (direct) and test_toolbox.py / test_sandbox.py (through the loopback)."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from gocode.run.env import with_run_settings
from gocode.run.reach import ControllerLoopback, OwnSessions, read_result
from gocode.run.result import RunResult
from gocode.run.sandbox import DIRECT_REFUSAL, SandboxError

pytestmark = pytest.mark.fast

STDIO = {"transport": "stdio", "command": "srv", "args": [], "env": {"TOKEN": "t"}}
HTTP = {"transport": "http", "url": "http://127.0.0.1:1/mcp", "headers": {}}


def settings(sandbox: str) -> Any:
    return SimpleNamespace(sandbox=sandbox)  # all the confine step reads before it probes


def confine(reach: Any, sandbox: str) -> Any:
    return asyncio.run(reach.confine(None, settings(sandbox), "{}", 1.0, None))


def test_own_sessions_start_their_servers_where_gocode_was_started() -> None:
    reach = OwnSessions({"a": STDIO, "b": HTTP, "c": {**STDIO, "cwd": "/srv"}})
    servers = reach.servers()
    assert servers["a"]["cwd"] == os.getcwd() and servers["c"]["cwd"] == "/srv" and "cwd" not in servers["b"]
    assert "cwd" not in STDIO  # the caller's specs are not changed
    assert reach.server_envs() == [{"TOKEN": "t"}, {}, {"TOKEN": "t"}]


def test_own_sessions_are_never_confined() -> None:
    assert confine(OwnSessions({}), "auto")["tier"] is None
    assert confine(OwnSessions({}), "off") == {"setting": "off", "tier": None}
    for required in ("on", "best-effort"):
        with pytest.raises(SandboxError) as refused:
            confine(OwnSessions({}), required)
        assert str(refused.value) == DIRECT_REFUSAL


def test_the_loopback_takes_result_and_starts_no_server() -> None:
    reach = ControllerLoopback({"a": {"transport": "http", "url": "http://127.0.0.1:9/a"}}, 9)
    assert reach.server_envs() == [] and confine(reach, "off") == {"setting": "off", "tier": None}
    assert reach.result_file(contextlib.AsyncExitStack()) is None


def test_own_sessions_get_result_in_a_file_removed_with_the_run(tmp_path: Path) -> None:
    async def go() -> tuple[Path, bool]:
        async with contextlib.AsyncExitStack() as claims:
            path = OwnSessions({}).result_file(claims)
            assert path is not None
            path.write_text('{"v": 1}')
            assert read_result(path, 100) == {"v": 1} and read_result(path, 3) is None
        return path, path.exists()

    path, exists = asyncio.run(go())
    assert not exists, path


def test_run_settings_add_to_the_environment() -> None:
    env = {"GODEBUG": "multipathtcp=0", "A": "1"}
    got = with_run_settings(env, {"B": "2"}, "randautoseed=0")
    assert got == {"GODEBUG": "multipathtcp=0,randautoseed=0", "A": "1", "B": "2"}
    assert env == {"GODEBUG": "multipathtcp=0", "A": "1"}
    assert with_run_settings({}, None, "") == {}


def test_a_result_is_not_changed_once_made() -> None:
    result = RunResult(True, "ok", "out")
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.ok = False  # type: ignore[misc]
    assert "asks" not in result.as_json()
