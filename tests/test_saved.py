"""Saved programs: kept through save_go_program or `gocode save`, offered as tools on the next
list, run with their input, and built into a binary that runs without gocode."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest

from gocode import Toolbox
from gocode.config import load_config
from gocode.errors import ConfigError
from gocode.program.code import ModelCode
from gocode.schema.builder import build_package
from gocode.tools.saved import (
    NAME,
    SAVE_TOOL_NAME,
    SavedProgram,
    SavedProgramError,
    SavedStore,
    check_name,
    store_key,
    usage,
    with_input,
)
from gocode.toolset import ServerTools, ToolInfo, ToolSet
from tests.conftest import ROOT, config_from, demo_stdio, need

GIT_SERVER = Path(sys.executable).parent / "mcp-server-git"

LAST_COMMITS = """// Prints the subjects of a repository's last commits.
type Input struct {
	Repo  string `json:"repo" desc:"path of the git repository"`
	Count int    `json:"count,omitempty"`
}
out := must(gitLog(ctx, GitLogInput{RepoPath: in.Repo, MaxCount: ptr(max(in.Count, 1))}))
for _, line := range strings.Split(out, "\\n") {
	if m, ok := strings.CutPrefix(strings.TrimSpace(line), "Message: "); ok {
		fmt.Println(m)
	}
}
"""


def git_config():
    return config_from(
        {"git": {"command": need(GIT_SERVER)}}, defaults={"codeMode": {"savedPrograms": True, "sandbox": "off"}}
    )


def subjects(n: int) -> str:
    return subprocess.run(
        ["git", "log", f"-{n}", "--format=%s"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout


@pytest.fixture
def state(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("GOCODE_STATE_DIR", str(tmp_path))
    return tmp_path


@pytest.mark.go
def test_saved_program_is_offered_on_the_next_list_and_runs(module_cache, state):
    async def go() -> None:
        changed = []
        async with Toolbox(git_config(), module_cache=module_cache, prewarm=False) as box:

            async def listener() -> None:
                changed.append(True)

            box.on_tools_changed(listener)
            assert SAVE_TOOL_NAME in [t.name for t in box.tools()]
            r = await box.call(SAVE_TOOL_NAME, {"name": "last_commits", "code": LAST_COMMITS})
            assert not r.is_error, r.text
            assert changed == [True]
            tool = next(t for t in box.tools() if t.name == "last_commits")
            assert tool.description == "Prints the subjects of a repository's last commits."
            assert tool.input_schema == {
                "type": "object",
                "properties": {
                    "repo": {"type": "string", "description": "path of the git repository"},
                    "count": {"type": "integer"},
                },
                "required": ["repo"],
                "additionalProperties": False,
            }
            r = await box.call("last_commits", {"repo": str(ROOT), "count": 2})
            assert not r.is_error and r.text == subjects(2), r.text

            # Bad input: each a clear error, and the saved program is left as it was.
            for args, expect in [
                ({"name": "git_log", "code": LAST_COMMITS}, "the name 'git_log' is taken by a tool"),
                ({"name": "last_commits", "code": LAST_COMMITS}, "exists; pass replace"),
                ({"name": "no_input", "code": 'fmt.Println("x")'}, "declares its input as `type Input struct"),
                ({"name": "Bad-Name", "code": LAST_COMMITS}, "bad saved program name"),
                ({"name": "broken", "code": "type Input struct{}\nundefinedThing()"}, "undefined: undefinedThing"),
                ({"name": "x", "code": 1}, "needs string arguments"),
            ]:
                r = await box.call(SAVE_TOOL_NAME, args)
                assert r.is_error and expect in r.text, r.text
            r = await box.call("last_commits", {"repo": str(ROOT), "bogus": 1})
            assert r.is_error and 'unknown field "bogus"' in r.text, r.text
        assert SavedStore.for_model(git_config(), None).load("last_commits").source == LAST_COMMITS
        assert SavedStore.for_model(git_config(), None).names() == ["last_commits"]

        # The next session (a later turn, a restarted server) offers it from the start.
        async with Toolbox(git_config(), module_cache=module_cache, prewarm=False) as box:
            assert "last_commits" in [t.name for t in box.tools()]
            r = await box.call(SAVE_TOOL_NAME, {"name": "last_commits", "code": LAST_COMMITS, "replace": True})
            assert not r.is_error, r.text

    anyio.run(go)


# Package-level code runs before main: at the variable's initialisation and in init().
INITIALISERS = """// Reads the machine's secrets as soon as it starts.
type Input struct {
	Path string `json:"path" desc:"a path"`
	Tags []string `json:"tags,omitempty"`
}
var leaked = func() int {
	secret, err := os.ReadFile("/etc/shadow")
	os.WriteFile(MARKER+".var", append([]byte(fmt.Sprint(err)), secret...), 0o600)
	return len(secret)
}()
func init() { os.WriteFile(MARKER+".init", []byte(os.Getenv("PATH")), 0o600) }
func read() int { return leaked }
fmt.Println(in.Path, read())
"""


@pytest.mark.go
def test_saving_runs_none_of_the_program(module_cache, state, tmp_path):
    marker = tmp_path / "ran"
    code = INITIALISERS.replace("MARKER", json.dumps(str(marker)))

    async def go() -> None:
        async with Toolbox(git_config(), module_cache=module_cache, prewarm=False) as box:
            r = await box.call(SAVE_TOOL_NAME, {"name": "initialisers", "code": code})
            assert not r.is_error, r.text
            tool = next(t for t in box.tools() if t.name == "initialisers")
            # The schema is still the Input's, read from its declaration.
            assert tool.input_schema == {
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "a path"},
                    "tags": {"type": "array", "items": {"type": "string"}},
                },
                "required": ["path"],
                "additionalProperties": False,
            }

    anyio.run(go)
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("ran")) == []


@pytest.mark.go
def test_saving_a_program_is_bounded_by_the_runs_timeout(module_cache, state):
    # A model's save builds what it could not run for longer either: stopped at codeMode.timeout,
    # its compiler left running nowhere, and nothing saved.
    from tests.test_build_timeout import MARGIN_S, building, slow_to_build

    body, token = slow_to_build(40_000)  # its compile takes far longer than 4 s
    code = f"// Slow to build.\ntype Input struct{{}}\n\n{body}\n"
    cfg = config_from(
        {"weather": demo_stdio()}, defaults={"codeMode": {"savedPrograms": True, "sandbox": "off", "timeout": 4}}
    )
    runs = module_cache.state / "runs"

    async def go() -> tuple[str, bool, float, set[int], list[str]]:
        async with Toolbox(cfg, module_cache=module_cache, prewarm=False) as box:
            start, seen = time.monotonic(), set()
            call = asyncio.ensure_future(box.call(SAVE_TOOL_NAME, {"name": "slow", "code": code}))
            while not call.done():
                seen |= building(runs, token)
                await asyncio.wait({call}, timeout=0.05)
            took = time.monotonic() - start
            r = call.result()
            return r.text, r.is_error, took, seen, [t.name for t in box.tools()]

    text, is_error, took, seen, names = asyncio.run(go())
    assert is_error and "did not finish within 4 s (codeMode.timeout)" in text, text
    assert took < 4 + MARGIN_S, took
    assert seen, "the compiler was never seen running: the timeout did not land in the build"
    assert [pid for pid in seen if Path(f"/proc/{pid}").exists()] == [] and building(runs, token) == set()
    assert "slow" not in names


@pytest.mark.go
def test_schemas_follow_encoding_json_from_the_declarations(module_cache):
    """What the reflection gave, and where it was wrong (an embedded struct, time.Time) what
    encoding/json decodes; enums from the constants declared beside a type."""
    unit = {"type": "string", "enum": ["celsius", "fahrenheit"]}
    weather = ToolInfo("demo", "get_weather", "", {"type": "object", "properties": {"unit": unit}})
    pkg = build_package(ToolSet((ServerTools("demo", (weather,)),)))
    code = """type Kind int
const (
	KindA Kind = 1
	KindB Kind = 2
)
type Base struct {
	ID string `json:"id"`
}
type Item struct {
	Name string `json:"name"`
	Next *Item `json:"next"`
	Counts map[string]int `json:"counts,omitzero"`
	Raw []byte `json:"raw"`
	Skip string `json:"-"`
	hidden int
	Any any
}
type Input struct {
	Base
	Unit GetWeatherInputUnit `json:"unit"`
	Kind Kind `json:"kind,omitempty"`
	Items []Item `json:"items"`
	When time.Time `json:"when"`
	Wait time.Duration `json:"wait,omitempty"`
	Opt *float64 `json:"opt"`
}
fmt.Println(in)
"""
    got = anyio.run(module_cache.schemas, pkg, ModelCode(with_input(code, "{}")), ("Input", "Missing"))
    item = {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "next": {"type": "object"},
            "counts": {"type": "object", "additionalProperties": {"type": "integer"}},
            "raw": {"type": "string", "contentEncoding": "base64"},
            "Any": {},
        },
        "required": ["name", "raw", "Any"],  # a pointer is optional
        "additionalProperties": False,
    }
    assert got == {
        "Input": {
            "type": "object",
            "properties": {
                "id": {"type": "string"},
                "unit": unit,
                "kind": {"type": "integer", "enum": [1, 2]},
                "items": {"type": "array", "items": item},
                "when": {"type": "string", "format": "date-time"},
                "wait": {"type": "integer"},
                "opt": {"type": "number"},
            },
            "required": ["unit", "items", "when", "id"],
            "additionalProperties": False,
        }
    }


@pytest.mark.go
def test_built_binary_runs_standalone(module_cache, state, tmp_path):
    cfg = tmp_path / "gocode.json"
    # A secret the config takes from the environment must not be written into the binary.
    secret = f"s3cret-{os.getpid()}-{tmp_path.name}"
    server = {"command": need(GIT_SERVER), "env": {"GIT_SECRET_FOR_TEST": "${SAVED_TEST_SECRET}"}}
    cfg.write_text(json.dumps({"mcpServers": {"git": server}}))
    src = tmp_path / "last.go"
    src.write_text(LAST_COMMITS)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SAVED_TEST_SECRET": secret}
    gocode = [sys.executable, "-m", "gocode.cli"]
    save = subprocess.run([*gocode, "save", "-c", str(cfg), "last_commits", str(src)], env=env, capture_output=True)
    assert save.returncode == 0, save.stderr
    again = subprocess.run([*gocode, "save", "-c", str(cfg), "last_commits", str(src)], env=env, capture_output=True)
    assert again.returncode == 1 and b"exists; pass replace (--force)" in again.stderr
    out = tmp_path / "last_commits"
    built = subprocess.run(
        [*gocode, "build", "-c", str(cfg), "last_commits", "-o", str(out)], env=env, capture_output=True
    )
    assert built.returncode == 0, built.stderr
    # It says plainly that what it wrote runs outside the sandbox, and how to run it inside.
    assert b"runs unconfined" in built.stderr and b"gocode serve" in built.stderr
    helped = subprocess.run([*gocode, "build", "--help"], env=env, capture_output=True, text=True)
    assert "runs UNCONFINED" in " ".join(helped.stdout.split()), helped.stdout
    assert secret.encode() not in out.read_bytes()
    assert b"${SAVED_TEST_SECRET}" in out.read_bytes()
    # Outside gocode: no GOCODE_SERVERS, no Python path, another directory.
    run = subprocess.run(
        [str(out), json.dumps({"repo": str(ROOT), "count": 3})],
        env={"PATH": "/usr/bin:/bin", "SAVED_TEST_SECRET": "x"}, cwd="/", capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert run.returncode == 0 and run.stdout == subjects(3), run.stderr
    unset = subprocess.run([str(out), "{}"], env={"PATH": "/usr/bin:/bin"}, capture_output=True, text=True, timeout=60)
    assert unset.returncode == 2 and "SAVED_TEST_SECRET is not set" in unset.stderr
    bad = subprocess.run([str(out), "{"], env={}, capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "bad input" in bad.stderr


@pytest.mark.fast
def test_a_binarys_usage_names_its_input_from_the_schema_and_no_control_character():
    schema = {
        "type": "object",
        "properties": {
            "repo": {"type": "string", "description": "path\x1b[2J of the repository"},
            "count": {"type": ["integer", "null"]},
            "unit": {"enum": ["c", "f"]},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["repo", "unit"],
    }
    text = usage(SavedProgram("last_commits", "Prints\x07 commits.", schema, ""))
    assert text.startswith("Usage: last_commits [INPUT_JSON]\n\nPrints? commits.\n")
    assert "  repo   string — path?[2J of the repository\n" in text
    assert "  count  integer, optional\n" in text and '  unit   one of "c", "f"\n' in text
    assert "  tags   array of string, optional\n" in text
    assert """  last_commits '{"repo": "...", "unit": "c"}'\n""" in text
    assert not any(ord(c) < 32 and c != "\n" for c in text)
    assert "Input: none ({})." in usage(SavedProgram("p", "", {"type": "object"}, ""))


@pytest.mark.fast
def test_store_refuses_overwrite_and_bad_names(tmp_path):
    store = SavedStore(tmp_path)
    one = SavedProgram("p", "first", {"type": "object"}, "type Input struct{}\n")
    store.store(one)
    with pytest.raises(SavedProgramError, match="exists"):
        store.store(SavedProgram("p", "second", {}, "x"))
    assert store.load("p") == one
    store.store(SavedProgram("p", "second", {}, "y"), replace=True)
    assert store.load("p").source == "y"
    assert [p.name for p in tmp_path.iterdir()] == ["p"]  # no temporary left behind
    with pytest.raises(SavedProgramError, match="no saved program 'q'"):
        store.load("q")
    for bad in ["", "Up", "../x", "a" * 65, "1a"]:
        with pytest.raises(SavedProgramError, match="bad saved program name"):
            check_name(bad, set())


MINE = '// Only the model that saved it.\ntype Input struct{}\nfmt.Println("mine")\n'


def _config_file(path: Path, share: str | None = None) -> Path:
    mode = {"savedPrograms": True, "sandbox": "off"} | ({"savedProgramsShare": share} if share is not None else {})
    models = [{"ref": "m1", "codeMode": mode}, {"ref": "m2", "codeMode": mode}]
    path.write_text(json.dumps({"mcpServers": {"git": {"command": need(GIT_SERVER)}}, "models": models}))
    return path


@pytest.mark.go
def test_each_config_and_model_has_its_own_saved_programs(module_cache, state, tmp_path):
    first = _config_file(tmp_path / "first.json")
    other = _config_file(tmp_path / "other.json")  # another project's config, the same model names
    shared = [_config_file(tmp_path / f"shared{i}.json", share="team") for i in (1, 2)]

    async def sees(path: Path, model: str, code: str = "fmt.Print(must(onlyMine(ctx)))") -> tuple[bool, bool, str]:
        async with Toolbox(load_config(path), model, module_cache=module_cache, prewarm=False) as box:
            listed = "only_mine" in [t.name for t in box.tools()]
            run = await box.execute(code)
            return listed, "onlyMine" in box.code_mode.description(), run.output if run.ok else run.stderr

    async def save(path: Path, model: str, code: str, replace: bool = False) -> str:
        async with Toolbox(load_config(path), model, module_cache=module_cache, prewarm=False) as box:
            r = await box.call(SAVE_TOOL_NAME, {"name": "only_mine", "code": code, "replace": replace})
            return r.text

    async def go() -> None:
        assert "offered from now on" in await save(first, "m1", MINE)
        assert await sees(first, "m1") == (True, True, "mine\n")
        for path, model in ((first, "m2"), (other, "m1"), (shared[0], "m1")):
            listed, declared, answer = await sees(path, model)
            assert (listed, declared) == (False, False) and "undefined: onlyMine" in answer, (path, model, answer)
        # Another model saving the name makes its own program; the first model's stays as it was.
        assert "offered from now on" in await save(first, "m2", MINE.replace("mine", "theirs"))
        assert (await sees(first, "m1"))[2] == "mine\n" and (await sees(first, "m2"))[2] == "theirs\n"
        # Shared by name: every model of every config that sets it, and no one else.
        assert "offered from now on" in await save(shared[0], "m1", MINE.replace("mine", "team"))
        assert (await sees(shared[1], "m2"))[2] == "team\n"
        assert (await sees(first, "m1"))[2] == "mine\n"

    anyio.run(go)


@pytest.mark.go
def test_programs_saved_before_per_model_stores_are_offered_to_no_one_until_adopted(module_cache, state, tmp_path):
    config = _config_file(tmp_path / "gocode.json")
    SavedStore(state / "saved").store(SavedProgram("only_mine", "old", {"type": "object"}, MINE))  # the old layout
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    gocode = [sys.executable, "-m", "gocode.cli"]

    async def listed(model: str) -> bool:
        async with Toolbox(load_config(config), model, module_cache=module_cache, prewarm=False) as box:
            return "only_mine" in [t.name for t in box.tools()]

    assert not anyio.run(listed, "m1") and not anyio.run(listed, "m2")
    before = subprocess.run(
        [*gocode, "saved", "-c", str(config), "--model", "m1"], env=env, capture_output=True, text=True
    )
    assert before.stdout == "" and "`gocode saved --adopt`" in before.stderr, before.stderr
    adopt = [*gocode, "saved", "-c", str(config), "--model", "m1", "--adopt"]
    got = subprocess.run(adopt, env=env, capture_output=True, text=True)
    assert got.returncode == 0 and got.stdout == "only_mine\told\n" and "adopted only_mine" in got.stderr, got.stderr
    assert anyio.run(listed, "m1") and not anyio.run(listed, "m2")
    other = subprocess.run(
        [*gocode, "saved", "-c", str(config), "--model", "m2"], env=env, capture_output=True, text=True
    )
    assert (other.stdout, other.stderr) == ("", "")


@pytest.mark.fast
def test_store_keys_name_the_config_file_and_the_model(tmp_path, monkeypatch):
    a, b = _config_file(tmp_path / "a.json"), _config_file(tmp_path / "b.json")
    monkeypatch.chdir(tmp_path)
    keys = {store_key(load_config(p), m) for p in (a, b, "a.json") for m in ("m1", "m2")}
    assert len(keys) == 4 and all(k.startswith("m-") and not NAME.match(k) for k in keys)
    assert store_key(load_config("a.json"), "m1") == store_key(load_config(a), "m1")
    team = _config_file(tmp_path / "team.json", share="team")
    assert store_key(load_config(team), "m2") == "shared-team"
    for bad in ("Team", "../x", "", "a" * 65, "-x"):
        _config_file(tmp_path / "bad.json", share=bad)
        with pytest.raises(ConfigError, match="savedProgramsShare"):
            load_config(tmp_path / "bad.json")
