"""Compile errors as the model reads them: nothing generated leaks, names close to a tool
teach (pure: no Go, no servers)."""

from __future__ import annotations

import pytest

from gocode.program.diagnostics import Diagnostic
from gocode.program.messages import explain, scrub
from gocode.schema.builder import build_package
from gocode.toolset import ToolInfo
from tests.schemas import CPE_WEATHER, toolset

pytestmark = pytest.mark.fast

PKG = build_package(toolset(CPE_WEATHER))


def test_scrub_removes_every_internal_name():
    msg = (
        "cannot use x (variable of type string) as gocodews/tools/t0123abcd.Unit value in argument to tools.GetWeather"
    )
    assert scrub(msg) == "cannot use x (variable of type string) as Unit value in argument to GetWeather"
    assert scrub("gocodetools.GetCityOutput and gocodeModelMain") == "GetCityOutput and main"


@pytest.mark.parametrize(
    ("source", "column", "name"),
    [
        ("r, err := get_weather(ctx, in)", 11, "get_weather"),  # the MCP name
        ("r, err := GetWeather(ctx, in)", 11, "GetWeather"),  # PascalCase
        ("r, err := getWether(ctx, in)", 11, "getWether"),  # a typo
        ("r, err := weather.getWeather(ctx, in)", 11, "weather"),  # server-prefixed
        ("r, err := weather_get_weather(ctx, in)", 11, "weather_get_weather"),
    ],
)
def test_a_name_close_to_a_tool_says_did_you_mean_and_shows_it(source, column, name):
    text = explain([Diagnostic("model.go", 1, column, f"undefined: {name}")], PKG, source)
    first = text.split("\n")[0]
    where = " (weather.get_weather)" if "." in source.split(":=")[1].split("(")[0] else ""  # a qualified name
    assert first == f"model.go:1:{column}: undefined: {name} (did you mean getWeather{where}?)"
    assert (
        "func getWeather(context.Context, GetWeatherInput) (GetWeatherOutput, error)" in text
        and "type GetWeatherInput struct" in text
    )


def test_a_name_far_from_every_tool_gets_no_suggestion():
    text = explain([Diagnostic("model.go", 3, 6, "undefined: undefinedThing")], PKG, "\n\nx := undefinedThing")
    assert text == "model.go:3:6: undefined: undefinedThing"


def test_a_made_up_enum_value_lists_the_values_and_the_type():
    src = "in := GetWeatherInput{Unit: GetWeatherInputUnitKelvin}"
    [unit] = [d for d in PKG.decls if d.name.endswith("Unit")]
    text = explain([Diagnostic("model.go", 1, 29, f"undefined: {unit.name}Kelvin")], PKG, src)
    assert f"({unit.name} is one of " in text and f"type {unit.name} string" in text


def test_an_unknown_field_shows_the_type():
    d = Diagnostic("model.go", 1, 30, "unknown field Cty in struct literal of type GetWeatherInput")
    text = explain([d], PKG, "")
    assert text.startswith("model.go:1:30: unknown field Cty in struct literal of type GetWeatherInput\n")
    assert "type GetWeatherInput struct" in text


def test_ctx_in_a_helper_is_explained():
    text = explain([Diagnostic("model.go", 2, 21, "undefined: ctx")], PKG, "")
    assert "ctx is Run's parameter" in text


def test_an_error_that_only_follows_from_an_undefined_name_is_not_shown():
    diags = [
        Diagnostic("model.go", 2, 11, "undefined: getWether"),
        Diagnostic("model.go", 2, 53, "not enough arguments in call to must\n\thave (unknown type)\n\twant (T, error)"),
        Diagnostic("model.go", 3, 1, "declared and not used: x"),
    ]
    text = explain(diags, PKG, "\nw := must(getWether(ctx, GetWeatherInput{}))\nx := 1")
    assert text.split("\n\n")[0] == (
        "model.go:2:11: undefined: getWether (did you mean getWeather?)\nmodel.go:3:1: declared and not used: x"
    )


def test_a_traceback_keeps_the_model_frames_only():
    from gocode.run.gotraceback import trim_traceback

    trace = (
        "panic: assignment to entry in nil map\n\ngoroutine 1 [running]:\n"
        "main.Run({0x8380d8?, 0xb60600?})\n\tmodel.go:2 +0x28\n"
        "main.helper(...)\n\tmodel.go:9\n"
        "gocodews/rt.Main(0x82e3a0)\n\t/home/u/.cache/gocode/ws-11e62e4e9ff6/rt/rt.go:404 +0x95\n"
        "main.main()\n\tgocode_main.go:6 +0x1a\n"
        "created by gocodews/rt.serve in goroutine 1\n\t/tmp/c/ws-11e62e4e9ff6/rt/rt.go:90 +0x1\n"
        "exit status 2"
    )
    assert trim_traceback(trace) == (
        "panic: assignment to entry in nil map\n\ngoroutine 1 (Run's own, the one that panicked) [running]:\n"
        "main.Run({0x8380d8?, 0xb60600?})\n\tmodel.go:2\nmain.helper(...)\n\tmodel.go:9\nexit status 2"
    )
    assert trim_traceback("error: model.go:1: boom\n") == "error: model.go:1: boom\n"


def test_a_panic_reads_like_a_compile_error():
    """Frames at model.go only (no runtime, standard library internals or offsets), the entry
    point called Run as the model wrote it, and the goroutine that panicked named."""
    from gocode.run.gotraceback import trim_traceback

    trace = (
        "panic: runtime error: invalid memory address or nil pointer dereference\n"
        "[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x6e0999]\n\n"
        "goroutine 7 [running]:\n"
        "main.helper(...)\n\tmodel.go:3\n"
        "encoding/json.(*decodeState).object(0xc000)\n\t/usr/local/go/src/encoding/json/decode.go:600 +0x1d\n"
        "runtime.gopanic({0x1})\n\truntime/panic.go:792 +0x132\n"
        "main.gocodeModelRun.func1()\n\tmodel.go:8 +0x19\n"
        "created by main.gocodeModelRun in goroutine 1\n\tmodel.go:8 +0x66\n"
    )
    assert trim_traceback(trace) == (
        "panic: runtime error: invalid memory address or nil pointer dereference\n\n"
        "goroutine 7 (started at model.go:8 in Run, the one that panicked) [running]:\n"
        "main.helper(...)\n\tmodel.go:3\n"
        "main.Run.func1()\n\tmodel.go:8\n"
        "created by main.Run in goroutine 1\n\tmodel.go:8\n"
    )


def _shared_enum():
    """Two tools on two servers whose fields share one enum, declared with the first."""
    order = {"type": "string", "enum": ["asc", "desc"]}
    return build_package(
        toolset(
            [
                ToolInfo("a", "list_pulls", "Pulls.", {"type": "object", "properties": {"direction": order}}),
                ToolInfo("b", "list_merges", "Merges.", {"type": "object", "properties": {"sort": order}}),
            ]
        )
    )


def test_a_shared_type_is_shown_with_the_tool_the_program_calls():
    pkg = _shared_enum()
    msg = '"up" is not a value of ListPullsInputDirection: use one of "asc", "desc"'
    src = '\nout, err := listMerges(ctx, ListMergesInput{Sort: "up"})'
    text = explain([Diagnostic("model.go", 2, 41, msg)], pkg, src)
    shown = text.split("The declarations involved:", 1)[1]
    assert "func listMerges(" in shown and "func listPulls(" not in shown, text


def test_a_made_up_constant_under_a_guessed_type_name_lists_the_values():
    pkg = _shared_enum()
    src = "\nin := ListMergesInput{Sort: ListMergesInputSortUp}"
    text = explain([Diagnostic("model.go", 2, 29, "undefined: ListMergesInputSortUp")], pkg, src)
    assert text.startswith(
        'model.go:2:29: undefined: ListMergesInputSortUp (ListPullsInputDirection is one of "asc", "desc")'
    ), text


PANIC_AT = """\
panic: runtime error: invalid memory address or nil pointer dereference

goroutine 1 (Run's own, the one that panicked) [running]:
main.Run(…)
	model.go:{line}
"""


def test_a_nil_dereference_names_the_tool_whose_result_is_dereferenced_on_its_line():
    from gocode.program.plan import Plan, nil_result_hint

    plan = Plan(derefs=((4, (("listPeople", "people", "list_people"),)), (7, (("a", "s", "a"), ("b", "s", "b")))))
    assert nil_result_hint(PANIC_AT.format(line=4), plan).startswith(
        "model.go:4 dereferenced a nil pointer in the result of listPeople (people.list_people): check its error"
    )
    assert "the result of a (s.a) or b (s.b)" in nil_result_hint(PANIC_AT.format(line=7), plan)
    assert nil_result_hint(PANIC_AT.format(line=5), plan) == ""  # no tool's result on that line
    other = PANIC_AT.format(line=4).replace("invalid memory address or nil pointer dereference", "index out of range")
    assert nil_result_hint(other, plan) == ""
    assert nil_result_hint(PANIC_AT.format(line=4), None) == ""


def test_a_name_several_servers_have_lists_every_candidate_with_its_server():
    """``search`` is on github and gitlab: the earlier server's keeps the plain name, and a name
    that could mean either lists both, each with its server."""
    pkg = build_package(toolset([ToolInfo("github", "search", "Search."), ToolInfo("gitlab", "search", "Search.")]))
    assert [f.name for f in pkg.funcs] == ["search", "gitlabSearch"]
    text = explain([Diagnostic("model.go", 1, 1, "undefined: Search")], pkg, "Search(ctx)")
    want = "(did you mean search (github.search) or gitlabSearch (gitlab.search)?)"
    assert text.split("\n")[0] == f"model.go:1:1: undefined: Search {want}", text
    # A qualified name: the one tool it names, with its server.
    text = explain([Diagnostic("model.go", 1, 1, "undefined: gitlab")], pkg, "gitlab.search(ctx)")
    assert text.split("\n")[0] == "model.go:1:1: undefined: gitlab (did you mean gitlabSearch (gitlab.search)?)", text
