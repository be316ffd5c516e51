"""No process of a run outlives it, and no cgroup outlives the controller that made it.

Three ways things used to be left behind, each reproduced with real processes and real
cgroups (this host's cgroup v1 ``pids`` hierarchy, or a delegated v2 subtree):

- an unsandboxed program that starts a child in a session of its own (``setsid``): killing the
  run's process group missed it, and it lived on after the run;
- a controller that was SIGKILLed: its ``gocode-…`` cgroup, its run cgroups and the processes
  in them stayed for good (``atexit`` never ran); the next controller sweeps them at start, and
  leaves every live controller's alone;
- a run cancelled while its program was being started: asyncio killed the child (not its
  process group) and a second cancellation interrupted its wait, so the run returned, and gave
  back its claims, before the child was reaped, and the rest of its group lived on.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import anyio
import pytest

from gocode import Toolbox
from gocode.run.cgroups import FAKE_NO_CGROUP_ENV, RunCgroups, find_base
from gocode.run.runner import run_program
from tests.conftest import ROOT, config_from, demo_stdio, processes_with_env

pytestmark = pytest.mark.go

SETTLE_S = 30.0
# Starts `sleep` in a session of its own (out of the run's process group), marked for the test.
DETACHED = """cmd := exec.Command("sleep", "120")
cmd.Env = append(os.Environ(), "{marker}=1")
cmd.SysProcAttr = &syscall.SysProcAttr{{Setsid: true}}
if err := cmd.Start(); err != nil {{
	return err
}}
fmt.Println(cmd.Process.Pid)
{rest}"""
# A controller that makes its cgroup and a run cgroup with a process in it, then waits to be killed.
CONTROLLER = """
import subprocess, sys, time
from gocode.run.cgroups import run_cgroups
run = run_cgroups.create(16)
assert run is not None
child = subprocess.Popen(["/bin/sh", "-c", 'echo 0 >"$1"; exec sleep 120', "sh", str(run / "cgroup.procs")],
                         env={"PATH": "/usr/bin:/bin", "%s": "1"}, start_new_session=True)
print(run, child.pid, flush=True)
time.sleep(120)
"""


@pytest.fixture
def base() -> Path:
    if (found := find_base()) is None:
        pytest.skip("this host lets gocode make no cgroup: the gap docs/sandbox.md states")
    return found[0]


@pytest.fixture
def marker() -> Iterator[str]:
    name = f"GOCODE_CGROUP_TEST_{uuid.uuid4().hex[:8]}"
    yield name
    for line in processes_with_env(name):  # whatever a failed test left running
        os.kill(int(line.split(":", 1)[0]), signal.SIGKILL)


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def run_cgroups_below(base: Path, pid: int) -> list[Path]:
    return [run for home in base.glob(f"gocode-{pid}-*") for run in home.glob("run-*")]


# --- a detached process of an unsandboxed run ---------------------------------------------------


@pytest.mark.parametrize("ending", ["returns", "times out"])
def test_a_process_that_left_the_process_group_does_not_outlive_an_unsandboxed_run(module_cache, base, marker, ending):
    config = config_from({"weather": demo_stdio()}, defaults={"codeMode": {"enabled": True, "sandbox": "off"}})
    rest = "time.Sleep(10 * time.Minute)" if ending == "times out" else ""
    code = DETACHED.format(marker=marker, rest=rest)

    async def go() -> None:
        async with Toolbox(config, module_cache=module_cache) as box:
            got = await box.execute(code, timeout=5 if rest else 60)
            assert got.phase == ("timeout" if rest else "ok"), got.error_text()
            pid = int(got.output.split()[0])
            # The run is over when execute returns: nothing it started is left, nor its cgroup.
            assert not alive(pid), f"the detached child {pid} outlived the run"
            assert processes_with_env(marker) == []
            assert run_cgroups_below(base, os.getpid()) == []

    anyio.run(go)


def test_the_program_gets_the_environment_it_was_given_through_the_shell_that_joins_its_cgroup(tmp_path, base):
    for env in ({"A": "1"}, {"A": "1", "PWD": "/elsewhere"}):  # the shell exports a PWD of its own
        got = anyio.run(partial(run_program, Path("/usr/bin/env"), env, tmp_path, timeout=30, max_output=4096))
        assert got.ok, got.error_text()
        assert dict(line.split("=", 1) for line in got.output.splitlines()) == env


# --- the cgroups of a controller that crashed -------------------------------------------------


def start_time(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])


def pid_namespace() -> int:
    return os.stat("/proc/self/ns/pid").st_ino


def controller(marker: str) -> tuple[subprocess.Popen[str], Path, int]:
    """A real controller process holding a run cgroup with a process in it."""
    proc = subprocess.Popen(
        [sys.executable, "-c", CONTROLLER % marker], cwd=ROOT, stdout=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert proc.stdout is not None
    run, child = proc.stdout.readline().split()
    return proc, Path(run), int(child)


def dead_pid() -> int:
    probe = subprocess.Popen(["true"])
    probe.wait()
    return probe.pid


def test_the_cgroups_of_a_crashed_controller_are_swept_at_start_and_a_live_ones_kept(base, marker):
    crashed, crashed_run, crashed_child = controller(marker)
    live, live_run, live_child = controller(marker)
    made: list[Path] = []
    try:
        crashed.kill()  # SIGKILL: no atexit, its cgroups and its run's process stay
        crashed.wait()
        assert crashed_run.is_dir() and alive(crashed_child)
        assert str(crashed_child) in (crashed_run / "cgroup.procs").read_text().split()
        # A pid now another process's (same pid, another start time), and names of older gocode
        # versions without a start time: a live pid's is kept, a dead pid's (empty) removed.
        ns = pid_namespace()
        reused = base / f"gocode-{live.pid}-{start_time(live.pid) + 1}-{ns}"
        old_live, old_dead = base / f"gocode-{live_child}", base / f"gocode-{dead_pid()}"
        other_ns = base / f"gocode-{dead_pid()}-1-{ns + 1}"  # another pid namespace's: not ours to judge
        for path in (reused, old_live, old_dead, other_ns):
            path.mkdir()
            made.append(path)
        (reused / "run-0").mkdir()

        fresh = RunCgroups()  # a new controller: its first cgroup sweeps the stale ones
        run = fresh.create(16)
        assert run is not None
        fresh.remove(run)

        assert not crashed_run.parent.exists(), "the crashed controller's cgroups are still there"
        assert not alive(crashed_child), "the crashed controller's run kept a live process"
        assert not reused.exists() and not old_dead.exists()
        assert live_run.is_dir() and alive(live_child), "a live controller's cgroup was touched"
        assert str(live_child) in (live_run / "cgroup.procs").read_text().split()
        assert old_live.is_dir() and other_ns.is_dir()
        assert re.fullmatch(rf"gocode-{os.getpid()}-{start_time(os.getpid())}-{ns}", run.parent.name)
    finally:
        live.kill()
        live.wait()
        for pid in (crashed_child, live_child):
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
        for path in [*made, live_run, live_run.parent, crashed_run, crashed_run.parent]:
            for child in sorted(path.glob("*/"), reverse=True) if path.is_dir() else []:
                if child.is_dir():
                    _rmdir_when_empty(child)
            _rmdir_when_empty(path)


def _rmdir_when_empty(path: Path) -> None:
    """Test clean-up: a cgroup whose processes were just killed empties within moments."""
    for _ in range(500):
        try:
            path.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.01)


# --- a run cancelled while its program starts -------------------------------------------------


def children_of(pid: int) -> set[int]:
    """The children of ``pid``, zombies included (a child not reaped yet)."""
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.add(int(entry))
    return found


def children() -> set[int]:
    return children_of(os.getpid())


def child_of(pid: int) -> int:
    """The first child ``pid`` starts (waited for without yielding to the event loop)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if found := sorted(c for c in children_of(pid)):
            return found[0]
        time.sleep(0.005)
    raise AssertionError(f"{pid} started no child within 30 s")


def test_a_run_cancelled_while_its_program_starts_kills_its_group_and_reaps_it(tmp_path, monkeypatch, marker):
    """Without a cgroup to sweep up after it (the gap where the host has none), what the run
    itself does on that path is all there is."""
    monkeypatch.setenv(FAKE_NO_CGROUP_ENV, "1")
    program = tmp_path / "prog"
    program.write_text("#!/bin/sh\nsleep 120 &\nwait\n")  # a child in the program's process group
    program.chmod(0o755)
    started: list[int] = []  # every process started, recorded as it starts (not a stand-in for it)
    real = subprocess.Popen._execute_child

    def recorded(self: subprocess.Popen, *args: object, **kwargs: object) -> None:
        real(self, *args, **kwargs)  # type: ignore[arg-type]
        started.append(self.pid)

    monkeypatch.setattr(subprocess.Popen, "_execute_child", recorded)
    env = {"PATH": "/usr/bin:/bin", marker: "1"}

    async def go() -> int:
        async with anyio.create_task_group() as tg:
            tg.start_soon(partial(run_program, program, env, tmp_path, timeout=60, max_output=1024))
            with anyio.fail_after(60):
                while not started:
                    await anyio.sleep(0)
            # The run is inside create_subprocess_exec: its program exists, its pipes are not
            # connected yet. Holding the loop, wait until the program has a child, then cancel:
            # the cancellation lands inside create_subprocess_exec, and again at every await.
            grandchild = child_of(started[0])
            tg.cancel_scope.cancel()
        return grandchild

    grandchild = anyio.run(go)
    assert len(started) == 1
    assert started[0] not in children(), f"the cancelled run returned before its program {started[0]} was reaped"
    assert not alive(grandchild), "the program's process group outlived the cancelled run"
    assert processes_with_env(marker) == []
