"""`gocode smoke`: expectations in scripts (pure), and real smoke runs over good and broken servers
whose JUnit reports are read back with junitparser, an independent JUnit reader."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from junitparser import Failure, JUnitXml, Skipped

from gocode.errors import ScriptError
from gocode.junit import to_xml
from gocode.run.runner import RunResult
from gocode.smoke import Check, Report, judge, parse_script
from tests.conftest import ROOT, demo_stdio

GOCODE = str(Path(sys.executable).parent / "gocode")
SCRIPT = Path("/scripts/s.go")


# --- pure ---------------------------------------------------------------------------------------


@pytest.mark.fast
def test_parse_expectations():
    s = parse_script(
        SCRIPT, "// A script.\n// want: a\n// want:  b \n// timeout: 5\n\nfmt.Println(1)\n// want: not me\n"
    )
    assert s.output == "a\n b \n" and s.timeout == 5 and s.error_phase is None
    s = parse_script(SCRIPT, "// want-match: ^x\\d+$\nfmt.Println(1)")
    assert s.match == "^x\\d+$" and s.output is None
    s = parse_script(SCRIPT, "// want-error: compile undefined: x\nx")
    assert (s.error_phase, s.error_match) == ("compile", "undefined: x")
    s = parse_script(SCRIPT, "// want-error: any\nx")
    assert (s.error_phase, s.error_match) == ("any", None)
    assert parse_script(SCRIPT, "fmt.Println(1)").output is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("// want-error: linking\n", "needs a phase"),
        ("// want-match: (unclosed\n", "bad regular expression"),
        ("// timeout: soon\n", "must be a number"),
        ("// timeout: -1\n", "must be positive"),
        ("// want: x\n// want-error: runtime\n", "cannot be combined"),
        ("// wantt: 3\n", "unknown directive '// wantt'"),
        ("// want-regex: ^3$\n", "unknown directive '// want-regex'"),
        ("// Timeout: 3\n", "unknown directive"),
    ],
)
@pytest.mark.fast
def test_parse_rejects_bad_expectations(text, message):
    with pytest.raises(ScriptError, match=message):
        parse_script(SCRIPT, text)


@pytest.mark.fast
def test_golden_output_file(tmp_path):
    (tmp_path / "s.out").write_text("hello\n")
    assert parse_script(tmp_path / "s.go", "fmt.Println(1)").output == "hello\n"
    with pytest.raises(ScriptError, match="keep one"):
        parse_script(tmp_path / "s.go", "// want: x\n")


@pytest.mark.fast
def test_judge():
    ok = RunResult(True, "ok", output="a\nb\n")
    assert judge(parse_script(SCRIPT, "// want: a\n// want: b\n"), ok)[0]
    passed, message, diff = judge(parse_script(SCRIPT, "// want: a\n// want: c\n"), ok)
    assert not passed and "differs" in message and "-c\n+b" in diff
    assert judge(parse_script(SCRIPT, "// want-match: ^b$\n"), ok)[0]
    assert not judge(parse_script(SCRIPT, "// want-match: ^c$\n"), ok)[0]
    assert "succeeded" in judge(parse_script(SCRIPT, "// want-error: runtime\n"), ok)[1]
    failed = RunResult(False, "runtime", stderr="error: boom", exit_code=1)
    assert judge(parse_script(SCRIPT, "// want-error: runtime boom\n"), failed)[0]
    assert judge(parse_script(SCRIPT, "// want-error: any\n"), failed)[0]
    assert "got runtime" in judge(parse_script(SCRIPT, "// want-error: compile\n"), failed)[1]
    assert "does not match" in judge(parse_script(SCRIPT, "// want-error: runtime bang\n"), failed)[1]
    assert judge(parse_script(SCRIPT, "fmt.Println()"), failed)[1] == "runtime failure"


@pytest.mark.fast
def test_junit_report_reads_back(tmp_path):
    report = Report(
        [
            Check("server a", "connect", "passed", 12.0),
            Check("server b", "connect", "failed", 5.0, "command not found", "details\x01here", "err\x00"),
            Check("server b", "list tools", "skipped", message="the server did not connect"),
            Check("script", "x.go", "failed", 900.0, "the output differs", "--- expected\n+++ actual"),
        ],
        1000.0,
    )
    path = tmp_path / "r.xml"
    path.write_text(to_xml(report))
    xml = JUnitXml.fromfile(str(path))
    suites = {s.name: s for s in xml}
    assert (suites["gocode smoke: servers"].tests, suites["gocode smoke: servers"].failures) == (3, 1)
    assert suites["gocode smoke: servers"].skipped == 1
    assert (suites["gocode smoke: scripts"].tests, suites["gocode smoke: scripts"].failures) == (1, 1)
    case = next(c for c in suites["gocode smoke: scripts"])
    assert case.classname == "script" and case.name == "x.go" and case.time == pytest.approx(0.9)
    (failure,) = case.result
    assert isinstance(failure, Failure) and failure.message == "the output differs"
    broken = [c for c in suites["gocode smoke: servers"] if c.classname == "server.b"]
    assert broken[0].system_err == "err\ufffd" and "details\ufffdhere" in broken[0].result[0].text


# --- real runs ----------------------------------------------------------------------------------

pytestmark_go = pytest.mark.go

WEATHER_OK = """\
// want: Paris 18.5
w, err := getWeather(ctx, GetWeatherInput{City: "Paris"})
if err != nil {
	return err
}
fmt.Printf("%s %.1f\\n", "Paris", w.Temperature)
"""
WRONG = '// want: Paris 99.9\nw, err := getWeather(ctx, GetWeatherInput{City: "Paris"})\nif err != nil {\n\treturn err\n}\nfmt.Printf("Paris %.1f\\n", w.Temperature)\n'
NOT_GO = 'fmt.Println("ok")\nnotAFunction(ctx)\n'


def smoke(tmp_path: Path, servers: dict, scripts: dict[str, str], *extra: str) -> tuple[int, dict, JUnitXml, str]:
    config = tmp_path / "gocode.yaml"
    config.write_text(yaml.safe_dump({"mcpServers": servers}))
    sdir = tmp_path / "scripts"
    sdir.mkdir(exist_ok=True)
    for name, text in scripts.items():
        (sdir / name).write_text(text)
    junit = tmp_path / "report.xml"
    proc = subprocess.run(
        [GOCODE, "smoke", "-c", str(config), "--scripts", str(sdir), "--junit", str(junit), "--json", *extra],
        capture_output=True, text=True, timeout=600, cwd=ROOT,
    )  # fmt: skip
    doc = json.loads(proc.stdout) if proc.stdout.strip() else {}
    return proc.returncode, doc, JUnitXml.fromfile(str(junit)) if junit.exists() else JUnitXml(), proc.stderr


def statuses(doc: dict) -> dict[tuple[str, str], str]:
    return {(c["group"], c["name"]): c["status"] for c in doc["checks"]}


@pytest.mark.go
def test_good_servers_pass(tmp_path):
    code, doc, xml, stderr = smoke(tmp_path, {"weather": demo_stdio()}, {"ok.go": WEATHER_OK})
    assert code == 0, stderr
    assert statuses(doc) == {
        ("server weather", "connect"): "passed",
        ("server weather", "list tools"): "passed",
        ("server weather", "compile"): "passed",
        ("script", "ok.go"): "passed",
    }
    assert sum(s.tests for s in xml) == 4 and sum(s.failures for s in xml) == 0
    assert "ok    script ok.go" in stderr  # progress lines go to stderr with --json
    # The same scripts as standalone programs that start the server themselves.
    code, doc, _, stderr = smoke(tmp_path, {"weather": demo_stdio()}, {"ok.go": WEATHER_OK}, "--direct")
    assert code == 0 and statuses(doc)[("script", "ok.go")] == "passed", stderr


@pytest.mark.go
def test_broken_servers_and_scripts_fail_exactly_their_checks(tmp_path):
    servers = {
        "weather": demo_stdio(),
        "missing": {"command": "/nonexistent/mcp-server"},
        "crasher": {"command": sys.executable, "args": ["-m", "tests.servers.crash_server"], "cwd": str(ROOT)},
        "dies": {"command": "sh", "args": ["-c", "echo 'fatal: no config' >&2; exit 7"]},
    }
    scripts = {"ok.go": WEATHER_OK, "wrong.go": WRONG, "broken.go": NOT_GO}
    code, doc, xml, stderr = smoke(tmp_path, servers, scripts)
    assert code == 1, stderr
    st = statuses(doc)
    assert st[("server weather", "compile")] == "passed" and st[("script", "ok.go")] == "passed"
    assert st[("server missing", "connect")] == "failed"
    assert st[("server missing", "list tools")] == "skipped" and st[("server missing", "compile")] == "skipped"
    # The crasher completes the handshake and dies on tools/list: connect passes, list fails.
    assert st[("server crasher", "connect")] == "passed" and st[("server crasher", "list tools")] == "failed"
    assert st[("server dies", "connect")] == "failed"
    assert st[("script", "wrong.go")] == "failed" and st[("script", "broken.go")] == "failed"

    checks = {(c["group"], c["name"]): c for c in doc["checks"]}
    assert "command not found: /nonexistent/mcp-server" in checks[("server missing", "connect")]["message"]
    dies = checks[("server dies", "connect")]
    assert "(command: sh -c" in dies["message"]
    assert "fatal: no config" in dies["stderr"] and "the server exited with status 7" in dies["message"]
    crash = checks[("server crasher", "list tools")]
    assert "giving up on tools/list" in crash["stderr"] and "the server exited with status 3" in crash["message"]
    assert "-Paris 99.9\n+Paris 18.5" in checks[("script", "wrong.go")]["details"]
    broken = checks[("script", "broken.go")]
    assert (
        broken["message"].startswith("compile failure") and "model.go:2:1: undefined: notAFunction" in broken["details"]
    )

    failures = {(c.classname, c.name) for s in xml for c in s if any(isinstance(r, Failure) for r in c.result)}
    skipped = {(c.classname, c.name) for s in xml for c in s if any(isinstance(r, Skipped) for r in c.result)}
    assert failures == {
        ("server.missing", "connect"),
        ("server.crasher", "list tools"),
        ("server.dies", "connect"),
        ("script", "wrong.go"),
        ("script", "broken.go"),
    }
    assert skipped == {
        ("server.missing", "list tools"),
        ("server.missing", "compile"),
        ("server.crasher", "compile"),
        ("server.dies", "list tools"),
        ("server.dies", "compile"),
    }
    assert sum(s.tests for s in xml) == len(doc["checks"]) == 15


@pytest.mark.go
def test_human_summary_shows_the_diff(tmp_path):
    config = tmp_path / "gocode.yaml"
    config.write_text(yaml.safe_dump({"mcpServers": {"weather": demo_stdio()}}))
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "wrong.go").write_text(WRONG)
    proc = subprocess.run(
        [GOCODE, "smoke", "-c", str(config), "--scripts", str(tmp_path / "s")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 1
    assert "FAIL  script wrong.go" in proc.stdout
    assert "--- script wrong.go: the output differs from the expected output" in proc.stdout
    assert "-Paris 99.9\n+Paris 18.5" in proc.stdout
    assert proc.stdout.rstrip().endswith("3 passed, 1 failed, 0 skipped in " + proc.stdout.rstrip().split(" in ")[-1])


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        ({"config": "mcpServers:\n  x: {comand: y}\n"}, "unknown key"),
        ({"config": "mcpServers: {}\n"}, "nothing to check"),
        ({"args": ["--junit", "/proc/no/such/dir/r.xml"]}, "cannot write the JUnit report"),
        ({"env": {"GOCODE_GO": "/nonexistent/go"}}, "toolchain error: cannot run /nonexistent/go"),
    ],
)
def test_smoke_that_cannot_run_exits_2(tmp_path, setup, message):
    config = tmp_path / "gocode.yaml"
    config.write_text(setup.get("config", yaml.safe_dump({"mcpServers": {"weather": demo_stdio()}})))
    proc = subprocess.run(
        [GOCODE, "smoke", "-c", str(config), *setup.get("args", [])],
        capture_output=True, text=True, timeout=120, env={**os.environ, **setup.get("env", {})},
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr and "Traceback" not in proc.stderr and "internal error" not in proc.stderr
    assert "passed" not in proc.stdout  # refused before running any check


def test_example_workflow_runs_smoke_and_uploads_the_report():
    workflow = yaml.safe_load((ROOT / "examples" / "ci" / "gocode-smoke.yml").read_text())
    steps = workflow["jobs"]["smoke"]["steps"]
    runs = [s.get("run", "") for s in steps]
    assert any(r.startswith("gocode warmup") for r in runs)
    smoke_run = next(r for r in runs if r.startswith("gocode smoke"))
    report = smoke_run.split("--junit ")[1].split()[0]
    uploads = [s for s in steps if s.get("uses", "").startswith("actions/upload-artifact")]
    assert uploads and uploads[0]["with"]["path"] == report and uploads[0]["if"] == "always()"
    assert any(s.get("uses", "").startswith("actions/setup-go") for s in steps)
