"""What a model's program can see of the controller: a scrubbed environment when unsandboxed,
and ``codeMode.sandbox: auto`` (the default) picking the strongest tier this host has. Real
programs, a real Toolbox and the real launcher's probe."""

from __future__ import annotations

import asyncio

import anyio
import pytest

from gocode.codemode import CodeMode
from gocode.run.env import unsandboxed_env
from gocode.run.sandbox import HostSupport, decide, launcher_for
from gocode.toolbox import TOOL_NAME, Toolbox
from tests.conftest import config_from, demo_stdio

PRINT_ENV = "for _, kv := range os.Environ() {\n\tfmt.Println(kv)\n}"
SECRET = "sk-planted-" + "0123456789abcdef"


def test_unsandboxed_env_keeps_what_programs_need_only():
    env = unsandboxed_env(
        {"PATH": "/bin", "HOME": "/root", "LC_ALL": "C.UTF-8", "GOMAXPROCS": "2", "GOCODE_TOKEN": "t",
         "SECRET_API_KEY": "s", "AWS_SECRET_ACCESS_KEY": "a", "GOCODE_SERVERS": "stale"},
        '{"x": {}}',
        [{"REGION": "eu"}],
    )  # fmt: skip
    assert env == {
        "PATH": "/bin",
        "HOME": "/root",
        "LC_ALL": "C.UTF-8",
        "GOMAXPROCS": "2",
        "REGION": "eu",
        "GOCODE_SERVERS": '{"x": {}}',
    }


def host(abi: int = 7, userns: bool = True, seccomp: bool = True) -> HostSupport:
    return HostSupport(abi, seccomp, userns, 0, "6.8.0", "amd64")


def test_auto_is_the_strongest_tier_without_a_warning():
    assert decide("auto", host()).tier == "netns"
    landlock = decide("auto", host(userns=False))
    assert landlock.tier == "landlock" and not landlock.warning and "no private network" in landlock.note
    assert decide("auto", host(abi=2, userns=False)).tier == "landlock-fs"
    none = decide("auto", host(seccomp=False))
    assert none.tier is None and not none.error and not none.warning and "NOT confined" in none.note


def env_lines(text: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


@pytest.mark.go
def test_unsandboxed_pooled_program_does_not_see_the_controllers_secrets(module_cache, monkeypatch):
    monkeypatch.setenv("GOCODE_TOKEN", "controller-token-xyz")
    monkeypatch.setenv("SECRET_API_KEY", SECRET)
    cfg = config_from({"weather": demo_stdio()}, defaults={"codeMode": {"sandbox": "off"}})

    async def go():
        async with Toolbox(cfg, module_cache=module_cache) as tools:
            return await tools.call(TOOL_NAME, {"code": PRINT_ENV})

    r = anyio.run(go)
    assert not r.is_error, r.text
    env = env_lines(r.text)
    assert "GOCODE_TOKEN" not in env and "SECRET_API_KEY" not in env and SECRET not in r.text
    assert env["PATH"] and env["HOME"] and "GOCODE_SERVERS" in env
    assert r.result.meta["io.gocode/run"]["sandbox"] == {"setting": "off", "tier": None}


@pytest.mark.go
def test_direct_mode_sees_its_servers_env_and_says_it_is_unsandboxed(module_cache, monkeypatch):
    monkeypatch.setenv("SECRET_API_KEY", SECRET)
    server = {**demo_stdio(), "env": {"WEATHER_REGION": "eu-west"}}
    cm = CodeMode(config_from({"weather": server}), module_cache=module_cache)  # sandbox: auto, the default
    asyncio.run(cm.refresh())
    result = asyncio.run(cm.execute(PRINT_ENV))
    assert result.ok, result.error_text()
    env = env_lines(result.output)
    assert env["WEATHER_REGION"] == "eu-west"
    assert "SECRET_API_KEY" not in env and SECRET not in result.output
    assert result.sandbox == {
        "setting": "auto",
        "tier": None,
        "note": "direct mode: a program that starts its servers itself cannot be sandboxed",
    }


@pytest.mark.go
def test_auto_picks_this_hosts_strongest_tier_and_says_so(module_cache, monkeypatch):
    monkeypatch.setenv("SECRET_API_KEY", SECRET)
    strongest = decide("best-effort", asyncio.run(launcher_for(module_cache).probe())).tier
    assert strongest is not None, "this test host is expected to support a sandbox tier"

    async def go():
        async with Toolbox(config_from({"weather": demo_stdio()}), module_cache=module_cache) as tools:
            description = tools.tools()[0].description or ""
            return description, await tools.call(TOOL_NAME, {"code": PRINT_ENV})

    description, r = anyio.run(go)
    assert f"sandboxed ({strongest} tier)" in description
    assert not r.is_error, r.text
    sandbox = r.result.meta["io.gocode/run"]["sandbox"]
    assert sandbox["setting"] == "auto" and sandbox["tier"] == strongest
    assert "SECRET_API_KEY" not in env_lines(r.text) and "warning" not in sandbox
