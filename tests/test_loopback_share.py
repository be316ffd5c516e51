"""Hostile programs holding loopback connections cannot make another run's calls fail or wait,
nor drive the controller out of descriptors: real sandboxed programs (netns and landlock
tiers) through a real pooled Toolbox, the controller under a low open-files limit."""

from __future__ import annotations

import contextlib
import logging
import os
import resource
import time
from collections.abc import Iterator

import anyio
import pytest

from gocode.run.sandbox import FAKE_NO_USERNS_ENV
from gocode.toolbox import Toolbox
from tests.conftest import config_from, demo_stdio

pytestmark = pytest.mark.go

# Each hostile run opens as many connections as its sandbox lets it (240 of its 256 open
# files) and sends on each the headers of a POST whose body never comes: the request then
# waits, unread, at its run's gate, for as long as the run lives.
HOSTILE = r"""
import "net"
import "net/url"
import "sync"
var specs map[string]struct {
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
}
if err := json.Unmarshal([]byte(os.Getenv("GOCODE_SERVERS")), &specs); err != nil {
	return err
}
s := specs["weather"]
u, _ := url.Parse(s.URL)
var mu sync.Mutex
var wg sync.WaitGroup
var conns []net.Conn
for i := 0; i < 240; i++ {
	wg.Add(1)
	go func() {
		defer wg.Done()
		c, err := net.DialTimeout("tcp", u.Host, 2*time.Second)
		if err != nil {
			return
		}
		c.SetWriteDeadline(time.Now().Add(2 * time.Second))
		fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: %s\r\nX-Gocode-Server: weather\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n", u.Path, u.Host, s.Headers["Authorization"])
		mu.Lock()
		conns = append(conns, c)
		mu.Unlock()
	}()
}
wg.Wait()
fmt.Println("holding", len(conns), "NONCE")
time.Sleep(50 * time.Second)
return nil
"""

# Another kind: as many connections as it may open, opened and closed over and over, each held
# a moment without a byte sent (places taken and given back all the time).
CHURNING = r"""
import "net"
import "net/url"
var specs map[string]struct {
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
}
if err := json.Unmarshal([]byte(os.Getenv("GOCODE_SERVERS")), &specs); err != nil {
	return err
}
u, _ := url.Parse(specs["weather"].URL)
for round := 0; ctx.Err() == nil && round < 500; round++ {
	var cs []net.Conn
	for i := 0; i < 230; i++ {
		if c, err := net.DialTimeout("tcp", u.Host, 200*time.Millisecond); err == nil {
			cs = append(cs, c)
		}
	}
	if round == 0 {
		fmt.Println("holding", len(cs), "NONCE")
	}
	time.Sleep(300 * time.Millisecond)
	for _, c := range cs {
		c.Close()
	}
}
return nil
"""

# Three calls in a row, then 32 at once (a program fanning out with goroutines; within its share
# of the listener's connections, 256 / 6 runs, under the lowest limit tested).
VICTIM = r"""
import "sync"
for i := 0; i < 3; i++ {
	out, err := getWeather(ctx, GetWeatherInput{City: "Paris"})
	fmt.Println("call", i, out.Conditions, err)
}
var wg sync.WaitGroup
errs := make(chan error, 32)
for i := 0; i < 32; i++ {
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, err := getWeather(ctx, GetWeatherInput{City: "Oslo"})
		errs <- err
	}()
}
wg.Wait()
close(errs)
failed := 0
for err := range errs {
	if err != nil {
		failed++
		fmt.Println("parallel:", err)
	}
}
fmt.Println("parallel failed:", failed, "NONCE")
"""


@contextlib.contextmanager
def open_files_limit(soft: int) -> Iterator[None]:
    """The controller's soft open-files limit lowered for the test (its hard one untouched)."""
    before = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, before[1]))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, before)


class Exhaustion(logging.Handler):
    """Every log line of the process that says it ran out of descriptors."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage() + (str(record.exc_info[1]) if record.exc_info else "")
        if "Too many open files" in text or "out of system resource" in text:
            self.lines.append(text[:200])


@pytest.fixture(params=["netns", "landlock"])
def tier(request, monkeypatch) -> str:
    if request.param == "landlock":  # the probe reports no user namespaces: programs connect directly
        monkeypatch.setenv(FAKE_NO_USERNS_ENV, "1")
    else:
        monkeypatch.delenv(FAKE_NO_USERNS_ENV, raising=False)
    return request.param


@pytest.mark.parametrize(
    "hostile,nofile",
    [(HOSTILE, 1024), (HOSTILE, 20000), (CHURNING, 1024)],
    ids=["holding-nofile1024", "holding-nofile20000", "churning-nofile1024"],
)
def test_hostile_runs_on_the_loopback_leave_other_runs_calls_answered(module_cache, tier, hostile, nofile):
    """Before: with 5 runs holding parked requests, the victim's calls all got 503 (the
    listener's one cap was full of them); under 1,024 descriptors the controller ran out (the
    forwarder's three per connection), logging an accept error every retry. Churning runs made
    the victim's fan-out wait for its own idle connections, or lose its newest ones; and once it
    had gone above its share while they had closed theirs, lose connections not yet forwarded,
    left open unread until its timeout."""
    hostiles = 5
    cfg = config_from(
        {"weather": demo_stdio()},
        defaults={"codeMode": {"maxConcurrentRuns": hostiles + 1, "timeout": 60}},
    )
    exhaustion = Exhaustion()
    logging.getLogger().addHandler(exhaustion)

    async def go() -> tuple[object, list[str], int, float]:
        async with Toolbox(cfg, module_cache=module_cache) as tools:
            await tools.wait_warm()
            warm = await tools.execute(VICTIM.replace("NONCE", "warm"))
            assert warm.ok and "parallel failed: 0" in warm.output, warm.error_text()
            assert warm.sandbox is not None and warm.sandbox["tier"] == tier, warm.sandbox
            holding: list[str] = []
            all_holding, done = anyio.Event(), anyio.Event()

            async def attack(i: int) -> None:
                stream = tools.execute_stream(hostile.replace("NONCE", f"h{i}-{time.time_ns()}"))
                async with contextlib.aclosing(stream):  # type: ignore[type-var]
                    async for item in stream:
                        if isinstance(item, str) and item.startswith("holding"):
                            holding.append(item)
                            if len(holding) == hostiles:
                                all_holding.set()
                            await done.wait()  # then leaving the loop stops the program
                            return
                    holding.append(f"ended early: {item}")
                    all_holding.set()

            async with anyio.create_task_group() as tg:
                for i in range(hostiles):
                    tg.start_soon(attack, i)
                with anyio.fail_after(60):
                    await all_holding.wait()
                assert all(h.startswith("holding") for h in holding), holding
                start = time.monotonic()
                victim = await tools.execute(VICTIM.replace("NONCE", str(time.time_ns())), timeout=30)
                took = time.monotonic() - start
                fds = len(os.listdir("/proc/self/fd"))
                done.set()
            return victim, holding, fds, took

    try:
        with open_files_limit(nofile):
            victim, holding, fds, took = anyio.run(go)
    finally:
        logging.getLogger().removeHandler(exhaustion)
    out = victim.output  # type: ignore[attr-defined]
    assert victim.ok, victim.error_text()  # type: ignore[attr-defined]
    assert [line for line in out.splitlines() if line.startswith("call")] == [
        f"call {i} sunny <nil>" for i in range(3)
    ], out
    assert "parallel failed: 0" in out, out
    assert took < 10, (took, holding)  # answered, not held behind the hostile runs' connections
    assert exhaustion.lines == [], exhaustion.lines[:3]
    assert fds < nofile // 2, (fds, holding)
