"""Result types inferred from what a tool returned: a tool that declares no output schema but
answered JSON of one structure enough times gets a typed Go result; a result that no longer
fits is a clear error, and the type is learned again."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from gocode import Toolbox
from gocode.config import ServerConfig
from gocode.mcp.cache import ListingCache
from gocode.mcp.shapes import MIN_TYPED_SAMPLES, ShapeRecorder, ToolShape, schema_of
from gocode.program.render import render_bindings
from gocode.run import recordstore
from gocode.schema.builder import build_package
from gocode.schema.inferred import with_inferred_outputs
from gocode.toolset import ServerTools, ToolInfo, ToolSet
from gocode.view.modelview import render_full, render_index
from gocode.view.selection import ToolView
from gocode.view.tokens import count
from tests.conftest import ROOT, assert_go_package_clean, config_from

GOCODE = str(Path(sys.executable).parent / "gocode")


def _text(doc: object) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=json.dumps(doc))])


def _learn(*docs: object) -> ToolShape:
    shape = ToolShape()
    for doc in docs:
        shape.observe(_text(doc))
    return shape


@pytest.mark.fast
def test_schema_from_samples_optional_keys_numbers_nesting_and_lists():
    shape = _learn(
        {"id": 7, "score": 1.5, "owner": {"name": "a"}, "items": [{"k": "x", "n": 1}], "done": True, "note": None},
        {"id": 8, "score": 2, "owner": {"name": "b", "team": "t"}, "items": [{"k": "y", "flag": False}], "done": False},
        {"id": 9, "score": 3, "owner": {"name": "c"}, "items": [], "done": True, "note": "later", "big": 2**70},
    )
    assert shape.output_schema() == {
        "type": "object",
        "properties": {
            "id": {"type": "integer"},  # integral in every sample
            "score": {"type": "number"},  # 1.5 once: a number, though later ones were whole
            "owner": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "team": {"type": "string"}},
                "required": ["name"],
            },
            # list elements of every sample merge into one element shape
            "items": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "k": {"type": "string"},
                        "n": {"type": "integer"},
                        "flag": {"type": "boolean", "default": False},
                    },
                    "required": ["k"],
                },
            },
            "done": {"type": "boolean"},
            "note": {"type": ["string", "null"]},  # null and a string: a nullable string, optional
            "big": {"type": "number"},  # beyond Go's int
        },
        "required": ["id", "score", "owner", "items", "done"],
    }


@pytest.mark.fast
def test_no_type_before_enough_samples_nor_for_mixed_results():
    doc = {"a": 1, "b": [1, 2]}
    assert _learn(*[doc] * (MIN_TYPED_SAMPLES - 1)).output_schema() is None
    assert _learn(*[doc] * MIN_TYPED_SAMPLES).output_schema() is not None
    # One place holding a string once and an integer once: no one structure.
    assert _learn(doc, doc, {"a": "x", "b": []}).output_schema() is None
    assert _learn(doc, doc, {"a": 1, "b": [1, "two"]}).output_schema() is None
    # A text answer among JSON ones (an error worded as text, say): no type.
    mixed = _learn(doc, doc, doc)
    mixed.observe(types.CallToolResult(content=[types.TextContent(type="text", text="not found")]))
    assert mixed.output_schema() is None
    # JSON text beside an image is not the whole result: no type.
    image = types.ImageContent(type="image", data="iVBORw0KGgo=", mime_type="image/png")
    pictured = _learn()
    for _ in range(MIN_TYPED_SAMPLES):
        pictured.observe(types.CallToolResult(content=[types.TextContent(type="text", text=json.dumps(doc)), image]))
    assert pictured.output_schema() is None
    # Two alternatives of one kind merge: a nullable object seen with different keys is one object.
    nullable = _learn({"o": None}, {"o": {"x": 1}}, {"o": {"y": "s"}}).output_schema()
    assert nullable is not None
    assert nullable["properties"]["o"]["anyOf"][1] == {"type": "null"}
    # Only a key ever null, or only empty lists: anything (Go's any).
    loose = _learn({"z": None, "l": []}, {"z": None, "l": []}, {"z": None, "l": []}).output_schema()
    assert loose == {"type": "object", "properties": {"z": {}, "l": {"type": "array"}}, "required": ["z", "l"]}
    # A list at the top is typed too; a bare value is not.
    assert _learn([{"a": 1}], [{"a": 2, "b": "x"}], []).output_schema() == {
        "type": "array",
        "items": {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "string"}},
            "required": ["a"],
        },
    }
    assert schema_of("string", root=True) is None


@pytest.mark.fast
def test_keys_that_are_data_make_a_map_not_a_struct_that_grows():
    counts = _learn({"by": {"alice": 3, "bob": 1}}, {"by": {"carol": 2}}, {"by": {"alice": 1, "dave": 4}})
    assert counts.output_schema() == {
        "type": "object",
        "properties": {"by": {"type": "object", "additionalProperties": {"type": "integer"}}},
        "required": ["by"],
    }
    # An object with many keys is a map; a later one with few keys is more of that map.
    many = {f"user{i}": {"n": i} for i in range(30)}
    assert _learn(many, {"user1": {"n": 1}}, many).output_schema() == {
        "type": "object",
        "additionalProperties": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
    }
    # Keys every result had are fields; values of several kinds keep a struct of optional fields.
    assert _learn(*[{"by": {"alice": 3, "bob": 1}}] * 3).output_schema()["properties"]["by"]["required"] == [
        "alice",
        "bob",
    ]
    either = _learn({"ok": {"id": 1}}, {"error": "no"}, {"ok": {"id": 2}}).output_schema()
    assert either == {
        "type": "object",
        "properties": {
            "ok": {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]},
            "error": {"type": "string"},
        },
        "required": [],
    }


@pytest.mark.fast
def test_inferred_types_keep_no_values_and_follow_the_server_settings(tmp_path, monkeypatch):
    monkeypatch.delenv("GOCODE_SHAPES_DIR")
    secret = "sk-live-4f9aQ2xLm8Zt7Rb1Kc3Vd"
    servers = {
        "on": ServerConfig(command="x"),
        "untyped": ServerConfig.model_validate({"command": "x", "inferResultTypes": False}),
        "off": ServerConfig.model_validate({"command": "x", "learnShapes": False}),
    }
    rec = ShapeRecorder(ListingCache(tmp_path), servers)
    for _ in range(MIN_TYPED_SAMPLES):
        for server in servers:
            rec.observe(server, "t", _text({"token": secret, "user": "robin"}))
    assert list(rec.inferred()) == [("on", "t")]
    on_disk = "".join(p.read_text() for p in (tmp_path / "shapes").iterdir())
    assert secret not in on_disk and "robin" not in on_disk and "token" in on_disk  # names, never values


def _view(*tools: ToolInfo) -> ToolView:
    return ToolView(ToolSet((ServerTools("s", tools),)), (), {"s": "2025-11-25"})


@pytest.mark.fast
def test_a_declared_output_schema_wins_and_the_go_says_the_type_was_inferred():
    learned = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    declared = {"type": "object", "properties": {"count": {"type": "integer"}}, "required": ["count"]}
    view = _view(
        ToolInfo("s", "stats", "Stats."),
        ToolInfo("s", "counted", "Counted.", output_schema=declared),
        ToolInfo("s", "get_tiny_image", "Returns an image."),  # answers images: stays Content
    )
    inferred = {("s", "stats"): learned, ("s", "counted"): learned, ("s", "get_tiny_image"): learned}
    typed = {t.name: t for t in with_inferred_outputs(view.code_tools, inferred).tools()}
    assert typed["stats"].output_schema == learned and typed["stats"].output_inferred
    assert typed["counted"].output_schema == declared and not typed["counted"].output_inferred
    assert typed["get_tiny_image"].output_schema is None
    package = build_package(ToolSet((ServerTools("s", tuple(typed.values())),)))
    bindings = render_bindings(package)
    assert "gocodert.CallInferred[Stats_Result](ctx, " in bindings
    assert "gocodert.CallJSON[CountedOutput](ctx, " in bindings
    # The declared function keeps its signature; the learned type is its companion's.
    assert "func stats(context.Context) (string, error)\n" in render_full(package)
    assert "func stats_typed(context.Context) (Stats_Result, error)\n" in render_full(package)
    assert "\nstats() string // Stats.\nstats_typed() Stats_Result\n" in render_index(package)  # the index tier too
    # A recording made before the type was inferred names what differs.
    assert recordstore.differences(ToolSet((ServerTools("s", view.code_tools.servers[0].tools),)), ToolSet(
        (ServerTools("s", tuple(typed.values())),)
    )) == ["s.stats: its result type inferred from its results changed"]  # fmt: skip
    # The mark is part of the tool set's identity, and kept in a recording.
    again = recordstore.toolset_from_json(recordstore.toolset_json(ToolSet((ServerTools("s", (typed["stats"],)),))))
    assert again.tools() == [typed["stats"]]
    assert (
        ToolSet((ServerTools("s", (typed["stats"],)),)).digest()
        != ToolSet((ServerTools("s", (ToolInfo("s", "stats", "Stats.", output_schema=learned),)),)).digest()
    )


# --- a real server ---------------------------------------------------------------------------------

CALL = 'r := must(repoStats(ctx, RepoStatsInput{Path: "demo"}))\n'
TYPED = 'r := must(repoStats_typed(ctx, RepoStatsInput{Path: "demo"}))\n'


@pytest.mark.go
def test_a_tool_answering_undeclared_json_gets_a_typed_result(module_cache, tmp_path, monkeypatch):
    monkeypatch.setenv("GOCODE_SHAPES_DIR", str(tmp_path / "shapes"))
    shape_file = tmp_path / "shape.txt"
    server = {
        "command": sys.executable,
        "args": ["-m", "tests.servers.report_server", "--shape", str(shape_file)],
        "cwd": str(ROOT),
    }
    config = config_from({"report": server}, defaults={"codeMode": {"sandbox": "off"}})
    announced, typed = [], []

    async def go() -> None:
        async with Toolbox(
            config, module_cache=module_cache, prewarm=False, listing_cache=ListingCache(tmp_path)
        ) as box:

            async def changed() -> None:
                announced.append(box.code_mode.declarations())

            box.on_tools_changed(changed)
            assert "func repoStats(context.Context, RepoStatsInput) (string, error)" in box.code_mode.declarations()
            before, _ = box.code_mode.search_answer({"names": ["repoStats"]})
            for i in range(MIN_TYPED_SAMPLES):
                r = await box.call("execute_go_code", {"code": CALL + "fmt.Println(len(r) > 0)"})
                assert r.text == "true\n", r.text
                assert len(announced) == (1 if i == MIN_TYPED_SAMPLES - 1 else 0)  # only once there are enough
            view = box.code_mode.declarations()
            # The declared function keeps its signature; the learned type comes beside it.
            assert "func repoStats(context.Context, RepoStatsInput) (string, error)" in view
            assert "func repoStats_typed(context.Context, RepoStatsInput) (RepoStats_Result, error)" in view
            assert "// Result typed by the _typed function below (learned from its results)." in view
            assert "Commits []RepoStats_ResultCommitsItem" in view and "Open    int" in view
            assert "RepoStats_Result" in box.tools()[0].description  # the definitions the client lists
            r = await box.call("execute_go_code", {"code": CALL + "fmt.Println(len(r) > 0)"})
            assert r.text == "true\n", r.text  # code written before still compiles and runs
            typed.append(box.code_mode.package)
            after, _ = box.code_mode.search_answer({"names": ["repoStats"]})
            assert "func repoStats(context.Context, RepoStatsInput) (string, error)" in after
            assert "func repoStats_typed(context.Context, RepoStatsInput) (RepoStats_Result, error)" in after
            print(f"search answer for repoStats: {count(before)} tokens as text, {count(after)} typed (o200k)")
            print(after)

            # A program uses the typed fields.
            r = await box.call(
                "execute_go_code",
                {"code": TYPED + "fmt.Println(r.Repo, r.Open, r.Commits[1].Hash, r.Commits[1].Files)"},
            )
            assert r.text == "demo 3 9b8a7c6d 5\n", r.text

            # A key the type lacks does not stop decoding; the type learns it (optional).
            shape_file.write_text("extra")
            r = await box.call("execute_go_code", {"code": TYPED + "fmt.Println(r.Open, len(r.Commits))"})
            assert r.text == "3 2\n", r.text
            assert len(announced) == 2 and "Labels  []string" in announced[-1]
            r = await box.call("execute_go_code", {"code": TYPED + "fmt.Println(r.Labels)"})
            assert r.text == "[bug docs]\n", r.text

            # A value of another kind: a clear error, the value still reachable, the type withdrawn.
            shape_file.write_text("changed")
            code = (
                'r, err := repoStats_typed(ctx, RepoStatsInput{Path: "demo"})\nfmt.Println(r.Repo)\nfmt.Println(err)\n'
                'raw := must(callTool(ctx, "report.repo_stats", map[string]any{"path": "demo"}))\n'
                'fmt.Println(raw.(map[string]any)["open"])'
            )
            r = await box.call("execute_go_code", {"code": code})
            lines = r.text.splitlines()
            assert lines[0] == "demo", r.text  # what did decode is there
            assert lines[1].startswith(
                "tool repo_stats (server report) declares no output schema, and this result does not fit the type "
                "RepoStats_Result gocode inferred from its earlier results (json: cannot unmarshal string into Go "
                "struct field RepoStats_Result.open of type int); the next program gets a type learned again with "
                'this result, callTool(ctx, "report.repo_stats", args) returns it untyped; result: {"repo": "demo"'
            ), r.text
            assert lines[2] == "many", r.text
            assert len(announced) == 3
            view = box.code_mode.declarations()
            assert "func repoStats(context.Context, RepoStatsInput) (string, error)" in view
            assert "repoStats_typed" not in view  # withdrawn: only the companion goes
            assert "open: integer | string" in view
            r = await box.call("execute_go_code", {"code": CALL + 'fmt.Println(strings.Contains(r, `"many"`))'})
            assert r.text == "true\n", r.text

    anyio.run(go)
    assert_go_package_clean(module_cache, typed[0], tmp_path)  # the typed bindings: gofmt-clean, vetted


@pytest.mark.go
def test_gocode_serve_announces_the_inferred_type_once(tmp_path):
    """Over `gocode serve`, the client hears list_changed when the type appears, not before."""
    server = {
        "command": sys.executable,
        "args": ["-m", "tests.servers.report_server", "--shape", str(tmp_path / "shape.txt")],
        "cwd": str(ROOT),
    }
    config = tmp_path / "gocode.json"
    config.write_text(json.dumps({"mcpServers": {"report": server}, "defaults": {"codeMode": {"sandbox": "off"}}}))
    heard: list[int] = []
    calls = 0

    async def on_message(message: object) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            heard.append(calls)

    async def go() -> None:
        nonlocal calls
        params = StdioServerParameters(command=GOCODE, args=["serve", "-c", str(config)], env=dict(os.environ))
        async with Client(stdio_client(params), mode="legacy", message_handler=on_message) as c:
            before = (await c.list_tools()).tools[0].description or ""
            assert "(string, error)" in before and "RepoStats_Result" not in before
            for _ in range(MIN_TYPED_SAMPLES):
                assert not heard, heard  # nothing changes before the third result
                r = await c.call_tool("execute_go_code", {"code": CALL + "_ = r\nfmt.Println(1)"})
                assert not r.is_error, r.content
                calls += 1
            with anyio.fail_after(60):
                while not heard:
                    await anyio.sleep(0.05)
            after = (await c.list_tools()).tools[0].description or ""
            assert "func repoStats_typed(context.Context, RepoStatsInput) (RepoStats_Result, error)" in after
            assert "func repoStats(context.Context, RepoStatsInput) (string, error)" in after
            r = await c.call_tool("execute_go_code", {"code": TYPED + "fmt.Println(r.Open)"})
            assert [b.text for b in r.content if isinstance(b, types.TextContent)] == ["3\n"]
            await c.call_tool("execute_go_code", {"code": TYPED + "fmt.Println(r.Open)"})

    anyio.run(go)
    # Once, with the third call's answer (sent before it), never again while the shape holds.
    assert heard in ([MIN_TYPED_SAMPLES - 1], [MIN_TYPED_SAMPLES]), heard


@pytest.mark.go
def test_keys_a_server_chose_still_make_go_that_compiles(module_cache, tmp_path):
    """Result keys are untrusted: whatever they are, the inferred type's Go compiles, vets and is gofmt-clean."""
    nasty = {
        "a b": 1, "A-B": 2, "a_b": 3, "aB": 4, "type": "t", "func": True, "😀": 1.5, 'x"y`z': "q",
        "123": [1], "Content": {"ptr": None}, "k" * 300: "long", "__proto__": {}, "nested": {"": 1, "x": 2},
    }  # fmt: skip
    # Keys that are no short identifier are data (a map): they never become names a model reads.
    assert "map" in _learn(nasty, nasty, nasty).json
    names = {
        k: v for k, v in nasty.items() if k in ("A-B", "a_b", "aB", "type", "func", "Content", "__proto__", "nested")
    }
    shape = _learn(names, names, names)
    schema = shape.output_schema()
    assert schema is not None and "nested" in schema["properties"]
    info = ToolInfo("weird server", "get-it!", "Gets it.", output_schema=schema, output_inferred=True)
    other = ToolInfo("weird server", "get_it", "Same Go name.", output_schema=schema, output_inferred=True)
    package = build_package(ToolSet((ServerTools("weird server", (info, other)),)))
    assert_go_package_clean(module_cache, package, tmp_path)
