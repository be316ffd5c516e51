"""JSON Schema → Go IR → bindings and model view (pure; the Go compile checks are in test_generated_go.py)."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from gocode.program.render import render_bindings
from gocode.schema.builder import build_package
from gocode.schema.dedupe import former_shared_name
from gocode.schema.ir import EnumDecl, StructDecl, TypeDecl
from gocode.toolset import ToolInfo, ToolSet
from gocode.view.modelview import render_full
from tests.schemas import CPE_WEATHER, HOSTILE, toolset

pytestmark = pytest.mark.fast

CPE_EXPECTED = """\
// ===== server weather (2 tools) =====
type GetCityOutput struct {
	City string
}

// Get current city location
func getCity(context.Context) (GetCityOutput, error)

// Temperature unit for the weather response
type GetWeatherInputUnit string // "celsius", "fahrenheit"

type GetWeatherInput struct {
	Unit GetWeatherInputUnit
	// optional:
	City string // The name of the city to get weather for
}

type GetWeatherOutput struct {
	Temperature float64 // Temperature in celsius
}

// Get current weather data for a location
func getWeather(context.Context, GetWeatherInput) (GetWeatherOutput, error)
"""


def test_cpe_weather_example():
    pkg = build_package(toolset(CPE_WEATHER))
    assert render_full(pkg) == CPE_EXPECTED
    bindings = render_bindings(pkg)
    for line in (
        'City string `json:"city,omitzero"`',
        'Unit GetWeatherInputUnit `json:"unit"`',
        'Temperature float64 `json:"temperature"`',
        'GetWeatherInputUnitCelsius GetWeatherInputUnit = "celsius"',
    ):
        assert line in bindings
    assert any("required names not among the properties are ignored: location" in w for w in pkg.warnings)


def test_same_tools_in_any_order_give_identical_source():
    """Whatever order each server listed its tools in; the servers' order is the config's (it
    decides which of two tools keeps a name both want)."""
    tools = CPE_WEATHER + HOSTILE
    base = toolset(tools)
    expected = render_bindings(build_package(base))
    for seed in range(5):
        ts = ToolSet(
            tuple(replace(s, tools=tuple(random.Random(seed).sample(s.tools, len(s.tools)))) for s in base.servers)
        )
        assert render_bindings(build_package(ts)) == expected


def test_hostile_names():
    pkg = build_package(toolset(HOSTILE))
    names = {(f.server, f.tool): f.name for f in pkg.funcs}
    assert names[("evil", "func")] == "funcTool"
    assert names[("evil", "len")] == "lenTool"
    assert names[("other", "ctx")] == "ctxTool"
    assert names[("other", "exec")] == "execTool"  # model code may use os/exec, imported automatically
    assert names[("evil", "search")] == "search"  # the earlier server keeps the plain name
    assert names[("other", "search")] == "otherSearch"
    assert names[("other", "天气")] == "U5929U6c14"
    assert names[("evil", "FuncInput")] == "funcInput"
    # The tool named like func's input type keeps its own type; the input struct moves aside.
    func_tool = next(f for f in pkg.funcs if f.tool == "func")
    assert func_tool.input_type == "FuncToolInput"
    struct = next(d for d in func_tool.decls if isinstance(d, StructDecl) and d.name == "FuncToolInput")
    fields = {f.json_name: f.name for f in struct.fields}
    assert fields["type"] == "Type" and fields["Type"] == "Type2"
    assert fields["2fa"] == "X2fa"
    assert fields["naïve"] == "Naive"
    assert 'we`ird"name,x' not in fields  # cannot be expressed; warned
    assert any("cannot be named in a Go struct tag" in w for w in pkg.warnings)
    types = {f.json_name: f.type for f in struct.fields}
    assert types["nullable"] == "string" and types["typelist"] == "int"
    assert types["union"] == "FuncToolInputUnion" and types["anything"] == "any"
    assert types["tags"] == "map[string]string" and types["mixed"] == "any"
    assert types["nums"] == "FuncToolInputNums" and types["konst"] == "string"
    assert types["ref"] == "Node" and types["both"].endswith("Both")
    node = next(d for d in func_tool.decls if d.name == "Node")
    assert isinstance(node, StructDecl) and {f.json_name: f.type for f in node.fields}["child"] == "*Node"
    enum = next(d for d in func_tool.decls if isinstance(d, EnumDecl) and d.name.endswith("Mode"))
    assert [v.literal for v in enum.values] == ['"a\\"b"', '"line\\nbreak"', '""', '"*/"']
    assert func_tool.output_type == "[]string"  # a list result is its Go type, not a named one
    map_tool = next(f for f in pkg.funcs if f.tool == "map_input")
    assert map_tool.input_type == "MapInputInput"


def test_a_tool_named_like_a_helper_of_main_does_not_take_its_name():
    pkg = build_package(toolset([ToolInfo("helpers", n, "", {"type": "object"}) for n in ("must", "ptr", "result")]))
    names = {f.tool: f.name for f in pkg.funcs}
    assert names == {"must": "mustTool", "ptr": "ptrTool", "result": "resultTool"}


def test_untrusted_text_stays_inside_comments():
    src = render_bindings(build_package(toolset(HOSTILE)))
    for line in src.splitlines():
        stripped = line.strip()
        assert "\x00" not in line and "\u2028" not in line and "\ufeff" not in line and "\u202e" not in line
        if "ends */ a comment" in line or "newline `backtick`" in line:
            assert stripped.startswith("//"), line


def test_optional_fields_that_must_send_their_zero_value_are_pointers():
    schema = {
        "type": "object",
        "properties": {
            "flag": {"type": "boolean"},  # no default: false must stay sendable
            "off_by_default": {"type": "boolean", "default": False},
            "limit": {"type": "integer", "default": 20},
            "name": {"type": "string"},
            "unit": {"enum": ["c", "f"], "default": "c"},  # "" is no member: zero means absent
            "action": {"type": "string", "enum": ["get"]},  # one value: filled in when required
            "kind": {"const": 3},
            "rotation": {"type": "integer", "enum": [0, 90, 180]},  # 0 is a member: must be sendable
            "suffix": {"type": "string", "enum": ["", "-x"]},  # so is ""
            "offset": {"type": "number", "enum": [0.0, 0.5], "default": 0},  # zero is the default: same
            "level": {"const": 0},
        },
        "required": ["action", "kind"],
    }
    pkg = build_package(toolset([ToolInfo("s", "t", "", schema)]))
    struct = next(d for d in pkg.decls if isinstance(d, StructDecl) and d.name == "TInput")
    types = {f.json_name: f.type for f in struct.fields}
    assert types == {
        "flag": "*bool",
        "off_by_default": "bool",
        "limit": "*int",
        "name": "string",
        "unit": "TInputUnit",
        "action": "TInputAction",
        "kind": "int",
        "rotation": "*TInputRotation",
        "suffix": "*TInputSuffix",
        "offset": "TInputOffset",
        "level": "*int",
    }
    assert [(f.json_name, zero, value) for f, zero, value in struct.fills] == [
        ("action", '""', '"get"'),
        ("kind", "0", "3"),
    ]


def test_alternatives_of_one_value_each_are_an_enum():
    """``anyOf``/``oneOf`` of ``const`` (or ``enum``) branches is how many servers list values,
    often with a title per value; shown as "string, string" the model could not see them."""
    schema = {
        "type": "object",
        "properties": {
            "speed": {"anyOf": [{"const": "fast", "type": "string"}, {"const": "slow", "type": "string"}]},
            "size": {"oneOf": [{"const": "S", "title": "Small"}, {"const": "XL", "description": "Extra large."}]},
            "tier": {"anyOf": [{"enum": ["free", "pro"], "type": "string"}, {"type": "null"}]},
            "mode": {"anyOf": [{"enum": ["fast", "slow"]}, {"type": "string"}]},
        },
        "required": ["speed"],
    }
    pkg = build_package(toolset([ToolInfo("s", "pick", "Pick.", schema)]))
    view = render_full(pkg)
    assert 'type PickInputSpeed string // "fast", "slow"' in view
    assert '// "S": Small; "XL": Extra large.\ntype PickInputSize string // "S", "XL"' in view
    assert 'type PickInputTier string // "free", "pro"' in view
    # A value list next to free text stays a string, and says both.
    assert 'Mode string // One of: "fast", "slow", string.' in view
    enums = {d.name: [v.literal for v in d.values] for d in pkg.decls if isinstance(d, EnumDecl)}
    assert enums["PickInputSpeed"] == ['"fast"', '"slow"']


def test_a_shared_enum_keeps_no_comment_when_its_fields_say_different_things():
    fmt_a = {"type": "string", "enum": ["png", "jpeg"], "description": 'Format. Default is "png".'}
    fmt_b = {"type": "string", "enum": ["png", "jpeg"], "description": "If unset, inferred from the file name."}
    pkg = build_package(
        toolset(
            [
                ToolInfo("a", "shot", "Shot.", {"type": "object", "properties": {"format": fmt_a}}),
                ToolInfo("b", "snap", "Snap.", {"type": "object", "properties": {"type": fmt_b}}),
            ]
        )
    )
    view = render_full(pkg)
    assert '\ntype ShotInputFormat string // "png", "jpeg"\n' in view
    assert 'Format ShotInputFormat // Format. Default is "png".' in view
    assert "Type ShotInputFormat // If unset, inferred from the file name." in view


def test_a_shared_input_keeps_the_earliest_tools_name():
    pr = {
        "type": "object",
        "properties": {"owner": {"type": "string"}, "repo": {"type": "string"}, "pull_number": {"type": "integer"}},
        "required": ["owner", "repo", "pull_number"],
    }
    names = ("delete_pending_pull_request_review", "get_pull_request", "get_pull_request_files")
    pkg = build_package(toolset([ToolInfo("gh", n, n, pr) for n in names]))
    # Named for no other tool than the one that had it: a tool added later never renames it.
    assert {f.input_type for f in pkg.funcs} == {"DeletePendingPullRequestReviewInput"}
    hidden = {d.name: d.type for d in pkg.decls if isinstance(d, TypeDecl) and d.hidden}
    assert hidden["GetPullRequestInput"] == "DeletePendingPullRequestReviewInput"  # a guess still compiles
    assert "func getPullRequest(context.Context, DeletePendingPullRequestReviewInput)" in render_full(pkg)


@pytest.mark.parametrize(
    ("fields", "role", "owners", "name"),
    [
        (["RepoPath"], "Input", ["GitStatusInput", "GitResetInput"], "RepoPathInput"),
        (["Path", "Content"], "Input", ["WriteFileInput"], "PathContentInput"),
        (["Content"], "Output", ["ReadFileOutput", "EditFileOutput"], "ContentOutput"),
        (["Owner", "Repo", "PullNumber"], "Input", ["DeletePrInput", "GetPrInput", "GetPrsInput"], "GetPrInput"),
        ([], "Input", ["GetInput", "ListInput"], None),
        (["A", "B", "C"], "Input", [], None),
    ],
)
def test_the_former_shared_name_is_its_fields_or_the_shortest_tools(fields, role, owners, name):
    assert former_shared_name(fields, role, owners) == name


def test_a_shared_type_keeps_its_former_name_unless_something_else_has_it():
    repo = {"type": "object", "properties": {"repo_path": {"type": "string"}}, "required": ["repo_path"]}
    path = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
    tools = [ToolInfo("git", n, n, repo) for n in ("git_status", "git_add_all")]
    tools += [ToolInfo("fs", n, n, path) for n in ("stat", "read")]
    own = {"type": "object", "properties": {"depth": {"type": "integer"}}}
    tools.append(ToolInfo("fs", "path_input", "Its function's exported twin is PathInput.", own))
    pkg = build_package(toolset(tools))
    hidden = {d.name: d.type for d in pkg.decls if isinstance(d, TypeDecl) and d.hidden}
    assert hidden["RepoPathInput"] == "GitAddAllInput"  # the name earlier gocode gave it still compiles
    assert "PathInput" not in hidden and "pathInput" in {f.name for f in pkg.funcs}  # a function has it
    assert "RepoPathInput" not in render_full(pkg)  # the view shows one name per type
