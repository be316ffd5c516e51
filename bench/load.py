"""Load benchmark: replicas of ``gocode serve --transport http`` behind HAProxy, many clients.

    make bench-load      # or: .venv/bin/python bench/load.py [--calls 2000] [--clients 32] [--replicas 3]

The replicas and HAProxy are started by ``deploy/cluster.py`` (the shipped HAProxy config, one
shared Go cache mounted read-only where the host allows it). Each client is one MCP client
(Python SDK, streamable HTTP, 2026-07-28 requests) making calls one after another, as an agent
does; ``--clients`` of them run at once until ``--calls`` calls are done. Halfway through one
replica is killed (SIGKILL). A call that fails (the killed replica's, or a "busy, retry"
answer from a full replica) is retried by its client, up to ``--retries`` times.

The code mix, against the bundled demo weather server, every output checked exactly:
- 70 % the weather example for one of five cities (repeated code: after the first build on a
  replica its binary is reused);
- 10 % a fan-out: five getWeather calls from goroutines (repeated code);
- 20 % a small computation with numbers unique to the call (always a fresh compile and link).

Printed: calls ok / lost / wrong, p50 and p99 latency against a single warm call, the failures
when the replica was killed (all must carry the load balancer's "replica lost ... retry" error
and succeed on retry), busy answers, and each controller's RSS after call 100 and at the end.
Timings are for reading, not asserting: compare ratios from one run on one machine.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import mcp_types as types
import yaml
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # deploy/cluster.py, when run as a script

from deploy.cluster import Cluster  # noqa: E402

TOKEN = "bench-load-token"
CITIES = {"Paris": 18.5, "Tokyo": 22.0, "New York": 15.0, "Nairobi": 24.5, "Oslo": 4.0}
WEATHER = """\
w, err := getWeather(ctx, GetWeatherInput{City: %s})
if err != nil {
	return err
}
fmt.Printf("%%s %%.1f\\n", %s, w.Temperature)
"""
FANOUT = """\
cities := []string{"Paris", "Tokyo", "New York", "Nairobi", "Oslo"}
temps := make([]float64, len(cities))
var wg sync.WaitGroup
for i, c := range cities {
	wg.Add(1)
	go func() {
		defer wg.Done()
		if w, err := getWeather(ctx, GetWeatherInput{City: c}); err == nil {
			temps[i] = w.Temperature
		}
	}()
}
wg.Wait()
fmt.Println(temps)
"""
FANOUT_OUT = "[18.5 22 15 24.5 4]\n"
COMPUTE = """\
a, b := %d, %d
fmt.Println("sum", a+b, "product", a*b)
"""


def program(n: int, rng: random.Random) -> tuple[str, str, str]:
    """The n-th call's (kind, code, expected output)."""
    roll = rng.random()
    if roll < 0.7:
        city = list(CITIES)[n % len(CITIES)]
        return "repeated", WEATHER % (json.dumps(city), json.dumps(city)), f"{city} {CITIES[city]:.1f}\n"
    if roll < 0.8:
        return "fan-out", FANOUT, FANOUT_OUT
    a, b = n + 1000, rng.randrange(2, 10_000)
    return "fresh", COMPUTE % (a, b), f"sum {a + b} product {a * b}\n"


def client(url: str) -> Client:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"})
    return Client(streamable_http_client(url, http_client=http), mode="auto")


def text_of(result: types.CallToolResult) -> str:
    return "".join(c.text for c in result.content if isinstance(c, types.TextContent))


def leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] if ordered else float("nan")


@dataclass
class Stats:
    latencies: list[float] = field(default_factory=list)  # seconds, every answered call, retries included
    first_try: list[float] = field(default_factory=list)  # seconds, calls answered at the first try
    ok: int = 0
    wrong: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    kinds: Counter[str] = field(default_factory=Counter)
    busy: int = 0
    other_errors: list[str] = field(default_factory=list)
    kill_failures: list[str] = field(default_factory=list)  # transport errors (the killed replica's calls)
    kill_failed_calls: int = 0  # calls with at least one such failure
    kill_retried_ok: int = 0
    rss_at_100: list[int] = field(default_factory=list)
    killed_in_flight: int = -1
    left_after_kill: int = 0  # processes of the killed replica still running afterwards
    kill_at_call: int = -1


async def run_load(
    cluster: Cluster, calls: int, clients: int, retries: int, kill_after: int | None, busy_deadline: float = 300
) -> Stats:
    stats = Stats()
    rng = random.Random(1234)
    plan = [program(n, rng) for n in range(calls)]
    next_call = 0
    done = 0

    async def after_each() -> None:
        nonlocal done
        done += 1
        if done == 100:
            stats.rss_at_100 = [cluster.rss(i) for i in range(len(cluster.members))]
        if kill_after is not None and done == kill_after and stats.kill_at_call < 0:
            stats.kill_at_call = done
            # What the load balancer has sent it, counted with no await before the kill: the
            # replica's own metrics miss requests still in its socket queue on a busy machine.
            stats.killed_in_flight = max(cluster.in_flight(1), cluster.lb_in_flight(1))
            stats.left_after_kill = len(cluster.kill(1))

    async def worker() -> None:
        nonlocal next_call
        async with client(cluster.url) as c:
            while next_call < calls:
                n = next_call
                next_call += 1
                kind, code, expected = plan[n]
                stats.kinds[kind] += 1
                await one_call(c, n, kind, code, expected)
                await after_each()

    async def one_call(c: Client, n: int, kind: str, code: str, expected: str) -> None:
        """Call until answered: a failed call up to ``retries`` more times, a busy one with backoff
        until ``busy_deadline`` (a busy replica asks to be retried later)."""
        start = time.perf_counter()
        failures, busy, delay = 0, 0, 0.2
        while True:
            attempt = time.perf_counter()
            try:
                r = await c.call_tool("execute_go_code", {"code": code})
            except Exception as exc:
                stats.kill_failures.append(str(leaf(exc)))
                failures += 1
                if failures > retries:
                    stats.kill_failed_calls += 1
                    stats.lost.append(f"call {n} ({kind}): failed {failures} times: {leaf(exc)}")
                    return
                await anyio.sleep(0.2)
                continue
            if r.is_error and (r.meta or {}).get("io.gocode/run", {}).get("retryable"):
                stats.busy += 1
                busy += 1
                if time.perf_counter() - start > busy_deadline:
                    stats.lost.append(f"call {n} ({kind}): still busy after {busy} tries")
                    return
                await anyio.sleep(delay * (0.5 + random.random()))
                delay = min(delay * 2, 3.0)
                continue
            break
        stats.kill_failed_calls += failures > 0
        if r.is_error:
            stats.other_errors.append(f"call {n}: {text_of(r)[:200]}")
            return
        out = text_of(r)
        if out != expected:
            stats.wrong.append(f"call {n}: expected {expected!r}, got {out!r}")
            return
        stats.ok += 1
        stats.kill_retried_ok += failures > 0
        stats.latencies.append(time.perf_counter() - start)
        if failures == 0 and busy == 0:
            stats.first_try.append(time.perf_counter() - attempt)

    async with anyio.create_task_group() as tg:
        for _ in range(clients):
            tg.start_soon(worker)
    return stats


async def warm_call_latency(cluster: Cluster, rounds: int = 7) -> float:
    """The median of a single client's calls of the repeated weather program, one at a time."""
    code = WEATHER % (json.dumps("Paris"), json.dumps("Paris"))
    times = []
    async with client(cluster.url) as c:
        for _ in range(rounds + len(cluster.members)):  # first, a build on every replica
            start = time.perf_counter()
            r = await c.call_tool("execute_go_code", {"code": code})
            times.append(time.perf_counter() - start)
            assert text_of(r) == "Paris 18.5\n", text_of(r)
    return statistics.median(times[len(cluster.members) :])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--clients", type=int, default=32)
    ap.add_argument("--replicas", type=int, default=3)
    ap.add_argument(
        "--retries", type=int, default=3, help="per call, after a failed call (busy ones: with backoff, 5 min)"
    )
    ap.add_argument("--no-kill", action="store_true", help="do not kill a replica halfway")
    ap.add_argument(
        "--program-user",
        choices=["auto", "self", "nobody"],
        default="auto",
        help="codeMode.limits.user: who sandboxed programs run as (auto: nobody when root)",
    )
    args = ap.parse_args()
    if args.replicas < 2 and not args.no_kill:
        ap.error("killing a replica needs at least 2 replicas (or --no-kill)")

    with tempfile.TemporaryDirectory(prefix="gocode-bench-load-") as tmp:
        config = Path(tmp) / "gocode.yaml"
        demo = {"command": sys.executable, "args": ["-m", "gocode.demo.server"], "cwd": str(ROOT)}
        code_mode = {"limits": {"user": args.program_user}}
        config.write_text(yaml.safe_dump({"mcpServers": {"weather": demo}, "defaults": {"codeMode": code_mode}}))
        t0 = time.perf_counter()
        with Cluster(config, replicas=args.replicas, token=TOKEN) as cluster:
            print(
                f"{args.replicas} replicas behind HAProxy ready in {time.perf_counter() - t0:.1f} s "
                f"(shared cache {'read-only' if cluster.cache_read_only else 'writable'})",
                file=sys.stderr,
            )
            warm = anyio.run(warm_call_latency, cluster)
            kill_after = None if args.no_kill else args.calls // 2
            t1 = time.perf_counter()
            stats = anyio.run(run_load, cluster, args.calls, args.clients, args.retries, kill_after)
            wall = time.perf_counter() - t1
            rss_end = [cluster.rss(i) for i in range(len(cluster.members))]
            killed = None if args.no_kill else cluster.members[1].name
    report(args, stats, warm, wall, rss_end, killed)
    return 0


def report(
    args: argparse.Namespace, s: Stats, warm: float, wall: float, rss_end: list[int], killed: str | None
) -> None:
    p50, p99 = percentile(s.latencies, 0.5), percentile(s.latencies, 0.99)
    f50, f99 = percentile(s.first_try, 0.5), percentile(s.first_try, 0.99)
    mix = ", ".join(f"{k} {v}" for k, v in sorted(s.kinds.items()))
    replica_lost = [m for m in s.kill_failures if "gocode replica lost" in m and "retry" in m]
    rows = [
        ("calls", f"{args.calls} from {args.clients} concurrent clients, {args.replicas} replicas behind HAProxy"),
        ("code mix", mix),
        ("programs run as", f"codeMode.limits.user: {args.program_user}"),
        ("ok / wrong / lost", f"{s.ok} / {len(s.wrong)} / {len(s.lost)}"),
        ("other errors", str(len(s.other_errors))),
        ("wall time, throughput", f"{wall:.1f} s, {args.calls / wall:.1f} calls/s"),
        ("single warm call (median)", f"{warm * 1000:.0f} ms"),
        ("p50 under load", f"{p50 * 1000:.0f} ms ({p50 / warm:.1f}x the single warm call; retries included)"),
        ("p99 under load", f"{p99 * 1000:.0f} ms ({p99 / warm:.1f}x the single warm call; retries included)"),
        ("  answered at the first try", f"{len(s.first_try)}: p50 {f50 * 1000:.0f} ms, p99 {f99 * 1000:.0f} ms"),
        ("busy answers (retried later)", str(s.busy)),
    ]
    if killed:
        rows += [
            (
                "replica killed",
                f"{killed} after call {s.kill_at_call}; {s.killed_in_flight} calls in flight on it, "
                f"{s.left_after_kill} of its processes left running",
            ),
            (
                "failed calls at the kill",
                f"{len(s.kill_failures)} ({len(replica_lost)} with the 'gocode replica lost ... retry' error)",
            ),
            ("  calls that failed / then succeeded", f"{s.kill_failed_calls} / {s.kill_retried_ok}"),
        ]
    for i, end in enumerate(rss_end):
        start = s.rss_at_100[i] if i < len(s.rss_at_100) else 0
        name = f"gocode{i + 1}"
        if start == 0:
            rows.append((f"{name} controller RSS", "killed before call 100"))
        elif end == 0:
            rows.append((f"{name} controller RSS", f"{start / 2**20:.1f} MiB after call 100; killed later"))
        else:
            growth = (end - start) / start * 100
            rows.append(
                (
                    f"{name} controller RSS",
                    f"{start / 2**20:.1f} MiB after call 100 -> {end / 2**20:.1f} MiB after {args.calls} ({growth:+.1f} %)",
                )
            )
    width = max(len(k) for k, _ in rows)
    print("gocode load benchmark")
    for k, v in rows:
        print(f"  {k:<{width}}  {v}")
    for label, items in (("wrong", s.wrong), ("lost", s.lost), ("other errors", s.other_errors)):
        for line in items[:5]:
            print(f"  {label}: {line}")
    for m in sorted(set(s.kill_failures))[:3]:
        print(f"  error seen at the kill: {m}")
    growths = [(e - st) / st * 100 for st, e in zip(s.rss_at_100, rss_end, strict=False) if st and e]
    targets = [
        ("zero lost or wrong answers", not s.wrong and not s.lost and not s.other_errors),
        (
            "only the killed replica's calls failed, each with a clear error, all ok on retry",
            killed is None
            or (
                len(replica_lost) == len(s.kill_failures)
                and s.kill_retried_ok == s.kill_failed_calls
                and len(s.kill_failures) <= max(s.killed_in_flight, 0)
            ),
        ),
        ("controller RSS growth <= 10 % (call 100 -> end)", bool(growths) and max(growths) <= 10),
    ]
    print("targets:")
    for name, met in targets:
        print(f"  [{'met' if met else 'NOT met'}] {name}")


if __name__ == "__main__":
    sys.exit(main())
