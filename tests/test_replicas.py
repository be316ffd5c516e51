"""Three ``gocode serve --transport http`` replicas behind a real HAProxy (deploy/cluster.py runs
the shipped deploy/haproxy/haproxy.cfg), sharing one Go cache mounted read-only for them.

Needs Go, the warmed module cache and ``haproxy`` on PATH (``make setup`` installs it).
"""

from __future__ import annotations

import itertools
import re
import time
import uuid
from collections.abc import Iterator

import anyio
import mcp_types as types
import pytest
import yaml
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from deploy.cluster import Cluster, can_unshare_mounts
from gocode.demo.runner import DEMO_CODE
from tests.conftest import demo_stdio, processes_with_env, wait_gone

pytestmark = pytest.mark.go

TOKEN = "replica-token-" + uuid.uuid4().hex
MARKER = "GOCODE_REPLICA_TEST_" + uuid.uuid4().hex[:8]
WEATHER_OUT = "City: Paris\nWeather: 65.3°F, sunny\n"
# Slow enough that all of them are in flight when a replica is killed.
SLOW = 'time.Sleep(4 * time.Second)\nfmt.Println("call", %d)\n'


@pytest.fixture(scope="module")
def cluster(tmp_path_factory) -> Iterator[Cluster]:
    config = tmp_path_factory.mktemp("replicas") / "gocode.yaml"
    config.write_text(yaml.safe_dump({"mcpServers": {"weather": demo_stdio()}}))
    with Cluster(config, replicas=3, token=TOKEN, env={MARKER: "1"}) as c:
        yield c
    assert wait_gone(MARKER) == [], "processes left behind by the cluster"


def client(url: str) -> Client:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"})
    return Client(streamable_http_client(url, http_client=http), mode="auto")


def text_of(result: types.CallToolResult) -> str:
    return "".join(c.text for c in result.content if isinstance(c, types.TextContent))


def output(result: types.CallToolResult) -> str:
    """The program's output; a failed call fails the test with its error."""
    assert not result.is_error, (text_of(result), result.meta)
    return text_of(result)


async def call(url: str, code: str) -> types.CallToolResult:
    """One execute_go_code call on a client of its own, as independent users make them."""
    async with client(url) as c:
        return await c.call_tool("execute_go_code", {"code": code})


def test_calls_are_spread_round_robin(cluster):
    """One agent's session: 2026-07-28 requests carry no session, so each call is balanced alone."""
    before = [cluster.calls(i) for i in range(3)]

    async def go() -> list[str]:
        async with client(cluster.url) as c:
            return [output(await c.call_tool("execute_go_code", {"code": DEMO_CODE})) for _ in range(9)]

    log_start = len(cluster.haproxy_log.read_text())
    assert anyio.run(go) == [WEATHER_OUT] * 9
    # Every request (the client's discovery and tool list too) goes to the next replica in turn.
    served_by = re.findall(r"replicas/(gocode\d) .*\"POST /mcp", cluster.haproxy_log.read_text()[log_start:])
    assert len(served_by) >= 9
    names = [r.name for r in cluster.members]
    assert all(names.index(b) == (names.index(a) + 1) % 3 for a, b in itertools.pairwise(served_by)), served_by
    calls = [cluster.calls(i) - b for i, b in enumerate(before)]
    assert sum(calls) == 9 and min(calls) >= 2, calls


def test_replicas_share_the_cache_read_only(cluster):
    if not can_unshare_mounts():
        pytest.skip("this host allows no private mount namespace (unshare -m), so the cache cannot be made read-only")
    assert cluster.cache_read_only
    n = time.time_ns()  # new programs: built by each replica, not answered from a binary cache
    fresh, broken = anyio.run(_fresh, cluster, n)
    assert [output(r) for r in fresh] == [f"fresh {n + i}\n" for i in range(3)]
    # A compile error takes the `go build` path, which must work on the read-only cache too.
    assert broken.is_error and "declared and not used: unused" in text_of(broken), text_of(broken)
    # What the replicas wrote went to their own state directories.
    for r in cluster.members:
        assert any((r.state_dir).glob("ws-*/bin/*")), f"{r.name} built nothing in {r.state_dir}"


async def _fresh(cluster: Cluster, n: int) -> tuple[list[types.CallToolResult], types.CallToolResult]:
    fresh = [await call(cluster.url, f'fmt.Println("fresh", {n + i})') for i in range(3)]
    return fresh, await call(cluster.url, "unused := 1")


def test_a_handshake_era_session_stays_on_its_replica(cluster):
    """A 2025-protocol client's session lives on one replica: HAProxy pins it by Mcp-Session-Id."""
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"})

    async def go() -> list[str]:
        async with Client(streamable_http_client(cluster.url, http_client=http), mode="legacy") as c:
            return [output(await c.call_tool("execute_go_code", {"code": DEMO_CODE})) for _ in range(4)]

    before = [cluster.calls(i) for i in range(3)]
    assert anyio.run(go) == [WEATHER_OUT] * 4
    assert sorted(cluster.calls(i) - b for i, b in enumerate(before)) == [0, 0, 4]


def test_the_cluster_runs_the_shipped_haproxy_config(cluster):
    text = (cluster.work / "haproxy.cfg").read_text()
    assert "option httpchk" in text and "uri /readyz" in text and "balance roundrobin" in text
    servers = [ln.split()[2] for ln in text.splitlines() if ln.strip().startswith("server ")]
    assert servers == [f"127.0.0.1:{r.port}" for r in cluster.members]
    assert "gocode replica lost" in text


def test_killing_a_replica_fails_only_its_calls_and_retries_succeed(cluster):
    """Nine slow calls spread over the replicas; one replica is killed while they run."""
    outcomes: dict[int, types.CallToolResult | Exception] = {}
    in_flight: list[int] = []
    left: set[int] = set()

    async def one(i: int) -> None:
        try:
            outcomes[i] = await call(cluster.url, SLOW % i)
        except Exception as exc:
            outcomes[i] = exc

    async def go() -> None:
        with anyio.fail_after(120):
            async with anyio.create_task_group() as tg:
                for i in range(9):
                    tg.start_soon(one, i)
                for _ in range(150):
                    await anyio.sleep(0.1)
                    in_flight[:] = [cluster.in_flight(k) for k in range(3)]
                    if sum(in_flight) == 9:
                        break
                left.update(cluster.kill(1))

    anyio.run(go)
    # Round-robin spreads them, though not always 3/3/3: concurrent clients' requests interleave.
    assert sum(in_flight) == 9 and min(in_flight) >= 1, in_flight
    assert not left, f"the killed replica left processes running: {sorted(left)}"
    failed = sorted(i for i, o in outcomes.items() if isinstance(o, Exception))
    assert len(failed) == in_flight[1], ({i: repr(o) for i, o in outcomes.items()}, in_flight)
    for i in failed:
        message = str(_leaf(outcomes[i]))
        assert "gocode replica lost" in message and "retry it" in message, message
    for i, o in outcomes.items():
        if i not in failed:
            assert isinstance(o, types.CallToolResult) and output(o) == f"call {i}\n", o

    async def retry() -> list[str]:
        with anyio.fail_after(120):
            return [output(await call(cluster.url, SLOW % i)) for i in failed]

    assert anyio.run(retry) == [f"call {i}\n" for i in failed]
    # HAProxy's health check took the dead replica out; new calls go to the live ones only.
    deadline = time.monotonic() + 60
    while "gocode2 is DOWN" not in cluster.haproxy_log.read_text() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert "gocode2 is DOWN" in cluster.haproxy_log.read_text()
    before = [cluster.calls(0), cluster.calls(2)]

    async def more() -> list[str]:
        return [output(await call(cluster.url, DEMO_CODE)) for _ in range(4)]

    assert anyio.run(more) == [WEATHER_OUT] * 4
    assert cluster.calls(0) - before[0] + cluster.calls(2) - before[1] == 4
    assert processes_with_env(MARKER), "the live replicas should still be running"


def _leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc
