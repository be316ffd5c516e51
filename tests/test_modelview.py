"""The model view (gocode.view): deduplicated declarations, const blocks, no tags or restating
comments, server headers, the disclosure tiers and the rules. Pure: no Go, no servers."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from gocode.codemode import CodeMode
from gocode.config import Config
from gocode.program.code import Prepared
from gocode.program.render import render_bindings, render_main
from gocode.schema.builder import build_package
from gocode.toolset import ServerTools, ToolInfo, ToolSet
from gocode.view import rules as rules_mod
from gocode.view import tokens
from gocode.view.disclosure import choose
from gocode.view.modelview import render_full, render_funcs, render_index, render_names
from gocode.view.selection import pays_off
from tests.corpus_data import CORPUS, all_package, load, load_all

PATH_SCHEMA = {
    "type": "object",
    "properties": {"path": {"type": "string", "description": "Path of the file"}},
    "required": ["path"],
}
CONTENT_OUT = {"type": "object", "properties": {"content": {"type": "string"}}, "required": ["content"]}
UNIT = {"type": "string", "enum": ["celsius", "fahrenheit"], "description": "Temperature unit"}


def tool(server: str, name: str, schema: dict, out: dict | None = None, desc: str = "Does a thing.") -> ToolInfo:
    return ToolInfo(server, name, desc, schema, out)


def toolset(*tools: ToolInfo) -> ToolSet:
    servers: dict[str, list[ToolInfo]] = {}
    for t in tools:
        servers.setdefault(t.server, []).append(t)
    return ToolSet(tuple(ServerTools(s, tuple(ts)) for s, ts in servers.items()))


def declared(view: str) -> list[str]:
    return re.findall(r"^type (\w+)", view, re.M)


@pytest.mark.fast
def test_identical_shapes_are_declared_once_across_tools_and_servers():
    ts = toolset(
        tool("fs", "read_file", PATH_SCHEMA, CONTENT_OUT),
        tool("fs", "stat_file", PATH_SCHEMA, CONTENT_OUT),
        tool("other", "open_file", PATH_SCHEMA, CONTENT_OUT),
    )
    pkg = build_package(ts)
    view = render_full(pkg)
    assert declared(view) == ["ReadFileInput", "ReadFileOutput"]  # the earliest tool's names
    assert {(f.input_type, f.output_type) for f in pkg.funcs} == {("ReadFileInput", "ReadFileOutput")}
    # The bindings declare the same single type, so the program accepts what the view shows.
    bindings = render_bindings(pkg)
    assert bindings.count("type ReadFileInput struct") == 1 and "StatFileInput struct" not in bindings
    # Each tool's own type name stays usable in the program, as an alias the view does not show.
    assert "type StatFileInput = ReadFileInput" in bindings and "StatFileInput" not in view


@pytest.mark.fast
def test_nested_shapes_merge_once_their_elements_have():
    item = {"type": "object", "properties": {"id": {"type": "string"}}}
    a = {"type": "object", "properties": {"items": {"type": "array", "items": item}}}
    ts = toolset(tool("s", "list_a", a), tool("s", "list_b", a))
    shown = [d for d in build_package(ts).decls if not getattr(d, "hidden", False)]
    assert len(shown) == 2  # one element struct, one input struct


@pytest.mark.fast
def test_different_field_descriptions_keep_separate_types():
    other = {**PATH_SCHEMA, "properties": {"path": {"type": "string", "description": "Where to write"}}}
    ts = toolset(tool("fs", "read_file", PATH_SCHEMA), tool("fs", "write_file", other))
    assert declared(render_full(build_package(ts))) == ["ReadFileInput", "WriteFileInput"]


@pytest.mark.fast
def test_enum_lists_its_values_on_its_type_and_its_description_is_not_repeated():
    ts = toolset(tool("w", "get_weather", {"type": "object", "properties": {"unit": UNIT}}))
    pkg = build_package(ts)
    view = render_full(pkg)
    assert '// Temperature unit\ntype GetWeatherInputUnit string // "celsius", "fahrenheit"\n' in view
    assert view.count("Temperature unit") == 1
    assert "const" not in view
    # The named constants stay declared for code that guesses them.
    assert "const GetWeatherInputUnitCelsius = gocodetools.GetWeatherInputUnitCelsius" in render_main(
        pkg, Prepared(body="in.Unit = GetWeatherInputUnitCelsius"), "model.go"
    )


@pytest.mark.fast
def test_a_field_explained_once_per_server_is_not_explained_again():
    path = {"type": "string", "description": "Path of the file"}
    a = {"type": "object", "properties": {"path": path, "n": {"type": "integer"}}}
    b = {"type": "object", "properties": {"path": path, "m": {"type": "integer"}}}
    c = {"type": "object", "properties": {"path": path, "k": {"type": "integer"}}}
    view = render_full(build_package(toolset(tool("fs", "one", a), tool("fs", "two", b), tool("other", "three", c))))
    assert view.count("// Path of the file") == 2  # once for fs, once for the other server
    assert "\tPath string\n" in view
    # A search answer explains it for the first tool it shows.
    pkg = build_package(toolset(tool("fs", "one", a), tool("fs", "two", b)))
    assert render_funcs(pkg, [pkg.funcs[1]]).count("// Path of the file") == 1


@pytest.mark.fast
def test_no_tags_no_restating_comments_and_required_fields_first():
    schema = {
        "type": "object",
        "properties": {
            "repo_path": {"type": "string", "title": "Repo Path"},
            "limit": {"type": "integer", "description": "The limit", "default": 10},
            "path": {"type": "string", "description": "Path of the file"},
        },
        "required": ["path"],
    }
    view = render_full(build_package(toolset(tool("git", "git_log", schema))))
    assert "`" not in view and "json:" not in view
    assert "Repo Path" not in view and "property" not in view
    assert "The limit" not in view  # restates the name
    body = view[view.index("struct {") : view.index("}")]
    assert body.index("Path ") < body.index("// optional:") < body.index("RepoPath")
    assert "Limit    *int // default 10\n" in view


@pytest.mark.fast
def test_declarations_are_grouped_under_one_header_per_server():
    ts = toolset(tool("alpha", "a_one", PATH_SCHEMA), tool("alpha", "a_two", {}), tool("beta", "b_one", {}))
    view = render_full(build_package(ts))
    assert view.count("// ===== server alpha (2 tools) =====") == 1
    assert view.count("// ===== server beta (1 tool) =====") == 1
    assert view.index("server alpha") < view.index("func aOne") < view.index("server beta") < view.index("func bOne")


@pytest.mark.fast
def test_media_tools_are_typed_as_content():
    ts = toolset(tool("e", "get_tiny_image", {}, desc="Returns a tiny image."), tool("e", "echo", {}))
    pkg = build_package(ts)
    view = render_full(pkg)
    assert "func getTinyImage(context.Context) (Content, error)" in view
    assert "func echo(context.Context) (string, error)" in view
    assert "\tMedia []Media" in view and "\tData     []byte" in view
    assert "gocodert" not in view
    assert "gocodert.CallContent" in render_bindings(pkg)


@pytest.mark.parametrize(
    "evil",
    ["x */ func evil() {} /*", "line\nfunc evil() {}", "a\u2028func evil() {}", "`raw` and ``", "\r\n// x\x00"],
)
@pytest.mark.fast
def test_untrusted_names_and_descriptions_cannot_break_the_view(evil):
    schema = {"type": "object", "properties": {evil: {"type": "string", "description": evil, "enum": [evil]}}}
    ts = toolset(tool(evil, evil, schema, desc=evil))
    pkg = build_package(ts)
    for view in (render_full(pkg), render_index(pkg), render_names(pkg)):
        for line in view.splitlines():
            code = re.sub(r'"(?:[^"\\]|\\.)*"', '""', line).split("//", 1)[0]
            assert "evil" not in code, line  # the payload only ever sits inside a comment or a literal
            assert not line.startswith("func evil")


@pytest.mark.fast
def test_every_name_the_view_shows_is_declared_by_the_program():
    pkg = all_package()
    view = render_full(pkg)
    shown = set(re.findall(r"^type (\w+)", view, re.M))
    shown |= set(re.findall(r"^func (\w+)\(", view, re.M)) - {"ptr"}
    main = render_main(pkg, Prepared(body="\n".join(sorted(shown))), "model.go")
    program = set(re.findall(r"^(?:type|const|var) (\w+) =", main, re.M))
    assert shown <= program
    visible = {d.name for d in pkg.decls if not getattr(d, "hidden", False)}
    assert visible | {f.name for f in pkg.funcs} <= shown


@pytest.mark.fast
def test_a_program_declares_only_the_names_its_code_writes():
    """A large tool set has thousands of names; each one declared costs every build."""
    pkg = all_package()
    plain = render_main(pkg, Prepared(body='fmt.Println("no tools")'), "model.go")
    assert "gocodetools" not in plain and not re.findall(r"^(?:type|const|var) \w+ =", plain, re.M)
    uses = render_main(pkg, Prepared(body="out := must(getCurrentTime(ctx, GetCurrentTimeInput{}))"), "model.go")
    assert re.findall(r"^(?:type|const|var) (\w+) =", uses, re.M) == ["GetCurrentTimeInput", "getCurrentTime"]
    assert "gocodetools" in uses


@pytest.mark.fast
def test_render_funcs_includes_every_type_a_tool_needs():
    pkg = build_package(load(CORPUS / "real" / "time.json"))
    convert = next(f for f in pkg.funcs if f.name == "convertTime")
    view = render_funcs(pkg, [convert])
    assert declared(view) == ["ConvertTimeInput", "TimeResult", "ConvertTimeOutput"]
    assert "getCurrentTime" not in view


def budget_choice(pkg, mode, budget):
    return choose(pkg, mode, budget, lambda text, tier: "RULES\n" + text)


@pytest.mark.fast
def test_disclosure_tiers_follow_the_budget():
    pkg = build_package(load(CORPUS / "real" / "filesystem.json"))
    assert budget_choice(pkg, "auto", 100_000).tier == "full"
    assert budget_choice(pkg, "auto", 1500).tier == "index"
    assert budget_choice(pkg, "index", 100_000).tier == "index"
    assert budget_choice(pkg, "full", 10).tier == "full"
    names = budget_choice(pkg, "auto", 120)
    assert names.tier == "names" and names.tokens <= 120 and "filesystem (14 tools)" in names.text


@pytest.mark.fast
def test_last_tier_scales_with_servers_not_tools():
    big = load_all()
    copies = tuple(
        ServerTools("copy_" + s.server, tuple(replace(t, server="copy_" + s.server) for t in s.tools))
        for s in big.servers
    )
    doubled = ToolSet(big.servers + copies)
    pkg = build_package(doubled)
    assert len(pkg.funcs) > 2000 and len({f.server for f in pkg.funcs}) > 80
    got = budget_choice(pkg, "auto", 2000)
    assert got.tier == "names" and got.tokens <= 2000


@pytest.mark.fast
def test_two_hundred_servers_fit_the_names_budget_with_every_server_named():
    """At 200 servers even a line per server overflows the budget: the names tier then lists the
    servers several to a line, each with its tool count, and execute_go_code plus search_go_tools
    stay within 2,500 tokens. Two tools a server keep the Go package quick to build; the tier
    without names does not grow with tools."""
    from gocode.search.answer import search_tool_definition

    real = [s for p in sorted((CORPUS / "real").glob("*.json")) for s in load(p).servers]
    servers = [
        ServerTools(name, tuple(replace(t, server=name) for t in s.tools[:2]))
        for k in range(5)
        for s in real
        for name in [s.server if k == 0 else f"copy{k}_{s.server}"]
    ][:200]
    cm = CodeMode(Config.model_validate({"mcpServers": {}}))
    cm.go_version = lambda: "1.26"  # type: ignore[method-assign]
    cm.use(servers)
    desc = cm.description()
    total = tokens.count_json(cm.tool_definition()) + tokens.count_json(search_tool_definition())
    assert cm.disclosure().tier == "names" and total <= 2500, total
    listed = dict(re.findall(r"(?:: |, |// )([\w.-]+) \((\d+)\)", desc))
    assert len(listed) == 200 and listed["copy3_github"] == "2" and listed["time"] == "2"
    assert "// servers (tools): " in desc


@pytest.mark.fast
def test_description_states_the_rules_and_points_to_search_when_incomplete():
    cfg = Config.model_validate({"mcpServers": {}, "defaults": {"codeMode": {"sandbox": "strict"}}})
    cm = CodeMode(cfg)
    cm.go_version = lambda: "1.26"  # type: ignore[method-assign]
    cm.use(list(load_all().servers))
    desc = cm.description()
    for part in ("Go 1.26", "golang.org/x/sync/errgroup", "imports are added automatically", "must(", "50 s"):
        assert part in desc
    assert "sandboxed: files only in its working directory" in desc and "search_go_tools" in desc
    assert tokens.count_json(cm.tool_definition()) <= 2500
    small = CodeMode(Config.model_validate({"mcpServers": {}}))
    small.go_version = lambda: "1.26"  # type: ignore[method-assign]
    small.use(list(load(CORPUS / "real" / "time.json").servers))
    assert small.complete() and "search_go_tools" not in small.description()
    # Only full declarations sit in a Go fence: the index and names tiers are not Go.
    assert "\n```go\n// ===== server time" in small.description()
    assert "```go" not in desc and "\n```\n//" in desc


@pytest.mark.fast
def test_enabled_auto_keeps_small_tool_sets_classic():
    assert not pays_off(list(load(CORPUS / "real" / "time.json").servers), set())
    assert pays_off(list(load(CORPUS / "real" / "github.json").servers), set())
    cm = CodeMode(Config.model_validate({"mcpServers": {}, "defaults": {"codeMode": {"enabled": "auto"}}}))
    cm.use(list(load(CORPUS / "real" / "time.json").servers))
    assert not cm.active and len(cm.view.excluded) == 2


@pytest.mark.fast
def test_token_counts_are_o200k():
    assert tokens.count("hello world") == 2
    assert tokens.count("") == 0


@pytest.mark.fast
def test_golden_corpus_is_the_model_view():
    text = (CORPUS / "golden" / "real-filesystem.go.golden").read_text()
    assert "func readTextFile(context.Context, ReadFileInput) (CreateDirectoryOutput, error)" in text
    assert Path(CORPUS / "golden").is_dir()


def _sentences(text: str) -> set[str]:
    return {s.strip() for s in re.split(r"(?<=[.:;])\s+|\n", text) if len(s.strip()) > 12}


def test_the_mcp_server_instructions_point_at_the_description_and_repeat_none_of_it():
    """A client sends the instructions and the tool's description with every request: the rules
    are in the description alone, the instructions say what gocode is and where to look."""
    from gocode.serve.server import ToolServer
    from gocode.toolbox import Toolbox

    box = Toolbox(Config.model_validate({"mcpServers": {}}))
    instructions = ToolServer(box).server.instructions or ""
    assert "execute_go_code" in instructions and "search_go_tools" in instructions
    assert tokens.count(instructions) < 60, tokens.count(instructions)
    for tier in ("full", "index", "names"):
        description = box.code_mode.rules() + rules_mod.search_hint(tier)
        assert not _sentences(instructions) & _sentences(description), tier
    assert "golang.org/x/sync/errgroup" not in instructions and "must(" not in instructions


@pytest.mark.fast
def test_the_run_time_search_helpers_the_description_names_are_those_rt_declares():
    """What the description says of searchTools/callTool is what rt declares and main aliases."""
    from gocode.resources import rt_sources
    from gocode.schema.ir import RUNTIME_ALIASES
    from gocode.view.rules import search_hint

    rt = rt_sources()["search.go"]
    said = search_hint("index")
    real = re.search(r"type ToolMatch struct \{(.*?)\n\}", rt, re.S)
    shown = re.search(r"ToolMatch\{([^}]*)\}", said)
    assert shown and real
    real_fields = set(re.findall(r"^\t([A-Z]\w*)\s", real.group(1), re.M))
    shown_fields = {f.strip() for f in shown.group(1).split(",")}
    assert shown_fields == real_fields == {"Name", "Server", "Function", "Description", "Signature"}
    assert "func SearchTools(ctx context.Context, query string) ([]ToolMatch, error)" in rt
    assert "func CallTool(ctx context.Context, name string, args map[string]any) (any, error)" in rt
    assert "searchTools(ctx, query) ([]ToolMatch, error)" in said
    assert 'callTool(ctx, "server.tool", map[string]any{…}) (any, error)' in said
    assert set(RUNTIME_ALIASES) == {
        "type ToolMatch = gocodert.ToolMatch",
        "var searchTools = gocodert.SearchTools",
        "var callTool = gocodert.CallTool",
        # result(v) (named in the rules) and callToolStream (docs/results-and-streaming.md).
        "var result = gocodert.Result",
        "type ToolProgress = gocodert.Progress",
        "var callToolStream = gocodert.CallToolStream",
        # Resources, prompts and whole results (named in the rules; docs/resources-and-prompts.md).
        "type ToolContent = gocodert.Content",
        "type ContentPart = gocodert.Part",
        "var callToolContent = gocodert.CallToolContent",
        "type ResourceInfo = gocodert.Resource",
        "type ResourceContents = gocodert.ResourceContents",
        "var listResources = gocodert.ListResources",
        "var readResource = gocodert.ReadResource",
        "type PromptResult = gocodert.Prompt",
        "var getPrompt = gocodert.GetPrompt",
    }


@pytest.mark.fast
def test_the_rules_say_whether_a_runs_threads_are_its_own():
    from gocode.config import CodeModeConfig
    from gocode.view.rules import rules

    settings = CodeModeConfig()
    assert ", 2048 threads of its own" in rules(settings, "1.26", "netns", "cgroup")
    assert ", 2048 threads of its own" in rules(settings, "1.26", "netns", "users")
    shared = rules(settings, "1.26", "netns", "shared")
    assert ", 2048 threads shared with other programs" in shared and "of its own" not in shared
    assert "threads" not in rules(settings, "1.26", "netns", "none")


@pytest.mark.fast
def test_the_index_line_carries_what_decides_a_call():
    """Required fields, a short enum's values and a default that changes results are on the
    tool's one line; a long enum, a long or multi-line value, and zero defaults are not."""
    schema = {
        "type": "object",
        "properties": {
            "amount": {"type": "number"},
            "currency": {"type": "string", "enum": ["dollar", "euro"]},
            "region": {"type": "string", "enum": [f"r{i}" for i in range(9)]},
            "page_size": {"type": "integer", "default": 50},
            "verbose": {"type": "boolean", "default": False},
            "note": {"type": "string", "default": "a|b; {injected} text that is long"},
        },
        "required": ["amount", "currency", "region"],
    }
    line = render_index(build_package(toolset(tool("bank", "convert", schema)))).splitlines()[1]
    assert line.startswith("convert(ConvertInput{Amount; Currency: dollar|euro; Region; PageSize=50}) string //"), line
    assert "r0" not in line and "Verbose" not in line and "injected" not in line
    many = {
        "type": "object",
        "properties": {f"f{i}": {"type": "string"} for i in range(6)},
        "required": [f"f{i}" for i in range(6)],
    }
    line = render_index(build_package(toolset(tool("s", "wide", many)))).splitlines()[1]
    assert "{F0; F1; F2; F3; …}" in line, line


def test_a_server_note_is_shown_once_above_its_tools_and_nothing_else_of_its_config(module_cache):
    """The config's ``note`` reaches the model once per server (full tier, index tier, search
    answers) as one bounded line without control characters; env, args and cwd never do."""
    from gocode.codemode import server_notes
    from tests.conftest import code_mode, config_from, demo_stdio

    secret = "sk-live-0123456789abcdefghijkl"
    note = "Serves the\x1b[2J weather\nof /srv/app.\u202e\x00" + " padding" * 100
    server = demo_stdio() | {"note": note, "env": {"API_KEY": secret}}
    cm = code_mode(config_from({"weather": server}), module_cache)
    full = cm.declarations()
    found, failed = cm.search_answer({"query": "weather"})
    assert not failed
    index = render_index(cm.package, about=server_notes(cm.config))
    for text in (full, found, index, cm.disclosure().text):
        lines = [line for line in text.splitlines() if line.startswith("// Note: ")]
        assert len(lines) == 1, text
        assert lines[0].startswith("// Note: Serves the"), lines
        assert "weather of /srv/app." in lines[0] and len(lines[0]) <= 320, lines
        assert lines[0].isprintable() and "\u202e" not in lines[0] and "\x1b" not in lines[0]
        assert secret not in text and "API_KEY" not in text


def test_a_servers_own_instructions_are_shown_once_bounded_and_survive_the_listing_cache(module_cache, tmp_path):
    """What a server says of itself in ``initialize`` is kept with its listing (also from the
    cache) and shown once under its header in declarations and search answers, after the
    config's note: one line, bounded; the description (sent with every request) leaves it out."""
    import sys

    import anyio

    from gocode.mcp.cache import ListingCache
    from gocode.toolbox import Toolbox
    from tests.conftest import config_from

    wild = Path(__file__).parent / "servers" / "wild_server.py"
    said = "Use the\x07 staging\u2066 tenant.\n" + "y" * 5000
    server = {"command": sys.executable, "args": [str(wild), "--ttl", "60000", "--instructions", said], "note": "Ours"}
    config = config_from({"wild": server}, defaults={"codeMode": {"sandbox": "off"}})

    async def texts() -> list[str]:
        cache = ListingCache(tmp_path)
        async with Toolbox(config, module_cache=module_cache, prewarm=False, listing_cache=cache) as box:
            found, failed = box.code_mode.search_answer({"query": "ping"})
            assert not failed and "From the server" not in box.code_mode.disclosure().text
            return [box.code_mode.declarations(), found]

    for _ in range(2):  # listed, then from the cache
        for text in anyio.run(texts):
            head = text[text.index("// ===== server wild") :].splitlines()[:3]
            assert head[1] == "// Note: Ours", head
            assert head[2].startswith("// From the server: Use the staging tenant. yyy") and len(head[2]) <= 150, head
            assert head[2].isprintable() and text.count("From the server") == 1
