"""What a stdio MCP server gets from gocode: the config's ``env`` over a minimal base of the
starter's environment, never the rest of it (``gocode.mcp.serverenv``), and gocode's own name
and version as ``clientInfo``; the same in pooled mode (the controller starts the server) and
in direct mode (the Go program does). Real servers, real programs."""

from __future__ import annotations

import asyncio
import json
import re
import sys

import anyio
import pytest

from gocode.codemode import CodeMode
from gocode.mcp.clientinfo import client_version
from gocode.mcp.serverenv import PASSED, PASSED_PREFIXES, base_environment, server_environment
from gocode.toolbox import TOOL_NAME, Toolbox
from tests.conftest import ROOT, config_from

SECRET = "sk-planted-" + "fedcba9876543210"
REPORT = """env, err := callTool(ctx, "probe.environment", nil)
if err != nil {
	return err
}
who, err := callTool(ctx, "probe.client", nil)
if err != nil {
	return err
}
out, _ := json.Marshal(map[string]any{"env": env, "client": who})
fmt.Println(string(out))"""


def probe_server() -> dict:
    return {
        "command": sys.executable,
        "args": [str(ROOT / "tests" / "servers" / "env_server.py")],
        "cwd": str(ROOT),
        "env": {"PROBE_REGION": "eu-west", "PYTHONPATH": str(ROOT)},
    }


@pytest.mark.fast
def test_base_environment_keeps_what_the_sdks_pass_and_nothing_else():
    environ = {
        "PATH": "/bin", "HOME": "/h", "USER": "u", "LC_ALL": "C.UTF-8", "TMPDIR": "/t", "TERM": "() { :; }",
        "GOCODE_TOKEN": "t", "OPENAI_API_KEY": "k", "AWS_SECRET_ACCESS_KEY": "a", "path": "/lower",
    }  # fmt: skip
    assert base_environment(environ) == {"PATH": "/bin", "HOME": "/h", "USER": "u", "LC_ALL": "C.UTF-8", "TMPDIR": "/t"}
    assert server_environment({"USER": "svc", "API_KEY": "mine"}, environ)["USER"] == "svc"
    assert server_environment({"API_KEY": "mine"}, environ)["API_KEY"] == "mine"


@pytest.mark.fast
def test_the_go_runtime_passes_the_same_base():
    source = (ROOT / "go_templates" / "rt" / "serverenv.go").read_text()
    passed = re.search(r"var serverEnvPassed = \[\]string\{(.*?)\n\}", source, re.S)
    prefixes = re.search(r"var serverEnvPrefixes = \[\]string\{(.*?)\}", source, re.S)
    assert passed and prefixes
    assert sorted(re.findall(r'"(\w+)"', passed.group(1))) == sorted(PASSED)
    assert re.findall(r'"(\w+)"', prefixes.group(1)) == list(PASSED_PREFIXES)


def reported(text: str) -> tuple[dict[str, str], dict[str, str]]:
    doc = json.loads(text.strip().splitlines()[-1])
    return doc["env"]["env"], doc["client"]


def check(env: dict[str, str], client: dict[str, str]) -> None:
    assert env["PROBE_REGION"] == "eu-west"  # the config's env reaches it
    assert "GOCODE_PROBE_SECRET" not in env and SECRET not in json.dumps(env)
    assert "GOCODE_SERVERS" not in env
    assert env.get("PATH") and env.get("HOME")
    assert set(env) <= {*PASSED, "PROBE_REGION", "PYTHONPATH"} | {k for k in env if k.startswith(PASSED_PREFIXES)} | {
        "LC_CTYPE"  # Python's own locale coercion (PEP 538) may add it
    }
    assert client == {"name": "gocode", "version": client_version()}


@pytest.mark.go
def test_pooled_server_sees_the_config_env_not_the_controllers(module_cache, monkeypatch):
    monkeypatch.setenv("GOCODE_PROBE_SECRET", SECRET)
    cfg = config_from({"probe": probe_server()}, defaults={"codeMode": {"sandbox": "off"}})

    async def go():
        async with Toolbox(cfg, module_cache=module_cache) as tools:
            return await tools.call(TOOL_NAME, {"code": REPORT})

    r = anyio.run(go)
    assert not r.is_error, r.text
    check(*reported(r.text))


@pytest.mark.go
def test_direct_mode_server_sees_the_config_env_not_the_programs(module_cache, monkeypatch):
    monkeypatch.setenv("GOCODE_PROBE_SECRET", SECRET)
    cm = CodeMode(config_from({"probe": probe_server()}), module_cache=module_cache)
    asyncio.run(cm.refresh())
    result = asyncio.run(cm.execute(REPORT))
    assert result.ok, result.error_text()
    check(*reported(result.output))
