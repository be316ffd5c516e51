"""A program's own build is bounded by its run's timeout (docs/sandbox.md): a build that
outlasts it is stopped, its compiler (or the type check) killed with nothing left running,
and the run answers ``timeout`` naming the limit. The next run builds as before."""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from pathlib import Path

import pytest

from gocode.codemode import CodeMode
from gocode.run.result import RunResult

pytestmark = pytest.mark.go

MARGIN_S = 5.0  # what the answer may take past the timeout: stopping and reaping the build


def slow_to_build(statements: int) -> tuple[str, str]:
    """New code whose compile takes seconds (one function of many branches; 40,000 took 15 s
    here) and its type check a tenth of that, with the token that marks it."""
    token = uuid.uuid4().hex
    body = [f"a[{i % 8}] += b*{i} + a[{i * 3 % 8}]; if a[{i % 8}] > {i} {{ b++ }}" for i in range(statements)]
    return "\n".join(["var a [8]int", "b := 0", *body, f'fmt.Println(a, b, "{token}")']), token


def building(runs: Path, token: str) -> set[int]:
    """Processes building the program marked ``token``: started in a run directory of the
    module cache whose main.go holds it (the compiler and the linker)."""
    found = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cwd = Path(os.readlink(f"/proc/{entry}/cwd"))
            if cwd.parent == runs and token in (cwd / "main.go").read_text():
                found.add(int(entry))
        except OSError:
            continue
    return found


async def watched(cm: CodeMode, code: str, token: str, timeout: float) -> tuple[RunResult, float, set[int]]:
    """The run's answer, how long it took, and the build's processes seen meanwhile."""
    runs = cm.module_cache.state / "runs"
    call = asyncio.ensure_future(cm.execute(code, timeout))
    start, seen = time.monotonic(), set()
    while not call.done():
        seen |= building(runs, token)
        await asyncio.wait({call}, timeout=0.05)
    return call.result(), time.monotonic() - start, seen


def assert_nothing_left(cm: CodeMode, token: str, seen: set[int]) -> None:
    runs = cm.module_cache.state / "runs"
    assert [pid for pid in seen if Path(f"/proc/{pid}").exists()] == []  # killed and reaped
    assert building(runs, token) == set()
    left = [d for d in runs.iterdir() if (d / "main.go").is_file() and token in (d / "main.go").read_text()]
    assert left == []


def test_a_compile_outlasting_the_timeout_is_stopped_and_answered_as_a_timeout(demo_cm):
    code, token = slow_to_build(40_000)
    got, took, seen = asyncio.run(watched(demo_cm, code, token, 6))
    assert got.phase == "timeout" and not got.ok and got.output == "", got.error_text()
    assert "build" in got.stderr and "within 6 s" in got.stderr and got.build_mode == "stopped", got.stderr
    assert took < 6 + MARGIN_S, took
    assert seen, "the compiler was never seen running: the timeout did not land in the compile"
    assert_nothing_left(demo_cm, token, seen)
    after = asyncio.run(demo_cm.execute(f'fmt.Println("after {token}")', 30))
    assert after.ok and after.output == f"after {token}\n", after.error_text()


def test_a_type_check_outlasting_the_timeout_is_stopped_and_answered_as_a_timeout(demo_cm):
    code, token = slow_to_build(40_000)  # its check alone takes longer than the timeout
    got, took, seen = asyncio.run(watched(demo_cm, code, token, 0.5))
    assert got.phase == "timeout" and "within 0.5 s" in got.stderr, got.error_text()
    assert took < 0.5 + MARGIN_S, took
    assert_nothing_left(demo_cm, token, seen)
    # The helper that was checking it was stopped; the next check starts another.
    after = asyncio.run(demo_cm.execute(f'fmt.Println("after {token}")', 30))
    assert after.ok and after.output == f"after {token}\n", after.error_text()
