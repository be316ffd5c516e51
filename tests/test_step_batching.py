"""When a step pass ends: as soon as the program's runtime says every goroutine waits on a held
call or on another goroutine (and the counts agree), not after a wall-clock quiet period; a
goroutine that computes keeps the pass open; one that sleeps falls back to the grace period.

Real programs through ``Toolbox.step`` (no server: the caller's own tool only), the runtime's
reports over the real loopback endpoint, and the reports' parsing and matching on their own.
"""

from __future__ import annotations

import json
import time
from typing import Any

import anyio
import pytest

from gocode import Toolbox
from gocode.mcp.intercept import IdleReport
from gocode.mcp.loopback import IDLE_TOOL
from gocode.run import step
from gocode.run.interceptor import Interceptor
from tests.conftest import config_from
from tests.http_clients import loopback, post
from tests.test_stateless import SEARCH, run_client_tool

# Two goroutines, one client call each; the second does %s first.
PAIR = """
var wg sync.WaitGroup
out := make([]string, 2)
for i := range 2 {
	wg.Add(1)
	go func() {
		defer wg.Done()
		if i == 1 {
			%s
		}
		r, err := webSearch(ctx, WebSearchInput{Query: fmt.Sprint("q", i)})
		if err == nil {
			out[i] = r.Hits[0]
		}
	}()
}
wg.Wait()
fmt.Println(out)
"""
SEQUENTIAL = """
for i := 0; i < 3; i++ {
	if _, err := webSearch(ctx, WebSearchInput{Query: fmt.Sprint("s", i)}); err != nil {
		return err
	}
}
fmt.Println("done")
"""


def no_servers() -> Any:
    return config_from({}, defaults={"codeMode": {"enabled": True, "sandbox": "off"}})


async def passes(box: Toolbox, code: str) -> list[tuple[step.StepResult, float]]:
    """Every pass of ``code`` to the end, the caller answering each batch, with its seconds."""
    got: list[tuple[step.StepResult, float]] = []
    cont, results = None, None
    while True:
        start = time.monotonic()
        one = await box.step(code, [SEARCH], cont, results)
        got.append((one, time.monotonic() - start))
        if one.status != "pending":
            return got
        cont, results = one.continuation, [run_client_tool(c) for c in one.calls]


def batches(got: list[tuple[step.StepResult, float]]) -> list[list[str]]:
    return [[c["arguments"]["query"] for c in one.calls] for one, _ in got if one.status == "pending"]


@pytest.mark.go
def test_a_goroutine_computing_before_its_call_batches_with_a_call_made_at_once(module_cache, monkeypatch):
    """It used to cost a pass more: the pass ended a grace period after the first call."""
    monkeypatch.setenv("GOCODE_STEP_GRACE", "1")
    code = PAIR % "for start := time.Now(); time.Since(start) < 2*time.Second; {\n\t\t\t}"

    async def go() -> None:
        async with Toolbox(no_servers(), module_cache=module_cache) as box:
            got = await passes(box, code)
            assert batches(got) == [["q0", "q1"]], [one.as_json() for one, _ in got]
            done = got[-1][0]
            assert done.status == "done" and done.run is not None and done.run.output == "[q0 1 q1 1]\n"

    anyio.run(go)


@pytest.mark.go
def test_calls_in_parallel_and_in_sequence_end_their_pass_without_waiting_out_the_grace(module_cache, monkeypatch):
    """With a grace period of 30 s, each pass still ends as soon as the program waits on its
    held calls only: its runtime says so."""
    monkeypatch.setenv("GOCODE_STEP_GRACE", "30")

    async def go() -> None:
        async with Toolbox(no_servers(), module_cache=module_cache) as box:
            got = await passes(box, PAIR % "_ = 0")
            assert batches(got) == [["q0", "q1"]] and len(got) == 2
            got = await passes(box, SEQUENTIAL)
            assert batches(got) == [["s0"], ["s1"], ["s2"]] and got[-1][0].status == "done"
            slow = [round(seconds, 1) for _, seconds in got if seconds > 15]
            assert slow == [], f"passes that waited for the grace period: {slow}"

    anyio.run(go)


@pytest.mark.go
def test_a_goroutine_sleeping_before_its_call_is_not_cut_off(module_cache, monkeypatch):
    """A sleeping goroutine will go on by itself, but nothing tells when: the pass is not ended
    under it by the runtime, and the grace period (5 s here) decides."""
    monkeypatch.setenv("GOCODE_STEP_GRACE", "5")

    async def go() -> None:
        async with Toolbox(no_servers(), module_cache=module_cache) as box:
            got = await passes(box, PAIR % "time.Sleep(time.Second)")
            assert batches(got) == [["q0", "q1"]], [one.as_json() for one, _ in got]

    anyio.run(go)


@pytest.mark.go
def test_a_goroutine_that_never_stops_holds_a_pass_only_so_long(module_cache, monkeypatch):
    """Reports that the program computes keep a pass open for GOCODE_STEP_BUSY seconds after its
    last call, not until the run's timeout: the pass is stopped with the call held (a run that
    timed out would come back with it)."""
    monkeypatch.setenv("GOCODE_STEP_BUSY", "2")
    code = """
go func() {
	for n := 0; ; n++ {
	}
}()
r, err := webSearch(ctx, WebSearchInput{Query: "spin"})
if err != nil {
	return err
}
fmt.Println(r.Hits)
"""

    async def go() -> None:
        async with Toolbox(no_servers(), module_cache=module_cache) as box:
            first = await box.step(code, [SEARCH], timeout=30)
            assert first.status == "pending" and first.run is None, first.as_json()
            answers = [run_client_tool(c) for c in first.calls]
            done = await box.step(code, [SEARCH], first.continuation, answers, timeout=30)
            assert done.status == "done" and done.run is not None and done.run.output == "[spin 1 spin 2]\n"

    anyio.run(go)


# --- the reports on their own -------------------------------------------------------------------


@pytest.mark.fast
def test_busy_reports_hold_the_grace_period_off_until_the_busy_limit():
    async def go() -> None:
        ic = Interceptor("step", client=frozenset({(step.CLIENT_SERVER, "web_search")}))
        async with anyio.create_task_group() as tg:
            tg.start_soon(ic.call, step.CLIENT_SERVER, "web_search", {"query": "a"}, None)
            while not ic.pending:
                await anyio.sleep(0.001)
            now = ic.last_call
            assert not step.quiet(ic, 0.3, now + 0.1, busy_s=10)
            assert step.quiet(ic, 0.3, now + 0.31, busy_s=10)
            ic.idle(IdleReport("busy", 1, 0))
            busy = ic.last_event
            assert not step.quiet(ic, 0.3, busy + 0.1, busy_s=10)  # a busy report starts the grace period again
            ic.last_event = now + 9.9  # busy reports kept coming
            assert not step.quiet(ic, 0.3, now + 9.95, busy_s=10)
            assert step.quiet(ic, 0.3, now + 10.01, busy_s=10)  # but hold the pass no longer than the limit
            ic.close()

    anyio.run(go)


@pytest.mark.fast
def test_a_report_is_three_bounded_numbers_or_nothing():
    assert IdleReport.parse({"verdict": "idle", "started": 3, "finished": 1}) == IdleReport("idle", 3, 1)
    for bad in (
        None,
        [],
        "idle",
        {"verdict": "idle", "started": 1},
        {"verdict": "asleep", "started": 1, "finished": 0},
        {"verdict": "idle", "started": True, "finished": 0},
        {"verdict": "idle", "started": 1, "finished": 2},
        {"verdict": "idle", "started": -1, "finished": -2},
        {"verdict": "idle", "started": 1.0, "finished": 0},
        {"verdict": "idle", "started": 2**64, "finished": 0},
    ):
        assert IdleReport.parse(bad) is None, bad


@pytest.mark.fast
def test_only_a_report_that_matches_the_held_calls_ends_a_pass():
    """What the program says is checked against what the controller holds: a stale or forged
    report cannot end a pass while a call is in flight, unarrived, or answered since."""

    async def go() -> None:
        ic = Interceptor("step", client=frozenset({(step.CLIENT_SERVER, "web_search")}))
        async with anyio.create_task_group() as tg:
            for q in ("a", "b"):
                tg.start_soon(ic.call, step.CLIENT_SERVER, "web_search", {"query": q}, None)
            while len(ic.pending) < 2:
                await anyio.sleep(0.001)
            for report in (
                IdleReport("busy", 2, 0),
                IdleReport("unknown", 2, 0),
                IdleReport("idle", 3, 1),  # a call started that has not arrived
                IdleReport("idle", 2, 1),  # one answered: but both are held
                IdleReport("idle", 1, 0),  # stale: from before the second call
            ):
                ic.idle(report)
                assert not ic.settled(), report
            ic.idle(IdleReport("idle", 2, 0))
            assert ic.settled()
            ic.in_flight = 1  # a forwarded call not answered yet
            assert not ic.settled()
            ic.in_flight = 0
            ic.close()

    anyio.run(go)


class Reports:
    """A run's interceptor that only keeps the reports it is given."""

    def __init__(self) -> None:
        self.got: list[IdleReport] = []

    async def call(self, server: str, tool: str, arguments: Any, forward: Any) -> Any:
        raise AssertionError("no tool call here")

    def idle(self, report: IdleReport) -> None:
        self.got.append(report)


def call(tool: str, arguments: Any) -> bytes:
    return json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}
    ).encode()


@pytest.mark.fast
def test_the_endpoint_hands_reports_to_the_run_and_refuses_malformed_ones():
    """A program can post anything to the endpoint: a report reaches its own run's interceptor,
    is not one of its calls, and a malformed one is refused."""
    reports = Reports()
    with loopback() as lb:
        run = lb.portal.call(lambda: lb.loopback.open_run(reports))
        port = lb.loopback.port
        status, _, body = post(port, run.token, call(IDLE_TOOL, {"verdict": "idle", "started": 2, "finished": 0}))
        assert status == 200 and "error" not in json.loads(body), body
        status, _, body = post(port, run.token, call(IDLE_TOOL, {"verdict": "idle", "started": "2", "finished": 0}))
        assert status == 200 and "verdict and the calls" in json.loads(body)["error"]["message"], body
        status, _, _ = post(port, "not-a-token", call(IDLE_TOOL, {"verdict": "idle", "started": 9, "finished": 0}))
        assert status == 401
        assert reports.got == [IdleReport("idle", 2, 0)]
        assert run.calls == []
