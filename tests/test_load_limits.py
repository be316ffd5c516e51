"""The bound on concurrent programs: a queue in front, a retryable "busy" beyond it, and queued
time counted against the call's timeout. Real programs through a real Toolbox (Go needed),
plus the limiter alone."""

from __future__ import annotations

import time

import anyio
import pytest

from gocode.errors import Busy
from gocode.results import run_to_result
from gocode.run.limiter import RunLimiter, default_limit
from gocode.toolbox import TOOL_NAME, Toolbox
from tests.conftest import config_from, demo_stdio


def test_default_limit_follows_the_cores():
    assert default_limit(1) == 2 and default_limit(2) == 2 and default_limit(16) == 16


def test_limiter_queues_then_refuses():
    async def go() -> list[str]:
        limiter = RunLimiter(1, 1)
        events: list[str] = []
        release = anyio.Event()

        async def holder(name: str) -> None:
            try:
                async with limiter.slot(10):
                    events.append(f"{name} runs")
                    await release.wait()
            except Busy as exc:
                events.append(f"{name} busy: {exc}")

        async with anyio.create_task_group() as tg:
            tg.start_soon(holder, "a")
            await anyio.sleep(0.05)
            tg.start_soon(holder, "b")  # queued
            await anyio.sleep(0.05)
            tg.start_soon(holder, "c")  # beyond the queue
            await anyio.sleep(0.05)
            assert (limiter.running, limiter.waiting) == (1, 1)
            release.set()
        assert (limiter.running, limiter.waiting) == (0, 0)
        return events

    events = anyio.run(go)
    assert events[0] == "a runs"
    assert events[1].startswith("c busy: gocode is busy: 1 programs running and 1 queued")
    assert events[2] == "b runs"


def test_limiter_wait_is_bounded():
    async def go() -> str:
        limiter = RunLimiter(1, 5)
        async with limiter.slot(10):
            try:
                async with limiter.slot(0.2):
                    return "got a slot"
            except Busy as exc:
                return str(exc)

    assert "no program slot came free within 0.2 s" in anyio.run(go)


def slow(seconds: float, label: str) -> str:
    return f'time.Sleep({int(seconds * 1000)} * time.Millisecond)\nfmt.Println("{label}")'


@pytest.mark.go
def test_busy_beyond_the_queue_with_real_programs(module_cache):
    """One runs, one waits, the rest are told at once to retry; the waiting one then runs."""
    cfg = config_from(
        {"weather": demo_stdio()}, defaults={"codeMode": {"sandbox": "off", "maxConcurrentRuns": 1, "maxQueuedRuns": 1}}
    )

    async def go() -> list[tuple[str, float, object]]:
        async with Toolbox(cfg, module_cache=module_cache) as tools:
            await tools.wait_warm()
            await tools.execute(slow(0, "warm"))  # the first build, out of the way
            finished: list[tuple[str, float, object]] = []
            start = time.monotonic()

            async def one(name: str, delay: float) -> None:
                await anyio.sleep(delay)
                r = await tools.call(TOOL_NAME, {"code": slow(2, name)})
                finished.append((name, time.monotonic() - start, r))

            async with anyio.create_task_group() as tg:
                tg.start_soon(one, "first", 0)
                tg.start_soon(one, "queued", 0.3)
                for i in range(4):
                    tg.start_soon(one, f"extra{i}", 0.6)
            return finished

    finished = anyio.run(go)
    order = [name for name, _, _ in finished]
    assert sorted(order[:4]) == [f"extra{i}" for i in range(4)], order  # told before anything finished
    assert order[4:] == ["first", "queued"], order
    for name, _, r in finished:
        meta = r.result.meta["io.gocode/run"]
        if name.startswith("extra"):
            assert r.is_error and r.run.phase == "busy" and meta["retryable"] is True
            assert r.text.startswith("not run (retry later):\ngocode is busy: 1 programs running and 1 queued")
        else:
            assert not r.is_error and r.text == f"{name}\n" and meta["retryable"] is False
    assert run_to_result(finished[-1][2].run).meta["io.gocode/run"]["phase"] == "ok"


@pytest.mark.go
def test_queued_time_counts_against_the_timeout(module_cache):
    cfg = config_from({"weather": demo_stdio()}, defaults={"codeMode": {"sandbox": "off", "maxConcurrentRuns": 1}})

    async def go() -> tuple[object, object]:
        async with Toolbox(cfg, module_cache=module_cache) as tools:
            await tools.wait_warm()
            first, second = slow(2.5, "first"), slow(5, "second")
            for code in (first, second):  # built now (cut short), so the race below is only about running
                await tools.execute(code, 0.5)
            results: dict[str, object] = {}

            async def one(name: str, code: str, timeout: float, delay: float) -> None:
                await anyio.sleep(delay)
                results[name] = await tools.execute(code, timeout)

            async with anyio.create_task_group() as tg:
                tg.start_soon(one, "first", first, 30, 0)
                # Alone it would finish (5 s < 6 s); after ~2.5 s in the queue it cannot.
                tg.start_soon(one, "second", second, 6, 0.2)
            return results["first"], results["second"]

    first, second = anyio.run(go)
    assert first.ok, first.error_text()
    assert second.phase == "timeout", second.error_text()
    assert "spent waiting for a program slot" in second.stderr and "the limit of 6 s" in second.stderr
