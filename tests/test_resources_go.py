"""Content, resources and prompts from Go, and through ``gocode serve``: every server-everything
tool called from a program with its whole result as Go values (bytes, MIME types, links,
annotations), its resources listed and read (links followed) and its prompts got, in direct
and pooled runs; a read reaching only the server that owns the URI (tests/servers/vault_server.py);
``gocode serve`` offering two servers' resources and prompts namespaced, and forwarding a
resource's updates to the client that subscribed (at most 256 subscriptions a session). Needs Go and the npm sample servers."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

from gocode.codemode import CodeMode
from gocode.toolbox import Toolbox
from tests.conftest import EVERYTHING, ROOT, config_from, need

pytestmark = pytest.mark.go

GOCODE = str(Path(sys.executable).parent / "gocode")
VAULT = str(ROOT / "tests" / "servers" / "vault_server.py")
UNSANDBOXED = {"defaults": {"codeMode": {"sandbox": "off"}}}
# simulate-research-query is task-only: where gocode calls such tools as MCP tasks
# (gocode/mcp/tasks.py) it answers, elsewhere the server refuses the plain call.
TASKS = importlib.util.find_spec("gocode.mcp.tasks") is not None

# Every tool server-everything lists to a client without sampling, elicitation or roots, each
# called once (the toggles twice, back off), and its resources and prompts.
EVERY_TOOL = """\
fmt.Println("echo:", must(echo(ctx, EchoInput{Message: "hi"})))
fmt.Println("sum:", must(getSum(ctx, GetSumInput{A: 2, B: 40})))
fmt.Println("env:", must(getEnv(ctx)) != "")
w := must(getStructuredContent(ctx, GetStructuredContentInput{Location: "Chicago"}))
fmt.Println("weather:", w.Conditions != "")
img := must(getTinyImage(ctx))
fmt.Println("image:", img.Media[0].MIMEType, bytes.HasPrefix(img.Media[0].Data, []byte("\\x89PNG")))
ann := must(callToolContent(ctx, "everything.get-annotated-message", map[string]any{"messageType": "error", "includeImage": true}))
for _, p := range ann.Parts {
	fmt.Println("annotated:", p.Type, p.MIMEType, bytes.HasPrefix(p.Data, []byte("\\x89PNG")), p.Priority, p.Audience)
}
links := must(callToolContent(ctx, "everything.get-resource-links", map[string]any{"count": 2}))
for _, p := range links.Parts {
	if p.Type == "resource_link" {
		c := must(readResource(ctx, p.URI))
		fmt.Println("link:", p.URI, "->", c[0].URI, len(c[0].Text)+len(c[0].Blob) > 0)
	}
}
ref := must(callToolContent(ctx, "everything.get-resource-reference", map[string]any{"resourceType": "Blob", "resourceId": 2}))
for _, p := range ref.Parts {
	if p.Type == "resource" {
		fmt.Println("embedded:", p.URI, len(p.Data) > 0)
	}
}
gz := must(callToolContent(ctx, "everything.gzip-file-as-resource", map[string]any{"data": "data:text/plain;base64,aGVsbG8gd29ybGQ=", "name": "hello.txt.gz"}))
for _, p := range gz.Parts {
	if p.Type == "resource_link" {
		c := must(readResource(ctx, p.URI))
		fmt.Println("gzip:", c[0].MIMEType, bytes.HasPrefix(c[0].Blob, []byte{0x1f, 0x8b}))
	}
}
for i := 0; i < 2; i++ {
	fmt.Println("logging:", strings.Fields(must(toggleSimulatedLogging(ctx)))[0])
	fmt.Println("updates:", strings.Fields(must(toggleSubscriberUpdates(ctx)))[0])
}
fmt.Println("long:", must(triggerLongRunningOperation(ctx, TriggerLongRunningOperationInput{Duration: ptr(0.2), Steps: ptr(2.0)})))
_, err := simulateResearchQuery(ctx, SimulateResearchQueryInput{Topic: "go"})
fmt.Println("research:", err)
rs := must(listResources(ctx, "everything"))
templates := 0
for _, r := range rs {
	if r.Template {
		templates++
	}
}
fmt.Println("resources:", len(rs) > templates, templates > 0)
doc := must(readResource(ctx, rs[0].URI))
fmt.Println("read:", doc[0].URI == rs[0].URI, doc[0].MIMEType, len(doc[0].Text) > 0)
p := must(getPrompt(ctx, "everything.args-prompt", map[string]string{"city": "Paris", "state": "Texas"}))
fmt.Println("prompt:", p.Messages[0].Role, strings.Contains(p.Messages[0].Content.Text, "Paris"))
p = must(getPrompt(ctx, "everything.resource-prompt", map[string]string{"resourceType": "Text", "resourceId": "1"}))
fmt.Println("prompt resource:", p.Messages[1].Content.Type, p.Messages[1].Content.URI)
"""

EXPECTED = [
    "echo: Echo: hi",
    "env: true",
    "weather: true",
    "image: image/png true",
    "annotated: text  false 1 [user assistant]",
    "annotated: image image/png true 0.5 [user]",
    "link: demo://resource/dynamic/blob/1 -> demo://resource/dynamic/blob/1 true",
    "link: demo://resource/dynamic/text/2 -> demo://resource/dynamic/text/2 true",
    "embedded: demo://resource/dynamic/blob/2 true",
    "gzip: application/gzip true",
    "logging: Started",
    "updates: Started",
    "logging: Stopped",
    "updates: Stopped",
    "resources: true true",
    "read: true text/markdown true",
    "prompt: user true",
    "prompt resource: resource demo://resource/dynamic/text/1",
]


def everything_config():
    return config_from({"everything": {"command": need(EVERYTHING)}}, **UNSANDBOXED)


def vaults_config():
    vault = {name: {"command": sys.executable, "args": [VAULT, name]} for name in ("a", "b")}
    vault["h"] = {"command": sys.executable, "args": [VAULT, "h", "--catch-all"]}  # claims every URI
    return config_from(vault, **UNSANDBOXED)


async def run_program(config, module_cache, code: str, pooled: bool) -> tuple[str, str]:
    """The program's output and error text, run by a controller (pooled) or on its own sessions."""
    if pooled:
        async with Toolbox(config, module_cache=module_cache, prewarm=False, listing_cache=False) as tools:
            result = await tools.execute(code)
    else:
        cm = CodeMode(config, module_cache=module_cache)
        await cm.refresh()
        result = await cm.execute(code)
    return result.output, "" if result.ok else result.error_text()


@pytest.mark.parametrize("mode", ["direct", "pooled"])
def test_every_everything_tool_its_resources_and_prompts_from_go(module_cache, mode):
    output, error = anyio.run(run_program, everything_config(), module_cache, EVERY_TOOL, mode == "pooled")
    assert not error, error
    lines = output.splitlines()
    for want in EXPECTED:
        assert want in lines, (want, output)
    assert any(line.startswith("sum: ") and "42" in line for line in lines), output
    assert any(line.startswith("long: Long running operation completed") for line in lines), output
    research = next(line for line in lines if line.startswith("research: "))
    if TASKS:  # a task-only tool is called as a task
        assert research == "research: <nil>", research
    else:  # the server refuses it, saying why
        assert "requires task augmentation" in research, research


# Which server each read reaches: the URI's owner, never the server a URI or a link names.
OWNERSHIP = """\
for _, uri := range []string{
	"gocode://a/vault://b/secret", // named under a server that does not own it
	"shared://doc",                // owned by both: ambiguous
	"gocode://b/shared://doc",     // named under one of its owners
	"vault://a/items/7",           // a's template
	"vault://b/secret",            // b's listing
	"mem://nowhere",               // only h's catch-all template matches it
} {
	c, err := readResource(ctx, uri)
	if err != nil {
		fmt.Println(uri, "error:", err)
		continue
	}
	fmt.Println(uri, "->", c[0].Text)
}
_ = must(callToolContent(ctx, "a.link", map[string]any{"uri": "mem://handed-out"}))
_, err := readResource(ctx, "mem://handed-out") // returned by a: a's to answer, not h's template's
fmt.Println("handed out:", err)
fmt.Println("a read:", strings.ReplaceAll(must(callToolContent(ctx, "a.reads", nil)).Text, "\\n", " "))
fmt.Println("b read:", strings.ReplaceAll(must(callToolContent(ctx, "b.reads", nil)).Text, "\\n", " "))
fmt.Println("h read:", strings.ReplaceAll(must(callToolContent(ctx, "h.reads", nil)).Text, "\\n", " "))
fmt.Println(must(getPrompt(ctx, "b.greet", map[string]string{"who": "Ann"})).Messages[0].Content.Text)
for _, r := range must(listResources(ctx, "a")) {
	fmt.Println("a lists:", r.URI, r.Template)
}
"""


@pytest.mark.parametrize("mode", ["direct", "pooled"])
def test_a_read_reaches_only_the_server_that_owns_the_uri(module_cache, mode):
    output, error = anyio.run(run_program, vaults_config(), module_cache, OWNERSHIP, mode == "pooled")
    assert not error, error
    lines = output.splitlines()
    line = dict(line.split(" ", 1) for line in lines if line.split(" ", 1)[0].count("://"))
    assert (
        "does not list" in line["gocode://a/vault://b/secret"] or "does not own" in line["gocode://a/vault://b/secret"]
    )
    assert "several servers" in line["shared://doc"] and '"gocode://a/shared://doc"' in line["shared://doc"].replace(
        "'", '"'
    )
    assert line["gocode://b/shared://doc"] == "-> doc of b"
    assert line["vault://a/items/7"] == "-> item 7 of a"
    assert line["vault://b/secret"] == "-> secret of b"
    assert line["mem://nowhere"] == "-> h has mem://nowhere"
    handed = next(x for x in lines if x.startswith("handed out:"))
    assert "'a'" in handed or "server a" in handed, handed  # a was asked (and does not have it)
    # Each server was asked only for what it owns: a never for b's secret.
    assert "a read: vault://a/items/7 mem://handed-out" in lines, output
    assert "b read: shared://doc vault://b/secret" in lines, output
    assert "h read: mem://nowhere" in lines, output  # its catch-all took no other server's URI
    assert "Hello Ann, from b." in lines
    assert {
        "a lists: vault://a/secret false",
        "a lists: shared://doc false",
        "a lists: vault://a/items/{id} true",
    } <= set(lines)


def serve_params(config: Path) -> StdioServerParameters:
    return StdioServerParameters(command=GOCODE, args=["serve", "-c", str(config)], env=dict(os.environ))


def test_serve_offers_both_servers_resources_and_prompts_namespaced(tmp_path):
    vault = {name: {"command": sys.executable, "args": [VAULT, name]} for name in ("a", "b")}
    config = tmp_path / "gocode.json"
    config.write_text(__import__("json").dumps({"mcpServers": vault, **UNSANDBOXED}))

    async def go() -> None:
        async with Client(stdio_client(serve_params(config)), mode="legacy") as c:
            uris = sorted(str(r.uri) for r in (await c.list_resources()).resources)
            assert uris == [
                "gocode://a/shared://doc",
                "gocode://b/shared://doc",
                "vault://a/secret",
                "vault://b/secret",
            ]
            templates = sorted(t.uri_template for t in (await c.list_resource_templates()).resource_templates)
            assert templates == ["vault://a/items/{id}", "vault://b/items/{id}"]
            prompts = sorted(p.name for p in (await c.list_prompts()).prompts)
            assert prompts == ["a_greet", "b_greet"]

            read = await c.read_resource("gocode://b/shared://doc")
            assert [(str(x.uri), x.text) for x in read.contents] == [("gocode://b/shared://doc", "doc of b")]
            read = await c.read_resource("vault://a/items/9")
            assert read.contents[0].text == "item 9 of a"
            for uri, says in [
                ("gocode://a/vault://b/secret", "does not own"),
                ("shared://doc", "several servers"),
                ("x" * 9000, "at most 8192"),
            ]:
                with pytest.raises(MCPError, match=says):
                    await c.read_resource(uri)
            got = await c.get_prompt("b_greet", {"who": "Ann"})
            assert got.messages[0].content.text == "Hello Ann, from b."
            # a was never asked to read b's secret, nor anything else but its own item.
            code = 'fmt.Print(must(callToolContent(ctx, "a.reads", nil)).Text)'
            reads = await c.call_tool("execute_go_code", {"code": code})
            assert reads.content[0].text == "vault://a/items/9", reads

    anyio.run(go)


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")  # subscribe: handshake era
def test_serve_forwards_a_resource_update_to_the_client_that_subscribed(tmp_path):
    config = tmp_path / "gocode.json"
    config.write_text(
        __import__("json").dumps(
            {"mcpServers": {"everything": {"command": need(EVERYTHING)}}, "defaults": {"codeMode": {"enabled": False}}}
        )
    )
    uri = "demo://resource/static/document/architecture.md"

    async def go() -> None:
        updated = anyio.Event()
        seen: list[str] = []

        async def on_message(message: object) -> None:
            if isinstance(message, types.ResourceUpdatedNotification):
                seen.append(str(message.params.uri))
                updated.set()

        async with Client(stdio_client(serve_params(config)), mode="legacy", message_handler=on_message) as c:
            await c.subscribe_resource(uri)
            r = await c.call_tool("toggle-subscriber-updates", {})
            assert not r.is_error and "Started" in r.content[0].text
            with anyio.fail_after(60):  # the server sends them every 5 s
                await updated.wait()
            assert set(seen) == {uri}
            # A template matches endless URIs: a session holds at most 256 subscriptions.
            for i in range(1, 256):
                await c.subscribe_resource(f"demo://resource/dynamic/text/{i}")
            with pytest.raises(MCPError, match="at most 256 subscriptions"):
                await c.subscribe_resource("demo://resource/dynamic/text/256")
            await c.unsubscribe_resource(uri)
            await c.call_tool("toggle-subscriber-updates", {})

    anyio.run(go)
