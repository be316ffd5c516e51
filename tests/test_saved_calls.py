"""Saved programs as Go functions: offered in the model view, search and the tool list, called
by later programs with a typed result, counted by approvals for the tools they reach, refused
when they would call themselves or when their tools changed since they were saved.

Against the demo weather server and tests/servers/notes_server.py (annotated tools), through
the Python API, `gocode serve` with the Python `mcp` client, and the `gocode` commands."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import mcp_types as types
import pytest
import yaml
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from gocode import Toolbox
from gocode.config import load_config
from gocode.program.plan import Plan
from gocode.schema.builder import build_package
from gocode.tools.saved import (
    MAX_DEPTH,
    SavedCalls,
    SavedProgram,
    SavedProgramError,
    SavedStore,
    build_binary,
    differences,
    expand_plan,
    reaches,
)
from gocode.toolset import ServerTools, ToolInfo, ToolSet
from tests.conftest import ROOT, config_from, demo_stdio

NOTES = {"command": sys.executable, "args": [str(ROOT / "tests" / "servers" / "notes_server.py")]}
SETTINGS = {"codeMode": {"savedPrograms": True, "sandbox": "off"}}
GOCODE = [sys.executable, "-m", "gocode.cli"]

CITY_TEMPERATURE = """// The temperature in a city, in Celsius or Fahrenheit.
type Input struct {
	City       string `json:"city" desc:"name of the city"`
	Fahrenheit bool   `json:"fahrenheit,omitempty"`
}
type Output struct {
	City        string  `json:"city"`
	Temperature float64 `json:"temperature"`
}
unit := UnitCelsius
if in.Fahrenheit {
	unit = UnitFahrenheit
}
w := must(getWeather(ctx, GetWeatherInput{City: in.City, Unit: unit}))
result(Output{City: in.City, Temperature: w.Temperature})
"""

CALLS_IT = """t := must(cityTemperature(ctx, CityTemperatureInput{City: "Paris", Fahrenheit: ptr(true)}))
fmt.Printf("%s %.1f\\n", t.City, t.Temperature)
"""

# Calls the saved program it is told to by name: no one can say before it runs which one.
RELAY = """// Calls the saved program named next with the same input.
type Input struct {
	Next string `json:"next"`
}
v, err := callTool(ctx, "saved."+in.Next, map[string]any{"next": in.Next})
if err != nil {
	return err
}
fmt.Println(v)
"""

PING = 'type Input struct{}\nfmt.Println("ping")\n'
PONG = "type Input struct{}\nfmt.Println(must(ping(ctx)))\n"
PING_CALLS_PONG = "type Input struct{}\nfmt.Println(must(pong(ctx)))\n"

WIPE = """// Deletes the hello note.
type Input struct{}
fmt.Println(must(deleteNote(ctx, DeleteNoteInput{Name: "hello"})).Result)
"""
TIDY = "// Tidies up.\ntype Input struct{}\nfmt.Print(must(wipe(ctx)))\n"
READ = 'fmt.Printf("%q\\n", must(readNote(ctx, ReadNoteInput{Name: "hello"})).Result)\n'


@pytest.fixture
def state(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("GOCODE_STATE_DIR", str(tmp_path / "state"))
    return tmp_path / "state"


def demo_config():
    return config_from({"demo": demo_stdio()}, defaults=SETTINGS)


@pytest.mark.go
def test_a_later_program_calls_a_saved_program_and_gets_its_typed_result(module_cache, state):
    async def go() -> None:
        async with Toolbox(demo_config(), module_cache=module_cache, prewarm=False) as box:
            # Nothing saved: nothing beyond the save tool, and no `saved` server in the view.
            assert [t.name for t in box.tools()] == ["execute_go_code", "save_go_program"]
            assert "server saved" not in box.code_mode.description()
            r = await box.call("save_go_program", {"name": "city_temperature", "code": CITY_TEMPERATURE})
            assert not r.is_error, r.text
            tool = next(t for t in box.tools() if t.name == "city_temperature")
            assert tool.output_schema == {
                "type": "object",
                "properties": {"city": {"type": "string"}, "temperature": {"type": "number"}},
                "required": ["city", "temperature"],
                "additionalProperties": False,
            }
            # Beside execute_go_code: its declaration is in the model view, and search finds it.
            view = box.code_mode.description()
            assert "// ===== server saved (1 tool) =====" in view
            assert "func cityTemperature(context.Context, CityTemperatureInput) (CityTemperatureOutput, error)" in view
            found = box.code_mode.search_index().search("temperature in a city in fahrenheit", 3)
            assert found[0].qualified == "saved.city_temperature"
            text, failed = box.code_mode.search_answer({"query": "temperature of a city"})  # search_go_tools
            assert not failed and "func cityTemperature(context.Context, CityTemperatureInput)" in text, text

            # Called by the model as a tool: the Output is the structured result.
            r = await box.call("city_temperature", {"city": "Paris"})
            assert not r.is_error and r.result.structured_content == {"city": "Paris", "temperature": 18.5}, r.text
            # Its input is given at run time: one build serves every input.
            r = await box.call("city_temperature", {"city": "Oslo"})
            assert r.result.structured_content == {"city": "Oslo", "temperature": 4.0}, r.text
            assert r.run is not None and r.run.cached_binary

            # Called from Go by a later program: a typed result.
            run = await box.execute(CALLS_IT)
            assert (run.ok, run.output) == (True, "Paris 65.3\n"), run.stderr
            assert [(c.server, c.tool) for c in run.tool_calls] == [("saved", "city_temperature")]
            assert run.plan == {"tools": ["saved.city_temperature"], "anyTool": False, "anyToolReasons": []}

            # A saved program that would call itself is refused when saved …
            for name, code in (("ping", PING), ("pong", PONG)):
                r = await box.call("save_go_program", {"name": name, "code": code})
                assert not r.is_error, r.text
            r = await box.call("save_go_program", {"name": "ping", "code": PING_CALLS_PONG, "replace": True})
            assert r.is_error and "'ping' would call itself (ping → pong → ping)" in r.text, r.text
            assert box.code_mode.saved_store().load("ping").source == PING  # nothing overwritten
            run = await box.execute("fmt.Print(must(pong(ctx)))")
            assert (run.ok, run.output) == (True, "ping\n\n"), run.stderr

            # … and, where the name is only known at run time, when called.
            r = await box.call("save_go_program", {"name": "relay", "code": RELAY})
            assert not r.is_error, r.text
            run = await box.execute('fmt.Println(must(relay(ctx, RelayInput{Next: "relay"})))')
            assert not run.ok and "saved program 'relay' calls itself (relay → relay)" in run.stderr, run.stderr
            r = await box.call("relay", {"next": "relay"})
            assert r.is_error and "calls itself (relay → relay)" in r.text, r.text
            r = await box.call("relay", {"next": "city_temperature"})
            assert r.is_error and 'unknown field "next"' in r.text, r.text

    anyio.run(go)


@pytest.mark.go
def test_approval_counts_the_tools_a_saved_program_reaches(module_cache, state, tmp_path):
    asked: list = []

    # One config file for the Toolbox and `gocode exec` below: the saved programs are its model's.
    config = tmp_path / "gocode.yaml"
    config.write_text(yaml.safe_dump({"mcpServers": {"notes": NOTES}, "defaults": SETTINGS}))

    async def go():
        async with Toolbox(load_config(config), module_cache=module_cache, prewarm=False) as box:
            for name, code in (("wipe", WIPE), ("tidy", TIDY)):
                r = await box.call("save_go_program", {"name": name, "code": code})  # saving runs nothing
                assert not r.is_error, r.text
            assert box.code_mode.saved_store().load("tidy").calls == ("saved.wipe",)
            refused = await box.execute("fmt.Print(must(tidy(ctx)))")  # two levels down
            direct, _ = await box.call_mcp("tidy", {})
            kept = await box.execute(READ)
            approved = await box.execute("fmt.Print(must(tidy(ctx)))", approve=lambda r: asked.append(r) or True)
            gone = await box.execute(READ)
            return refused, direct, kept, approved, gone

    refused, direct, kept, approved, gone = anyio.run(go)
    assert refused.phase == "approval" and "notes.delete_note" in refused.stderr, refused.stderr
    assert refused.tool_calls == []
    text = "".join(c.text for c in direct.content if isinstance(c, types.TextContent))
    assert direct.is_error and "notes.delete_note" in text and "no one can be asked" in text
    assert kept.output == '"Hello, world."\n'
    # Asked once, for everything the program can reach; the saved programs it ran asked no one.
    assert len(asked) == 1 and asked[0].tools == ("notes.delete_note",)
    assert asked[0].plan.names() == ["notes.delete_note", "saved.tidy", "saved.wipe"]
    assert (approved.ok, approved.output) == (True, "deleted hello\n"), approved.stderr
    assert gone.output == '""\n'

    # `gocode exec --plan` shows what approving it means, running nothing.
    prog = tmp_path / "prog.go"
    prog.write_text("fmt.Print(must(tidy(ctx)))\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    got = subprocess.run(
        [*GOCODE, "exec", "-c", str(config), "--plan", str(prog)], env=env, capture_output=True, text=True
    )
    want = "saved.tidy\nwith the saved programs it calls: notes.delete_note, saved.tidy, saved.wipe\n"
    want += "held for approval: notes.delete_note\n"
    assert (got.returncode, got.stdout) == (0, want), got.stderr


class HeldBuilds:
    """The real module cache, with the build of a program containing ``hold`` kept from returning
    until the test releases it (the Go build itself is done): a moment a test can act in."""

    def __init__(self, module_cache, hold: str) -> None:
        self._ws, self.hold = module_cache, hold
        self.building, self.release = anyio.Event(), anyio.Event()

    def __getattr__(self, name):
        return getattr(self.__dict__["_ws"], name)  # never through itself: no recursion before __init__

    async def build(self, pkg, code, filename="model.go", runner="sdk", on_linking=None, timeout=None):
        built = await self._ws.build(pkg, code, filename, runner, on_linking, timeout=timeout)
        if self.hold in code.source:
            self.building.set()
            with anyio.fail_after(60):
                await self.release.wait()
        return built


BENIGN = '// Says hello.\ntype Input struct{}\nfmt.Println("benign")\n'
CALLS_HELPER = "fmt.Print(must(helper(ctx)))\n"


@pytest.mark.go
def test_a_saved_program_replaced_during_a_build_changes_nothing_in_that_call(module_cache, state):
    """The approval is decided on the saved programs the call took before its build and the run
    is given exactly those: replacing one meanwhile neither lets a destructive one through
    unapproved nor swaps the code that runs."""
    held = HeldBuilds(module_cache, CALLS_HELPER)

    async def race(first: str, then: str):
        config = config_from({"notes": NOTES}, defaults=SETTINGS)
        async with Toolbox(config, module_cache=held, prewarm=False) as box:
            r = await box.call("save_go_program", {"name": "helper", "code": first, "replace": True})
            assert not r.is_error, r.text
            held.building, held.release = anyio.Event(), anyio.Event()
            out = {}

            async def call() -> None:
                out["run"] = await box.execute(CALLS_HELPER)  # no approver: anything held is refused

            async with anyio.create_task_group() as tg:
                tg.start_soon(call)
                with anyio.fail_after(60):
                    await held.building.wait()
                r = await box.call("save_go_program", {"name": "helper", "code": then, "replace": True})
                assert not r.is_error, r.text
                held.release.set()
            left = await box.execute(READ)
            return out["run"], left.output

    # Destructive when the call started, benign once built: held, and nothing deleted.
    run, note = anyio.run(race, WIPE, BENIGN)
    assert run.phase == "approval" and "notes.delete_note" in run.stderr, (run.phase, run.stderr, run.output)
    assert run.tool_calls == [] and note == '"Hello, world."\n'
    # Benign when the call started, destructive once built: the code that runs is the benign one.
    run, note = anyio.run(race, BENIGN, WIPE)
    assert (run.ok, run.output) == (True, "benign\n"), (run.phase, run.stderr)
    assert note == '"Hello, world."\n'


@pytest.mark.go
def test_an_approval_is_for_the_saved_programs_code_it_was_asked_for(module_cache, state):
    """A client approves a program hash and retries (the 2026-07-28 flow): a saved program the
    program reaches, replaced in between by one of the same name, description and input, is
    another program; the approval given for the first does not run the second."""
    other = WIPE.replace('"hello"', '"other"')

    async def go():
        config = config_from({"notes": NOTES}, defaults=SETTINGS)
        async with Toolbox(config, module_cache=module_cache, prewarm=False) as box:
            r = await box.call("save_go_program", {"name": "helper", "code": WIPE})
            assert not r.is_error, r.text
            asked: list = []
            first = await box.execute(CALLS_HELPER, approve=lambda req: asked.append(req) or False)
            r = await box.call("save_go_program", {"name": "helper", "code": other, "replace": True})
            assert not r.is_error, r.text
            retry = await box.execute(
                CALLS_HELPER, approve=lambda req: asked.append(req) or req.program_hash == asked[0].program_hash
            )
            same = await box.execute(CALLS_HELPER, approve=lambda req: req.program_hash == asked[1].program_hash)
            return first, retry, same, asked

    first, retry, same, asked = anyio.run(go)
    assert first.phase == retry.phase == "approval" and retry.tool_calls == [], retry.output
    assert asked[0].tools == asked[1].tools == ("notes.delete_note",) and asked[0].code == asked[1].code
    # Approved for what it is now, it runs.
    assert (same.ok, same.output) == (True, "deleted other\n"), same.stderr


@pytest.mark.go
def test_a_saved_program_whose_tools_changed_is_refused_naming_what_differs(module_cache, state):
    async def go():
        async with Toolbox(demo_config(), module_cache=module_cache, prewarm=False) as box:
            r = await box.call("save_go_program", {"name": "city_temperature", "code": CITY_TEMPERATURE})
            assert not r.is_error, r.text
        # The server called "demo" is another one now: getWeather is gone.
        other = config_from({"demo": NOTES}, defaults=SETTINGS)
        async with Toolbox(other, module_cache=module_cache, prewarm=False) as box:
            assert "city_temperature" in [t.name for t in box.tools()]
            direct = await box.call("city_temperature", {"city": "Paris"})
            run = await box.execute(CALLS_IT)
        return direct, run

    direct, run = anyio.run(go)
    want = "saved program 'city_temperature' was saved against other tools: demo.get_weather is gone"
    assert direct.is_error and want in direct.text, direct.text
    assert not run.ok and want in run.stderr, run.stderr
    assert SavedStore.for_model(demo_config(), None).load("city_temperature").source == CITY_TEMPERATURE


@pytest.mark.go
def test_serve_lists_it_and_gocode_search_describe_and_build_know_it(module_cache, state, tmp_path):
    config = tmp_path / "gocode.yaml"
    config.write_text(yaml.safe_dump({"mcpServers": {"demo": demo_stdio()}, "defaults": SETTINGS}))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "GOCODE_STATE_DIR": str(state)}
    src = tmp_path / "city.go"
    src.write_text(CITY_TEMPERATURE)
    save = subprocess.run(
        [*GOCODE, "save", "-c", str(config), "city_temperature", str(src)], env=env, capture_output=True
    )
    assert save.returncode == 0, save.stderr
    again = subprocess.run(
        [*GOCODE, "save", "-c", str(config), "get_weather", str(src)], env=env, capture_output=True, text=True
    )
    assert again.returncode == 1 and "the name 'get_weather' is taken by a tool" in again.stderr

    params = StdioServerParameters(command=GOCODE[0], args=[*GOCODE[1:], "serve", "-c", str(config)], env=env)

    async def go():
        async with Client(stdio_client(params), mode="legacy") as c:
            listed = await c.list_tools()
            called = await c.call_tool("execute_go_code", {"code": CALLS_IT})
            return listed, called

    listed, called = anyio.run(go)
    tools = {t.name: t for t in listed.tools}
    assert set(tools) == {"execute_go_code", "save_go_program", "city_temperature"}
    assert "func cityTemperature(context.Context, CityTemperatureInput)" in (tools["execute_go_code"].description or "")
    assert [c.text for c in called.content if isinstance(c, types.TextContent)] == ["Paris 65.3\n"]

    search = subprocess.run(
        [*GOCODE, "search", "-c", str(config), "temperature", "of", "a", "city"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert search.returncode == 0 and search.stdout.splitlines()[0].split()[1] == "saved.city_temperature"
    described = subprocess.run(
        [*GOCODE, "describe", "-c", str(config), "cityTemperature"], env=env, capture_output=True, text=True
    )
    assert described.returncode == 0, described.stderr
    assert "func cityTemperature(context.Context, CityTemperatureInput) (CityTemperatureOutput, error)" in (
        described.stdout
    )

    # The binary of a saved program with an Output still builds and runs on its own.
    out = tmp_path / "city_temperature"
    built = subprocess.run(
        [*GOCODE, "build", "-c", str(config), "city_temperature", "-o", str(out)], env=env, capture_output=True
    )
    assert built.returncode == 0, built.stderr
    run = subprocess.run(
        [str(out), json.dumps({"city": "Paris"})], env={"PATH": os.environ["PATH"]}, cwd=ROOT, capture_output=True,
        text=True, timeout=60,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr


def _doc_block(doc: str, heading: str, lang: str) -> str:
    """The first ```lang block under ``heading`` of a doc."""
    section = doc.split(f"\n{heading}", 1)[1]
    return section.split(f"```{lang}\n", 1)[1].split("```", 1)[0]


def _shell_with_gocode(tmp_path: Path) -> dict[str, str]:
    """An environment where `gocode` is this checkout's command line, as a user's shell has it."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    shim = bindir / "gocode"
    shim.write_text(f'#!/bin/sh\nexec {sys.executable} -m gocode.cli "$@"\n')
    shim.chmod(0o755)
    return {**os.environ, "PATH": f"{bindir}:{os.environ['PATH']}", "PYTHONPATH": str(ROOT)}


@pytest.mark.go
def test_the_docs_standalone_binary_example_runs_as_written(module_cache, state, tmp_path):
    """docs/saved-programs.md: save, build, and the binary's result, --help and bad input."""
    doc = (ROOT / "docs" / "saved-programs.md").read_text()
    (tmp_path / "city.go").write_text(_doc_block(doc, "## A typed result", "go"))
    config = {"mcpServers": {"demo": demo_stdio()}, "defaults": {"codeMode": {"savedPrograms": True}}}
    (tmp_path / "gocode.yaml").write_text(yaml.safe_dump(config))
    env = _shell_with_gocode(tmp_path) | {"GOCODE_STATE_DIR": str(state)}
    steps = _doc_block(doc, "## Standalone binaries", "console").split("$ ")[1:]
    assert len(steps) >= 5 and any("--help" in step for step in steps)
    for step in steps:
        command, _, expected = step.partition("\n")
        ran = subprocess.run(
            ["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
        )
        assert ran.stdout == expected, (command, ran.stderr)


CALLS_SAVED = """// Whether a city is warmer than 20 °C.
type Input struct {
	City string `json:"city"`
}
t := must(cityTemperature(ctx, CityTemperatureInput{City: in.City}))
fmt.Println(in.City, t.Temperature > 20)
"""


@pytest.mark.go
def test_gocode_save_offers_the_saved_programs_as_functions(module_cache, state, tmp_path):
    """`gocode save` checks a program as save_go_program does: it may call the saved programs."""
    config = tmp_path / "gocode.yaml"
    config.write_text(yaml.safe_dump({"mcpServers": {"demo": demo_stdio()}, "defaults": SETTINGS}))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "GOCODE_STATE_DIR": str(state)}
    for name, code in (("city_temperature", CITY_TEMPERATURE), ("is_warm", CALLS_SAVED)):
        (tmp_path / f"{name}.go").write_text(code)
        saved = subprocess.run(
            [*GOCODE, "save", "-c", str(config), name, str(tmp_path / f"{name}.go")],
            env=env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert saved.returncode == 0, saved.stderr
    assert SavedStore.for_model(load_config(config), None).load("is_warm").calls == ("saved.city_temperature",)
    (tmp_path / "run.go").write_text('fmt.Print(must(isWarm(ctx, IsWarmInput{City: "Tokyo"})))\n')
    ran = subprocess.run(
        [*GOCODE, "exec", "-c", str(config), str(tmp_path / "run.go")], env=env, capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip
    assert ran.returncode == 0 and ran.stdout == "Tokyo true\n", ran.stderr


# --- pure rules --------------------------------------------------------------------------------


def program(name: str, calls: tuple[str, ...] = (), any_tool: tuple[str, ...] = (), uses=None) -> SavedProgram:
    return SavedProgram(name, "", {"type": "object"}, "type Input struct{}\n", None, calls, any_tool, uses)


@pytest.mark.fast
def test_reach_and_loops_through_other_saved_programs():
    saved = {
        "a": program("a", ("saved.b", "git.git_log")),
        "b": program("b", ("saved.c",)),
        "c": program("c", ("notes.delete_note",)),
        "d": program("d", (), ("callTool is given a name computed at run time",)),
    }
    assert reaches("c", ["saved.a"], saved) == ["c", "a", "b", "c"]
    assert reaches("x", ["saved.a"], saved) == []
    assert reaches("a", ["saved.a"], saved) == ["a", "a"]
    plan = expand_plan(Plan((("saved", "a"),)), saved)
    assert plan.names() == ["git.git_log", "notes.delete_note", "saved.a", "saved.b", "saved.c"] and not plan.is_any
    anyway = expand_plan(Plan((("saved", "d"),)), saved)
    assert anyway.any_tool == ("saved program d: callTool is given a name computed at run time",)
    same = Plan((("git", "git_log"),))
    assert expand_plan(same, saved) is same


@pytest.mark.fast
def test_changed_tools_are_named():
    then = {"git.git_log": {"inputSchema": {"type": "object"}, "outputSchema": None}}
    p = program("a", ("git.git_log", "git.git_status"), uses=then | {"git.git_status": then["git.git_log"]})
    now = {("git", "git_log"): ToolInfo("git", "git_log", "other words", {"type": "object"})}
    assert differences(p, now) == ["git.git_status is gone"]
    now[("git", "git_status")] = ToolInfo("git", "git_status", "", {"type": "object", "required": ["x"]})
    assert differences(p, now) == ["git.git_status: its input schema changed"]


@pytest.mark.fast
def test_saved_calls_refuse_loops_and_depth_before_running_anything():
    ran: list = []

    async def run(p, arguments, chain, timeout):
        ran.append(chain)
        return types.CallToolResult(content=[])

    async def go():
        programs = [program(n) for n in "abcdef"]
        loop = await SavedCalls(programs, run, ("a", "b")).call("a", {}, 1.0)
        deep = await SavedCalls(programs, run, tuple("abcd"[:MAX_DEPTH])).call("e", {}, 1.0)
        unknown = await SavedCalls(programs, run, ()).call("zz", {}, 1.0)
        fine = await SavedCalls(programs, run, ("a",)).call("b", {}, 1.0)
        return loop, deep, unknown, fine

    loop, deep, unknown, fine = anyio.run(go)
    assert loop.is_error and "calls itself (a → b → a)" in loop.content[0].text
    assert deep.is_error and f"at most {MAX_DEPTH} levels" in deep.content[0].text
    assert unknown.is_error and "no saved program 'zz'" in unknown.content[0].text
    assert not fine.is_error and ran == [("a", "b")]


@pytest.mark.fast
def test_a_saved_program_named_in_does_not_take_the_name_programs_read_their_input_from():
    listing = ServerTools("saved", tuple(ToolInfo("saved", n, "", {"type": "object"}) for n in ("in", "gocode_input")))
    funcs = {f.tool: f.name for f in build_package(ToolSet((listing,))).funcs}
    assert funcs == {"in": "inTool", "gocode_input": "gocodeInputTool"}


@pytest.mark.fast
def test_a_binary_cannot_call_other_saved_programs(tmp_path):
    tidy = program("tidy", ("saved.wipe",))
    with pytest.raises(SavedProgramError, match=r"calls other saved programs \(saved.wipe\)"):
        anyio.run(build_binary, None, None, tidy, {}, tmp_path / "tidy")
    assert not (tmp_path / "tidy").exists()
