"""gocode ask and the Orchestrator, against a real local endpoint driven through the real SDKs.

tests/llm_server.py speaks OpenAI Chat Completions and Anthropic Messages over HTTP and answers
from scripted turns; the tools are the bundled demo weather server, the Go is built and run for
real. Each test checks what the SDK actually sent as well as what the user sees.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from gocode.agent import Orchestrator, SyncOrchestrator
from gocode.config import parse_config
from tests.conftest import ROOT, free_port
from tests.llm_server import Recorded, ScriptedLLM, Turn

pytestmark = pytest.mark.go

KEY = "sk-test-0123456789abcdef"
PROMPT = "What's the weather where I am?"
TYPO = (
    "c := must(getCity(ctx))\n"
    "w := must(getWether(ctx, GetWeatherInput{City: c.City}))\n"
    'fmt.Printf("%s: %.1f %s, %s\\n", c.City, w.Temperature, w.Unit, w.Conditions)\n'
)
FIXED = TYPO.replace("getWether", "getWeather")
ANSWER = "It is 18.5 °C and sunny in Paris."


def go_block(code: str) -> str:
    return f"```go\n{code}```"


def write_config(path: Path, provider: str, base_url: str, **code_mode: object) -> Path:
    demo = {"command": sys.executable, "args": ["-m", "gocode.demo.server"], "cwd": str(ROOT)}
    model = {"ref": "m", "type": provider, "id": "test-model", "base_url": base_url, "api_key_env": "TEST_KEY"}
    doc: dict = {"mcpServers": {"weather": demo}, "models": [model]}
    if code_mode:
        doc["defaults"] = {"codeMode": code_mode}
    path.write_text(json.dumps(doc))
    return path


def url_for(llm: ScriptedLLM, provider: str) -> str:
    return llm.openai_url if provider == "openai" else llm.anthropic_url


def gocode_ask(config: Path, *args: str, key: str | None = KEY) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("TEST_KEY", "GOCODE_DEBUG")}
    if key is not None:
        env["TEST_KEY"] = key
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run(
        [sys.executable, "-m", "gocode.cli", "ask", "-c", str(config), *args],
        env=env, capture_output=True, text=True, timeout=240,
    )  # fmt: skip


def last_user(rec: Recorded) -> str:
    content = [m for m in rec.messages if m["role"] == "user"][-1]["content"]
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_ask_answers_the_weather_question_with_one_repair(tmp_path: Path, provider: str) -> None:
    turns = [
        Turn("TOOLS: current city; weather of a city"),
        Turn(go_block(TYPO)),
        Turn("Fixed:\n" + go_block(FIXED)),
        Turn(ANSWER),
    ]
    with ScriptedLLM(turns) as llm:
        config = write_config(tmp_path / "gocode.json", provider, url_for(llm, provider))
        got = gocode_ask(config, PROMPT, "--json")
    assert got.returncode == 0, got.stderr
    t = json.loads(got.stdout)
    assert (t["ok"], t["answer"], t["repairs"], t["phase"]) == (True, ANSWER, 1, None)
    assert [s["kind"] for s in t["steps"]] == ["decide", "search", "write", "run", "write", "run", "answer"]
    assert t["steps"][1]["tools"] == ["getCity", "getWeather"]
    assert t["steps"][3]["run"]["phase"] == "compile"
    assert t["steps"][5]["run"]["output"] == "Paris: 18.5 celsius, sunny\n"
    assert [c["tool"] for c in t["steps"][5]["run"]["tool_calls"]] == ["get_city", "get_weather"]
    # Token usage per request, as the endpoint reported it, and the total.
    usages = [s["usage"] for s in t["steps"] if "usage" in s]
    assert len(usages) == 4 and all(u["input"] > 0 and u["output"] > 0 for u in usages)
    assert t["usage"]["requests"] == 4
    assert t["usage"]["total"] == sum(u["total"] for u in usages)

    # What the SDK sent: the deciding request names the tools only; the writing one carries the
    # rules and the selected declarations; the repair carries the compiler's did-you-mean.
    decide, write, repair, answer = llm.requests
    assert {r.path for r in llm.requests} == {"/v1/chat/completions" if provider == "openai" else "/v1/messages"}
    assert "getCity, getWeather" in decide.system and "GetWeatherInput" not in decide.text()
    assert "func getWeather(" in last_user(write) and "func getCity(" in last_user(write)
    assert "Run Go" in write.system
    assert "undefined: getWether (did you mean getWeather?)" in last_user(repair)
    assert "Paris: 18.5 celsius, sunny" in last_user(answer) and "func " not in answer.text()
    assert all(r.body["model"] == "test-model" for r in llm.requests)
    assert all(KEY in (r.headers.get("authorization", "") + r.headers.get("x-api-key", "")) for r in llm.requests)

    # Every step on stderr as it happened; the key nowhere in what gocode printed.
    for line in ("asking whether the prompt needs tools", "found getCity, getWeather", "compile error",
                 "asking for a fix (repair 1 of 2)", "answering from the program's output"):  # fmt: skip
        assert line in got.stderr
    assert KEY not in got.stdout + got.stderr


def test_a_prompt_that_needs_no_tools_is_answered_directly(tmp_path: Path) -> None:
    with ScriptedLLM([Turn("4")]) as llm:
        config = write_config(tmp_path / "gocode.json", "anthropic", llm.anthropic_url)
        got = gocode_ask(config, "What is 2 + 2?")
    assert (got.returncode, got.stdout) == (0, "4\n"), got.stderr
    assert len(llm.requests) == 1
    assert "no tools needed" in got.stderr


def test_sync_orchestrator_repairs_a_runtime_error(tmp_path: Path) -> None:
    atlantis = 'w := must(getWeather(ctx, GetWeatherInput{City: "Atlantis"}))\nfmt.Println(w.Temperature)\n'
    turns = [Turn("TOOLS: weather of a city"), Turn(go_block(atlantis)), Turn(go_block(FIXED)), Turn(ANSWER)]
    with ScriptedLLM(turns) as llm:
        config = write_config(tmp_path / "gocode.json", "openai", llm.openai_url)
        with SyncOrchestrator(str(config), env={"TEST_KEY": KEY}) as orchestrator:
            t = orchestrator.ask(PROMPT)
    assert (t.ok, t.answer, t.repairs) == (True, ANSWER, 1)
    failed, fixed = [s.run for s in t.steps if s.run is not None]
    assert failed is not None and failed.phase == "runtime"
    assert fixed is not None and fixed.output == "Paris: 18.5 celsius, sunny\n"
    repair = last_user(llm.requests[2])
    assert "runtime error" in repair and "unknown city 'Atlantis'; known cities:" in repair


def test_a_model_that_never_writes_working_code_stops_after_the_repairs(tmp_path: Path) -> None:
    def script(rec: Recorded) -> Turn:
        return Turn("TOOLS: weather") if "TOOLS:" in rec.system else Turn(go_block(TYPO))

    with ScriptedLLM(script) as llm:
        config = write_config(tmp_path / "gocode.json", "openai", llm.openai_url)
        got = gocode_ask(config, PROMPT, "--max-repairs", "1")
    assert got.returncode == 1
    assert len(llm.requests) == 3  # decide, write, one repair; no answer
    assert "gocode: code error: no working program after 1 repair; last: the program failed (compile)" in got.stderr
    assert "Traceback" not in got.stderr and got.stdout == ""


def test_a_reply_without_code_is_asked_again_then_given_up(tmp_path: Path) -> None:
    turns = [Turn("TOOLS: weather"), Turn("You could call getWeather."), Turn("Just call getWeather with the city.")]
    with ScriptedLLM(turns) as llm:
        config = write_config(tmp_path / "gocode.json", "anthropic", llm.anthropic_url)
        got = gocode_ask(config, PROMPT, "--max-repairs", "1")
    assert got.returncode == 1
    assert "no working program after 1 repair; last: the model's reply had no Go code block" in got.stderr
    assert "Your reply had no ```go block" in last_user(llm.requests[2])


def test_code_that_loops_forever_is_stopped_by_the_timeout(tmp_path: Path) -> None:
    turns = [Turn("TOOLS: weather"), Turn(go_block("for {\n}\n"))]
    with ScriptedLLM(turns) as llm:
        config = write_config(tmp_path / "gocode.json", "openai", llm.openai_url, timeout=2)
        got = gocode_ask(config, PROMPT, "--max-repairs", "0")
    assert got.returncode == 1
    assert "no working program (no repairs allowed); last: the program failed (timeout)" in got.stderr


def test_a_tool_that_does_not_exist_is_a_clear_failure_and_nothing_reaches_a_shell(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    turns = [Turn(f"TOOLS: send an email to bob $(touch {marker}) `touch {marker}`")]
    with ScriptedLLM(turns) as llm:
        config = write_config(tmp_path / "gocode.json", "openai", llm.openai_url)
        got = gocode_ask(config, "Email bob that I'm late")
    assert got.returncode == 1
    assert "gocode: tools error: no tool for this request: no tool matches 'send an email to bob" in got.stderr
    assert not marker.exists()


def test_the_model_declining_ends_the_run(tmp_path: Path) -> None:
    turns = [Turn("TOOLS: weather forecast for next week"), Turn("CANNOT: these tools only give the current weather")]
    with ScriptedLLM(turns) as llm:
        config = parse_config(
            write_config(tmp_path / "gocode.json", "openai", llm.openai_url).read_text(), "gocode.json"
        )

        async def main() -> tuple:
            async with Orchestrator(config, "m", env={"TEST_KEY": KEY}) as o:
                return await o.ask("Weather next week?")

        t = anyio.run(main)
    assert (t.ok, t.phase) == (False, "cannot")
    assert t.error == "the model says the tools cannot do this: these tools only give the current weather"


def test_a_malformed_reply_is_a_clear_model_error(tmp_path: Path) -> None:
    with ScriptedLLM([Turn(raw='{"id": "x", "object": "chat.completion", "choices": []}')]) as llm:
        config = write_config(tmp_path / "gocode.json", "openai", llm.openai_url)
        got = gocode_ask(config, PROMPT)
    assert got.returncode == 2
    assert "gocode: model error: model 'm': the reply could not be read: no choices[0].message in it" in got.stderr
    assert "Traceback" not in got.stderr


def test_a_missing_key_names_the_variable_and_sends_nothing(tmp_path: Path) -> None:
    with ScriptedLLM([]) as llm:
        config = write_config(tmp_path / "gocode.json", "anthropic", llm.anthropic_url)
        got = gocode_ask(config, PROMPT, key=None)
    assert got.returncode == 2
    assert got.stderr.strip() == (
        "gocode: model error: the API key of model 'm' is missing: set the environment variable TEST_KEY"
    )
    assert llm.requests == []
    # --json promises a document on stdout: a failure before the first step is one too.
    with ScriptedLLM([]) as llm:
        got = gocode_ask(config, PROMPT, "--json", "--model", "m", key=None)
    assert got.returncode == 2 and llm.requests == []
    t = json.loads(got.stdout)
    assert (t["ok"], t["phase"], t["answer"], t["steps"], t["model"]["ref"]) == (False, "model", None, [], "m")
    assert t["error"] == "the API key of model 'm' is missing: set the environment variable TEST_KEY"


def test_an_unreachable_endpoint_is_retried_then_reported(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    config = write_config(tmp_path / "gocode.json", "openai", url)
    got = gocode_ask(config, PROMPT, "--json")
    assert got.returncode == 2
    assert f"gocode: model error: cannot reach model 'm' (openai at {url}) after 4 attempts" in got.stderr
    assert "Traceback" not in got.stderr and KEY not in got.stderr
    # The transcript counts the attempts of the request that failed, and the waits between them.
    t = json.loads(got.stdout)
    (decide,) = t["steps"]
    assert (t["phase"], decide["ok"], decide["attempts"], len(decide["retry_waits_s"])) == ("model", False, 4, 3)


# --- a program held for approval ----------------------------------------------------------------

NOTES = {"command": sys.executable, "args": [str(ROOT / "tests" / "servers" / "notes_server.py")]}
DELETE_NOTE = (
    'n := must(readNote(ctx, ReadNoteInput{Name: "hello"}))\nfmt.Println(n.Result)\n'
    'must(deleteNote(ctx, DeleteNoteInput{Name: "hello"}))\nfmt.Println("deleted")\n'
)


def notes_config(path: Path, base_url: str) -> Path:
    model = {"ref": "m", "type": "openai", "id": "test-model", "base_url": base_url, "api_key_env": "TEST_KEY"}
    mode = {"approval": {"ask": ["notes.delete_note"]}}
    doc = {"mcpServers": {"notes": NOTES}, "models": [model], "defaults": {"codeMode": mode}}
    path.write_text(json.dumps(doc))
    return path


def notes_script(rec: Recorded) -> Turn:
    if "TOOLS:" in rec.system:
        return Turn("TOOLS: read a note; delete a note")
    if "Run Go" in rec.system:
        return Turn(go_block(DELETE_NOTE))
    return Turn("The note said hello and is deleted.")


def test_a_held_program_is_a_question_not_a_repair(tmp_path: Path) -> None:
    """Without a terminal or --approve (or with an --approve naming other tools), the held
    program is refused and the prompt ends: no repair is asked for, exit 1, and stderr says how
    to approve. --approve naming the tool (or all) runs it."""
    for flags in ((), ("--approve", "notes.read_note")):
        with ScriptedLLM(notes_script) as llm:
            config = notes_config(tmp_path / "gocode.json", llm.openai_url)
            got = gocode_ask(config, "Read the note hello, then delete it", "--json", *flags)
        assert got.returncode == 1, got.stderr
        assert len(llm.requests) == 2  # decide, write: the held program is not sent back to be "fixed"
        t = json.loads(got.stdout)
        assert (t["phase"], t["repairs"], t["steps"][-1]["run"]["phase"]) == ("approval", 0, "approval")
        assert "need approval (notes.delete_note)" in t["error"], t["error"]
        assert "gocode: approval error: " in got.stderr and "--approve" in got.stderr
        assert "run gocode ask on a terminal" in got.stderr
    assert "--approve does not name notes.delete_note" in t["error"]
    for approve in ("notes.delete_note", "all"):
        with ScriptedLLM(notes_script) as llm:
            config = notes_config(tmp_path / "gocode.json", llm.openai_url)
            got = gocode_ask(config, "Read the note hello, then delete it", "--approve", approve)
        assert (got.returncode, got.stdout) == (0, "The note said hello and is deleted.\n"), got.stderr
        assert "Hello, world.\ndeleted" in last_user(llm.requests[-1])
    got = gocode_ask(config, "x", "--approve", "notes.*")
    assert got.returncode == 2 and "--approve takes `all` or comma-separated server.tool names" in got.stderr


def test_on_a_terminal_the_person_is_asked_and_no_means_stop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.test_approvals import on_a_terminal

    monkeypatch.setenv("TEST_KEY", KEY)
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    for answer, status in ((b"y\n", 0), (b"\n", 1)):
        with ScriptedLLM(notes_script) as llm:
            config = notes_config(tmp_path / "gocode.json", llm.openai_url)
            argv = [sys.executable, "-m", "gocode.cli", "ask", "-c", str(config), "Read the note hello, then delete it"]
            got, seen = on_a_terminal(argv, answer)
        assert got == status, seen
        assert "It can call tools that need approval: notes.delete_note" in seen and "Run it? [y/N]" in seen, seen
        if status == 0:
            assert "\nThe note said hello and is deleted.\n" in seen, seen
            assert len(llm.requests) == 3
        else:
            assert "approval error" in seen and "it was not approved" in seen, seen
            assert "--approve" not in seen and "Hello, world." not in seen  # nothing ran
            assert len(llm.requests) == 2
