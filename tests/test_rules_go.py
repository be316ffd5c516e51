"""The ``execute_go_code`` description says exactly what the runtime offers: its own code
examples and the signatures it gives for ``must``, ``result``, ``ptr``, ``searchTools``,
``callTool``, the resources and prompts and ``callToolContent`` are taken from the text and type-checked with real Go against a tool set with the
example's tool; and the description stays byte-identical from call to call."""

from __future__ import annotations

import asyncio
import re

import pytest

from gocode.codemode import CodeMode
from gocode.config import Config
from gocode.program.code import ModelCode
from gocode.run.reach import OwnSessions
from gocode.toolset import ServerTools, ToolInfo
from gocode.view.rules import search_hint

pytestmark = pytest.mark.go

SOME_TOOL = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "scale": {"type": "number", "default": 1.5}},
    "required": ["name"],
}


def _code_mode(module_cache, disclosure: str = "full") -> CodeMode:
    config = Config.model_validate(
        {"mcpServers": {}, "defaults": {"codeMode": {"sandbox": "off", "disclosure": disclosure}}}
    )
    cm = CodeMode(config, module_cache=module_cache)
    cm.use(
        [
            ServerTools(
                "s",
                (ToolInfo("s", "some_tool", "Does something.", SOME_TOOL), ToolInfo("s", "no_input", "Takes nothing.")),
                offers=("resources", "prompts"),  # so the rules name listResources, readResource, getPrompt
            )
        ]
    )
    return cm


def _checks(module_cache, cm: CodeMode, code: str) -> bool:
    result = asyncio.run(module_cache.plan(cm.package, ModelCode(code)))
    return result.ok


def _programs(text: str) -> dict[str, tuple[str, bool]]:
    """What the text claims, as programs: (code, whether it must compile)."""
    out: dict[str, tuple[str, bool]] = {}
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if "must(v, err)" in line)
    example = []
    for line in lines[start + 1 :]:
        if not line.startswith("  "):
            break
        example.append(line[2:])
    assert example, text
    out["the example"] = ("\n".join(example) + "\n", True)
    if re.search(r"`must\(v, err\)` returns v", text):
        out["must returns v"] = ("var v string = must(noInput(ctx))\n_ = v\n", True)
    said = re.search(r"result\(v\)( \(no return value\))?", text)
    assert said, text
    returns = said.group(1) is None
    out["result(v) takes any value"] = ('result(map[string]any{"a": 1})\n', True)
    out["result(v) returns a value" if returns else "result(v) returns nothing"] = ("x := result(1)\n_ = x\n", returns)
    if "`func(ctx, Input) (Output, error)`" in text:
        sig = "var _ func(context.Context, SomeToolInput) (string, error) = someTool\n"
        out["every tool is func(ctx, Input) (Output, error)"] = (sig, True)
    if "(no Input when it takes none)" in text:
        out["a tool without input takes none"] = ("var _ func(context.Context) (string, error) = noInput\n", True)
    for name, params, results in re.findall(r"\b(\w+)\(ctx, ([^()]*(?:\([^()]*\))?[^()]*)\) \(([^()]*)\)", text):
        if name == "func":
            continue  # the tools' shape, above
        # An argument the text names by a placeholder, as a value of its type.
        values = {"query": '"weather"', "server": '"s"', "uri": '"s://x"'}
        args = "ctx, " + ", ".join(values.get(p, p) for p in params.replace("…", "").split(", "))
        kinds = [r.strip() for r in results.split(",")]
        decls = "".join(f"var r{i} {k}\n" for i, k in enumerate(kinds))
        names = ", ".join(f"r{i}" for i in range(len(kinds)))
        out[f"{name} returns ({results})"] = (f"{decls}{names} = {name}({args})\n_, _ = {names}\n", True)
    for typ, fields in re.findall(r"\b([A-Z]\w*)\{([A-Z]\w*(?:, [A-Z]\w*)*)\}", text):
        if typ.endswith("Input"):
            continue  # the example's own literal
        uses = "".join(f"_ = m.{f}\n" for f in fields.split(", "))
        out[f"{typ} has {fields}"] = (f"var m {typ}\n{uses}", True)
    return out


def test_every_example_and_signature_the_description_gives_compiles(module_cache):
    cm = _code_mode(module_cache)
    text = cm.description() + search_hint("index")  # the run-time helpers are named when not all is shown
    programs = _programs(text)
    assert {"the example", "must returns v", "result(v) returns nothing"} <= set(programs), sorted(programs)
    assert any(k.startswith("searchTools returns") for k in programs) and any(
        k.startswith("callTool returns") for k in programs
    ), sorted(programs)
    assert "ToolMatch has Name, Server, Function, Description, Signature" in programs
    for helper in ("listResources", "readResource", "getPrompt", "callToolContent"):
        assert any(k.startswith(f"{helper} returns") for k in programs), (helper, sorted(programs))
    assert "ContentPart has Type, Text, MIMEType, Data, URI" in programs
    for claim, (code, compiles) in programs.items():
        assert _checks(module_cache, cm, code) is compiles, f"the description says {claim}, but:\n{code}"
    # ptr, as the full view declares it (the description shows it where a field is a pointer).
    m = re.search(r"^// ptr\(v\) returns &v[^\n]*\nfunc (ptr\[T any\]\(v T\) \*T)$", text, re.M)
    assert m, text
    assert _checks(
        module_cache, cm, 'var p *float64 = ptr(2.5)\nin := SomeToolInput{Name: "x", Scale: ptr(2)}\n_, _ = p, in\n'
    )
    assert _checks(module_cache, cm, "var p *int = ptr(2)\n_ = p\n")


def test_the_description_is_the_same_from_call_to_call(module_cache):
    cm = _code_mode(module_cache)
    first = cm.tool_definition()
    result = asyncio.run(cm.execute('fmt.Println("hi")\nresult(1)\n', reach=OwnSessions({})))
    assert result.ok, result.error_text()
    assert cm.tool_definition() == first
    index = _code_mode(module_cache, "index")
    assert index.description() == index.description()
