"""Real servers' full tool lists, fetched live: every tool of server-everything,
mcp-server-time, server-memory, server-filesystem, server-sequential-thinking and
mcp-server-git compiles, and every generated function is callable — called with its zero
input, each call reaches the server and comes back as a result, a tool error or the server's
own refusal of the arguments, never as a gocode decoding failure (needs Go and the servers
`make setup` installs)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import EVERYTHING, ROOT, TIME_SERVER, code_mode, config_from, need, run

pytestmark = [pytest.mark.go, pytest.mark.net]

NPM_BIN = ROOT / ".cache" / "npm" / "node_modules" / ".bin"
GIT_SERVER = Path(sys.executable).parent / "mcp-server-git"

CLASSIFY = """
func classify(err error) string {
	var te *gocodert.ToolError
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &te):
		return "tool-error"
	case strings.Contains(err.Error(), "decoding structured result") || strings.Contains(err.Error(), "is not JSON for"):
		return "decode-error: " + err.Error()
	default:
		return "refused: " + err.Error()
	}
}
"""


def servers(tmp: Path) -> dict[str, dict]:
    (tmp / "files").mkdir()
    (tmp / "files" / "hello.txt").write_text("hello\n")
    repo = tmp / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return {
        "everything": {"command": need(EVERYTHING)},
        "time": {"command": need(TIME_SERVER)},
        "memory": {"command": need(NPM_BIN / "mcp-server-memory"), "env": {"MEMORY_FILE_PATH": str(tmp / "mem.jsonl")}},
        "files": {"command": need(NPM_BIN / "mcp-server-filesystem"), "args": [str(tmp / "files")]},
        "thinking": {"command": need(NPM_BIN / "mcp-server-sequential-thinking")},
        "git": {"command": need(GIT_SERVER), "args": ["--repository", str(repo)], "cwd": str(tmp)},
    }


def test_every_tool_of_six_real_servers_compiles_and_is_callable(module_cache, tmp_path):
    # Every tool is called, the destructive ones too: approvals (tests/test_approvals.py) are off here.
    no_approvals = {"defaults": {"codeMode": {"approval": {"enabled": False}}}}
    cm = code_mode(config_from(servers(tmp_path), **no_approvals), module_cache)
    funcs = cm.package.funcs
    by_server = {
        s: [f for f in funcs if f.server == s] for s in ("everything", "time", "memory", "files", "thinking", "git")
    }
    assert all(len(fs) >= 1 for fs in by_server.values()), {s: len(fs) for s, fs in by_server.items()}
    assert len(funcs) >= 50
    calls = []
    for f in funcs:
        args = f"ctx, {f.input_type}{{}}" if f.input_type else "ctx"
        calls.append(
            f"\twg.Add(1)\n\tgo func() {{\n\t\tdefer wg.Done()\n\t\t_, err := {f.name}({args})\n"
            f'\t\tmu.Lock()\n\t\tfmt.Printf("%s\\t%s\\n", {f.name!r}, classify(err))\n\t\tmu.Unlock()\n\t}}()'.replace(
                "'", '"'
            )
        )
    code = CLASSIFY + (
        "ctx, cancel := context.WithTimeout(ctx, 60*time.Second)\ndefer cancel()\n"
        "var wg sync.WaitGroup\nvar mu sync.Mutex\n" + "\n".join(calls) + "\nwg.Wait()\n"
    )
    r = run(cm, code, timeout=120)
    assert r.ok, r.error_text()
    outcomes = dict(line.split("\t", 1) for line in r.output.strip().split("\n"))
    assert set(outcomes) == {f.name for f in funcs}
    bad = {name: o for name, o in outcomes.items() if o.startswith("decode-error")}
    assert not bad, bad
    reached = sum(o in ("ok", "tool-error") for o in outcomes.values())
    print(f"{len(funcs)} real tools compiled; zero-input calls: {reached} answered, {len(funcs) - reached} refused")
    assert reached >= len(funcs) // 2, outcomes


def test_real_servers_with_valid_input(module_cache, tmp_path):
    cm = code_mode(config_from(servers(tmp_path)), module_cache)
    code = """\
if _, err := createEntities(ctx, CreateEntitiesInput{Entities: []CreateEntitiesInputEntitiesItem{{Name: "go", EntityType: "language", Observations: []string{"compiled"}}}}); err != nil {
	return err
}
graph, err := readGraph(ctx)
if err != nil {
	return err
}
fmt.Println("entities:", len(graph.Entities), graph.Entities[0].Name)
text, err := readTextFile(ctx, ReadTextFileInput{Path: "hello.txt"})
if err != nil {
	return err
}
fmt.Println("file:", strings.TrimSpace(text.Content))
thought, err := sequentialthinking(ctx, SequentialthinkingInput{Thought: "first", ThoughtNumber: 1, TotalThoughts: 1, NextThoughtNeeded: SequentialthinkingInputNextThoughtNeeded{Bool: ptr(false)}})
if err != nil {
	return err
}
fmt.Println("thoughts:", thought.ThoughtNumber, thought.TotalThoughts)
status, err := gitStatus(ctx, GitStatusInput{RepoPath: repo})
if err != nil {
	return err
}
fmt.Println("git:", strings.Contains(status, "No commits yet"))
now, err := getCurrentTime(ctx, GetCurrentTimeInput{Timezone: "Europe/Paris"})
if err != nil {
	return err
}
fmt.Println("tz:", now.Timezone)
"""
    repo = str(tmp_path / "repo")
    r = run(cm, f"repo := {repo!r}\n".replace("'", '"') + code, timeout=60)
    assert r.ok, r.error_text()
    assert r.output.split("\n")[:5] == [
        "entities: 1 go",
        "file: hello",
        "thoughts: 1 1",
        "git: true",
        "tz: Europe/Paris",
    ]
