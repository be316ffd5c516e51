"""Recorded runs, replay and dry runs: real programs against a real server with a side effect
(tests/servers/counter_server.py), through the Python API and ``gocode exec``."""

from __future__ import annotations

import json
import stat
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from gocode import Toolbox
from gocode.results import run_to_result
from gocode.run import recordstore
from gocode.run.interceptor import Entry
from gocode.toolset import ServerTools, ToolInfo, ToolSet
from tests.conftest import demo_stdio
from tests.test_cli import gocode
from tests.test_stateless import counter_config, side_effects
from tests.test_workspace import notes_config

CODE = """
c, err := increment(ctx, IncrementInput{By: 3})
if err != nil {
	return err
}
r, err := read(ctx)
if err != nil {
	return err
}
fmt.Println("count", c.Count, r.Count)
"""


@pytest.mark.fast
def test_recordings_round_trip_and_are_pruned(tmp_path, monkeypatch):
    # A titled tool (server-filesystem's and server-memory's are): the title is in the digest.
    toolset = ToolSet((ServerTools("s", (ToolInfo("s", "t", "d", {"type": "object"}, title="Tee"),)),))
    rec = recordstore.Recording(
        recordstore.new_run_id(), "fmt.Println(1)", toolset, [Entry("s", "t", {"a": 1}, 0, {"content": []})]
    )
    recordstore.save(rec, tmp_path)
    got = recordstore.load(rec.run_id, tmp_path)
    assert got.code == rec.code and got.toolset.digest() == toolset.digest() and got.calls[0].arguments == {"a": 1}
    with pytest.raises(recordstore.RecordingError, match="is not a run id"):
        recordstore.load("../etc/passwd", tmp_path)
    with pytest.raises(recordstore.RecordingError, match="no recording of run r0000000000000000"):
        recordstore.load("r0000000000000000", tmp_path)
    monkeypatch.setenv("GOCODE_RECORDINGS_MAX", "2")
    for _ in range(3):
        recordstore.save(recordstore.Recording(recordstore.new_run_id(), "", toolset), tmp_path)
        time.sleep(0.01)
    assert len(list(tmp_path.glob("r*.json"))) == 2


@pytest.mark.fast
def test_recordings_are_private_and_capped_in_bytes_together(tmp_path, monkeypatch):
    toolset = ToolSet((ServerTools("s", (ToolInfo("s", "t", "d", {"type": "object"}),)),))
    directory = tmp_path / "recordings"
    monkeypatch.setenv("GOCODE_RECORDINGS_MAX_MB", "1")
    for _ in range(3):  # 400 kB each: only two fit in 1 MB
        recordstore.save(recordstore.Recording(recordstore.new_run_id(), "x" * 400_000, toolset), directory)
        time.sleep(0.01)
    files = list(directory.glob("r*.json"))
    assert len(files) == 2 and stat.S_IMODE(directory.stat().st_mode) == 0o700
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in files)


@pytest.mark.go
def test_a_recording_is_capped_in_bytes_arguments_included(module_cache, tmp_path, monkeypatch):
    monkeypatch.setenv("GOCODE_RECORDING_MAX_MB", "1")
    code = (
        'big := strings.Repeat("x", 300_000)\nfor i := 0; i < 12; i++ {\n'
        '\tmust(addNote(ctx, AddNoteInput{Name: fmt.Sprint("n", i), Text: big}))\n}\nfmt.Println("done")\n'
    )

    async def go() -> Any:
        async with Toolbox(notes_config(tmp_path), module_cache=module_cache, prewarm=False) as box:
            result = await box.execute(code)
            again = await box.replay(result.run_id)
            monkeypatch.setenv("GOCODE_RECORDING_MAX_MB", "0.001")  # 1 kB: not even every call's hash fits
            cut = await box.execute(code)
            return result, again, cut, await box.replay(cut.run_id)

    result, again, cut, cut_again = anyio.run(go)
    assert result.ok and result.output == "done\n", result.error_text()
    path = recordstore.root() / f"{result.run_id}.json"
    assert path.stat().st_size < (1 << 20) + 20_000  # 3.6 MB of arguments sent, at most 1 MiB of calls kept
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    calls = recordstore.load(result.run_id).calls
    assert len(calls) == 12 and calls[-1].arguments is None and calls[-1].digest
    assert not again.ok and "too large to keep" in again.stderr and "<arguments too large to keep>" in again.stderr
    left_out = recordstore.load(cut.run_id).not_kept
    assert cut.ok and 0 < left_out < 12 and len(recordstore.load(cut.run_id).calls) == 12 - left_out
    assert (recordstore.root() / f"{cut.run_id}.json").stat().st_size < 1024 + 4096  # the calls, the code and tools
    assert not cut_again.ok and f"the recording left out its last {left_out} calls, past its cap" in cut_again.stderr


@pytest.mark.fast
def test_tool_set_differences_are_named():
    old = ToolSet((ServerTools("s", (ToolInfo("s", "a", "x", {"type": "object"}), ToolInfo("s", "b"))),))
    new = ToolSet(
        (ServerTools("s", (ToolInfo("s", "a", "x", {"type": "object", "required": ["q"]}), ToolInfo("s", "c"))),)
    )
    assert recordstore.differences(old, new) == ["s.b is gone", "s.c is new", "s.a: its input schema changed"]


def write_config(path: Path, config: Any) -> Path:
    path.write_text(json.dumps(config.model_dump(mode="json", by_alias=True, exclude_none=True)))
    return path


@pytest.mark.go
def test_runs_are_recorded_and_replayed_without_servers(module_cache, tmp_path):
    async def record() -> Any:
        async with Toolbox(counter_config(tmp_path), module_cache=module_cache) as box:
            result = await box.execute(CODE)
            # The Python API replays against the live tool set, still without calling the server.
            again = await box.replay(result.run_id)
            return result, again

    result, again = anyio.run(record)
    assert result.ok and result.output == "count 3 3\n"
    assert recordstore.RUN_ID.match(result.run_id)
    assert run_to_result(result).meta["io.gocode/run"]["runId"] == result.run_id
    assert again.ok and again.output == result.output
    assert side_effects(tmp_path) == ["increment 3"]

    # The server's command now only leaves a mark: replay must not start it (nor call it).
    marker = tmp_path / "started"
    stopped = counter_config(tmp_path)
    stopped.mcp_servers["counter"] = stopped.mcp_servers["counter"].model_copy(
        update={"args": ("-c", f"open({str(marker)!r}, 'a').write('started')")}
    )
    cfg = write_config(tmp_path / "stopped.json", stopped)
    got = gocode("exec", "-c", str(cfg), "--replay", result.run_id, "--json")
    doc = json.loads(got.stdout)
    assert got.returncode == 0, got.stderr
    assert doc["output"] == "count 3 3\n" and doc["run_id"] == result.run_id
    assert not marker.exists() and side_effects(tmp_path) == ["increment 3"]

    # Another program against the same recording diverges, naming the call and what was recorded.
    other = tmp_path / "other.go"
    other.write_text(
        "c, err := increment(ctx, IncrementInput{By: 4})\nif err != nil {\n\treturn err\n}\nfmt.Println(c.Count)\n"
    )
    got = gocode("exec", "-c", str(cfg), "--replay", result.run_id, str(other))
    assert got.returncode == 1
    assert 'replay diverged: the call increment({"by":4}) (server counter, position counter.increment/' in got.stderr
    assert 'the recording has increment({"by":3})' in got.stderr
    assert not marker.exists()

    # A recorded result that no longer decodes is named.
    path = recordstore.root() / f"{result.run_id}.json"
    doc = json.loads(path.read_text())
    doc["calls"][1]["result"] = {"content": "not a list"}
    path.write_text(json.dumps(doc))
    got = gocode("exec", "-c", str(cfg), "--replay", result.run_id)
    assert got.returncode == 1
    assert "the recorded result of read({}) (server counter, position counter.read/" in got.stderr
    assert "no longer decodes as a tool result: content" in got.stderr

    # A server the config no longer has; a run id that is not one.
    empty = write_config(tmp_path / "none.json", counter_config(tmp_path).model_copy(update={"mcp_servers": {}}))
    got = gocode("exec", "-c", str(empty), "--replay", result.run_id)
    assert got.returncode == 2 and "used servers the config no longer has: counter" in got.stderr
    got = gocode("exec", "-c", str(cfg), "--replay", "nope")
    assert got.returncode == 2 and "'nope' is not a run id" in got.stderr


@pytest.mark.go
def test_replay_against_a_changed_tool_set_names_what_differs(module_cache, tmp_path):
    async def go() -> None:
        async with Toolbox(counter_config(tmp_path), module_cache=module_cache) as box:
            result = await box.execute(CODE)
        changed = counter_config(tmp_path)
        changed.mcp_servers["counter"] = changed.mcp_servers["counter"].model_copy(
            update={**demo_stdio(), "args": tuple(demo_stdio()["args"])}
        )
        async with Toolbox(changed, module_cache=module_cache) as box:
            with pytest.raises(recordstore.RecordingError) as err:
                await box.replay(result.run_id)
        assert str(err.value).startswith(f"run {result.run_id} was recorded against other tools: ")
        assert "counter.increment is gone" in str(err.value) and "counter.get_weather is new" in str(err.value)

    anyio.run(go)


@pytest.mark.go
def test_dry_run_calls_no_server_and_answers_with_schema_shaped_stubs(module_cache, tmp_path):
    cfg = write_config(tmp_path / "cfg.json", counter_config(tmp_path))
    code = tmp_path / "prog.go"
    code.write_text(CODE)
    got = gocode("exec", "-c", str(cfg), "--dry-run", "--json", str(code))
    doc = json.loads(got.stdout)
    assert got.returncode == 0, got.stderr
    assert doc["output"] == "count 0 0\n" and recordstore.RUN_ID.match(doc["run_id"])
    assert side_effects(tmp_path) == []
    assert recordstore.load(doc["run_id"]).mode == "dry-run"


def double(n: int) -> int:
    """Double a number (a Python tool)."""
    return 2 * n


@pytest.mark.go
def test_python_tools_are_answered_from_the_recording_too(module_cache, tmp_path):
    code = (
        "c, err := increment(ctx, IncrementInput{By: 3})\nif err != nil {\n\treturn err\n}\n"
        "d, err := double(ctx, DoubleInput{N: c.Count})\nif err != nil {\n\treturn err\n}\nfmt.Println(d)"
    )

    async def record() -> Any:
        async with Toolbox(counter_config(tmp_path), module_cache=module_cache, tools=[double]) as box:
            return await box.execute(code)

    result = anyio.run(record)
    assert result.ok and result.output == "6\n", result.error_text()
    # gocode exec has no Python functions, and the server cannot start: the recording answers both.
    stopped = counter_config(tmp_path)
    stopped.mcp_servers["counter"] = stopped.mcp_servers["counter"].model_copy(update={"command": "/nonexistent"})
    got = gocode("exec", "-c", str(write_config(tmp_path / "cfg.json", stopped)), "--replay", result.run_id)
    assert got.returncode == 0 and got.stdout == "6\n", got.stderr
    assert side_effects(tmp_path) == ["increment 3"]
