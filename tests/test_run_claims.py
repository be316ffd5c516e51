"""Every run gives back what it claimed, on every way it can end.

A sandboxed run claims a run user (a flock on a file in the uid-claim directory), a pids
cgroup, a run directory (the program's copy and its scratch), a token on the loopback endpoint
and processes. These tests count each of them from outside before and after real runs that
end every way a run can: finished, failed to compile, failed at run time, timed out, a step
pass that ends pending (the program is stopped while it waits), a caller cancelled mid-run,
an error after the program ended, and a client that hangs up mid-call on ``gocode serve``
over HTTP. A cancelled run's release used to be an ``await`` in a ``finally`` of a cancelled
scope, which raises again at once: its user and cgroup were never given back.
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import shutil
import sys
import tempfile
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from gocode import Toolbox
from gocode.compile import golink
from gocode.run import launching, runner
from gocode.run.cgroups import find_base
from gocode.run.sandbox import FAKE_NO_USERNS_ENV, decide, launcher_for
from tests.conftest import background, config_from, demo_stdio, free_port
from tests.test_build_timeout import slow_to_build

pytestmark = pytest.mark.go

GOCODE = str(Path(sys.executable).parent / "gocode")
TOKEN = "claims-test-token"
# A range of run users of these tests' own, away from the default one other gocode processes use.
UIDS = range(1879100000, 1879100032)
UID_RANGE = f"{UIDS.start}-{UIDS.stop - 1}"
SETTLE_S = 30.0  # a killed program's cgroup may take a moment to empty; nothing takes longer
SLEEPER = 'fmt.Println("started")\ntime.Sleep(10 * time.Minute)'
SEARCH = {
    "name": "web_search",
    "inputSchema": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
    "outputSchema": {"type": "object", "properties": {"hits": {"type": "array", "items": {"type": "string"}}}},
}
ASKS_CLIENT = (
    'r, err := webSearch(ctx, WebSearchInput{Query: "q"})\nif err != nil {\n\treturn err\n}\nfmt.Println(r.Hits)'
)


@dataclass(frozen=True)
class Claims:
    """What runs hold at one moment, counted from outside gocode."""

    uids: int  # run users claimed (flocks held in the claim directory)
    cgroups: int  # run cgroups below gocode's own
    run_dirs: int  # run directories and result files in the temporary directory
    programs: int  # processes running as a run user
    tokens: int = 0  # runs the loopback endpoint still accepts (in-process only)


def held_uid_claims(lock_dir: Path) -> int:
    """Claim files someone holds a flock on (a new open file description conflicts with
    every other, this process's own included)."""
    held = 0
    for path in lock_dir.glob("*") if lock_dir.is_dir() else []:
        fd = os.open(path, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            held += 1
        finally:
            os.close(fd)
    return held


def run_cgroups_of(pid: int) -> int:
    found = find_base()  # gocode's directory: gocode-<pid>-<start time>-<pid namespace>
    return len(list(found[0].glob(f"gocode-{pid}-*/run-*"))) if found else 0


def run_user_processes() -> int:
    count = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            status = Path(f"/proc/{entry}/status").read_text()
        except OSError:
            continue
        uid = next((int(line.split()[1]) for line in status.splitlines() if line.startswith("Uid:")), -1)
        state = next((line.split()[1] for line in status.splitlines() if line.startswith("State:")), "")
        if uid in UIDS and state != "Z":
            count += 1
    return count


def snapshot(lock_dir: Path, tmp: Path, pid: int, tokens: int = 0) -> Claims:
    run_dirs = len(list(tmp.glob("gocode-run-*"))) + len(list(tmp.glob("gocode-result-*")))
    return Claims(held_uid_claims(lock_dir), run_cgroups_of(pid), run_dirs, run_user_processes(), tokens)


async def settled(now: Callable[[], Claims], want: Claims) -> Claims:
    """The claims once they are back to ``want``, or as they are after SETTLE_S."""
    got = now()
    with anyio.move_on_after(SETTLE_S):
        while (got := now()) != want:
            await anyio.sleep(0.05)
    return got


async def running(now: Callable[[], Claims]) -> Claims:
    """The claims once a program runs as a run user (it holds its claims then)."""
    with anyio.fail_after(60):
        while (got := now()).programs == 0:
            await anyio.sleep(0.02)
    return got


def sandboxed(extra: dict[str, Any] | None = None) -> dict[str, Any]:
    code_mode = {"enabled": True, "sandbox": "on", "timeout": 300, "limits": {"user": "nobody", "uidRange": UID_RANGE}}
    return {"codeMode": code_mode | (extra or {})}


@pytest.fixture
def places(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, module_cache) -> Iterator[tuple[Path, Path]]:
    """A claim directory and a temporary directory of this test's own (counted, not shared)."""
    if os.geteuid() != 0:
        pytest.skip("run users are handed out only by a root controller")
    monkeypatch.delenv(FAKE_NO_USERNS_ENV, raising=False)
    if problem := decide("on", anyio.run(launcher_for(module_cache).probe)).error:
        pytest.fail(f"this host cannot run the sandbox ({problem})")
    lock_dir = tmp_path / "uids"
    # Run users must reach their run directory: not below pytest's own (0700) directory.
    tmp = Path(tempfile.mkdtemp(prefix="gocode-claims-test-", dir="/tmp"))
    tmp.chmod(0o755)
    monkeypatch.setenv("GOCODE_UID_LOCKS", str(lock_dir))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    yield lock_dir, tmp
    shutil.rmtree(tmp, ignore_errors=True)


def in_process(box: Toolbox, lock_dir: Path, tmp: Path) -> Callable[[], Claims]:
    loopback = box._loopback
    assert loopback is not None
    return lambda: snapshot(lock_dir, tmp, os.getpid(), loopback.open_runs)


NOTHING = Claims(0, 0, 0, 0, 0)


def check_every_exit(module_cache, places, ends: Callable[[Toolbox], Any]) -> None:
    lock_dir, tmp = places
    config = config_from({"weather": demo_stdio()}, defaults=sandboxed())

    async def go() -> None:
        async with Toolbox(config, module_cache=module_cache) as box:
            now = in_process(box, lock_dir, tmp)
            warm = await box.execute('fmt.Println("warm")')  # builds the launcher, starts the server
            assert warm.ok and warm.sandbox is not None and warm.sandbox["tier"], warm.error_text()
            assert await settled(now, NOTHING) == NOTHING
            await ends(box)
            assert await settled(now, NOTHING) == NOTHING

    anyio.run(go)


# --- in process: every way a run ends ----------------------------------------------------------


def test_a_finished_run_gives_everything_back(module_cache, places):
    async def ends(box: Toolbox) -> None:
        got = await box.execute('fmt.Println("hello")')
        assert got.ok and got.output == "hello\n", got.error_text()

    check_every_exit(module_cache, places, ends)


def test_a_compile_failure_gives_everything_back(module_cache, places):
    async def ends(box: Toolbox) -> None:
        got = await box.execute("undefinedName()")
        assert got.phase == "compile", got.error_text()

    check_every_exit(module_cache, places, ends)


def test_a_runtime_failure_gives_everything_back(module_cache, places):
    async def ends(box: Toolbox) -> None:
        got = await box.execute('fmt.Println("partial")\nreturn errors.New("boom")')
        assert got.phase == "runtime" and "boom" in got.stderr, got.error_text()

    check_every_exit(module_cache, places, ends)


def test_a_timed_out_run_gives_everything_back(module_cache, places):
    async def ends(box: Toolbox) -> None:
        got = await box.execute(SLEEPER, timeout=2)
        assert got.phase == "timeout", got.error_text()

    check_every_exit(module_cache, places, ends)


def test_a_step_pass_ending_pending_gives_everything_back(module_cache, places):
    async def ends(box: Toolbox) -> None:
        first = await box.step(ASKS_CLIENT, [SEARCH])
        assert first.status == "pending" and first.run is None, first.as_json()
        done = await box.step(
            ASKS_CLIENT, [SEARCH], first.continuation, [{"id": first.calls[0]["id"], "result": {"hits": ["a"]}}]
        )
        assert done.status == "done" and done.run is not None and done.run.output == "[a]\n", done.as_json()

    check_every_exit(module_cache, places, ends)


def test_a_cancelled_run_gives_everything_back(module_cache, places):
    lock_dir, tmp = places

    async def ends(box: Toolbox) -> None:
        now = in_process(box, lock_dir, tmp)
        async with anyio.create_task_group() as tg:
            tg.start_soon(box.execute, SLEEPER, 300)
            during = await running(now)
            assert during.uids == 1 and during.run_dirs == 1 and during.tokens == 1, during
            tg.cancel_scope.cancel()

    check_every_exit(module_cache, places, ends)


def early_launches(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The pids of launchers started early (while a program links), as they start."""
    started: list[int] = []
    real = launching.launch_waiting

    async def counted(confinement: Any) -> runner.Launched:
        got = await real(confinement)
        started.append(got.proc.pid)
        return got

    monkeypatch.setattr(launching, "launch_waiting", counted)
    return started


def test_a_run_whose_sandbox_was_set_up_while_it_linked_gives_everything_back(module_cache, places, monkeypatch):
    async def ends(box: Toolbox) -> None:
        started = early_launches(monkeypatch)
        fresh = uuid.uuid4().hex  # never built before: not a cached binary
        got = await box.execute(f'fmt.Println("linked meanwhile {fresh}")')
        assert got.ok and got.output == f"linked meanwhile {fresh}\n", got.error_text()
        assert len(started) == 1 and got.sandbox is not None and got.sandbox["tier"], got.sandbox
        # The same code again is a cached binary: nothing to link, nothing started early.
        again = await box.execute(f'fmt.Println("linked meanwhile {fresh}")')
        assert again.ok and again.cached_binary and len(started) == 1
        # Code the type check refuses is answered before anything is started.
        bad = await box.execute("undefinedName()")
        assert bad.phase == "compile" and len(started) == 1

    check_every_exit(module_cache, places, ends)


def test_a_compile_failure_found_while_the_sandbox_was_set_up_gives_everything_back(module_cache, places, monkeypatch):
    async def ends(box: Toolbox) -> None:
        started = early_launches(monkeypatch)
        # It type-checks (a body may come from assembly); the compiler refuses it.
        got = await box.execute(f'func later()\nfunc init() {{ later() }}\nfmt.Println("never {uuid.uuid4().hex}")')
        assert got.phase == "compile" and "missing function body" in got.stderr, got.error_text()
        assert len(started) == 1 and got.output == ""

    check_every_exit(module_cache, places, ends)


def test_a_run_cancelled_while_it_links_gives_everything_back(module_cache, places, monkeypatch):
    lock_dir, tmp = places

    async def ends(box: Toolbox) -> None:
        now = in_process(box, lock_dir, tmp)
        started = early_launches(monkeypatch)
        up = anyio.Event()
        real_build = golink.build

        async def slow_link(*args: Any, **kwargs: Any) -> tuple[bool, str]:
            with anyio.fail_after(60):
                while not started:  # the early launcher is up: the link never ends
                    await anyio.sleep(0.01)
            up.set()
            await anyio.sleep_forever()
            return await real_build(*args, **kwargs)

        monkeypatch.setattr(golink, "build", slow_link)
        async with anyio.create_task_group() as tg:
            tg.start_soon(box.execute, f'fmt.Println("never run {uuid.uuid4().hex}")', 300)
            await up.wait()
            during = await running(now)  # the waiting launcher runs as the run's user
            assert during.uids == 1 and during.run_dirs == 1 and during.cgroups == 1, during
            tg.cancel_scope.cancel()

    check_every_exit(module_cache, places, ends)


def test_a_run_cancelled_twice_while_its_sandbox_is_set_up_gives_everything_back(module_cache, places, monkeypatch):
    """Plain asyncio cancellations pass an anyio shield: a second one used to end the wait for
    the early set-up, which then claimed a user, a cgroup and a directory and started a launcher
    nobody would ever tell to go or end."""
    lock_dir, tmp = places

    async def ends(box: Toolbox) -> None:
        now = in_process(box, lock_dir, tmp)
        claimed, go_on, discarding = asyncio.Event(), asyncio.Event(), asyncio.Event()
        real_launch, real_discard = launching.launch_waiting, launching.Launching.discard

        async def held(confinement: Any) -> runner.Launched:
            claimed.set()  # the run's user, cgroup and directory are claimed; the launcher is next
            await go_on.wait()
            return await real_launch(confinement)

        async def watched(self: launching.Launching) -> None:
            discarding.set()
            await real_discard(self)

        monkeypatch.setattr(launching, "launch_waiting", held)
        monkeypatch.setattr(launching.Launching, "discard", watched)
        call = asyncio.ensure_future(box.execute(f'fmt.Println("never run {uuid.uuid4().hex}")', 300))
        async with asyncio.timeout(60):
            await claimed.wait()
            call.cancel()  # the call is cancelled while it builds (or waits for its set-up) ...
            await discarding.wait()
            call.cancel()  # ... and again while the run is discarded
            go_on.set()  # the set-up goes on: it starts the launcher
            with pytest.raises(asyncio.CancelledError):
                await call
        assert now().uids == 0 and now().run_dirs == 0, now()  # given back before the call ended
        monkeypatch.undo()

    check_every_exit(module_cache, places, ends)


def test_a_build_outlasting_the_timeout_gives_everything_back(module_cache, places, monkeypatch):
    async def ends(box: Toolbox) -> None:
        started = early_launches(monkeypatch)
        got = await box.execute(slow_to_build(40_000)[0], timeout=6)
        assert got.phase == "timeout" and "build" in got.stderr and "within 6 s" in got.stderr, got.error_text()
        assert got.output == "" and len(started) == 1  # set up while it compiled, then discarded

    check_every_exit(module_cache, places, ends)


def test_an_error_after_the_program_ended_gives_everything_back(module_cache, places, monkeypatch):
    def broken(stderr: str) -> str:
        raise RuntimeError("post-processing failed")

    async def ends(box: Toolbox) -> None:
        monkeypatch.setattr(runner, "trim_traceback", broken)
        with pytest.raises(RuntimeError, match="post-processing failed"):
            await box.execute('fmt.Println("hello")')
        monkeypatch.undo()

    check_every_exit(module_cache, places, ends)


# --- gocode serve over HTTP: a client that hangs up mid-call ----------------------------------


def test_a_client_hanging_up_on_serve_over_http_gives_everything_back(module_cache, places, tmp_path):
    lock_dir, tmp = places
    config = tmp_path / "gocode.yaml"
    config.write_text(yaml.safe_dump({"mcpServers": {"weather": demo_stdio()}, "defaults": sandboxed()}))
    port = free_port()
    cmd = [GOCODE, "serve", "-c", str(config), "--transport", "http", "--port", str(port)]
    env = {"GOCODE_TOKEN": TOKEN, "GOCODE_UID_LOCKS": str(lock_dir), "TMPDIR": str(tmp)}
    url = f"http://127.0.0.1:{port}/mcp"

    def client() -> Client:
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"})
        return Client(streamable_http_client(url, http_client=http), mode="legacy")

    with background(cmd, port, env=env) as serve:
        now = lambda: snapshot(lock_dir, tmp, serve.pid)  # noqa: E731

        async def go() -> None:
            async with client() as c:
                warm = await c.call_tool("execute_go_code", {"code": 'fmt.Println("warm")'})
                assert not warm.is_error, json.dumps(warm.model_dump(mode="json"))[:2000]
            assert await settled(now, NOTHING) == NOTHING
            for _ in range(3):  # each hang-up would leak one of each
                async with client() as c, anyio.create_task_group() as tg:
                    tg.start_soon(c.call_tool, "execute_go_code", {"code": SLEEPER})
                    during = await running(now)
                    assert during.uids == 1 and during.cgroups in (0, 1) and during.run_dirs == 1, during
                    tg.cancel_scope.cancel()  # the client hangs up mid-call
                assert await settled(now, NOTHING) == NOTHING

        anyio.run(go)
