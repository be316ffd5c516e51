"""The pure parts of the HTTP limits: a run's gate (gocode/mcp/admission.py) and the log's flood
filter (gocode/mcp/logs.py), as the listeners use them."""

from __future__ import annotations

import io
import logging

import anyio
import pytest

from gocode.cli.common import setup_logging
from gocode.errors import AdmissionRefused
from gocode.mcp.admission import RunGate
from gocode.mcp.httplimits import limit_accept_errors

pytestmark = pytest.mark.fast


def test_a_gate_admits_by_count_and_bytes_first_come_first_served():
    async def go() -> None:
        gate = RunGate(max_requests=3, max_bytes=100, max_waiting=2)
        order: list[str] = []
        release = anyio.Event()

        async def hold(name: str, size: int) -> None:
            async with gate.admit(size):
                order.append(name)
                await release.wait()

        async with anyio.create_task_group() as tg:
            tg.start_soon(hold, "a", 60)
            await anyio.wait_all_tasks_blocked()
            tg.start_soon(hold, "big", 60)  # does not fit beside a: waits
            await anyio.wait_all_tasks_blocked()
            tg.start_soon(hold, "small", 1)  # fits, but comes after big: waits its turn
            await anyio.wait_all_tasks_blocked()
            assert order == ["a"] and gate.waiting == 2
            with pytest.raises(AdmissionRefused, match="too many requests"):
                async with gate.admit(1):
                    pass
            release.set()
        assert order == ["a", "big", "small"] and gate.requests == 0 and gate.bytes == 0

    anyio.run(go)


def test_closing_a_gate_refuses_what_waits_and_what_comes():
    async def go() -> None:
        gate = RunGate(max_requests=1, max_bytes=10, max_waiting=5)
        outcomes: list[str] = []

        async def wait_for_place() -> None:
            try:
                async with gate.admit(1):
                    outcomes.append("admitted")
            except AdmissionRefused as exc:
                outcomes.append(str(exc))

        async with anyio.create_task_group() as tg, gate.admit(1):
            tg.start_soon(wait_for_place)
            await anyio.wait_all_tasks_blocked()
            gate.close()
        assert outcomes == ["the program's run has ended"] and gate.requests == 0
        with pytest.raises(AdmissionRefused):
            async with gate.admit(1):
                pass

    anyio.run(go)


def test_shedding_refuses_the_newest_waiter_with_its_reason_and_keeps_the_rest():
    async def go() -> None:
        gate = RunGate(max_requests=1, max_bytes=10, max_waiting=5)
        outcomes: list[str] = []

        async def wait_for_place(name: str) -> None:
            try:
                async with gate.admit(1):
                    outcomes.append(f"{name} admitted")
            except AdmissionRefused as exc:
                outcomes.append(f"{name}: {exc}")

        assert not gate.shed("nothing waits")
        async with anyio.create_task_group() as tg, gate.admit(1):
            for name in ("old", "new"):
                tg.start_soon(wait_for_place, name)
                await anyio.wait_all_tasks_blocked()
            assert gate.shed("out of connections")
            await anyio.wait_all_tasks_blocked()
            assert outcomes == ["new: out of connections"] and gate.waiting == 1
        assert outcomes == ["new: out of connections", "old admitted"] and gate.requests == 0

    anyio.run(go)


def test_a_waiter_cancelled_gives_its_place_back():
    async def go() -> None:
        gate = RunGate(max_requests=1, max_bytes=10, max_waiting=5)
        async with gate.admit(1):
            with anyio.move_on_after(0.05):
                async with gate.admit(1):
                    pass
            assert gate.waiting == 0
        assert gate.requests == 0 and gate.bytes == 0

    anyio.run(go)


def test_one_warning_repeated_ten_thousand_times_costs_a_few_lines(monkeypatch):
    stream = io.StringIO()
    monkeypatch.setattr("sys.stderr", stream)
    root = logging.getLogger()
    handlers, level, gocode_level = root.handlers[:], root.level, logging.getLogger("gocode").level
    setup_logging("json")
    try:
        log = logging.getLogger("asyncio")
        for i in range(10_000):
            log.error("socket.accept() out of system resource: %s", i)
        logging.getLogger("gocode.calls").info("call %s ok", "x")  # information lines pass
        lines = stream.getvalue().splitlines()
        assert len(lines) == 11, len(lines)
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
        logging.getLogger("gocode").setLevel(gocode_level)


def test_asyncio_accept_errors_are_limited_without_the_cli_and_nothing_else_is(caplog):
    """A library controller (no CLI logging set up): the loopback limits asyncio's accept-loop
    lines by itself, and leaves its other messages alone."""
    limit_accept_errors()
    log = logging.getLogger("asyncio")
    with caplog.at_level(logging.ERROR, logger="asyncio"):
        for _ in range(1_000):
            log.error("socket.accept() out of system resource\nsocket: <fd=21>")
        for i in range(20):
            log.error("Task exception was never retrieved %d", i)
    accepts = [r for r in caplog.records if r.getMessage().startswith("socket.accept()")]
    assert len(accepts) == 10 and len(caplog.records) == 30
