"""`gocode serve --transport http` for operators, against a real server process: probes, metrics,
JSON logs with request ids, Host/Origin checks, the body cap, and the refusal to serve a
non-loopback address without a token. Needs Go (the server builds and runs programs)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import anyio
import httpx2
import mcp_types as types
import pytest
import yaml
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from prometheus_client.parser import text_string_to_metric_families

from gocode.demo.runner import DEMO_CODE
from gocode.serve.server import INSTRUCTIONS, bind_address
from tests.conftest import ROOT, demo_stdio, free_port

pytestmark = pytest.mark.go

GOCODE = str(Path(sys.executable).parent / "gocode")
TOKEN = "ops-token-" + uuid.uuid4().hex
WEATHER_OUT = "City: Paris\nWeather: 65.3°F, sunny\n"


@dataclass
class Served:
    url: str  # http://127.0.0.1:PORT
    proc: subprocess.Popen
    stderr: Path
    server: str  # the configured server's name
    ready_seen: list[tuple[int, dict]]  # /readyz answers from the moment the port answered

    def log_lines(self) -> list[dict]:
        return [json.loads(line) for line in self.stderr.read_text().splitlines() if line.strip()]


def write_config(tmp: Path, server: str, **code_mode: object) -> Path:
    doc: dict = {"mcpServers": {server: demo_stdio()}}
    if code_mode:
        doc["defaults"] = {"codeMode": code_mode}
    path = tmp / "gocode.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def start(tmp: Path, *args: str, env: dict | None = None, server: str | None = None) -> Served:
    # A server name of its own: the bindings are new, so warming up takes long enough to see 503.
    server = server or "w" + uuid.uuid4().hex[:10]
    port = free_port()
    stderr = tmp / f"serve-{port}.log"
    cmd = [GOCODE, "serve", "-c", str(write_config(tmp, server)), "--transport", "http", "--port", str(port), *args]
    full_env = {k: v for k, v in os.environ.items() if k not in ("GOCODE_TOKEN", "GOCODE_METRICS_TOKEN")}
    proc = subprocess.Popen(
        cmd, cwd=ROOT, env={**full_env, **(env or {})}, stdout=subprocess.DEVNULL, stderr=stderr.open("w"),
        start_new_session=True,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    seen: list[tuple[int, dict]] = []
    deadline = time.monotonic() + 120
    with httpx2.Client(timeout=5) as http:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"gocode serve exited with {proc.returncode}: {stderr.read_text()}")
            try:
                r = http.get(url + "/readyz")
            except httpx2.TransportError:
                time.sleep(0.02)
                continue
            seen.append((r.status_code, r.json()))
            if r.status_code == 200:
                break
            time.sleep(0.05)
    return Served(url, proc, stderr, server, seen)


def stop(s: Served) -> None:
    if s.proc.poll() is None:
        os.killpg(s.proc.pid, signal.SIGTERM)
        try:
            s.proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(s.proc.pid, signal.SIGKILL)
            s.proc.wait()


def spawn(tmp: Path, config: Path, env: dict[str, str] | None = None) -> tuple[Served, httpx2.Response]:
    """`gocode serve` over HTTP, returned as soon as its port answers (with that first /readyz)."""
    port = free_port()
    stderr = tmp / f"serve-{port}.log"
    full_env = {k: v for k, v in os.environ.items() if k not in ("GOCODE_TOKEN", "GOCODE_METRICS_TOKEN")}
    cmd = [GOCODE, "serve", "-c", str(config), "--transport", "http", "--port", str(port)]
    proc = subprocess.Popen(cmd, cwd=ROOT, env={**full_env, **(env or {})}, stdout=subprocess.DEVNULL,
                            stderr=stderr.open("w"), start_new_session=True)  # fmt: skip
    s = Served(f"http://127.0.0.1:{port}", proc, stderr, "", [])
    deadline = time.monotonic() + 60
    while True:
        if proc.poll() is not None or time.monotonic() > deadline:
            stop(s)
            raise RuntimeError(f"gocode serve did not answer: {stderr.read_text()}")
        try:
            return s, httpx2.get(s.url + "/readyz", timeout=5)
        except httpx2.TransportError:
            time.sleep(0.02)


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[Served]:
    tmp = tmp_path_factory.mktemp("ops")
    s = start(
        tmp,
        "--log-format", "json", "--allowed-host", "gocode.internal", "--max-body-bytes", "65536",
        env={"GOCODE_TOKEN": TOKEN},
    )  # fmt: skip
    yield s
    stop(s)


def client(url: str, token: str | None = TOKEN) -> Client:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"} if token else None)
    return Client(streamable_http_client(url + "/mcp", http_client=http), mode="legacy")


def call(url: str, code: str) -> tuple[bool, str, dict]:
    async def go() -> tuple[bool, str, dict]:
        async with client(url) as c:
            r = await c.call_tool("execute_go_code", {"code": code})
            return bool(r.is_error), "".join(p.text for p in r.content if hasattr(p, "text")), dict(r.meta or {})

    return anyio.run(go)


def metrics(url: str, token: str | None = TOKEN) -> dict[tuple[str, tuple], float]:
    r = httpx2.get(url + "/metrics", headers={"Authorization": f"Bearer {token}"} if token else {})
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("text/plain")
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(r.text)
        for s in family.samples
    }


# --- probes ---------------------------------------------------------------------------------


def test_readyz_is_503_while_warming_then_200_and_reveals_nothing(served):
    statuses = [code for code, _ in served.ready_seen]
    assert statuses[0] == 503 and statuses[-1] == 200, served.ready_seen
    assert served.ready_seen[0][1]["status"] == "starting", served.ready_seen
    assert served.ready_seen[-1][1] == {"status": "ready"}
    # Probes need no token and say nothing about the configuration.
    health = httpx2.get(served.url + "/healthz")
    assert health.status_code == 200 and health.json() == {"status": "ok"}
    for _, body in served.ready_seen:
        text = json.dumps(body)
        assert served.server not in text and TOKEN not in text and "/" not in text


def test_probe_paths_take_only_get(served):
    assert httpx2.post(served.url + "/readyz").status_code == 405
    assert httpx2.head(served.url + "/healthz").status_code == 200


# --- auth, Host/Origin, body ----------------------------------------------------------------


def test_security_checks(served):
    """The security list: no token, wrong token, foreign Host, foreign Origin, oversized body."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    ok_headers = {"Accept": "application/json, text/event-stream", "Authorization": f"Bearer {TOKEN}"}
    url = served.url + "/mcp"
    assert httpx2.post(url, json=body, headers={"Accept": ok_headers["Accept"]}).status_code == 401
    wrong = {**ok_headers, "Authorization": "Bearer not-" + TOKEN}
    assert httpx2.post(url, json=body, headers=wrong).status_code == 401

    foreign = httpx2.post(url, json=body, headers={**ok_headers, "Host": "attacker.example"})
    assert foreign.status_code == 421 and "--allowed-host" in foreign.json()["message"]
    origin = httpx2.post(url, json=body, headers={**ok_headers, "Origin": "http://attacker.example"})
    assert origin.status_code == 403
    # Refused before the token is even looked at: a rebinding page learns nothing from 401s.
    assert httpx2.post(url, json=body, headers={"Host": "attacker.example"}).status_code == 421

    big = {**body, "params": {"padding": "x" * 70_000}}
    assert httpx2.post(url, json=big, headers=ok_headers).status_code == 413

    # Names that are allowed: an added one (behind a load balancer), a local browser origin.
    init = {
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }  # fmt: skip
    for extra in ({"Host": "gocode.internal:443"}, {"Origin": "http://localhost:6274"}, {"Host": "localhost"}):
        r = httpx2.post(url, json=init, headers={**ok_headers, **extra})
        assert r.status_code == 200, (extra, r.status_code, r.text)


# --- a call: _meta, logs, metrics -----------------------------------------------------------


def test_call_has_request_id_in_meta_and_json_log(served):
    err, text, meta = call(served.url, DEMO_CODE)
    assert not err and text == WEATHER_OUT
    rid = meta["io.gocode/requestId"]
    assert len(rid) == 16 and meta["io.gocode/run"]["retryable"] is False
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        lines = served.log_lines()  # every stderr line is one JSON object
        mine = [line for line in lines if line.get("request_id") == rid]
        if mine:
            break
        time.sleep(0.1)
    calls = [line for line in mine if line["logger"] == "gocode.calls"]
    assert len(calls) == 1, lines[-5:]
    # The program's tool calls, served by the loopback endpoint in tasks of its own, carry it too.
    assert sorted(line["tool"] for line in mine if line["logger"] == "gocode.mcp.loopback") == [
        "get_city", "get_weather"
    ], lines[-5:]  # fmt: skip
    line = calls[0]
    assert line["logger"] == "gocode.calls" and line["tool"] == "execute_go_code"
    assert line["phase"] == "ok" and line["outcome"] == "ok" and line["duration_ms"] > 0
    assert line["sandbox_tier"] == meta["io.gocode/run"]["sandbox"]["tier"]


def test_metrics_count_calls_and_need_the_token(served):
    assert httpx2.get(served.url + "/metrics").status_code == 401
    assert httpx2.get(served.url + "/metrics", headers={"Authorization": "Bearer nope"}).status_code == 401
    before = metrics(served.url)
    code = f'fmt.Println("metrics {uuid.uuid4().hex}")'
    assert call(served.url, code)[0] is False  # built
    assert call(served.url, code)[0] is False  # the same code again: the binary cache
    assert call(served.url, 'return fmt.Errorf("boom")')[0] is True
    after = metrics(served.url)

    def moved(name: str, **labels: str) -> float:
        key = (name, tuple(sorted(labels.items())))
        return after.get(key, 0.0) - before.get(key, 0.0)

    assert moved("gocode_calls_total", kind="code", phase="ok", outcome="ok") == 2
    assert moved("gocode_calls_total", kind="code", phase="runtime", outcome="error") == 1
    assert moved("gocode_binary_cache_hits_total") >= 1 and moved("gocode_binary_cache_misses_total") >= 1
    assert moved("gocode_build_seconds_count") == 3 and moved("gocode_run_seconds_count") == 3
    assert after[("gocode_upstream_up", (("server", served.server),))] == 1
    assert after[("gocode_runs_in_flight", ())] == 0 and after[("gocode_queue_depth", ())] == 0
    assert 0 < after[("gocode_binary_cache_hit_ratio", ())] < 1
    # No label grows with traffic: no request ids, no code.
    assert not any(dict(labels).keys() - {"kind", "phase", "outcome", "server", "le"} for _, labels in after)


def test_a_call_the_client_cancels_is_logged_and_counted(served):
    """notifications/cancelled for a running execute_go_code: one `call` line with outcome
    cancelled, counted under that outcome, and the session goes on."""
    before = metrics(served.url)
    marker = uuid.uuid4().hex
    code = f'fmt.Println("started {marker}")\ntime.Sleep(50 * time.Second)'

    key = ("gocode_calls_total", (("kind", "code"), ("outcome", "cancelled"), ("phase", "cancelled")))

    async def go() -> bool:
        started = anyio.Event()

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            if message and marker in message:
                started.set()

        async with client(served.url) as c:
            async with anyio.create_task_group() as tg:

                async def running() -> None:
                    await c.call_tool("execute_go_code", {"code": code}, progress_callback=on_progress)

                tg.start_soon(running)
                with anyio.fail_after(60):
                    await started.wait()  # the program runs
                tg.cancel_scope.cancel()  # the SDK sends notifications/cancelled for the request
            # Counted while this session stays open: the cancel, not a client hanging up.
            with anyio.fail_after(60):
                while (await anyio.to_thread.run_sync(metrics, served.url)).get(key, 0.0) - before.get(key, 0.0) < 1:
                    await anyio.sleep(0.1)
            return not (await c.call_tool("execute_go_code", {"code": 'fmt.Println("after")'})).is_error

    assert anyio.run(go)
    assert metrics(served.url).get(key, 0.0) - before.get(key, 0.0) == 1
    lines = [line for line in served.log_lines() if line.get("logger") == "gocode.calls"]
    cancelled = [line for line in lines if line["outcome"] == "cancelled"]
    assert len(cancelled) == 1 and cancelled[0]["phase"] == "cancelled", lines[-5:]
    assert cancelled[0]["tool"] == "execute_go_code" and cancelled[0]["request_id"]


def test_clients_that_close_right_after_initializing_leave_no_errors_in_the_log(tmp_path):
    """A client that deletes its session while its notifications/initialized is being handed on
    (a race the SDK loses about half the time) is not a server error: no traceback, no error line."""
    s = start(tmp_path, server="weather")
    try:

        async def go() -> None:
            for _ in range(20):
                async with client(s.url, token=None) as c:
                    assert c.instructions

        anyio.run(go)
    finally:
        stop(s)
    log = s.stderr.read_text()
    assert "Traceback" not in log and "Error handling" not in log and "ERROR" not in log, log[-3000:]


def test_separate_metrics_token(tmp_path):
    s = start(tmp_path, env={"GOCODE_TOKEN": TOKEN, "GOCODE_METRICS_TOKEN": "scrape-only"}, server="weather")
    try:
        assert metrics(s.url, "scrape-only")[("gocode_run_slots", ())] >= 2
        assert httpx2.get(s.url + "/metrics", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
        # The scraper's token runs no code.
        r = httpx2.post(
            s.url + "/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
            headers={"Authorization": "Bearer scrape-only", "Accept": "application/json, text/event-stream"},
        )  # fmt: skip
        assert r.status_code == 401
    finally:
        stop(s)


# --- binding beyond loopback ----------------------------------------------------------------


def test_non_loopback_without_token_is_refused(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "GOCODE_TOKEN"}
    cmd = [GOCODE, "serve", "-c", str(write_config(tmp_path, "weather")), "--transport", "http", "--host", "0.0.0.0"]
    r = subprocess.run([*cmd, "--port", str(free_port())], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2, r.stderr
    assert "refusing to serve on 0.0.0.0 without a token" in r.stderr
    assert "GOCODE_TOKEN" in r.stderr and "--token" in r.stderr and "--insecure-no-auth" in r.stderr


def test_a_host_named_like_loopback_without_token_is_refused(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "GOCODE_TOKEN"}
    cmd = [GOCODE, "serve", "-c", str(write_config(tmp_path, "weather")), "--transport", "http"]
    r = subprocess.run(
        [*cmd, "--host", "127.evil.example", "--port", str(free_port())], env=env, capture_output=True, text=True,
        timeout=60,
    )  # fmt: skip
    assert r.returncode == 2, r.stderr
    assert "cannot listen on 127.evil.example: the name does not resolve" in r.stderr
    with pytest.raises(OSError):
        bind_address("127.evil.example")


def test_non_loopback_with_the_insecure_flag_runs_and_warns(tmp_path):
    s = start(tmp_path, "--host", "0.0.0.0", "--insecure-no-auth", server="weather")
    try:
        assert "WITHOUT A TOKEN" in s.stderr.read_text()
        err, text, _ = call(s.url, DEMO_CODE)  # 127.0.0.1 only: no traffic leaves the machine
        assert not err and text == WEATHER_OUT
    finally:
        stop(s)


# --- untrusted results never hold up the loop -------------------------------------------------

WILD = str(ROOT / "tests" / "servers" / "wild_server.py")

REPEAT_CODE = """\
out, err := repeat(ctx, RepeatInput{Text: %s, Times: %d})
if err != nil {
	return err
}
fmt.Println(len(out))
"""


def test_a_megabyte_line_result_never_freezes_serve(tmp_path):
    """A tool answers 1 MB, then 10 MB, on one line (an echo, a fetch): its shape is learned
    (a head of it parsed and redacted) without holding up the event loop, so /healthz answers
    at once throughout and the call finishes within a bound. Unbounded redaction on the loop
    froze serve 18 s for 64 KB and did not finish 10 MB in 14 minutes."""
    doc = {
        "mcpServers": {"big": {"command": sys.executable, "args": [WILD, "--tools", "big"]}},
        "defaults": {"codeMode": {"timeout": 60}},
    }
    config = tmp_path / "gocode.yaml"
    config.write_text(yaml.safe_dump(doc))
    s, _ = spawn(tmp_path, config, env={"GOCODE_SHAPES_DIR": str(tmp_path / "shapes")})
    try:
        deadline = time.monotonic() + 120
        while httpx2.get(s.url + "/readyz", timeout=5).status_code != 200:
            assert time.monotonic() < deadline, s.stderr.read_text()
            time.sleep(0.1)
        # Words an address pattern would scan from every start (a@a.a.a…), and plain letters.
        for unit, times in (("a@a.", 1 << 18), ("a", 10 << 20)):
            answers: list[tuple[bool, str, dict]] = []
            code = REPEAT_CODE % (json.dumps(unit), times)
            caller = threading.Thread(target=lambda code=code, answers=answers: answers.append(call(s.url, code)))
            started = time.monotonic()
            caller.start()
            slowest = 0.0
            with httpx2.Client(timeout=10) as http:
                while caller.is_alive() and time.monotonic() - started < 60:
                    t = time.monotonic()
                    try:
                        assert http.get(s.url + "/healthz").status_code == 200
                    except httpx2.TimeoutException:
                        slowest = float("inf")  # frozen: no answer within 10 s
                        break
                    slowest = max(slowest, time.monotonic() - t)
                    caller.join(0.05)
            assert slowest < 2.0, f"/healthz took {slowest:.1f} s while a result was processed"
            caller.join(5)
            assert answers, f"the {len(unit) * times}-character result was not answered within 60 s"
            err, text, _ = answers[0]
            assert not err and text == f"{len(unit) * times}\n", text[:500]
        shapes = "".join(p.read_text() for p in (tmp_path / "shapes").iterdir())
        assert len(shapes) < 4096 and '"samples": 2' in shapes  # both learned from: a head, never the result
    finally:
        stop(s)


# --- ready before it answers ----------------------------------------------------------------


def test_from_an_empty_cache_the_first_call_is_answered_and_the_definitions_never_change(tmp_path):
    """A replica that never ran: an empty gocode cache (its Go module and build caches are
    linked to the warm ones, or the warm-up would take minutes on a small machine). The
    listener answers /readyz "starting" before discovery; a client that lists and calls at once
    is answered, the two lists are byte-identical (the sandbox tier is in the first one) and
    initialize announces listChanged on streamable HTTP."""
    from gocode.paths import cache_dir

    cache = tmp_path / "cache"
    cache.mkdir()
    for shared in ("gomod", "go-build"):
        (cache / shared).symlink_to(cache_dir() / shared)
    config = write_config(tmp_path, "w" + uuid.uuid4().hex[:10])
    s, first = spawn(tmp_path, config, {"GOCODE_CACHE_DIR": str(cache), "GOCODE_STATE_DIR": str(tmp_path / "state")})
    try:
        assert first.status_code == 503 and first.json()["status"] == "starting", first.json()

        async def go() -> tuple[bool, list, list, types.CallToolResult, list[str | None]]:
            async with client(s.url, token=None) as c:
                listed = await c.list_tools(cache_mode="bypass")
                r = await c.call_tool("execute_go_code", {"code": DEMO_CODE})
                again = await c.list_tools(cache_mode="bypass")
                caps = c.server_capabilities
                assert caps.tools is not None
                dump = [t.model_dump(mode="json", by_alias=True) for t in listed.tools]
                instructions = [c.instructions]
            async with client(s.url, token=None) as later:  # a session opened after the first call
                instructions.append(later.instructions)
            return (
                bool(caps.tools.list_changed),
                dump,
                [t.model_dump(mode="json", by_alias=True) for t in again.tools],
                r,
                instructions,
            )

        list_changed, before, after, r, instructions = anyio.run(go)
        text = "".join(p.text for p in r.content if hasattr(p, "text"))
        assert not r.is_error, text
        assert text == WEATHER_OUT
        assert json.dumps(before, sort_keys=True) == json.dumps(after, sort_keys=True)
        assert "sandboxed (netns tier)" in before[0]["description"]
        assert list_changed
        # The instructions the first session got (at once, while warming) are the final ones:
        # one fixed sentence pointing at the description (which states the sandbox tier).
        assert instructions[0] == instructions[1] == INSTRUCTIONS
    finally:
        stop(s)


def test_over_stdio_from_an_empty_cache_what_the_client_is_sent_never_changes(tmp_path):
    """stdio from an empty cache: initialize is answered once the definitions are settled, so
    its instructions and the two lists around the first call (whose description states the
    sandbox tier the warm-up finds) are byte-identical to what a later serve, on the now-warm cache, sends."""
    from gocode.paths import cache_dir

    cache = tmp_path / "cache"
    cache.mkdir()
    for shared in ("gomod", "go-build"):
        (cache / shared).symlink_to(cache_dir() / shared)
    config = write_config(tmp_path, "w" + uuid.uuid4().hex[:10])
    env = {k: v for k, v in os.environ.items() if k not in ("GOCODE_TOKEN", "GOCODE_METRICS_TOKEN")}
    env |= {"GOCODE_CACHE_DIR": str(cache), "GOCODE_STATE_DIR": str(tmp_path / "state")}
    params = StdioServerParameters(command=GOCODE, args=["serve", "-c", str(config)], env=env, cwd=str(ROOT))

    async def session(code: str | None) -> tuple[str | None, str, str, types.CallToolResult | None]:
        async with Client(stdio_client(params), mode="legacy") as c:
            listed = await c.list_tools(cache_mode="bypass")
            r = await c.call_tool("execute_go_code", {"code": code}) if code else None
            again = await c.list_tools(cache_mode="bypass")

            def dump(tools: list[types.Tool]) -> str:
                return json.dumps([t.model_dump(mode="json", by_alias=True) for t in tools], sort_keys=True)

            return c.instructions, dump(listed.tools), dump(again.tools), r

    cold = anyio.run(session, DEMO_CODE)
    warm = anyio.run(session, None)
    r = cold[3]
    assert r is not None
    text = "".join(p.text for p in r.content if hasattr(p, "text"))
    assert not r.is_error and text == WEATHER_OUT, text
    assert cold[0] == warm[0] == INSTRUCTIONS
    assert cold[1] == cold[2] == warm[1]
    assert "sandboxed (netns tier)" in json.loads(cold[1])[0]["description"]


# --- a run's process limit is its own -------------------------------------------------------

THREAD_BOMB = """\
for i := 0; i < 100000; i++ {
	go func() {
		runtime.LockOSThread()
		time.Sleep(time.Minute)
	}()
}
time.Sleep(20 * time.Second)
fmt.Println("the bomb finished")
"""

# A bomb that stays just under its limit, so it lives on holding its threads (one at the limit
# dies at once, and frees them): a limit the runs share would leave none for the others.
HOLDER = """\
var started sync.WaitGroup
for i := 0; i < 960; i++ {
	started.Add(1)
	go func() {
		runtime.LockOSThread()
		started.Done()
		time.Sleep(30 * time.Second)
	}()
}
started.Wait()
time.Sleep(30 * time.Second)
fmt.Println("the holder held 960 threads")
"""

# Each of the others needs threads of its own while the bombs hold all they can get.
THREADED = """\
var wg sync.WaitGroup
for i := 0; i < 64; i++ {
	wg.Add(1)
	go func() {
		defer wg.Done()
		runtime.LockOSThread()
		time.Sleep(200 * time.Millisecond)
	}()
}
wg.Wait()
fmt.Println("run %d held 64 threads")
"""


RUN_USERS = "200000-200063"


@pytest.mark.parametrize("mechanism", ["host", "users"])
def test_a_thread_bomb_beside_eight_runs_under_serve_starves_none(tmp_path, mechanism):
    """Ten programs at once (the concurrency bound): one makes threads without end, one holds
    960 of its 1024 for 30 s, eight need threads too. Each run's processes and threads are capped
    on their own (a cgroup per run, or a user per run), so the eight and the holder succeed, and
    the bomb's result names the limit it reached. ``users``: as on a host without cgroups, each
    run a user of its own from uidRange."""
    limits: dict = {"threads": 1024}
    env: dict[str, str] = {}
    if mechanism == "users":
        if os.geteuid() != 0:
            pytest.skip("switching to a user per run needs gocode to run as root")
        limits["uidRange"] = RUN_USERS
        env["GOCODE_SANDBOX_FAKE_NOCGROUP"] = "1"
    doc = {
        "mcpServers": {"demo": demo_stdio()},
        "defaults": {"codeMode": {"maxConcurrentRuns": 10, "timeout": 90, "limits": limits}},
    }
    config = tmp_path / "gocode.yaml"
    config.write_text(yaml.safe_dump(doc))
    s, _ = spawn(tmp_path, config, env)
    try:

        async def go() -> tuple[types.CallToolResult, types.CallToolResult, list[types.CallToolResult]]:
            results: dict[int, types.CallToolResult] = {}
            async with client(s.url, token=None) as c:
                await c.list_tools()  # answered once the server is ready

                async def one(i: int) -> None:
                    code = {0: THREAD_BOMB, 9: HOLDER}.get(i) or THREADED.replace("%d", str(i))
                    if i and i != 9:
                        await anyio.sleep(3)  # the bombs hold their threads by then
                    results[i] = await c.call_tool("execute_go_code", {"code": code})

                async with anyio.create_task_group() as tg:
                    for i in range(10):
                        tg.start_soon(one, i)
            return results[0], results[9], [results[i] for i in range(1, 9)]

        bomb, holder, others = anyio.run(go)
    finally:
        stop(s)

    def text(r: types.CallToolResult) -> str:
        return "".join(p.text for p in r.content if hasattr(p, "text"))

    for i, r in enumerate(others, 1):
        assert not r.is_error, text(r)[-2000:]
        assert text(r) == f"run {i} held 64 threads\n"
    assert not holder.is_error and text(holder) == "the holder held 960 threads\n", text(holder)[-2000:]
    run = (bomb.meta or {})["io.gocode/run"]
    assert bomb.is_error and run["phase"] == "limit", text(bomb)[-2000:]
    assert "at most 1024 threads and processes per run: codeMode.limits.threads" in text(bomb)
    if mechanism == "users":
        first, last = (int(x) for x in RUN_USERS.split("-"))
        uids = [r.meta["io.gocode/run"]["sandbox"]["uid"] for r in [holder, bomb, *others] if r.meta]
        assert "tasks" not in run["sandbox"]["limits"], run["sandbox"]  # no cgroup
        assert len(uids) == 10 and all(first <= u <= last for u in uids), uids
        assert uids[0] not in uids[1:]  # the holder's user was its own while the others ran
    assert run["retryable"] is False
