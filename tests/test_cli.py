"""The gocode command line, run as a user runs it (subprocesses; the exec/demo tests need Go)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, demo_stdio

GOCODE = str(Path(sys.executable).parent / "gocode")
CHAIN = """\
city, err := getCity(ctx)
if err != nil {
	return err
}
w, err := getWeather(ctx, GetWeatherInput{City: city.City})
if err != nil {
	return err
}
fmt.Printf("%s: %.1f %s\\n", city.City, w.Temperature, w.Unit)
"""


def gocode(
    *args: str, cwd: Path = ROOT, stdin: str | None = None, env: dict | None = None
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [GOCODE, *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=300,
    )


@pytest.fixture
def config_file(tmp_path: Path) -> Path:
    cfg = {
        "mcpServers": {"weather": demo_stdio()},
        "models": [
            {"ref": "plain", "codeMode": {"enabled": True}},
            {"ref": "no-city", "codeMode": {"enabled": True, "excludedTools": ["get_city"]}},
            {"ref": "off", "codeMode": {"enabled": False}},
            {"ref": "auto", "codeMode": {"enabled": "auto"}},
        ],
    }
    path = tmp_path / "gocode.yaml"
    path.write_text(json.dumps(cfg))  # JSON is valid YAML
    return path


@pytest.mark.parametrize(
    "command",
    [[], ["list"], ["generate"], ["exec"], ["serve"], ["smoke"], ["warmup"], ["demo"], ["demo-server"], ["ask"]],
)
def test_every_command_has_help(command):
    r = gocode(*command, "--help")
    assert r.returncode == 0 and "Usage:" in r.stdout, r.stderr


@pytest.mark.go
def test_exec_chains_two_tools(config_file, tmp_path):
    prog = tmp_path / "prog.go"
    prog.write_text(CHAIN)
    r = gocode("exec", "-c", str(config_file), str(prog))
    assert (r.returncode, r.stdout) == (0, "Paris: 18.5 celsius\n"), r.stderr
    r = gocode("exec", "-c", str(config_file), "-", stdin=CHAIN)
    assert (r.returncode, r.stdout) == (0, "Paris: 18.5 celsius\n"), r.stderr
    # Direct mode: the program starts the server itself, as a standalone program does.
    r = gocode("exec", "--direct", "--json", "-c", str(config_file), str(prog))
    doc = json.loads(r.stdout)
    assert (r.returncode, doc["output"], doc["pooled"], doc["tool_calls"]) == (0, "Paris: 18.5 celsius\n", False, [])
    r = gocode("exec", "--json", "-c", str(config_file), str(prog))
    doc = json.loads(r.stdout)
    assert doc["pooled"] and [c["tool"] for c in doc["tool_calls"]] == ["get_city", "get_weather"]


@pytest.mark.go
def test_exec_failures_exit_1_with_the_error_on_stderr(config_file):
    r = gocode("exec", "-c", str(config_file), "-", stdin='fmt.Println("before")\n\nnope()\n')
    assert r.returncode == 1 and r.stdout == ""
    assert "compile error:\nmodel.go:3:1: undefined: nope" in r.stderr
    r = gocode("exec", "-c", str(config_file), "-", stdin='fmt.Println("before")\nreturn errors.New("bad")\n')
    assert (r.returncode, r.stdout) == (1, "before\n")
    assert "runtime error (exit status 1):\nerror: bad" in r.stderr
    r = gocode("exec", "-c", str(config_file), "--timeout", "1", "-", stdin="time.Sleep(time.Minute)\n")
    assert r.returncode == 1 and "did not finish within 1 s" in r.stderr


@pytest.mark.go
def test_exec_json(config_file):
    r = gocode("exec", "--json", "-c", str(config_file), "-", stdin="x := 1\n")
    doc = json.loads(r.stdout)
    assert r.returncode == 1
    assert (doc["ok"], doc["phase"]) == (False, "compile")
    assert doc["diagnostics"] == [{"file": "model.go", "line": 1, "column": 1, "message": "declared and not used: x"}]
    r = gocode("exec", "--json", "-c", str(config_file), "-", stdin=CHAIN)
    doc = json.loads(r.stdout)
    assert (doc["ok"], doc["phase"], doc["output"]) == (True, "ok", "Paris: 18.5 celsius\n")
    assert {"stderr", "warnings", "duration_ms", "build_ms", "run_ms"} <= doc.keys()


def test_list_json_shows_code_mode_per_model(config_file):
    docs = {
        m: json.loads(gocode("list", "--json", "-c", str(config_file), "--model", m).stdout)
        for m in ("plain", "no-city", "off", "auto")
    }

    def modes(doc):
        return {t["name"]: t["codeMode"] for t in doc["servers"][0]["tools"]}

    assert modes(docs["plain"]) == {"get_city": True, "get_weather": True}
    assert modes(docs["no-city"]) == {"get_city": False, "get_weather": True}
    assert modes(docs["off"]) == {"get_city": False, "get_weather": False}
    # Two small tools cost less as classic tools: enabled: auto leaves them so, as serve does.
    assert modes(docs["auto"]) == {"get_city": False, "get_weather": False}
    assert (docs["auto"]["codeMode"], docs["auto"]["codeModeSetting"]) == (False, "auto")
    assert docs["auto"]["codeModeReason"].startswith("auto: off, the tools' classic definitions take ")
    assert docs["plain"]["codeModeReason"] == "codeMode.enabled: true"
    assert docs["plain"]["servers"][0]["protocolVersion"] == "2025-11-25"
    text = gocode("list", "-c", str(config_file), "--model", "auto").stdout
    assert text.splitlines()[0].startswith("code mode: off (auto: off, the tools' classic definitions take ")


def test_generate_prints_declarations_and_writes_bindings(config_file, tmp_path):
    out = tmp_path / "out"
    r = gocode("generate", "-c", str(config_file), "--model", "no-city", "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert "func getWeather(context.Context, GetWeatherInput) (GetWeatherOutput, error)" in r.stdout
    assert "getCity" not in r.stdout  # excluded for this model
    assert (out / "go.mod").is_file() and (out / "rt" / "rt.go").is_file()
    assert list(out.glob("tools/t*/tools.go"))
    assert (out / "description.md").read_text().startswith("Run Go 1.")
    assert json.loads((out / "servers.json").read_text())["weather"]["transport"] == "stdio"


def test_bad_config_exits_2_without_traceback(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("mcpServers:\n  w:\n    comand: x\n")
    r = gocode("list", "-c", str(bad))
    assert r.returncode == 2
    assert r.stderr.startswith(f"gocode: config error: {bad}: mcpServers.w.comand: unknown key")
    assert "Traceback" not in r.stderr
    r = gocode("exec", "-c", str(tmp_path / "missing.yaml"), "-", stdin="")
    assert r.returncode == 2 and "config file not found" in r.stderr
    good = tmp_path / "good.yaml"
    good.write_text("models:\n  - ref: a\n")
    r = gocode("list", "-c", str(good), "--model", "zz")
    assert r.returncode == 2 and "unknown model ref 'zz' (models: a)" in r.stderr


def test_servers_that_fail_are_named_with_command_and_stderr(tmp_path):
    crash = tmp_path / "crash.py"
    crash.write_text("import sys\nprint('fatal: missing API key FOO_TOKEN', file=sys.stderr)\nsys.exit(3)\n")
    cfg = tmp_path / "g.yaml"
    cfg.write_text(json.dumps({"mcpServers": {
        "ghost": {"command": "definitely-not-a-command-xyz", "args": ["--flag"]},
        "crash": {"command": sys.executable, "args": [str(crash)]},
    }}))  # fmt: skip
    # Code that needs neither server runs; both are reported.
    r = gocode("exec", "-c", str(cfg), "-", stdin='fmt.Println("x")\n')
    assert r.returncode == 0 and r.stdout == "x\n", r.stderr
    assert "MCP server 'ghost' (command: definitely-not-a-command-xyz --flag) failed: command not found" in r.stderr
    assert f"MCP server 'crash' (command: {sys.executable} {crash}) failed" in r.stderr
    assert "fatal: missing API key FOO_TOKEN" in r.stderr
    assert "Traceback" not in r.stderr
    # Code that names what only a failed server could give: gocode could not run it (exit 2, as
    # the README says for a server that failed to start), said with the server and its command.
    r = gocode("exec", "-c", str(cfg), "-", stdin="city, err := getCity(ctx)\n_, _ = city, err\n")
    assert r.returncode == 2, r.stderr
    assert (
        "not run:\nMCP server 'crash' failed: the server exited with status 3 (its tools are not in the program)\n"
        "MCP server 'ghost' failed: command not found: definitely-not-a-command-xyz (its tools are not in the "
        "program)\nmodel.go:1:14: undefined: getCity\nfix the failed server in the config"
    ) in r.stderr


@pytest.mark.parametrize("value", ["0", "-5", "nan", "inf", "soon"])
def test_a_timeout_that_is_no_time_is_a_usage_error(value):
    for command in (["exec", "-"], ["call", "weather", "get_city"], ["smoke"]):
        r = gocode(*command[:1], "--timeout", value, *command[1:], stdin="fmt.Println(1)\n")
        assert r.returncode == 2 and "Invalid value for '--timeout'" in r.stderr, (command, r.stderr)
        assert "above 0" in r.stderr or "is not a number of seconds" in r.stderr
        assert "Traceback" not in r.stderr and "internal error" not in r.stderr


@pytest.mark.go
def test_a_program_without_statements_says_so(config_file):
    for code in ("", "\n\n", "// only a comment\n/* and\n another */\n"):
        r = gocode("exec", "-c", str(config_file), "-", stdin=code)
        assert r.returncode == 1 and r.stdout == "", r.stderr
        assert "the program has no statements (only blank lines or comments), so nothing ran" in r.stderr
    r = gocode("exec", "-c", str(config_file), "-", stdin='fmt.Println("x") // and a comment\n')
    assert r.returncode == 0 and r.stdout == "x\n", r.stderr


def test_missing_or_old_go_is_a_clear_message(tmp_path, config_file):
    no_go = {"PATH": str(tmp_path), "GOCODE_GO": "", "GOCODE_CACHE_DIR": str(tmp_path / "cache")}
    r = gocode("warmup", env={**no_go, "GOTOOLCHAIN": "local"})
    assert r.returncode == 2 and "the Go toolchain was not found: install Go 1.25 or newer" in r.stderr
    assert "GOTOOLCHAIN=local: gocode does not download Go" in r.stderr
    r = gocode("warmup", env={**no_go, "GOPROXY": "off"})
    assert r.returncode == 2 and "GOPROXY=off forbids downloading a Go toolchain" in r.stderr
    r = gocode("cache", "info", env=no_go)  # looking at the cache downloads nothing
    assert r.returncode == 0 and not (tmp_path / "cache" / "toolchains").exists(), r.stderr
    fake = tmp_path / "go"
    fake.write_text("#!/bin/sh\necho go1.22.4\n")
    fake.chmod(0o755)
    r = gocode("warmup", env={"GOCODE_GO": str(fake)})
    assert r.returncode == 2 and "is go1.22.4, but gocode needs Go 1.25 or newer" in r.stderr


@pytest.mark.go
def test_warmup_and_demo():
    r = gocode("warmup")
    assert r.returncode == 0 and "module cache ready" in r.stderr, r.stderr
    r = gocode("demo")
    assert r.returncode == 0, r.stderr
    assert "func getWeather(context.Context, GetWeatherInput) (GetWeatherOutput, error)" in r.stdout
    assert "City: Paris\nWeather: 65.3°F, sunny" in r.stdout
    assert "discovery " in r.stdout and "total with discovery" not in r.stdout
    # The example uses no name the model's view does not show (the model has nothing else).
    doc = json.loads(gocode("demo", "--json").stdout)
    code = re.sub(r'"(?:\\.|[^"\\])*"', '""', doc["code"])  # identifiers only, not string contents
    used = set(re.findall(r"(?<![.\w])([A-Za-z]\w*)", code))
    used -= {"city", "err", "ctx", "nil", "return", "weather", "if", "fmt"}
    assert used <= set(re.findall(r"\w+", doc["declarations"])), used


def test_list_and_search_print_no_escape_sequence_a_server_sent(tmp_path: Path) -> None:
    """A server's tool names, descriptions and warnings reach the terminal without the control
    characters that would rewrite it (an escape sequence, a bell, a bidirectional override)."""
    hostile = "\x1b]0;pwned\x07\x1b[2J\u202eevil"
    tools = [
        {"name": "wipe\x1b[2K", "description": f"{hostile} deletes notes", "inputSchema": {"type": "object"}},
        {"name": "notes", "description": f"reads notes {hostile}", "inputSchema": {"type": "object"}},
    ]
    listing = tmp_path / "tools.json"
    listing.write_text(json.dumps({"tools": tools}))
    server = {
        "command": sys.executable,
        "args": [str(ROOT / "tests/servers/wild_server.py"), "--tools-file", str(listing)],
    }
    config = tmp_path / "gocode.yaml"
    config.write_text(json.dumps({"mcpServers": {"wild": server}}))
    listed = gocode("list", "-c", str(config))
    found = gocode("search", "-c", str(config), "read the notes")
    for out in (listed, found):
        assert "notes" in out.stdout, out.stderr
        assert re.findall("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e]", out.stdout + out.stderr) == []
    assert "?]0;pwned??[2J?evil" in listed.stdout


def _two_servers(tmp_path: Path) -> Path:
    """A config of two servers (git, files) of eight tools each, served by wild_server."""

    def tools(*named: tuple[str, str]) -> list[dict]:
        schema = {"type": "object", "properties": {"path": {"type": "string"}}}
        return [{"name": n, "description": d, "inputSchema": schema} for n, d in named]

    listings = {
        "git": tools(
            ("git_log", "Show the commit logs of the repository."),
            ("git_commit", "Record changes to the repository as a new commit."),
            ("git_diff", "Show changes between commits."),
            ("git_status", "Show the working tree status."),
            ("git_branch", "List, create, or delete branches."),
            ("git_checkout", "Switch branches or restore working tree files."),
            ("git_add", "Add file contents to the index."),
            ("git_reset", "Reset current HEAD to the specified state."),
        ),
        "files": tools(
            ("write_file", "Write a text file to disk."),
            ("read_file", "Read the contents of a text file."),
            ("list_directory", "List the entries of a directory."),
            ("move_file", "Move or rename a file."),
            ("search_files", "Search for files matching a pattern."),
            ("get_file_info", "Get the size and times of a file."),
            ("create_directory", "Create a new directory."),
            ("delete_file", "Delete a file."),
        ),
    }
    servers = {}
    for name, listed in listings.items():
        (tmp_path / f"{name}.json").write_text(json.dumps({"tools": listed}))
        wild = [str(ROOT / "tests/servers/wild_server.py"), "--tools-file", str(tmp_path / f"{name}.json")]
        servers[name] = {"command": sys.executable, "args": wild}
    config = tmp_path / "gocode.json"
    config.write_text(json.dumps({"mcpServers": servers}))
    return config


def test_search_lists_a_request_in_parts_part_by_part(tmp_path: Path) -> None:
    """`gocode search` answers a request naming several actions as search_go_tools does, each part
    with its own tools (text and --json, whose `parts` a script reads); a part no tool fits is
    said and exits 1; a request asking one thing prints as it always has, without `parts`."""
    c = ("-c", str(_two_servers(tmp_path)))
    got = gocode("search", *c, "show the commit log; write a text file")
    assert got.returncode == 0, got.stderr
    lines = got.stdout.splitlines()
    assert lines[:2] == ["Your request in 2 parts:", "1. 'show the commit log'"], got.stdout
    second = lines.index("2. 'write a text file'")
    assert lines[2].startswith("   1. git.git_log ") and lines[second + 1].startswith("   1. files.write_file ")
    assert second == 7 and len(lines) == 13  # five tools each, a line apiece

    doc = json.loads(gocode("search", *c, "--json", "show the commit log; write a text file").stdout)
    assert [(p["query"], p["fits"]) for p in doc["parts"]] == [
        ("show the commit log", True),
        ("write a text file", True),
    ]
    assert doc["parts"][0]["tools"][0]["tool"] == "git_log"
    assert (doc["parts"][1]["tools"][0]["rank"], doc["parts"][1]["tools"][0]["tool"]) == (1, "write_file")
    every = [f"{t['server']}.{t['tool']}" for t in doc["tools"]]
    assert doc["fits"] and len(every) == len(set(every)) and {"git.git_log", "files.write_file"} <= set(every)
    assert all(t["declaration"].count("\nfunc ") == 1 for p in doc["parts"] for t in p["tools"])

    # A part no tool fits: said on stderr, its nearest still listed, exit 1.
    got = gocode("search", *c, "create a calendar event for friday; commit the changes")
    assert got.returncode == 1 and "no tool fits 'create a calendar event for friday'" in got.stderr
    assert "2. 'commit the changes'\n   1. git.git_commit " in got.stdout
    doc = json.loads(gocode("search", *c, "--json", "create a calendar event for friday; commit the changes").stdout)
    assert [p["fits"] for p in doc["parts"]] == [False, True] and doc["fits"] is False

    # One request: the list as always, and no `parts`.
    one = gocode("search", *c, "write a text file")
    assert one.returncode == 0 and one.stdout.startswith(" 1. files.write_file ") and "parts" not in one.stdout
    doc = json.loads(gocode("search", *c, "--json", "write a text file").stdout)
    assert set(doc) == {"query", "fits", "tools"} and doc["tools"][0]["tool"] == "write_file"
