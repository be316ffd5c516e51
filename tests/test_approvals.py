"""The static plan and approvals: which tools a program can call, known before it runs, and
programs that can call a tool needing approval held until someone approves them.

Against tests/servers/notes_server.py (annotated tools), through the Python API and through
`gocode serve` with the Python `mcp` client answering elicitation requests."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import mcp_types as types
import pytest
import yaml
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from gocode.config import ApprovalConfig, ConfigError
from gocode.program.plan import PLAN_META_KEY, Plan
from gocode.run.approvals import (
    ANY_TOOL,
    APPROVAL_NOTE,
    APPROVAL_NOTE_NO_ONE,
    held_for,
    needs_approval,
    safety,
    safety_marks,
    tools_needing_approval,
)
from gocode.toolbox import Toolbox
from gocode.toolset import ToolInfo
from tests.conftest import ROOT, config_from, module_cache  # noqa: F401 (fixture)

NOTES = {"command": sys.executable, "args": [str(ROOT / "tests" / "servers" / "notes_server.py")]}
GOCODE = str(Path(sys.executable).parent / "gocode")

READ = (
    'n, err := readNote(ctx, ReadNoteInput{Name: "hello"})\nif err != nil {\n\treturn err\n}\nfmt.Println(n.Result)\n'
)
DELETE = 'if _, err := deleteNote(ctx, DeleteNoteInput{Name: "hello"}); err != nil {\n\treturn err\n}\nfmt.Println("deleted")\n'
BOTH = READ + "\n" + DELETE


def tool(name: str, **hints: bool) -> ToolInfo:
    return ToolInfo("notes", name, definition={"name": name, "annotations": hints} if hints else {"name": name})


# --- pure rules ------------------------------------------------------------------------------


@pytest.mark.fast
def test_annotations_decide_unless_a_pattern_does():
    default = ApprovalConfig()
    assert not needs_approval(default, "notes", tool("read_note", readOnlyHint=True))
    assert needs_approval(default, "notes", tool("delete_note", destructiveHint=True))
    assert not needs_approval(default, "notes", tool("add_note"))  # unannotated: allow by default
    assert needs_approval(ApprovalConfig(unannotated="ask"), "notes", tool("add_note"))
    # A pattern wins over the annotations, ask over allow.
    assert needs_approval(ApprovalConfig(ask=("notes.read_*",)), "notes", tool("read_note", readOnlyHint=True))
    assert not needs_approval(ApprovalConfig(allow=("notes.*",)), "notes", tool("delete_note", destructiveHint=True))
    both = ApprovalConfig(ask=("notes.delete_*",), allow=("notes.*",))
    assert needs_approval(both, "notes", tool("delete_note"))
    assert not needs_approval(ApprovalConfig(enabled=False), "notes", tool("delete_note", destructiveHint=True))


@pytest.mark.fast
def test_safety_shows_the_hints_a_server_set_and_whether_a_program_calling_it_is_held():
    default = ApprovalConfig()
    read = safety(default, tool("read_note", readOnlyHint=True, openWorldHint=False))
    assert read == {"annotations": {"readOnlyHint": True, "openWorldHint": False}, "needsApproval": False}
    assert safety_marks(read) == " (read-only, closed-world)"
    delete = safety(default, tool("delete_note", readOnlyHint=False, destructiveHint=True, idempotentHint=True))
    assert delete["needsApproval"] and safety_marks(delete) == " (destructive, idempotent, needs approval)"
    # Only tools in code mode are held: a regular tool is the client's to call.
    assert safety(default, tool("delete_note", destructiveHint=True), in_code=False)["needsApproval"] is False
    # A server's listing is untrusted: a hint that is not a boolean is as if unset, nothing else is kept.
    odd = ToolInfo("notes", "odd", definition={"annotations": {"readOnlyHint": "yes\x1b[2J", "title": "x", "z": 1}})
    assert safety(ApprovalConfig(unannotated="ask"), odd) == {"annotations": {}, "needsApproval": True}
    assert safety_marks(safety(default, odd)) == ""
    assert safety(default, ToolInfo("notes", "bad", definition={"annotations": ["readOnlyHint"]}))["annotations"] == {}


@pytest.mark.fast
def test_held_for_is_what_the_approve_step_holds_a_program_for():
    tools = {("notes", "read_note"): tool("read_note", readOnlyHint=True)}
    tools[("notes", "delete_note")] = tool("delete_note", destructiveHint=True)
    settings = ApprovalConfig()
    assert held_for(settings, Plan((("notes", "read_note"),)), tools) == ()
    assert held_for(settings, Plan((("notes", "delete_note"),)), tools) == ("notes.delete_note",)
    assert held_for(settings, Plan(any_tool=("dynamic",)), tools) == (ANY_TOOL, "notes.delete_note")
    calm = {("notes", "read_note"): tools[("notes", "read_note")]}
    assert held_for(settings, Plan(any_tool=("dynamic",)), calm) == ()  # any tool, none of which asks
    assert held_for(ApprovalConfig(ask=("saved.*",)), Plan((("saved", "tidy"),)), {}, exempt_server="saved") == ()


@pytest.mark.fast
def test_a_program_that_may_call_any_tool_is_held_when_any_tool_needs_approval():
    tools = {("notes", "read_note"): tool("read_note", readOnlyHint=True)}
    anything = Plan(any_tool=("model.go:2: callTool with a name computed at run time",))
    assert tools_needing_approval(ApprovalConfig(), anything, tools) == ()
    tools[("notes", "delete_note")] = tool("delete_note", destructiveHint=True)
    assert tools_needing_approval(ApprovalConfig(), anything, tools) == (ANY_TOOL, "notes.delete_note")
    only_read = Plan(tools=(("notes", "read_note"),))
    assert tools_needing_approval(ApprovalConfig(), only_read, tools) == ()


@pytest.mark.fast
def test_the_plan_text_names_the_tools_a_program_calls_even_when_it_may_call_any():
    reason = "model.go:5: callTool with a name computed at run time"
    both = Plan(tools=(("demo", "get_weather"), ("git", "git_status")), any_tool=(reason,))
    assert both.text() == f"demo.get_weather, git.git_status, and any tool ({reason})"
    assert Plan(any_tool=(reason,)).text() == f"any tool ({reason})"
    assert Plan(tools=(("notes", "read_note"),)).text() == "notes.read_note"
    assert Plan().text() == "no tools"


@pytest.mark.fast
def test_a_plan_says_how_and_where_the_code_calls_a_tool():
    """As the code calls it and on which lines, a few at most (the code is the model's: it may
    call a tool on every line); a tool it does not call by name (through a saved program) is named."""
    many = Plan(
        tools=(("notes", "delete_note"),), sites=(("notes", "delete_note", "deleteNote", tuple(range(1, 10001))),)
    )
    assert many.calls_of("notes", "delete_note") == "deleteNote (notes.delete_note), lines 1, 2, 3, 4, 5 and 9995 more"
    assert many.calls_of("notes", "delete_note", lines=False) == "deleteNote (notes.delete_note)"
    assert many.calls_of("notes", "read_note") == "notes.read_note"
    assert many == Plan(tools=(("notes", "delete_note"),))  # where the calls are is not what a plan is


@pytest.mark.fast
def test_approval_config_is_strict():
    with pytest.raises(ConfigError, match="approval"):
        config_from({}, defaults={"codeMode": {"approval": {"ask": ["x"], "askk": ["y"]}}})
    with pytest.raises(ConfigError, match="unannotated"):
        config_from({}, defaults={"codeMode": {"approval": {"unannotated": "sometimes"}}})
    with pytest.raises(ConfigError, match="non-empty"):
        config_from({}, defaults={"codeMode": {"approval": {"ask": [" "]}}})


# --- the plan, from the type check ---------------------------------------------------------------


@pytest.mark.go
def test_plan_names_the_tools_without_running_anything(module_cache):  # noqa: F811
    async def go() -> dict[str, Plan | None]:
        async with Toolbox(config_from({"notes": NOTES}), module_cache=module_cache, prewarm=False) as box:
            cm = box.code_mode
            codes = {
                "typed": BOTH,
                "constant": 'v, err := callTool(ctx, "notes.add_note", map[string]any{"name": "a", "text": "b"})\n'
                "fmt.Println(v, err)\n",
                "computed": 'name := "notes." + os.Getenv("X")\nv, err := callTool(ctx, name, nil)\nfmt.Println(v, err)\n',
                # A local variable that shadows a tool's function is not the tool.
                "shadowed": 'deleteNote := func() string { return "x" }\nfmt.Println(deleteNote())\n',
                "value": "f := callTool\n_ = f\n",
                "broken": "undefinedThing()\n",
            }
            return {k: (await cm.plan(code)).plan for k, code in codes.items()}

    got = asyncio.run(go())
    assert got["typed"] == Plan(tools=(("notes", "delete_note"), ("notes", "read_note")))
    assert got["constant"] == Plan(tools=(("notes", "add_note"),))
    # Where the code calls each tool, as it calls it (what a refusal points at).
    assert got["typed"].sites == (
        ("notes", "delete_note", "deleteNote", (7,)),
        ("notes", "read_note", "readNote", (1,)),
    )
    assert got["constant"].sites == (("notes", "add_note", 'callTool("notes.add_note")', (1,)),)
    assert got["computed"] is not None and got["computed"].any_tool == (
        "model.go:2: callTool with a name computed at run time",
    )
    assert got["shadowed"] == Plan()
    assert got["value"] is not None and got["value"].any_tool == ("model.go:1: callTool used as a value",)
    assert got["broken"] is None  # does not type-check: no plan, the errors instead


# --- held for approval: the Python API -----------------------------------------------------------------


@pytest.mark.go
def test_a_destructive_program_is_held_while_a_read_only_one_runs(module_cache):  # noqa: F811
    asked: list = []

    async def go():
        async with Toolbox(config_from({"notes": NOTES}), module_cache=module_cache, prewarm=False) as box:
            read = await box.execute(READ)  # read-only: nobody is asked
            refused = await box.execute(BOTH)  # no callback: refused, naming the tool
            declined = await box.execute(BOTH, approve=lambda r: asked.append(r) or False)
            still_there = await box.execute(READ)
            approved = await box.execute(BOTH, approve=lambda r: asked.append(r) or True)
            gone = await box.execute(READ)
            result, _ = await box.call_mcp("execute_go_code", {"code": READ})
            return read, refused, declined, still_there, approved, gone, result

    read, refused, declined, still_there, approved, gone, result = asyncio.run(go())
    assert (read.ok, read.output) == (True, "Hello, world.\n")
    assert (
        refused.phase == "approval"
        and "notes.delete_note" in refused.stderr
        and "no one can be asked" in refused.stderr
    )
    assert refused.tool_calls == []
    assert declined.phase == "approval" and "not approved" in declined.stderr
    assert still_there.output == "Hello, world.\n"  # nothing ran: the note is still there
    assert (approved.ok, approved.output) == (True, "Hello, world.\ndeleted\n")
    assert gone.output == "\n"
    assert len(asked) == 2 and asked[0].tools == ("notes.delete_note",)
    assert asked[0].program_hash == asked[1].program_hash and BOTH in asked[0].message()
    assert result.meta is not None
    assert result.meta[PLAN_META_KEY] == {"tools": ["notes.read_note"], "anyTool": False, "anyToolReasons": []}


RAW_CALL = """\
var specs map[string]struct {
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
}
if err := json.Unmarshal([]byte(os.Getenv("GOCODE_SERVERS")), &specs); err != nil {
	return err
}
s := specs["notes"]
body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"delete_note","arguments":{"name":"hello"}}}`
req, _ := http.NewRequest("POST", s.URL, strings.NewReader(body))
for k, v := range s.Headers {
	req.Header.Set(k, v)
}
req.Header.Set("Content-Type", "application/json")
req.Header.Set("Accept", "application/json, text/event-stream")
req.Header.Set("MCP-Protocol-Version", "2025-06-18")
resp, err := http.DefaultClient.Do(req)
if err != nil {
	return err
}
out, _ := io.ReadAll(resp.Body)
fmt.Println(string(out))
"""


@pytest.mark.go
def test_a_call_the_plan_did_not_show_is_refused_by_the_endpoint(module_cache):  # noqa: F811
    """A program that talks to the endpoint itself cannot reach a tool it was not checked for."""
    config = config_from({"notes": NOTES}, defaults={"codeMode": {"sandbox": "off"}})

    async def go():
        async with Toolbox(config, module_cache=module_cache, prewarm=False) as box:
            raw = await box.execute(RAW_CALL)
            after = await box.execute(READ)
            return raw, after

    raw, after = asyncio.run(go())
    assert raw.ok, raw.error_text()
    assert "is not among the tools this program was checked" in raw.output
    assert after.output == "Hello, world.\n"


# --- held for approval: over MCP, through elicitation --------------------------------------------------


@pytest.mark.go
@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_serve_asks_the_client_through_elicitation(tmp_path, mode):
    config = tmp_path / "gocode.yaml"
    config.write_text(yaml.safe_dump({"mcpServers": {"notes": NOTES}}))
    params = StdioServerParameters(command=GOCODE, args=["serve", "-c", str(config)], env=dict(os.environ))
    asked: list[str] = []
    answers = iter([False, True])

    async def on_elicit(context, p: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(p.message)
        return types.ElicitResult(action="accept", content={"approve": next(answers)})

    async def go():
        async with Client(stdio_client(params), mode=mode, elicitation_callback=on_elicit) as c:
            read = await c.call_tool("execute_go_code", {"code": READ})
            declined = await c.call_tool("execute_go_code", {"code": BOTH})
            approved = await c.call_tool("execute_go_code", {"code": BOTH})
            return read, declined, approved

    read, declined, approved = asyncio.run(go())
    text = ["".join(x.text for x in r.content if isinstance(x, types.TextContent)) for r in (read, declined, approved)]
    assert text[0] == "Hello, world.\n" and not read.is_error
    assert declined.is_error and "notes.delete_note" in text[1] and "not approved" in text[1]
    assert text[2] == "Hello, world.\ndeleted\n" and not approved.is_error
    assert len(asked) == 2  # the read-only program asked no one
    assert "notes.delete_note" in asked[0] and "deleteNote(ctx" in asked[0]


@pytest.mark.go
def test_serve_refuses_when_the_client_cannot_be_asked(tmp_path):
    config = tmp_path / "gocode.yaml"
    config.write_text(yaml.safe_dump({"mcpServers": {"notes": NOTES}}))
    params = StdioServerParameters(command=GOCODE, args=["serve", "-c", str(config)], env=dict(os.environ))

    async def go():
        async with Client(stdio_client(params), mode="legacy") as c:
            return await c.call_tool("execute_go_code", {"code": DELETE})

    got = asyncio.run(go())
    text = "".join(x.text for x in got.content if isinstance(x, types.TextContent))
    assert got.is_error and "notes.delete_note" in text and "no one can be asked" in text
    assert json.dumps(got.meta or {}).find("delete_note") > 0


@pytest.mark.go
@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_serve_tells_a_client_that_cannot_be_asked_that_no_one_can_approve(tmp_path, mode):
    """Under `gocode serve` a client is the approver of its calls: one that declared elicitation
    reads "Needs approval." on the tools needing it, one that did not reads that a program calling
    them is refused here, in the description, search answers and step declarations alike, the
    same bytes on every list."""
    config = tmp_path / "gocode.yaml"
    for disclosure in ("full", "index"):  # the description shows the declarations, or only the index
        defaults = {"codeMode": {"sandbox": "off", "disclosure": disclosure}}
        config.write_text(yaml.safe_dump({"mcpServers": {"notes": NOTES}, "defaults": defaults}))
        args = ["serve", "-c", str(config), "--stateless-step"]
        params = StdioServerParameters(command=GOCODE, args=args, env=dict(os.environ))

        async def on_elicit(context, p: types.ElicitRequestParams) -> types.ElicitResult:
            return types.ElicitResult(action="decline")

        async def seen(elicit, params=params) -> tuple[list[types.Tool], list[types.Tool], str, str]:
            async with Client(stdio_client(params), mode=mode, elicitation_callback=elicit) as c:
                first, again = (await c.list_tools()).tools, (await c.list_tools()).tools
                found = ""
                if any(t.name == "search_go_tools" for t in first):
                    got = await c.call_tool("search_go_tools", {"names": ["deleteNote", "readNote"]})
                    found = "".join(x.text for x in got.content if isinstance(x, types.TextContent))
                step = await c.call_tool("step_go_code", {"code": "", "declarations_only": True})
                return first, again, found, json.dumps(step.structured_content)

        asked, unasked = asyncio.run(seen(on_elicit)), asyncio.run(seen(None))
        for tools, again, _, _ in (asked, unasked):
            assert [t.model_dump() for t in tools] == [t.model_dump() for t in again]  # the same bytes each time
        for (tools, _, found, step), note, other in ((asked, APPROVAL_NOTE, APPROVAL_NOTE_NO_ONE),
                                                     (unasked, APPROVAL_NOTE_NO_ONE, APPROVAL_NOTE)):  # fmt: skip
            description = tools[0].description or ""
            for text in (description, found, step) if found else (description, step):
                assert f"// {note}" in text and f"// {other}" not in text, (disclosure, text)
                assert text.count("Needs approval") == 1, text
            assert ("search_go_tools" in [t.name for t in tools]) == (disclosure == "index")
        # Only the marks differ: every other tool, and the rest of each text, read the same.
        assert [t.model_dump() for t in asked[0][1:]] == [t.model_dump() for t in unasked[0][1:]]
        for i, text in ((0, asked[0][0].description), (2, asked[2]), (3, asked[3])):
            said = unasked[0][0].description if i == 0 else unasked[i]
            assert (text or "").replace(APPROVAL_NOTE, APPROVAL_NOTE_NO_ONE) == said, disclosure

        # A client that can be asked reads what the code mode renders for its own approver, as before.
        async def rendered(config=config) -> tuple[list[types.Tool], list[types.Tool]]:
            async with Toolbox(str(config), prewarm=False, stateless_step=True, approval_by_client=True) as box:
                return box.tools(), box.tools(unasked=True)

        own, cannot = asyncio.run(rendered())
        assert [t.model_dump() for t in own] == [t.model_dump() for t in asked[0]]
        assert [t.model_dump() for t in cannot] == [t.model_dump() for t in unasked[0]]


@pytest.mark.go
def test_one_server_over_http_tells_each_client_what_holds_for_it(tmp_path):
    """Two clients of one `gocode serve` over HTTP at once: each reads the list for its own
    capabilities, list after list, and what it read holds (the one that cannot be asked is refused,
    the other is asked)."""
    from mcp.client.streamable_http import streamable_http_client

    from tests.conftest import background, free_port

    config = tmp_path / "gocode.yaml"
    config.write_text(yaml.safe_dump({"mcpServers": {"notes": NOTES}, "defaults": {"codeMode": {"sandbox": "off"}}}))
    port = free_port()
    asked: list[str] = []

    async def on_elicit(context, p: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(p.message)
        return types.ElicitResult(action="decline")

    async def go(url: str) -> tuple[list[str], list[str], types.CallToolResult, types.CallToolResult]:
        can, cannot = streamable_http_client(url), streamable_http_client(url)
        async with Client(can, elicitation_callback=on_elicit) as a, Client(cannot) as b:
            seen_a, seen_b = [], []
            for _ in range(2):  # interleaved: neither client's list leaks into the other's
                seen_a.append((await a.list_tools()).tools[0].description or "")
                seen_b.append((await b.list_tools()).tools[0].description or "")
            return (
                seen_a,
                seen_b,
                await a.call_tool("execute_go_code", {"code": DELETE}),
                await b.call_tool("execute_go_code", {"code": DELETE}),
            )

    cmd = [GOCODE, "serve", "-c", str(config), "--transport", "http", "--port", str(port)]
    with background(cmd, port):
        seen_a, seen_b, declined, refused = asyncio.run(go(f"http://127.0.0.1:{port}/mcp"))
    assert len(set(seen_a)) == 1 and len(set(seen_b)) == 1
    assert f"// {APPROVAL_NOTE}\n" in seen_a[0] and APPROVAL_NOTE_NO_ONE not in seen_a[0]
    assert f"// {APPROVAL_NOTE_NO_ONE}\n" in seen_b[0]
    assert seen_a[0].replace(APPROVAL_NOTE, APPROVAL_NOTE_NO_ONE) == seen_b[0]
    text = ["".join(x.text for x in r.content if isinstance(x, types.TextContent)) for r in (declined, refused)]
    assert declined.is_error and "not approved" in text[0] and len(asked) == 1
    assert refused.is_error and "no one can be asked" in text[1]


@pytest.mark.go
def test_exec_plan_prints_the_tools_and_runs_nothing(tmp_path):
    config = tmp_path / "gocode.json"
    config.write_text(json.dumps({"mcpServers": {"notes": NOTES}}))
    prog = tmp_path / "prog.go"
    prog.write_text(BOTH)
    got = subprocess.run([GOCODE, "exec", "-c", str(config), "--plan", str(prog)], capture_output=True, text=True)
    want = "notes.delete_note, notes.read_note\nheld for approval: notes.delete_note\n"
    assert (got.returncode, got.stdout) == (0, want), got.stderr
    # The same as a document: which calls a run would be held for.
    got = subprocess.run(
        [GOCODE, "exec", "-c", str(config), "--plan", "--json", str(prog)], capture_output=True, text=True
    )
    doc = json.loads(got.stdout)
    assert (doc["held"], doc["needsApproval"]) == (True, ["notes.delete_note"]), got.stderr
    prog.write_text(READ)
    got = subprocess.run(
        [GOCODE, "exec", "-c", str(config), "--plan", "--json", str(prog)], capture_output=True, text=True
    )
    doc = json.loads(got.stdout)
    assert (doc["plan"]["tools"], doc["held"], doc["needsApproval"]) == (["notes.read_note"], False, []), got.stderr
    prog.write_text("undefinedThing()\n")
    got = subprocess.run(
        [GOCODE, "exec", "-c", str(config), "--plan", "--json", str(prog)], capture_output=True, text=True
    )
    assert got.returncode == 1 and "undefined: undefinedThing" in got.stderr


def test_list_shows_each_tools_safety_and_whether_it_needs_approval(tmp_path):
    config = tmp_path / "gocode.yaml"
    mode = {"excludedTools": ["notes.add_note"], "approval": {"ask": ["notes.big_text"]}}
    config.write_text(yaml.safe_dump({"mcpServers": {"notes": NOTES}, "defaults": {"codeMode": mode}}))
    env = {**os.environ, "GOCODE_CACHE_DIR": str(tmp_path / "cache")}  # the listing fresh from the server
    text = subprocess.run([GOCODE, "list", "-c", str(config)], env=env, capture_output=True, text=True, timeout=60)
    assert text.returncode == 0, text.stderr
    assert text.stdout.splitlines()[2:] == [
        "  [go     ] read_note (read-only) — Read a note.",
        "  [go     ] delete_note (destructive, needs approval) — Delete a note.",
        "  [regular] add_note — Add a note.",
        "  [go     ] big_text (read-only, needs approval) — A text of `size` bytes: BEGIN, numbered lines, END.",
    ]
    got = subprocess.run(
        [GOCODE, "list", "-c", str(config), "--json"], env=env, capture_output=True, text=True, timeout=60
    )
    tools = {t["name"]: t for t in json.loads(got.stdout)["servers"][0]["tools"]}
    assert {n: (t["annotations"], t["needsApproval"]) for n, t in tools.items()} == {
        "read_note": ({"readOnlyHint": True}, False),
        "delete_note": ({"readOnlyHint": False, "destructiveHint": True}, True),
        "add_note": ({}, False),
        "big_text": ({"readOnlyHint": True}, True),  # the config's ask pattern wins over the hint
    }


@pytest.mark.go
def test_exec_refuses_naming_the_tools_and_says_how_to_allow_them(tmp_path):
    config = tmp_path / "gocode.yaml"
    config.write_text(yaml.safe_dump({"mcpServers": {"notes": NOTES}}))
    prog = tmp_path / "prog.go"
    prog.write_text(BOTH)
    got = subprocess.run([GOCODE, "exec", "-c", str(config), str(prog)], capture_output=True, text=True)
    assert got.returncode == 1 and got.stdout == ""
    assert "need approval (notes.delete_note)" in got.stderr and "codeMode.approval.allow" in got.stderr
    # What the hint says works: the tool allowed in the config, the same program runs.
    allowed = {"mcpServers": {"notes": NOTES}, "defaults": {"codeMode": {"approval": {"allow": ["notes.delete_note"]}}}}
    config.write_text(yaml.safe_dump(allowed))
    got = subprocess.run([GOCODE, "exec", "-c", str(config), str(prog)], capture_output=True, text=True)
    assert (got.returncode, got.stdout) == (0, "Hello, world.\ndeleted\n"), got.stderr


def ask_config(tmp_path: Path) -> tuple[Path, Path]:
    config = tmp_path / "gocode.yaml"
    mode = {"approval": {"ask": ["notes.delete_note"]}}
    config.write_text(yaml.safe_dump({"mcpServers": {"notes": NOTES}, "defaults": {"codeMode": mode}}))
    prog = tmp_path / "prog.go"
    prog.write_text(BOTH)
    return config, prog


def exec_with(config: Path, prog: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    """``gocode exec`` as a script runs it: no terminal to ask on."""
    argv = [GOCODE, "exec", "-c", str(config), *flags, str(prog)]
    return subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)


@pytest.mark.go
def test_exec_approve_runs_a_held_program_only_for_the_tools_it_names(tmp_path):
    config, prog = ask_config(tmp_path)
    got = exec_with(config, prog, "--approve", "notes.delete_note")
    assert (got.returncode, got.stdout) == (0, "Hello, world.\ndeleted\n"), got.stderr
    got = exec_with(config, prog, "--approve", "all")
    assert (got.returncode, got.stdout) == (0, "Hello, world.\ndeleted\n"), got.stderr
    # Without it, or naming another tool: refused before anything runs, with the hint naming the flag.
    for flags in ((), ("--approve", "notes.read_note")):
        got = exec_with(config, prog, *flags)
        assert got.returncode == 1 and got.stdout == "", got.stderr
        assert "need approval (notes.delete_note)" in got.stderr and "--approve" in got.stderr, got.stderr
    assert "--approve does not name notes.delete_note" in got.stderr
    # A pattern would approve more than the person read: only exact names.
    for bad in ("notes.*", "delete_note", ""):
        got = exec_with(config, prog, "--approve", bad)
        assert got.returncode == 2 and "--approve takes `all` or comma-separated server.tool names" in got.stderr


def on_a_terminal(argv: list[str], answer: bytes) -> tuple[int, str]:
    """Run ``argv`` with a pseudo-terminal for stdin, stdout and stderr; answer its prompt.
    Its exit status and everything it wrote."""
    import pty
    import select
    import time

    main, sub = pty.openpty()
    proc = subprocess.Popen(argv, stdin=sub, stdout=sub, stderr=sub, close_fds=True)
    os.close(sub)
    seen, answered, deadline = b"", False, time.monotonic() + 90
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([main], [], [], 1.0)
            if ready:
                try:
                    chunk = os.read(main, 4096)
                except OSError:  # the terminal closed: the program is gone
                    break
                if not chunk:
                    break
                seen += chunk
            if not answered and b"Run it? [y/N]" in seen:
                os.write(main, answer)
                answered = True
            if proc.poll() is not None and not ready:
                break
        return proc.wait(timeout=30), seen.decode(errors="replace").replace("\r\n", "\n")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(main)


@pytest.mark.go
def test_exec_on_a_terminal_asks_and_runs_only_on_yes(tmp_path):
    config, prog = ask_config(tmp_path)
    argv = [GOCODE, "exec", "-c", str(config), str(prog)]
    status, seen = on_a_terminal(argv, b"y\n")
    assert status == 0 and "It can call tools that need approval: notes.delete_note" in seen, seen
    assert seen.endswith("Hello, world.\ndeleted\n"), seen
    status, seen = on_a_terminal(argv, b"\n")  # the default is no
    assert status == 1 and "Run it? [y/N]" in seen and "it was not approved" in seen, seen
    assert "Hello, world." not in seen and "hint" not in seen.lower() and "--approve" not in seen


@pytest.mark.fast
def test_a_modern_client_not_yet_asked_gets_an_input_required_result_for_this_program():
    """2026-07-28 era: without the client's response for this program, the approver answers
    AskFirst (the client must be asked first), and the call is answered with the
    InputRequiredResult for its request (its state names the program); with the response for
    it, the answer decides."""
    from types import SimpleNamespace

    from gocode.run.approvals import ApprovalRequest, AskFirst
    from gocode.serve.elicitation import APPROVAL_INPUT_KEY, elicitation_approver, input_required

    ctx = SimpleNamespace(session=SimpleNamespace(client_capabilities=SimpleNamespace(elicitation=object())))
    request = ApprovalRequest("h" * 64, "fmt.Println(1)", ("notes.delete_note",), Plan((("notes", "delete_note"),)))
    approver = elicitation_approver(ctx, SimpleNamespace(input_responses=None, request_state=None), True)
    assert approver is not None
    outcome = approver(request)
    assert outcome == AskFirst(request)
    assert isinstance(outcome, AskFirst)
    result = input_required(outcome.request)
    assert isinstance(result, types.InputRequiredResult) and result.request_state == request.program_hash
    assert "notes.delete_note" in result.input_requests[APPROVAL_INPUT_KEY].params.message
    answer = SimpleNamespace(action="accept", content={"approve": True})
    retried = elicitation_approver(
        ctx, SimpleNamespace(input_responses={APPROVAL_INPUT_KEY: answer}, request_state=request.program_hash), True
    )
    assert retried is not None and retried(request) is True


@pytest.mark.go
def test_the_declarations_mark_the_tools_that_need_approval(module_cache):  # noqa: F811 (fixture)
    """A tool that needs approval says so on its declaration, in the description (every tier
    that shows it) and in search answers; without anyone to ask, that such a program is refused."""
    config = config_from({"notes": NOTES}, defaults={"codeMode": {"sandbox": "off"}})

    async def go(approve: object) -> tuple[str, str, str]:
        async with Toolbox(config, module_cache=module_cache, prewarm=False, approve=approve) as box:  # type: ignore[arg-type]
            answer, _ = box.code_mode.search_answer({"names": ["deleteNote", "readNote"]})
            return box.tools()[0].description or "", answer, box.code_mode.declarations()

    for approve, note in ((None, "Needs approval, which no one can give here"), (lambda _: True, "Needs approval.")):
        for text in asyncio.run(go(approve)):
            assert f"// {note}" in text and "\nfunc deleteNote(" in text, text
            # Only the destructive tool: the read-only one is not marked.
            marked = text.split(f"// {note}")[1].split("\nfunc ", 1)[1]
            assert marked.startswith("deleteNote("), text
            assert text.count("Needs approval") == 1, text


@pytest.mark.go
def test_a_refusal_names_the_calls_that_need_approval_and_suggests_running_the_rest(module_cache):  # noqa: F811
    """A held program is refused naming the calls that need approval (the function as the code
    calls it, its tool, its lines) and the calls that need none, with the advice to run those as
    a program of their own, which then runs unasked; a program that may call any tool is told to
    name its tools so only the calls needing approval hold it."""
    by_name = (
        'if _, err := callTool(ctx, "notes.delete_note", map[string]any{"name": "x"}); err != nil {\n\treturn err\n}\n'
    )
    computed = (
        'name := "notes." + "delete_note"\n_, err := callTool(ctx, name, map[string]any{"name": "x"})\nreturn err\n'
    )

    async def go():
        config = config_from({"notes": NOTES}, defaults={"codeMode": {"sandbox": "off"}})
        async with Toolbox(config, module_cache=module_cache, prewarm=False) as box:
            got = [await box.execute(code) for code in (BOTH, by_name + BOTH, DELETE, computed)]
            return [*got, await box.execute(READ)]

    both, twice, alone, anyone, rest = asyncio.run(go())
    assert all(r.phase == "approval" and r.tool_calls == [] for r in (both, twice, alone, anyone))
    assert both.stderr.splitlines()[1:] == [
        "The calls that need approval: deleteNote (notes.delete_note), line 7.",
        "Its other calls (readNote (notes.read_note)) need none: run the rest as its own program, without the "
        "calls above, and it runs without asking.",
    ], both.stderr
    assert (
        'The calls that need approval: callTool("notes.delete_note") (notes.delete_note), line 1; '
        "deleteNote (notes.delete_note), line 10." in twice.stderr
    ), twice.stderr
    assert alone.stderr.endswith(
        "The calls that need approval: deleteNote (notes.delete_note), line 1. Every tool it calls needs approval: "
        "without them nothing of it is left to run here."
    ), alone.stderr
    assert "It may call any tool (model.go:2: callTool with a name computed at run time)" in anyone.stderr
    assert "callTool with a constant name, and only those calls are held" in anyone.stderr
    # What the refusal suggests works: the rest, on its own, runs without asking.
    assert (rest.ok, rest.output) == (True, "Hello, world.\n")
