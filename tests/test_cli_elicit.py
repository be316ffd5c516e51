"""A server's elicitation answered by the command line: the person at a real pseudo-terminal
(the child's controlling terminal, so ``/dev/tty`` is the pty) types into the form, and a
script's ``--elicit`` choice answers unasked; the server (tests/servers/form_server.py) answers
with exactly what it received. Also the direct program's channel against a hostile program."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import select
import signal
import socket
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest

from gocode.mcp.asker import CommandLine
from gocode.mcp.backchannel import MAX_REQUESTS
from gocode.mcp.elicitchannel import ENV, MAX_LINE, TOKEN_ENV, VIA, elicit_channel

ROOT = Path(__file__).resolve().parent.parent
GOCODE = str(Path(sys.executable).parent / "gocode")
SERVER = ROOT / "tests" / "servers" / "form_server.py"
WAIT_S = 60.0


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "gocode.json"
    server = {"command": sys.executable, "args": [str(SERVER)]}
    path.write_text(
        json.dumps({"mcpServers": {"form": server}, "defaults": {"codeMode": {"sandbox": "off", "timeout": 60}}})
    )
    return path


@pytest.fixture(autouse=True)
def _no_child_left() -> Iterator[None]:
    """A test that fails while a child waits at its prompt does not leave the child behind."""
    yield
    while STARTED:
        proc = STARTED.pop()
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


STARTED: list[subprocess.Popen[bytes]] = []


def _env() -> dict[str, str]:
    # PYTHONFAULTHANDLER: a child that hangs is sent SIGABRT and prints every thread's stack.
    return {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONFAULTHANDLER": "1"}


class Terminal:
    """A child run with a pty as its controlling terminal (stdin is /dev/null: only /dev/tty is a terminal)."""

    def __init__(self, *args: str, stdin: str = "") -> None:
        self.fd, slave = os.openpty()

        def controlling() -> None:
            os.setsid()
            fcntl.ioctl(slave, termios.TIOCSCTTY, 0)

        self.proc = subprocess.Popen(
            [GOCODE, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env=_env(), preexec_fn=controlling, pass_fds=(slave,),
        )  # fmt: skip
        os.close(slave)
        STARTED.append(self.proc)
        assert self.proc.stdin is not None
        self.proc.stdin.write(stdin.encode())  # what stdin carries (the code of exec -): never the answers
        self.proc.stdin.close()
        self.seen = b""
        self.pos = 0

    def expect(self, text: str) -> str:
        """Read the terminal until ``text`` appears after what was expected last; what came before it."""
        want = text.encode()
        deadline = time.monotonic() + WAIT_S
        while (at := self.seen.find(want, self.pos)) < 0:
            left = deadline - time.monotonic()
            assert left > 0, f"{text!r} never appeared; the terminal showed {self.seen[self.pos :]!r}"
            ready, _, _ = select.select([self.fd], [], [], min(left, 1.0))
            if ready:
                try:
                    self.seen += os.read(self.fd, 65536)
                except OSError:  # the child closed the terminal
                    raise AssertionError(
                        f"{text!r} never appeared; the terminal showed {self.seen[self.pos :]!r}"
                    ) from None
        before = self.seen[self.pos : at].decode("utf-8", "replace")
        self.pos = at + len(want)
        return before

    def type(self, line: str) -> None:
        os.write(self.fd, line.encode() + b"\n")

    def finish(self) -> tuple[int, str, str]:
        self.proc.stdin = None  # written and closed at the start
        try:
            out, err = self.proc.communicate(timeout=WAIT_S)
        except subprocess.TimeoutExpired:
            raise AssertionError(self._stuck()) from None
        os.close(self.fd)
        return self.proc.returncode, out.decode(), err.decode()

    def _stuck(self) -> str:
        """What a child that did not end was doing: the terminal since the last expected text,
        and every thread's stack (the faulthandler's, on SIGABRT)."""
        while select.select([self.fd], [], [], 0.2)[0]:
            try:
                self.seen += os.read(self.fd, 65536)
            except OSError:
                break
        self.proc.send_signal(signal.SIGABRT)
        out, err = self.proc.communicate(timeout=WAIT_S)
        return (
            f"gocode did not end within {WAIT_S:.0f} s; the terminal showed after the last expected text "
            f"{self.seen[self.pos :]!r}\nstdout {out.decode()!r}\nstderr:\n{err.decode()}"
        )


def _answer(stdout: str) -> dict[str, Any]:
    return json.loads(stdout.strip().removeprefix("map[result:").removesuffix("]"))


def _fill_profile(t: Terminal, last: str) -> None:
    """Each field as it comes (a direct program's runtime sends the fields in name order): a
    required one left empty, wrong values, then right ones; Enter for a default."""
    t.expect("Tell us about you")
    for _ in range(5):
        asked = t.expect("] > ")
        if "Your name — as on your badge" in asked:
            t.type("")  # required, no default
            t.expect("required: type a value")
            t.expect("] > ")  # asked again
            t.type("Ada")
        elif "Enter for 30" in asked:
            t.type("200")
            t.expect("at most 150; try again")
            t.expect("] > ")  # asked again
            t.type("41")
        elif "3. blue" in asked:
            assert "Enter for green" in asked
            t.type("")  # the default
        elif "email" in asked:
            t.type("nope")
            t.expect("not an email address; try again")
            t.expect("] > ")  # asked again
            t.type("ada@example.com")
        else:
            assert "Enter for yes" in asked
            t.type("no")
    t.expect("Send? [a]ccept / [d]ecline / [c]ancel: ")
    t.type(last)


def test_a_form_is_filled_in_on_the_terminal(config: Path):
    t = Terminal("call", "-c", str(config), "form", "profile")
    _fill_profile(t, "a")
    code, out, err = t.finish()
    assert code == 0, err
    assert json.loads(out) == {
        "action": "accept",
        "content": {"name": "Ada", "age": 41, "color": "green", "email": "ada@example.com", "subscribed": False},
    }
    assert "gocode: form asked 'Tell us about you': accept [asked]" in err


def test_declined_on_the_terminal(config: Path):
    t = Terminal("call", "-c", str(config), "form", "profile")
    _fill_profile(t, "d")
    code, out, err = t.finish()
    assert code == 0, err
    assert json.loads(out) == {"action": "decline", "content": None}
    assert "'Tell us about you': decline [asked]" in err


def test_cancelled_by_ending_the_input(config: Path):
    t = Terminal("call", "-c", str(config), "form", "profile")
    t.expect("] > ")
    os.write(t.fd, b"\x04")  # Ctrl-D
    code, out, err = t.finish()
    assert code == 0, err
    assert json.loads(out) == {"action": "cancel", "content": None}
    assert ": cancel [asked]" in err


def test_a_hostile_server_cannot_drive_the_terminal(config: Path):
    t = Terminal("call", "-c", str(config), "form", "hostile")
    shown = t.expect("] > ")  # the field's own prompt: the message and the field came before it
    t.type("typed")
    t.expect("Send? [a]ccept / [d]ecline / [c]ancel: ")
    t.type("a")
    code, out, err = t.finish()
    assert code == 0, err
    assert json.loads(out) == {"action": "accept", "content": {"code": "typed"}}
    assert b"\x1b" not in t.seen and b"\x07" not in t.seen  # no escape sequence reached the terminal
    # The message's fake prompt is drawn behind the bar, never as a line of gocode's own.
    assert "  │ > Send? [a]ccept / [d]ecline / [c]ancel: " in shown
    assert "\n> Send?" not in shown
    assert "\x1b" not in err


def test_a_link_is_shown_and_agreed_to_never_opened(config: Path):
    t = Terminal("call", "-c", str(config), "form", "link")
    t.expect("Sign the form")
    t.expect("URL: https://example.com/consent")
    t.expect("gocode does not open it")
    t.type("y")
    code, out, err = t.finish()
    assert code == 0, err
    assert json.loads(out) == {"action": "accept", "content": None}
    assert "gocode: form asked 'Sign the form': accept [asked]" in err


def _call(config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # A new session: no controlling terminal, as under a script's scheduler.
    return subprocess.run(
        [GOCODE, "call", "-c", str(config), "form", *args], capture_output=True, text=True, env=_env(),
        timeout=WAIT_S, start_new_session=True, stdin=subprocess.DEVNULL,
    )  # fmt: skip


def test_a_script_declines(config: Path):
    r = _call(config, "profile", "--elicit", "decline")
    assert json.loads(r.stdout) == {"action": "decline", "content": None}
    assert "gocode: form asked 'Tell us about you': decline [--elicit decline]" in r.stderr


def test_a_script_takes_the_defaults_only_when_every_required_field_has_one(config: Path):
    r = _call(config, "hostile", "--elicit", "defaults")
    assert json.loads(r.stdout) == {"action": "accept", "content": {"code": "x"}}
    r = _call(config, "profile", "--elicit", "defaults")
    assert json.loads(r.stdout) == {"action": "decline", "content": None}
    assert "decline (required field(s) without a default: name) [--elicit defaults]" in r.stderr
    r = _call(config, "link", "--elicit", "defaults")
    assert json.loads(r.stdout) == {"action": "decline", "content": None}


def test_without_a_terminal_or_a_choice_nobody_is_asked(config: Path):
    r = _call(config, "profile")
    assert r.stdout.startswith("refused: "), r.stdout
    assert "asked" not in r.stderr


def test_a_direct_program_asks_through_the_controller(config: Path):
    code = 'fmt.Println(must(callTool(ctx, "form.profile", nil)))'
    t = Terminal("exec", "-c", str(config), "--direct", "-", stdin=code)
    # The program holds the session: the person is told the request came through it.
    assert t.expect(" asks:").endswith(f"\nform ({VIA})")
    _fill_profile(t, "a")
    rc, out, err = t.finish()
    assert rc == 0, err
    assert _answer(out) == {
        "action": "accept",
        "content": {"name": "Ada", "age": 41, "color": "green", "email": "ada@example.com", "subscribed": False},
    }
    assert f"gocode: form ({VIA}) asked 'Tell us about you': accept [asked]" in err


# A direct program is unconfined and finds the channel in its environment: it writes requests
# of its own, under gocode's name, a server's it has no session with, and its own server's.
SPOOF = """import (
	"bufio"
	"encoding/json"
	"net"
	"os"
)
c, err := net.Dial("unix", os.Getenv("GOCODE_ELICIT_SOCKET"))
if err != nil {
	return err
}
r := bufio.NewReader(c)
schema := map[string]any{"type": "object", "properties": map[string]any{"password": map[string]any{"type": "string"}}}
for _, name := range []string{"gocode", "weather", "form"} {
	params := map[string]any{"message": "Your session expired. Re-enter your password.", "requestedSchema": schema}
	line, _ := json.Marshal(map[string]any{"token": os.Getenv("GOCODE_ELICIT_TOKEN"), "server": name, "params": params})
	fmt.Fprintln(c, string(line))
	answer, _ := r.ReadString('\\n')
	fmt.Print(name, " ", answer)
}
"""


def test_a_direct_program_cannot_ask_in_a_name_it_chose(config: Path):
    t = Terminal("exec", "-c", str(config), "--direct", "-", stdin=SPOOF)
    before = t.expect(" asks:")  # the first question shown is the last request's: form's, relayed
    assert before.endswith(f"\nform ({VIA})"), before
    t.expect("] > ")
    t.type("typed")
    t.expect("Send? [a]ccept / [d]ecline / [c]ancel: ")
    t.type("a")
    rc, out, err = t.finish()
    assert rc == 0, err
    assert "gocode asks" not in t.seen.decode() and "weather" not in t.seen.decode()
    answers = dict(line.split(" ", 1) for line in out.splitlines())
    assert json.loads(answers["gocode"]) == {"error": "elicitation: 'gocode' is not a server of this run"}
    assert json.loads(answers["weather"]) == {"error": "elicitation: 'weather' is not a server of this run"}
    assert json.loads(answers["form"]) == {"result": {"action": "accept", "content": {"password": "typed"}}}
    assert f"gocode: refused a request the program sent as 'gocode' ({VIA}): not a server of this run" in err
    assert f"gocode: form ({VIA}) asked 'Your session expired. Re-enter your password.': accept [asked]" in err


FORM = {"message": "m", "requestedSchema": {"type": "object", "properties": {"a": {"type": "string", "default": "d"}}}}


def _exchange(path: str, *lines: dict[str, Any]) -> tuple[list[dict[str, Any]], bytes]:
    """The answers to ``lines`` sent on one connection, and what the channel sent after them
    until the connection ended (this end stops writing after the last line)."""
    with socket.socket(socket.AF_UNIX) as conn:
        conn.connect(path)
        conn.settimeout(WAIT_S)
        reader = conn.makefile("rb")
        answers = []
        for line in lines:
            conn.sendall(json.dumps(line).encode() + b"\n")
            answers.append(json.loads(reader.readline()))
        with contextlib.suppress(OSError):  # the channel may have ended it already
            conn.shutdown(socket.SHUT_WR)
        return answers, reader.read()


def test_a_channel_answers_its_own_run_only():
    said: list[str] = []

    async def go() -> None:
        asker = CommandLine("defaults", said.append)
        async with elicit_channel(asker, ["s"]) as mine, elicit_channel(asker, ["s"]) as other:
            path, token = mine[ENV], mine[TOKEN_ENV]
            assert token and token != other[TOKEN_ENV]

            def client() -> None:
                ok = {"token": token, "server": "s", "params": FORM}
                for stranger in ({**ok, "token": other[TOKEN_ENV]}, {k: v for k, v in ok.items() if k != "token"}):
                    # Another run's program that found this socket: refused, its connection ended.
                    answers, after = _exchange(path, ok, stranger)
                    assert answers[0] == {"result": {"action": "accept", "content": {"a": "d"}}}
                    assert answers[1] == {"error": "not this run's elicitation channel"}
                    assert after == b"", after
                # Its own program asks only as one of its servers, never as gocode.
                for name in ("gocode", "GoCode", "t", "s\x1b[2J", 7):
                    answers, _ = _exchange(path, {**ok, "server": name}, {**ok, "server": name})
                    assert "error" in answers[0] and "result" not in answers[0], (name, answers)

            await anyio.to_thread.run_sync(client)
        async with elicit_channel(asker, ["gocode"]) as env:  # gocode's own name, even configured
            answers, _ = await anyio.to_thread.run_sync(
                _exchange, env[ENV], {"token": env[TOKEN_ENV], "server": "gocode", "params": FORM}
            )
            assert answers == [{"error": "elicitation: 'gocode' is not a server of this run"}]

    anyio.run(go)
    assert said[0] == f"gocode: s ({VIA}) asked 'm': accept [--elicit defaults]"
    assert sum("asked" in s for s in said) == 2  # one a connection: nothing the strangers sent
    assert all("\x1b" not in s for s in said)
    assert f"gocode: refused a request the program sent as 'gocode' ({VIA}): not a server of this run" in said


def test_the_channel_holds_against_a_hostile_program():
    said: list[str] = []

    async def go() -> None:
        async with elicit_channel(CommandLine("defaults", said.append), ["s\x1b[2J"]) as env:
            path, token = env[ENV], env[TOKEN_ENV]
            assert oct(os.stat(os.path.dirname(path)).st_mode & 0o777) == "0o700"

            def client() -> tuple[bytes, list[dict[str, Any]]]:
                with socket.socket(socket.AF_UNIX) as big:  # a line over the bound ends its connection
                    big.connect(path)
                    big.settimeout(WAIT_S)
                    try:
                        big.sendall(b"x" * (MAX_LINE + 10))
                        ended = big.recv(10)
                    except (ConnectionResetError, BrokenPipeError):  # closed with our bytes unread
                        ended = b""
                answers = []
                with socket.socket(socket.AF_UNIX) as flood:  # the channel still serves, up to its budget
                    flood.connect(path)
                    reader = flood.makefile("rb")
                    for _ in range(MAX_REQUESTS + 8):
                        line = {"token": token, "server": "s\x1b[2J", "params": FORM}
                        flood.sendall(json.dumps(line).encode() + b"\n")
                        answers.append(json.loads(reader.readline()))
                    flood.sendall(json.dumps({"token": token, "server": 1}).encode() + b"\n")
                    answers.append(json.loads(reader.readline()))
                return ended, answers

            ended, answers = await anyio.to_thread.run_sync(client)
            assert ended == b""
            assert answers[:MAX_REQUESTS] == [{"result": {"action": "accept", "content": {"a": "d"}}}] * MAX_REQUESTS
            assert all("at most" in a["error"] for a in answers[MAX_REQUESTS:-1])
            assert answers[-1] == {"error": "malformed elicitation request"}
        assert not os.path.exists(path)  # closed with the run

    anyio.run(go)
    assert len(said) == MAX_REQUESTS and all("\x1b" not in s for s in said)


def test_a_question_is_withdrawn_when_nobody_answers():
    # The asker's worker thread stops reading when the request is cancelled (the call ended).
    from gocode.mcp import asker as asker_mod

    read, write = os.openpty()
    terminal = asker_mod.Terminal(write)
    person = CommandLine("ask", lambda _: None, terminal)
    params = types.ElicitRequestFormParams(message="m", requested_schema={"type": "object", "properties": {}})

    async def go() -> None:
        with anyio.move_on_after(0.5):
            await person.answer("s", params)

    start = time.monotonic()
    anyio.run(go)
    assert time.monotonic() - start < 5
    os.close(read)
    person.close()


@pytest.mark.fast
def test_a_closed_terminal_is_never_read_by_the_asker_again():
    # Closing waits for the worker to leave, so the descriptor's number, reused at once by
    # another terminal, is never read by it: the line typed there reaches that terminal's reader.
    from gocode.errors import AskStopped
    from gocode.mcp.askterminal import Terminal as Asking

    main, sub = os.openpty()
    terminal = Asking(sub)
    stop, got = threading.Event(), []

    def worker() -> None:
        with terminal.claimed():
            try:
                got.append(terminal.read_line(stop))
            except AskStopped:
                got.append(None)

    thread = threading.Thread(target=worker)
    thread.start()
    time.sleep(0.3)  # polling the terminal
    terminal.close()
    alive = thread.is_alive()
    new_main, new_sub = os.openpty()
    os.write(new_main, b"yes\n")
    ready, _, _ = select.select([new_sub], [], [], 5)
    line = os.read(new_sub, 100) if ready else b""
    thread.join(5)
    for fd in (main, new_main, new_sub):
        os.close(fd)
    assert (alive, got, line) == (False, [None], b"yes\n")


def test_a_pooled_programs_servers_ask_the_person(config: Path):
    code = 'fmt.Println(must(callTool(ctx, "form.link", nil)))'
    t = Terminal("exec", "-c", str(config), "-", stdin=code)
    t.expect("URL: https://example.com/consent")
    t.type("n")
    rc, out, err = t.finish()
    assert rc == 0, err
    assert _answer(out) == {"action": "decline", "content": None}
    assert "gocode: form asked 'Sign the form': decline [asked]" in err


def test_asking_without_a_terminal_is_a_usage_error(config: Path):
    r = _call(config, "profile", "--elicit", "ask")
    assert r.returncode == 2
    assert "--elicit ask needs a terminal" in r.stderr


def test_a_built_binary_answers_as_GOCODE_ELICIT_says(config: Path, tmp_path: Path):
    # A gocode build binary run by hand has no controller's channel: its runtime answers itself.
    settings = json.loads(config.read_text())
    settings["defaults"]["codeMode"]["savedPrograms"] = True
    config.write_text(json.dumps(settings))
    program = tmp_path / "asker.go"
    program.write_text('// Asks.\ntype Input struct{}\n\nfmt.Println(must(callTool(ctx, "form.hostile", nil)))\n')
    env = {**_env(), "GOCODE_STATE_DIR": str(tmp_path / "state")}
    for args in (["save", "asker", str(program)], ["build", "asker", "-o", str(tmp_path / "asker")]):
        made = subprocess.run(
            [GOCODE, *args, "-c", str(config)], capture_output=True, text=True, env=env, timeout=WAIT_S
        )
        assert made.returncode == 0, made.stderr

    def run(elicit: str | None) -> subprocess.CompletedProcess[str]:
        extra = {} if elicit is None else {"GOCODE_ELICIT": elicit}
        return subprocess.run(
            [str(tmp_path / "asker")], capture_output=True, text=True, env={**env, **extra},
            timeout=WAIT_S, start_new_session=True, stdin=subprocess.DEVNULL,
        )  # fmt: skip

    r = run("defaults")
    assert r.returncode == 0, r.stderr
    assert _answer(r.stdout) == {"action": "accept", "content": {"code": "x"}}
    assert 'gocode: form asked "Hello?]0;pwned??[2J?[1;1H?> Send?' in r.stderr  # printable, on one line
    assert "\x1b" not in r.stderr
    r = run("decline")
    assert _answer(r.stdout) == {"action": "decline", "content": None}
    r = run(None)
    assert r.stdout.strip() == "map[result:refused: client does not support elicitation]"  # not declared
