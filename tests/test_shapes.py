"""Learned result shapes: recorded from real calls through the loopback endpoint, shown in
search answers, and never holding anything that looks like a secret."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import anyio
import mcp_types as types
import pytest

from gocode import Toolbox
from gocode.config import ServerConfig
from gocode.errors import ConfigError
from gocode.mcp.cache import ListingCache
from gocode.mcp.shapes import ShapeRecorder, ToolShape, redact, render, schema_of, shape_of
from gocode.view.tokens import count
from tests.conftest import config_from, need

GIT_SERVER = Path(sys.executable).parent / "mcp-server-git"

SECRETS = [
    "sk-live-4f9aQ2xLm8Zt7Rb1Kc3Vd",
    "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "AKIAIOSFODNN7EXAMPLE",
    "ops@example.com",
    "Zq8vN3pL1xR7tY4wK9mB2cD6fG0hJ5sA",  # no known prefix: caught by its entropy
    "hunter2hunter2",  # caught by its label
]


@pytest.mark.fast
def test_redact_removes_what_looks_secret_and_keeps_the_rest():
    text = (
        f"Token: {SECRETS[0]} and {SECRETS[1]}\nAuthorization: Bearer {SECRETS[2]}\nkey {SECRETS[3]} by {SECRETS[4]}\n"
        f"blob {SECRETS[5]}\npassword={SECRETS[6]}\nurl https://bob:pw@example.org/x\n"
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----\n"
        "Commit: 3f1c2a9e8b7d6c5f4e3d2c1b0a9f8e7d6c5b4a39\nMessage: Fix the parser for nested lists"
    )
    out = redact(text)
    for secret in [*SECRETS, "bob:pw", "MIIEow"]:
        assert secret not in out, secret
    assert "Commit: <hex:40>" in out and "Message: Fix the parser for nested lists" in out


@pytest.mark.fast
def test_json_shapes_merge_and_keep_no_values():
    shape = ToolShape()
    for doc in [
        {"items": [{"id": 1, "name": "a", "token": SECRETS[0]}], "next": "c1"},
        {"items": [{"id": 2, "name": "b", "tags": ["x"]}], "next": None},
    ]:
        shape.observe(types.CallToolResult(content=[types.TextContent(type="text", text=json.dumps(doc))]))
    assert (
        render(shape.json)
        == "{items: [{id: integer, name: string, token?: string, tags?: [string]}], next: string | null}"
    )
    assert schema_of(shape.json, root=True) is not None  # next: a string or null is one nullable string
    shape.observe(types.CallToolResult(content=[types.TextContent(type="text", text='{"items": [], "next": 3}')]))
    assert schema_of(shape.json, root=True) is None  # a string, null and a number: no one type
    stored = json.dumps(shape.as_json())
    assert SECRETS[0] not in stored and "c1" not in stored
    # Keys that look like secrets are data: the object is a map, its keys are not kept.
    assert shape_of({SECRETS[1]: {"ok": True}}) == {"map": {"object": {"ok": "boolean"}, "optional": []}}


@pytest.mark.fast
def test_sampling_is_off_per_server_and_strictly_validated(tmp_path, monkeypatch):
    monkeypatch.delenv("GOCODE_SHAPES_DIR")
    servers = {
        "on": ServerConfig(command="x"),
        "off": ServerConfig.model_validate({"command": "x", "learnShapes": False}),
    }
    rec = ShapeRecorder(ListingCache(tmp_path), servers)
    result = types.CallToolResult(content=[types.TextContent(type="text", text="hello")])
    rec.observe("on", "t", result)
    rec.observe("off", "t", result)
    assert list(rec.comments()) == [("on", "t")]
    assert len(list((tmp_path / "shapes").iterdir())) == 1
    with pytest.raises(ConfigError, match="learnShapes"):
        config_from({"s": {"command": "x", "learnShapes": "no"}})


def _repo(path: Path) -> None:
    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=path, check=True, capture_output=True)

    git("init", "-q")
    git("config", "user.name", "Robin")
    git("config", "user.email", SECRETS[4])
    for i, msg in enumerate(["First commit", f"Rotate the deploy key {SECRETS[0]}", "Third commit"]):
        (path / f"f{i}").write_text(str(i))
        git("add", ".")
        git("commit", "-q", "-m", msg)


@pytest.mark.go
def test_git_log_shape_is_learned_and_shown_in_search(workspace, tmp_path, monkeypatch):
    monkeypatch.delenv("GOCODE_SHAPES_DIR")
    repo = tmp_path / "repo"
    repo.mkdir()
    _repo(repo)
    cache = ListingCache(tmp_path / "cache")
    code = f"out := must(gitLog(ctx, GitLogInput{{RepoPath: {json.dumps(str(repo))}}}))\nfmt.Println(len(out) > 0)"

    async def go(learn: bool) -> str:
        servers = {"git": {"command": need(GIT_SERVER), "learnShapes": learn}}
        config = config_from(servers, defaults={"codeMode": {"sandbox": "off"}})
        async with Toolbox(config, workspace=workspace, prewarm=False, listing_cache=cache) as box:
            before, _ = box.code_mode.search_answer({"query": "commit log"})
            assert "Result seen" not in before
            for _ in range(3):
                r = await box.call("execute_go_code", {"code": code})
                assert r.text == "true\n", r.text
            text, failed = box.code_mode.search_answer({"query": "commit log"})
            assert not failed
            return text

    assert "Result seen" not in anyio.run(go, False)
    text = anyio.run(go, True)
    shown = [line for line in text.splitlines() if line.startswith("// Result seen") or line.startswith("//   ")]
    assert shown[0] == "// Result seen (3 calls), text starting:"
    assert "//   Commit: <hex:40>" in shown and "//   Author: Robin" in shown
    print(f"learned shape: {count(chr(10).join(shown))} tokens (o200k)\n" + "\n".join(shown))
    on_disk = "".join(p.read_text() for p in (tmp_path / "cache" / "shapes").iterdir())
    for secret in SECRETS[:1] + SECRETS[4:5]:
        assert secret not in text and secret not in on_disk
