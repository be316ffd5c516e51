"""Code run once, as ``gocode exec`` runs it: the library entry point (:mod:`gocode.execution`)
and the command printing its outcome (real builds and subprocesses; the runs need Go)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

import gocode
from gocode.errors import ExecRequestError
from gocode.execution import ExecOutcome, ExecRequest, PlanOutcome, check_request, exec_code
from gocode.run.result import RunResult
from tests.conftest import ROOT, config_from, demo_stdio

GOCODE = str(Path(sys.executable).parent / "gocode")

REFUSED = [
    ({"code": None}, "missing FILE|- (the Go code to run)"),
    ({"mode": "direct", "replay_id": "r1"}, "--direct cannot be combined with --replay or --dry-run"),
    ({"mode": "direct", "dry_run": True}, "--direct cannot be combined with --replay or --dry-run"),
    ({"plan_only": True, "dry_run": True}, "--plan runs nothing: it cannot be combined with"),
    ({"plan_only": True, "replay_id": "r1"}, "--plan runs nothing: it cannot be combined with"),
    ({"plan_only": True, "mode": "direct"}, "--plan runs nothing: it cannot be combined with"),
]


@pytest.mark.fast
@pytest.mark.parametrize(("options", "message"), REFUSED)
def test_a_request_whose_options_do_not_go_together_is_refused(options, message):
    with pytest.raises(ExecRequestError, match=message.replace("|", r"\|").replace("(", r"\(").replace(")", r"\)")):
        ExecRequest(**{"code": 'fmt.Println("x")', **options})
    assert ExecRequestError.phase == "usage"


@pytest.mark.fast
def test_requests_that_make_sense_are_taken():
    for request in (
        ExecRequest("x"),
        ExecRequest("x", mode="direct", timeout=3),
        ExecRequest(None, replay_id="r1"),
        ExecRequest("x", replay_id="r1"),
        ExecRequest("x", dry_run=True),
        ExecRequest("x", plan_only=True),
    ):
        assert request.model is None
    check_request(has_code=False, mode="pooled", replay_id="r1", dry_run=False, plan_only=False)
    assert {"exec_code", "ExecRequest", "ExecOutcome", "ExecRequestError"} <= set(gocode.__all__)
    assert gocode.exec_code is exec_code


@pytest.mark.fast
def test_the_error_message_is_the_failure_without_the_output_whatever_the_program_printed():
    # A program's own error may contain the words that introduce the output in error_text.
    stderr = "error: bad\n\nstdout before the failure: not the output"
    r = RunResult(False, "runtime", output="before\n", stderr=stderr, exit_code=1)
    assert r.error_message() == f"runtime error (exit status 1):\n{stderr}"
    assert r.error_text() == f"{r.error_message()}\n\nstdout before the failure:\nbefore"
    assert RunResult(False, "timeout").error_message() == "timeout" == RunResult(False, "timeout").error_text()
    assert RunResult(True, "ok", output="x").error_message() == "" == RunResult(True, "ok", output="x").error_text()


def test_a_refused_request_exits_2_before_reading_its_code_from_stdin():
    for args in (["--direct", "--dry-run"], ["--plan", "--replay", "r1"]):
        proc = subprocess.Popen(
            [GOCODE, "exec", *args, "-"],
            cwd=ROOT,
            stdin=subprocess.PIPE,  # left open: a command that read it would wait here
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=os.environ,
        )
        try:
            out, err = proc.communicate(timeout=60)
        finally:
            proc.kill()
        assert proc.returncode == 2 and out == ""
        assert "Error: --" in err and "cannot be combined" in err


@pytest.mark.go
def test_pooled_direct_and_plan_answer_with_their_outcomes():
    config = config_from({"weather": demo_stdio()})
    code = "c, err := getCity(ctx)\nif err != nil {\n\treturn err\n}\nfmt.Println(c.City)\n"
    pooled = asyncio.run(exec_code(config, ExecRequest(code)))
    assert pooled.ok and pooled.plan is None and pooled.run is not None
    assert (pooled.run.output, pooled.run.pooled) == ("Paris\n", True)
    direct = asyncio.run(exec_code(config, ExecRequest(code, mode="direct")))
    assert direct.run is not None and (direct.run.output, direct.run.pooled) == ("Paris\n", False)
    planned = asyncio.run(exec_code(config, ExecRequest(code, plan_only=True)))
    assert planned.run is None and isinstance(planned.plan, PlanOutcome) and planned.ok
    assert planned.plan.as_json()["plan"]["tools"] == ["weather.get_city"]
    assert "weather.get_city" in planned.plan.text()
    bad = asyncio.run(exec_code(config, ExecRequest("nope()\n", plan_only=True)))
    assert bad.plan is not None and not bad.ok and "undefined: nope" in bad.plan.text()
    assert bad.plan.as_json() == {"ok": False, "errors": bad.plan.errors}


@pytest.mark.go
def test_a_direct_run_warns_of_a_server_it_could_not_discover_and_runs(tmp_path):
    config = config_from({"gone": {"command": str(tmp_path / "no-such-server")}})
    heard: list[str] = []
    got = asyncio.run(exec_code(config, ExecRequest('fmt.Println("hi")', mode="direct"), warn=heard.append))
    assert isinstance(got, ExecOutcome) and got.run is not None and got.run.output == "hi\n"
    assert len(heard) == 1 and "gone" in heard[0]


@pytest.mark.go
def test_the_command_prints_the_programs_whole_error_after_its_output(tmp_path):
    # The error's text repeats the words error_text puts before the output: none of it is cut.
    prog = tmp_path / "prog.go"
    prog.write_text('fmt.Println("before")\nreturn errors.New("bad\\n\\nstdout before the failure: mine")\n')
    config = tmp_path / "gocode.json"
    config.write_text('{"mcpServers": {}}')
    got = subprocess.run(
        [GOCODE, "exec", "-c", str(config), "--direct", str(prog)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert (got.returncode, got.stdout) == (1, "before\n")
    assert got.stderr == "runtime error (exit status 1):\nerror: bad\n\nstdout before the failure: mine\n"
