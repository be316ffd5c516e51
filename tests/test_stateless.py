"""The stateless step protocol: client-owned tools answered by the caller between passes.

Pure tests cover the continuation (signature, binding to program and tool set, size, age),
the caller's answers and the call positions; Go tests drive real programs through
``Toolbox.step`` and ``step_go_code`` against a real MCP server with a side effect
(tests/servers/counter_server.py), the caller running its own tool.
"""

from __future__ import annotations

import json
import os
import stat
import sys
import time
import zlib
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from gocode import SyncToolbox, Toolbox
from gocode.run import step
from gocode.run.interceptor import Entry, Interceptor, stub, value_result, wire
from gocode.toolset import ToolInfo
from tests.conftest import ROOT, config_from

SECRET = b"k" * 32
PROGRAM = step.program_hash("fmt.Println(1)")


def state(**kw: Any) -> step.State:
    pending = [Entry(step.CLIENT_SERVER, "web_search", {"query": "a"}, 0)]
    return step.State(PROGRAM, "tools-digest", [], pending, 1, **kw)


# --- pure ---------------------------------------------------------------------------------------


@pytest.mark.fast
def test_continuation_round_trips_and_is_bound_to_program_and_tools():
    token = step.encode(state(), SECRET)
    got = step.decode(token, SECRET, PROGRAM, "tools-digest")
    assert got.pending[0].arguments == {"query": "a"} and got.passes == 1
    with pytest.raises(step.StepError, match="another program"):
        step.decode(token, SECRET, step.program_hash("fmt.Println(2)"), "tools-digest")
    with pytest.raises(step.StepError, match="another tool set"):
        step.decode(token, SECRET, PROGRAM, "other-digest")


@pytest.mark.fast
def test_tampered_forged_stale_and_oversized_continuations_are_refused():
    token = step.encode(state(), SECRET)
    head, sealed = token.split(".")
    raw = bytearray(step._unb64(sealed))
    for at in (0, step.NONCE_BYTES, len(raw) // 2, len(raw) - 1):  # the nonce, the ciphertext, the tag
        changed = bytearray(raw)
        changed[at] ^= 0x01
        with pytest.raises(step.StepError, match="does not authenticate"):
            step.decode(f"{head}.{step._b64(bytes(changed))}", SECRET, PROGRAM, "tools-digest")
    with pytest.raises(step.StepError, match="does not authenticate"):
        step.decode(f"{head}.{step._b64(bytes(raw[:-1]))}", SECRET, PROGRAM, "tools-digest")
    with pytest.raises(step.StepError, match="does not authenticate"):
        step.decode(step.encode(state(), b"x" * 32), SECRET, PROGRAM, "tools-digest")
    with pytest.raises(step.StepError, match="not a gocode continuation"):
        step.decode("hello", SECRET, PROGRAM, "tools-digest")
    # The signed-only format of earlier versions, and one from a newer gocode: named, not misread.
    with pytest.raises(step.StepError, match=r"format gcs1, which this gocode does not read.*expired"):
        step.decode("gcs1.eJyrVkpUslIqSk0pLcpLzM0tVrICAC39BeU.c2lnbmF0dXJl", SECRET, PROGRAM, "tools-digest")
    with pytest.raises(step.StepError, match="format gcs3, which this gocode does not read"):
        step.decode("gcs3.AAAA", SECRET, PROGRAM, "tools-digest")
    old = step.encode(state(issued=time.time() - 100), SECRET)
    with pytest.raises(step.StepError, match="stale"):
        step.decode(old, SECRET, PROGRAM, "tools-digest", ttl=10)
    with pytest.raises(step.StepError, match="over the bound of 50"):
        step.encode(state(), SECRET, limit=50)
    with pytest.raises(step.StepError, match="at most 50 bytes"):
        step.decode(token, SECRET, PROGRAM, "tools-digest", limit=50)


def readable(token: str, text: str) -> bool:
    """Whether ``text`` can be read from a continuation: as it is, base64url-decoded, or
    zlib-inflated from any offset of the decoded bytes."""
    if text in token:
        return True
    for part in token.split("."):
        try:
            raw = step._unb64(part)
        except ValueError:
            continue
        if text.encode() in raw:
            return True
        for at in range(len(raw)):
            try:
                if text.encode() in zlib.decompressobj().decompress(raw[at:], 1 << 20):
                    return True
            except zlib.error:
                continue
    return False


@pytest.mark.fast
def test_a_continuation_is_encrypted_with_a_fresh_nonce():
    secret_result = "result-text-only-the-server-knows-7301946285"
    known = Entry("files", "read_file", {"path": "notes.txt"}, 0, wire(value_result(secret_result, False)))
    st = step.State(PROGRAM, "tools-digest", [known], state().pending, 1)
    token = step.encode(st, SECRET)
    assert token.startswith("gcs2.") and not readable(token, secret_result)
    assert not readable(token, "read_file") and not readable(token, PROGRAM)  # no part of the state shows
    again = step.encode(st, SECRET)
    assert again != token and step._unb64(again[5:])[:12] != step._unb64(token[5:])[:12]  # random nonces
    opened = step.decode(token, SECRET, PROGRAM, "tools-digest")
    assert opened.calls[0].result == known.result and opened.pending[0].arguments == {"query": "a"}


@pytest.mark.fast
def test_the_key_file_stays_its_owners(tmp_path, monkeypatch):
    monkeypatch.delenv("GOCODE_STEP_KEY", raising=False)
    monkeypatch.setenv("GOCODE_STATE_DIR", str(tmp_path))
    first = step.key()
    (tmp_path / "step.key").chmod(0o644)
    assert step.key() == first
    assert stat.S_IMODE((tmp_path / "step.key").stat().st_mode) == 0o600


@pytest.mark.fast
def test_signing_key_is_generated_once_in_the_state_dir(tmp_path, monkeypatch):
    monkeypatch.delenv("GOCODE_STEP_KEY", raising=False)
    monkeypatch.setenv("GOCODE_STATE_DIR", str(tmp_path))
    first = step.key()
    assert step.key() == first and len(first) == 32
    assert stat.S_IMODE((tmp_path / "step.key").stat().st_mode) == 0o600
    monkeypatch.setenv("GOCODE_STEP_KEY", "configured")
    assert step.key() != first


@pytest.mark.fast
def test_answers_with_a_wrong_id_twice_or_missing_are_refused():
    s = state()
    s.pending.append(Entry(step.CLIENT_SERVER, "web_search", {"query": "b"}, 0))
    a, b = (s.call_id(e) for e in s.pending)
    with pytest.raises(step.StepError, match="'call_nope', which is not a pending call"):
        step.apply_answers(s, [{"id": "call_nope", "result": 1}])
    with pytest.raises(step.StepError, match="answered twice"):
        step.apply_answers(s, [{"id": a, "result": 1}, {"id": a, "result": 2}, {"id": b, "result": 3}])
    with pytest.raises(step.StepError, match=rf"no result for pending call\(s\) {b} \(web_search"):
        step.apply_answers(s, [{"id": a, "result": 1}])
    known = step.apply_answers(s, [{"id": b, "result": "text"}, {"id": a, "result": {"x": 1}}])
    assert [e.result for e in known] == [wire(value_result({"x": 1})), wire(value_result("text"))]


@pytest.mark.fast
def test_call_ids_are_unique_to_a_run_and_stable_within_it():
    one, two = state(), state()
    call = one.pending[0]
    assert one.run != two.run and one.call_id(call) != two.call_id(call)
    opened = step.decode(step.encode(one, SECRET), SECRET, PROGRAM, "tools-digest")
    assert opened.run == one.run and opened.call_id(call) == one.call_id(call)
    with pytest.raises(step.StepError, match="not a pending call"):  # another run's id answers nothing here
        step.apply_answers(opened, [{"id": two.call_id(call), "result": 1}])
    assert step.apply_answers(opened, [{"id": one.call_id(call), "result": 1}])[0].tool == "web_search"


@pytest.mark.fast
def test_client_tool_declarations_are_checked():
    with pytest.raises(step.StepError, match="client tool #1: name"):
        step.client_tools([{"name": "bad name"}])
    with pytest.raises(step.StepError, match="declared twice: a"):
        step.client_tools([{"name": "a"}, {"name": "a"}])
    with pytest.raises(step.StepError, match="must be a list"):
        step.client_tools("a")  # type: ignore[arg-type]
    deep: dict = {"type": "string"}
    for _ in range(40):
        deep = {"type": "object", "properties": {"x": deep}}
    with pytest.raises(step.StepError, match="client tool 'd': its schema is nested deeper than 64 levels"):
        step.client_tools([{"name": "d", "inputSchema": deep}])
    got = step.client_tools([{"name": "b", "inputSchema": {"type": "object"}}, {"name": "a"}])
    assert [t.name for t in got.tools] == ["a", "b"] and got.server == step.CLIENT_SERVER


@pytest.mark.fast
def test_positions_do_not_depend_on_the_order_goroutines_arrive_in():
    async def calls(order: list[dict[str, str]]) -> list[str]:
        ic = Interceptor("dry-run")
        for args in order:
            await ic.call("s", "t", args, None)
        return sorted(str(e.position) for e in ic.calls)

    a, b = {"q": "a"}, {"q": "b"}
    assert anyio.run(calls, [a, b, a]) == anyio.run(calls, [b, a, a])


@pytest.mark.fast
def test_dry_run_stubs_follow_the_output_schema():
    schema = {
        "type": "object",
        "properties": {
            "n": {"type": "integer"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "kind": {"enum": ["x", "y"]},
            "inner": {"$ref": "#/$defs/Inner"},
        },
        "$defs": {"Inner": {"type": "object", "properties": {"ok": {"type": "boolean"}}}},
    }
    got = stub(ToolInfo("s", "t", output_schema=schema))
    assert got.structured_content == {"n": 0, "tags": [], "kind": "x", "inner": {"ok": False}}
    assert stub(ToolInfo("s", "t")).content[0].text == "[dry run: t was not called]"


# --- real programs ------------------------------------------------------------------------------

SEARCH = {
    "name": "web_search",
    "description": "Search the web.",
    "inputSchema": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
    "outputSchema": {
        "type": "object",
        "properties": {"hits": {"type": "array", "items": {"type": "string"}}},
        "required": ["hits"],
    },
}
SUMMARIZE = {
    "name": "summarize",
    "description": "Summarize text on the user's machine.",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
}

# An MCP side effect, a parallel batch of two client calls, another MCP side effect, one more client call.
PROGRAM_CODE = """
first, err := increment(ctx, IncrementInput{By: 5})
if err != nil {
	return err
}
var wg sync.WaitGroup
hits := make([][]string, 2)
errs := make([]error, 2)
for i, q := range []string{"sport news", "world news"} {
	wg.Add(1)
	go func() {
		defer wg.Done()
		r, err := webSearch(ctx, WebSearchInput{Query: q})
		hits[i], errs[i] = r.Hits, err
	}()
}
wg.Wait()
if err := errors.Join(errs...); err != nil {
	return err
}
second, err := increment(ctx, IncrementInput{By: len(hits[0]) + len(hits[1])})
if err != nil {
	return err
}
summary, err := summarize(ctx, SummarizeInput{Text: strings.Join(append(hits[0], hits[1]...), "; ")})
if err != nil {
	return err
}
fmt.Println(first.Count, second.Count, summary)
"""


def counter_config(tmp_path: Path, **extra: Any) -> Any:
    server = {
        "command": sys.executable,
        "args": ["-m", "tests.servers.counter_server", "--state", str(tmp_path / "counter.txt")],
        "cwd": str(ROOT),
    }
    return config_from({"counter": server}, defaults={"codeMode": {"enabled": True, "sandbox": "off"}}, **extra)


def side_effects(tmp_path: Path) -> list[str]:
    log = tmp_path / "counter.log"
    return log.read_text().splitlines() if log.exists() else []


def run_client_tool(call: dict[str, Any]) -> dict[str, Any]:
    """The caller's own implementation of its tools."""
    if call["name"] == "web_search":
        q = call["arguments"]["query"]
        return {"id": call["id"], "result": {"hits": [f"{q} 1", f"{q} 2"]}}
    return {"id": call["id"], "result": "summary of " + call["arguments"]["text"][:10]}


@pytest.mark.go
def test_client_tools_in_a_parallel_batch_and_mcp_side_effects_made_once(module_cache, tmp_path):
    async def go() -> None:
        async with Toolbox(counter_config(tmp_path), module_cache=module_cache) as box:
            tools = [SEARCH, SUMMARIZE]
            first = await box.step(PROGRAM_CODE, tools)
            assert first.status == "pending", first.as_json()
            # Two goroutines, two pending calls in one pass, in a deterministic order.
            assert [(c["name"], c["arguments"]) for c in first.calls] == [
                ("web_search", {"query": "sport news"}),
                ("web_search", {"query": "world news"}),
            ]
            assert side_effects(tmp_path) == ["increment 5"]

            # Bad answers are refused before anything runs.
            with pytest.raises(step.StepError, match="no result for pending call"):
                await box.step(PROGRAM_CODE, tools, first.continuation, [run_client_tool(first.calls[0])])
            with pytest.raises(step.StepError, match="another program"):
                await box.step(PROGRAM_CODE + "\n", tools, first.continuation, [])
            with pytest.raises(step.StepError, match="another tool set"):
                await box.step(PROGRAM_CODE, [SEARCH, SUMMARIZE | {"description": "x"}], first.continuation, [])

            second = await box.step(PROGRAM_CODE, tools, first.continuation, [run_client_tool(c) for c in first.calls])
            assert second.status == "pending", second.as_json()
            assert [(c["name"], c["arguments"]) for c in second.calls] == [
                ("summarize", {"text": "sport news 1; sport news 2; world news 1; world news 2"})
            ]
            assert second.run is None  # stopped while waiting, not finished
            assert side_effects(tmp_path) == ["increment 5", "increment 4"]

            third = await box.step(PROGRAM_CODE, tools, second.continuation, [run_client_tool(second.calls[0])])
            assert third.status == "done" and third.run is not None, third.as_json()
            assert third.run.output == "5 9 summary of sport news\n"
            assert third.run.build_mode == "cached"  # each pass reuses the binary built by the first
            assert third.passes == 3
            # Pass 1's increment was answered from the continuation twice; pass 2's once.
            assert side_effects(tmp_path) == ["increment 5", "increment 4"]

    anyio.run(go)


@pytest.mark.go
def test_the_same_program_run_twice_gets_disjoint_call_ids(module_cache, tmp_path):
    """Ids go into a chat transcript as tool-call ids: two runs of one program must not share
    them, while a pass run again from the same continuation gives the same ones."""
    code = """
for _, q := range []string{"a", "b"} {
	r, err := webSearch(ctx, WebSearchInput{Query: q})
	if err != nil {
		return err
	}
	fmt.Println(r.Hits)
}
"""

    async def go() -> None:
        async with Toolbox(counter_config(tmp_path), module_cache=module_cache) as box:
            one, two = await box.step(code, [SEARCH]), await box.step(code, [SEARCH])
            assert one.status == two.status == "pending", (one.as_json(), two.as_json())
            assert one.calls[0]["arguments"] == two.calls[0]["arguments"] == {"query": "a"}
            assert {c["id"] for c in one.calls}.isdisjoint({c["id"] for c in two.calls})
            answers = [run_client_tool(c) for c in one.calls]
            again = [await box.step(code, [SEARCH], one.continuation, answers) for _ in range(2)]
            assert [g.calls[0]["arguments"] for g in again] == [{"query": "b"}] * 2
            assert again[0].calls[0]["id"] == again[1].calls[0]["id"] != one.calls[0]["id"]
            done = await box.step(code, [SEARCH], again[1].continuation, [run_client_tool(again[1].calls[0])])
            assert done.status == "done" and done.run is not None and done.run.output == "[a 1 a 2]\n[b 1 b 2]\n"

    anyio.run(go)


@pytest.mark.go
def test_step_declarations_name_client_tools_by_the_documented_rule(module_cache, tmp_path):
    """A step client gets the Go its model writes against: the servers' tools and its own, each
    of its own named camelCase, ``Tool`` appended to a Go keyword or predeclared name, and
    ``client`` before it when a server's tool has the name already."""
    tools = [SEARCH, {"name": "increment", "description": "Mine."}, {"name": "string"}]

    async def go() -> None:
        async with Toolbox(counter_config(tmp_path), module_cache=module_cache) as box:
            got = box.step_declarations(tools)
            assert got.functions == {"web_search": "webSearch", "increment": "clientIncrement", "string": "stringTool"}
            for line in (
                "func webSearch(context.Context, WebSearchInput) (WebSearchOutput, error)",
                "func clientIncrement(context.Context) (string, error)",
                "func stringTool(context.Context) (string, error)",
                "func increment(context.Context, IncrementInput) (IncrementOutput, error)",  # the server's
            ):
                assert line in got.declarations, got.declarations
            with pytest.raises(step.StepError, match="client tool #1: name"):
                box.step_declarations([{"name": "bad name"}])
            # The names declared are the names a step program calls.
            code = "n, err := clientIncrement(ctx)\nif err != nil {\n\treturn err\n}\nfmt.Println(n)"
            first = await box.step(code, tools)
            assert first.status == "pending" and first.calls[0]["name"] == "increment", first.as_json()
            assert side_effects(tmp_path) == []  # the client's increment, not the server's

    anyio.run(go)


@pytest.mark.go
def test_a_continuation_never_shows_a_server_result_the_program_did_not_print(module_cache, tmp_path):
    """A server tool's result travels in the continuation, sealed: the caller reads only what
    the program prints."""
    (tmp_path / "counter.txt").write_text("7301946285")
    code = """
c, err := read(ctx)
if err != nil {
	return err
}
r, err := webSearch(ctx, WebSearchInput{Query: "q"})
if err != nil {
	return err
}
fmt.Println(len(r.Hits), c.Count > 0)
"""

    async def go() -> None:
        async with Toolbox(counter_config(tmp_path), module_cache=module_cache) as box:
            first = await box.step(code, [SEARCH])
            assert first.status == "pending", first.as_json()
            assert not readable(first.continuation, "7301946285")
            assert "7301946285" not in json.dumps(first.as_json())
            head, sealed = first.continuation.split(".")
            raw = bytearray(step._unb64(sealed))
            raw[len(raw) // 2] ^= 0x01
            with pytest.raises(step.StepError, match="does not authenticate"):
                await box.step(code, [SEARCH], f"{head}.{step._b64(bytes(raw))}", [run_client_tool(first.calls[0])])
            done = await box.step(code, [SEARCH], first.continuation, [run_client_tool(first.calls[0])])
            assert done.status == "done" and done.run is not None and done.run.output == "2 true\n", done.as_json()

    anyio.run(go)


@pytest.mark.go
def test_a_pass_near_the_continuation_bound_refuses_the_call_that_could_not_be_carried(
    module_cache, tmp_path, monkeypatch
):
    """A server call is made only when the continuation has room for it: the call that would
    overflow is refused to the program before it reaches its server, and the pass still ends with
    a continuation to resume from (it used to make the calls, then refuse the continuation, leaving
    nothing to resume; later, to fail the pass with the calls made so far lost)."""
    monkeypatch.setenv("GOCODE_STEP_MAX_CONTINUATION", "1200")
    code = """
if _, err := increment(ctx, IncrementInput{By: 100}); err != nil {
	return err
}
r, err := webSearch(ctx, WebSearchInput{Query: "q"})
if err != nil {
	return err
}
made := 0
var refused error
for i := 0; i < 40; i++ {
	if _, err := increment(ctx, IncrementInput{By: i + 1}); err != nil {
		refused = err
		break
	}
	made++
}
_, after := webSearch(ctx, WebSearchInput{Query: "after"})
fmt.Println(made, r.Hits, after != nil)
fmt.Println(refused)
"""

    async def go() -> None:
        async with Toolbox(counter_config(tmp_path), module_cache=module_cache) as box:
            got = await box.step(code, [SEARCH])
            assert got.status == "pending" and len(got.continuation) <= 1200, got.as_json()
            assert side_effects(tmp_path) == ["increment 100"]
            answers = [run_client_tool(c) for c in got.calls]

            # Answers that leave no room are refused before anything runs; the continuation still resumes.
            big = [{"id": c["id"], "result": os.urandom(1000).hex()} for c in got.calls]
            with pytest.raises(step.StepError, match="nothing ran: answer the same continuation again"):
                await box.step(code, [SEARCH], got.continuation, big)
            assert side_effects(tmp_path) == ["increment 100"]

            done = await box.step(code, [SEARCH], got.continuation, answers)
            assert done.status == "done" and done.run is not None and done.run.ok, done.as_json()
            made = side_effects(tmp_path)[1:]
            assert 0 < len(made) < 40, made
            # The program was told, and went on: the client call after the refusal is refused too.
            first, reason = done.run.output.splitlines()
            assert first == f"{len(made)} [q 1 q 2] true", done.run.output
            assert "past the bound of 1200 (GOCODE_STEP_MAX_CONTINUATION)" in reason
            assert f'the call increment({{"by":{len(made) + 1}}})' in reason and "was not made" in reason

    anyio.run(go)


@pytest.mark.fast
def test_a_result_the_continuation_cannot_carry_is_recorded_as_an_error():
    """The budget reserves room for a fixed-size placeholder before each server call: a result
    too large to carry is replaced by it (the call was made once; the program is told), and a
    call with no room left is not made at all."""
    st = step.State(PROGRAM, "tools-digest")
    made: list[int] = []

    def forward(size: int) -> Any:
        async def call() -> Any:
            made.append(size)
            return value_result(os.urandom(size).hex()[:size])  # incompressible

        return call

    async def go() -> tuple[list[Any], Interceptor]:
        ic = Interceptor("step", budget=step.Bound.of(st, limit=1000))
        got = [await ic.call("s", "t", {"i": i}, forward(size)) for i, size in enumerate([10, 5000, *[100] * 20])]
        return got, ic

    got, ic = anyio.run(go)
    texts = [r.content[0].text for r in got]
    assert len(texts[0]) == 10 and not got[0].is_error
    assert got[1].is_error and texts[1] == step.TOO_LARGE and 5000 in made
    refused = [t for t in texts if "was not made" in t]
    assert refused and all("past the bound of 1000" in t for t in refused)
    assert len(made) == len(got) - len(refused)  # a refused call never reached its server
    assert all("was not made" in t for t in texts[texts.index(refused[0]) :])  # and no later one does
    token = step.encode(step.State(PROGRAM, "tools-digest", ic.calls, [], 1, run=st.run), SECRET, limit=1000)
    assert len(token) <= 1000


@pytest.mark.go
def test_a_pass_that_diverges_stops_before_a_new_call_reaches_a_server(module_cache, tmp_path):
    code = """
stamp := time.Now().Format(time.RFC3339Nano)
r, err := webSearch(ctx, WebSearchInput{Query: stamp})
if err != nil {
	return err
}
if _, err := increment(ctx, IncrementInput{By: 1}); err != nil {
	return err
}
fmt.Println(r.Hits)
"""

    async def go() -> None:
        async with Toolbox(counter_config(tmp_path), module_cache=module_cache) as box:
            first = await box.step(code, [SEARCH])
            assert first.status == "pending"
            got = await box.step(code, [SEARCH], first.continuation, [run_client_tool(c) for c in first.calls])
            assert got.status == "error", got.as_json()
            assert "replay diverged: the program no longer makes the recorded call web_search(" in got.error
            assert "instead it called web_search(" in got.error and "position @client.web_search/" in got.error
            assert side_effects(tmp_path) == []

    anyio.run(go)


@pytest.mark.go
def test_ten_sequential_client_calls_passes_and_continuation_size(module_cache, tmp_path):
    code = """
total := ""
for i := 0; i < 10; i++ {
	r, err := webSearch(ctx, WebSearchInput{Query: fmt.Sprintf("query %d", i)})
	if err != nil {
		return err
	}
	total += r.Hits[0] + ","
}
fmt.Println(total)
"""

    async def go() -> None:
        async with Toolbox(counter_config(tmp_path), module_cache=module_cache) as box:
            cont, results, sizes, times = None, None, [], []
            while True:
                start = time.monotonic()
                got = await box.step(code, [SEARCH], cont, results)
                times.append(time.monotonic() - start)
                if got.status != "pending":
                    break
                assert len(got.calls) == 1
                cont, results = got.continuation, [run_client_tool(c) for c in got.calls]
                sizes.append(len(cont))
            assert got.status == "done" and got.run is not None and got.run.output.startswith("query 0 1,query 1 1,")
            assert got.passes == 11
            print(
                f"\n10 sequential client calls: {got.passes} passes; continuation bytes per pass {sizes}; "
                f"pass seconds {[round(t, 2) for t in times]}"
            )

    anyio.run(go)


@pytest.mark.go
def test_step_go_code_over_mcp_follows_the_code_result_protocol(module_cache, tmp_path):
    """The tool-level protocol as a real MCP client sees it from ``gocode serve --stateless-step``
    (the transcript in docs/stateless.md)."""
    cfg = tmp_path / "gocode.json"
    cfg.write_text(json.dumps(counter_config(tmp_path).model_dump(mode="json", by_alias=True, exclude_none=True)))
    code = (
        'r, err := webSearch(ctx, WebSearchInput{Query: "q"})\nif err != nil {\n\treturn err\n}\n'
        'fmt.Println(r.Hits)\nresult(map[string]any{"hits": len(r.Hits)})'
    )
    params = StdioServerParameters(
        command=str(Path(sys.executable).parent / "gocode"),
        args=["serve", "-c", str(cfg), "--stateless-step"],
        env=dict(os.environ),
    )

    def text(r: Any) -> str:
        return "".join(c.text for c in r.content if hasattr(c, "text"))

    async def go() -> None:
        async with Client(stdio_client(params), mode="legacy") as c:
            listed = {t.name: t for t in (await c.list_tools()).tools}
            assert set(listed) == {"execute_go_code", step.STEP_TOOL_NAME}
            assert listed[step.STEP_TOOL_NAME].input_schema["required"] == ["code"]
            first = await c.call_tool(step.STEP_TOOL_NAME, {"code": code, "tools": [SEARCH]})
            doc = first.structured_content
            assert not first.is_error and doc is not None and doc["status"] == "pending", text(first)
            assert json.loads(text(first)) == doc and doc["calls"][0]["name"] == "web_search"
            declared = await c.call_tool(
                step.STEP_TOOL_NAME, {"code": "", "tools": [SEARCH], "declarations_only": True}
            )
            got = declared.structured_content
            assert not declared.is_error and got is not None and got["status"] == "declarations", text(declared)
            assert got["functions"] == {"web_search": "webSearch"} and json.loads(text(declared)) == got
            assert "func webSearch(context.Context, WebSearchInput) (WebSearchOutput, error)" in got["declarations"]
            assert "func increment(" in got["declarations"]
            bad = await c.call_tool(step.STEP_TOOL_NAME, {"code": code, "tools": [SEARCH], "continuation": "gcs2.x"})
            assert bad.is_error and "step_go_code: continuation refused" in text(bad)
            answer = {"code": code, "tools": [SEARCH], "continuation": doc["continuation"]}
            call_id = doc["calls"][0]["id"]
            done = await c.call_tool(
                step.STEP_TOOL_NAME, answer | {"results": [{"id": call_id, "result": {"hits": ["a", "b"]}}]}
            )
            assert not done.is_error, text(done)
            want = {"status": "done", "passes": 2, "ok": True, "output": "[a b]\n", "result": {"hits": 2}}
            assert done.structured_content == want
            assert "result" in listed[step.STEP_TOOL_NAME].output_schema["properties"]
            failed = await c.call_tool(
                step.STEP_TOOL_NAME,
                answer | {"results": [{"id": call_id, "result": "no such page", "isError": True}]},
            )
            assert failed.is_error and "no such page" in failed.structured_content["error"]

    anyio.run(go)


@pytest.mark.fast
def test_every_setting_is_documented():
    doc = (ROOT / "docs" / "stateless.md").read_text()
    for name in ("GOCODE_STEP_KEY", "GOCODE_STEP_MAX_CONTINUATION", "GOCODE_STEP_TTL", "GOCODE_STEP_GRACE",
                 "GOCODE_STEP_BUSY"):  # fmt: skip
        assert name in doc


@pytest.mark.go
def test_math_rand_repeats_itself_across_passes(module_cache, tmp_path):
    code = """
r, err := webSearch(ctx, WebSearchInput{Query: fmt.Sprint(rand.Intn(1_000_000_000))})
if err != nil {
	return err
}
fmt.Println(len(r.Hits))
"""

    async def go() -> None:
        async with Toolbox(counter_config(tmp_path), module_cache=module_cache) as box:
            first = await box.step(code, [SEARCH])
            assert first.status == "pending"
            done = await box.step(code, [SEARCH], first.continuation, [run_client_tool(c) for c in first.calls])
            assert done.status == "done" and done.run is not None and done.run.output == "2\n", done.as_json()

    anyio.run(go)


@pytest.mark.go
def test_sync_toolbox_steps_too(module_cache, tmp_path):
    code = "n, err := increment(ctx, IncrementInput{By: 2})\nif err != nil {\n\treturn err\n}\ns, err := summarize(ctx, SummarizeInput{Text: fmt.Sprint(n.Count)})\nif err != nil {\n\treturn err\n}\nfmt.Println(s)"
    with SyncToolbox(counter_config(tmp_path), module_cache=module_cache) as box:
        got = box.step(code, [SUMMARIZE])
        while got.status == "pending":
            got = box.step(code, [SUMMARIZE], got.continuation, [run_client_tool(c) for c in got.calls])
    assert got.status == "done" and got.run is not None and got.run.output == "summary of 2\n"
    assert side_effects(tmp_path) == ["increment 2"]
