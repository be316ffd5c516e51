"""A Go API that never changes under the model: a tool's Go name and signature depend on its own
schema alone. A corpus of valid programs, written against the first tool set, is type-checked
(real Go) after each change a session sees — a result shape learned over many calls, a server
added, a Python tool added, a saved program added — and a saved program keeps running."""

from __future__ import annotations

import sys

import anyio
import pytest

from gocode import Toolbox
from gocode.compile.modcache import ModuleCache
from gocode.mcp.cache import ListingCache
from gocode.program.code import ModelCode
from gocode.schema.builder import build_package
from gocode.toolset import ServerTools, ToolInfo, ToolSet
from tests.conftest import ROOT, config_from, demo_stdio

SETTINGS = {"codeMode": {"savedPrograms": True, "sandbox": "off"}}


def _report() -> dict[str, object]:
    return {"command": sys.executable, "args": ["-m", "tests.servers.report_server"], "cwd": str(ROOT)}


# Saved first: reads a tool's JSON text result itself (json.Unmarshal of the declared string).
REPO_OPEN = """// The open issues of a repository.
type Input struct {
	Path string `json:"path"`
}
raw := must(repoStats(ctx, RepoStatsInput{Path: in.Path}))
var stats struct {
	Open int `json:"open"`
}
if err := json.Unmarshal([]byte(raw), &stats); err != nil {
	return err
}
fmt.Println(stats.Open)
"""

# Programs a model wrote against the first tool set: each must still type-check after every change.
CORPUS = {
    "declared string result, decoded by the program": """raw := must(repoStats(ctx, RepoStatsInput{Path: "demo"}))
var stats struct {
	Open int `json:"open"`
}
if err := json.Unmarshal([]byte(raw), &stats); err != nil {
	return err
}
fmt.Println(stats.Open)
""",
    "struct fields of a declared output": """w := must(getWeather(ctx, GetWeatherInput{City: "Paris"}))
fmt.Println(w.Temperature, w.Conditions)
""",
    "enum constants": """w := must(getWeather(ctx, GetWeatherInput{City: "Oslo", Unit: UnitFahrenheit}))
var u Unit = w.Unit
fmt.Println(u == UnitCelsius)
""",
    "a saved program": """fmt.Print(must(repoOpen(ctx, RepoOpenInput{Path: "demo"})))
""",
}


def get_weather(city: str) -> str:
    """A Python tool with a name a server's tool has: it must not take that tool's Go name."""
    return city


async def _corpus_checks(module_cache: ModuleCache, box: Toolbox, when: str) -> None:
    package = box.code_mode.package
    for what, code in CORPUS.items():
        checked = await module_cache.plan(package, ModelCode(code))
        assert checked.ok, f"{when}: the program using {what} no longer compiles:\n{checked.output}"


@pytest.mark.go
def test_earlier_programs_compile_through_every_change_to_the_tool_set(module_cache, tmp_path, monkeypatch):
    monkeypatch.setenv("GOCODE_SHAPES_DIR", str(tmp_path / "shapes"))
    monkeypatch.setenv("GOCODE_STATE_DIR", str(tmp_path / "state"))
    servers: dict[str, object] = {"report": _report(), "demo": demo_stdio()}

    def toolbox(**extra: object) -> Toolbox:
        config = config_from(dict(servers), defaults=SETTINGS)
        return Toolbox(config, module_cache=module_cache, prewarm=False, listing_cache=ListingCache(tmp_path), **extra)  # type: ignore[arg-type]

    async def go() -> None:
        async with toolbox() as box:
            r = await box.call("save_go_program", {"name": "repo_open", "code": REPO_OPEN})
            assert not r.is_error, r.text
            await _corpus_checks(module_cache, box, "at first")
            # A result shape learned: many calls answering JSON of one structure.
            for _ in range(10):
                r = await box.call(
                    "execute_go_code", {"code": CORPUS["declared string result, decoded by the program"]}
                )
                assert r.text == "3\n", r.text
            assert "repoStats_typed" in box.code_mode.declarations()  # learned: offered beside it
            await _corpus_checks(module_cache, box, "after a learned shape")
            r = await box.call("repo_open", {"path": "demo"})
            assert not r.is_error and r.text == "3\n", r.text  # never "saved against other tools"
            typed = 'r := must(repoStats_typed(ctx, RepoStatsInput{Path: "demo"}))\nfmt.Println(r.Open)\n'
            r = await box.call("execute_go_code", {"code": typed})
            assert r.text == "3\n", r.text
            # Saved through the companion, a program depends on the learned type; else not.
            r = await box.call(
                "save_go_program", {"name": "open_typed", "code": "// T.\ntype Input struct{}\n" + typed}
            )
            assert not r.is_error, r.text
            store = box.code_mode.saved_store()
            assert "typedOutput" in (store.load("open_typed").uses or {})["report.repo_stats"]
            assert "typedOutput" not in (store.load("repo_open").uses or {})["report.repo_stats"]

        # A server added to the config, with a tool of the same name and shape as an existing one.
        servers["another_report"] = _report()
        async with toolbox() as box:
            assert "func anotherReportRepoStats(" in box.code_mode.declarations()
            await _corpus_checks(module_cache, box, "after a server was added")

        # A Python tool named like a server's tool.
        async with toolbox(tools=[get_weather]) as box:
            assert "func pythonGetWeather(" in box.code_mode.declarations()
            await _corpus_checks(module_cache, box, "after a Python tool was added")

            # Another saved program.
            paris = "// The weather in Paris.\ntype Input struct{}\n" + CORPUS["struct fields of a declared output"]
            r = await box.call("save_go_program", {"name": "paris", "code": paris})
            assert not r.is_error, r.text
            await _corpus_checks(module_cache, box, "after a saved program was added")
            r = await box.call("repo_open", {"path": "demo"})
            assert not r.is_error and r.text == "3\n", r.text

    anyio.run(go)


@pytest.mark.fast
def test_no_tool_added_renames_an_earlier_tools_function_types_or_constants():
    """Every name the first tool set declares is declared, for the same thing, once tools are added
    after it: a server with the same tool names and shapes, one whose tool is named like an earlier
    tool's type, and a tool whose result type was learned."""
    unit = {"type": "string", "enum": ["celsius", "fahrenheit"]}
    weather_in = {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "unit": unit,
            "where": {"type": "object", "properties": {"lat": {"type": "number"}}},
        },
        "required": ["city"],
    }
    out = {"type": "object", "properties": {"temperature": {"type": "number"}}, "required": ["temperature"]}
    path_in = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
    first = ServerTools(
        "weather",
        (
            ToolInfo("weather", "get_weather", "W.", weather_in, out),
            ToolInfo("weather", "read", "R.", path_in),
            ToolInfo("weather", "stats", "S.", path_in),
        ),
    )
    before = build_package(ToolSet((first,)))
    learned = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    stats = ToolInfo("weather", "stats", "S.", path_in, learned, output_inferred=True)
    later = (
        ServerTools("weather", (*first.tools[:2], stats)),
        ServerTools(
            "aaa",
            (ToolInfo("aaa", "get_weather", "W.", weather_in, out), ToolInfo("aaa", "get_weather_input_unit", "U.")),
        ),
        ServerTools("python", (ToolInfo("python", "read", "R.", path_in), ToolInfo("python", "a", "A.", path_in))),
    )
    after = build_package(ToolSet(later))

    def names(pkg: object) -> dict[str, tuple[str, ...]]:
        out: dict[str, tuple[str, ...]] = {}
        for f in pkg.funcs:  # type: ignore[attr-defined]
            if f.server == "weather" and not f.name.endswith("_typed"):
                out[f.name] = (f.input_type or "", f.output_type)
        return out

    def declared(pkg: object) -> set[str]:
        got = set()
        for d in pkg.decls:  # type: ignore[attr-defined]
            got.add(d.name)
            got |= {v.name for v in getattr(d, "values", ())} | {v.name for v in getattr(d, "consts", ())}
        return got

    assert names(after) == names(before)
    assert declared(before) <= declared(after)
    assert "stats_typed" in {f.name for f in after.funcs}


@pytest.mark.fast
def test_a_saved_program_depends_on_a_learned_type_only_through_the_companion():
    """Saved before anything was learned, a program is unaffected by a type learned later; one
    that calls the companion is held to the type it was saved against, as to a declared schema."""
    from gocode.tools.saved import SavedProgram, differences

    schema = {"type": "object", "properties": {"path": {"type": "string"}}}
    learned = {"type": "object", "properties": {"open": {"type": "integer"}}, "required": ["open"]}
    wider = {"type": "object", "properties": {"open": {"type": "number"}}, "required": ["open"]}
    plain = ToolInfo("report", "repo_stats", "S.", schema)

    def typed(out: dict) -> ToolInfo:
        return ToolInfo("report", "repo_stats", "S.", schema, out, output_inferred=True)

    def saved(uses: dict) -> SavedProgram:
        return SavedProgram("p", "P.", {}, "", calls=("report.repo_stats",), uses={"report.repo_stats": uses})

    untyped = saved({"inputSchema": schema, "outputSchema": None})
    assert differences(untyped, {("report", "repo_stats"): typed(learned)}) == []
    on_type = saved({"inputSchema": schema, "outputSchema": None, "typedOutput": learned})
    assert differences(on_type, {("report", "repo_stats"): typed(learned)}) == []
    changed = ["report.repo_stats: its learned result type changed"]
    assert differences(on_type, {("report", "repo_stats"): typed(wider)}) == changed
    assert differences(on_type, {("report", "repo_stats"): plain}) == changed  # withdrawn
