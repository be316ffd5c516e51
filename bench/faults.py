"""Fault-isolation figures: how fast ``gocode serve`` is ready with many servers, and what calls
see when servers are dead or die.

    .venv/bin/python bench/faults.py [--servers 30]

1. Start-up: the slowest single server's own start-up (spawn, handshake, ``tools/list``, with
   the Python client), against ``gocode serve`` with ``--servers`` of them plus one dead
   command: until its ``tools/list`` answers, and until a first ``execute_go_code`` answers.
2. Under faults: a toolbox over the demo weather server, a server dead at start (whose tools
   are known from a cached listing) and one killed mid-session: the weather calls, and how long
   calls to the other two take to fail.

Prints figures (compare ratios from one run; the machine is shared); asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gocode import Toolbox  # noqa: E402
from gocode.config import parse_config  # noqa: E402
from gocode.mcp.cache import ListingCache  # noqa: E402

GOCODE = str(Path(sys.executable).parent / "gocode")
WILD = str(ROOT / "tests" / "servers" / "wild_server.py")
DEMO = {"command": sys.executable, "args": ["-m", "gocode.demo.server"], "cwd": str(ROOT)}
DEAD = {"command": "sh", "args": ["-c", "echo 'fatal: no config' >&2; exit 7"]}
WEATHER = 'w, err := getWeather(ctx, GetWeatherInput{City: "Oslo"})\nif err != nil {\n\treturn err\n}\nfmt.Println(w.Temperature)\n'


def wild(*flags: str) -> dict:
    return {"command": sys.executable, "args": [WILD, *flags]}


async def own_startup(server: dict) -> float:
    start = time.monotonic()
    params = StdioServerParameters(command=server["command"], args=server["args"], cwd=server.get("cwd"))
    async with Client(stdio_client(params), mode="legacy") as c:
        await c.list_tools()
    return time.monotonic() - start


async def serve_ready(config: Path) -> tuple[float, float]:
    start = time.monotonic()
    params = StdioServerParameters(command=GOCODE, args=["serve", "-c", str(config), "--no-prewarm"])
    async with Client(stdio_client(params), mode="legacy") as c:
        await c.list_tools()
        listed = time.monotonic() - start
        await c.call_tool("execute_go_code", {"code": 'fmt.Println("ready")'})
        return listed, time.monotonic() - start


def startup(n: int, tmp: Path) -> None:
    empty = tmp / "none.json"
    empty.write_text(json.dumps({"mcpServers": {}}))
    alone = statistics.median(anyio.run(serve_ready, empty)[0] for _ in range(3))
    print(f"\n1. start-up (medians of 3); gocode serve with no servers: tools/list after {alone * 1000:.0f} ms")
    mixes = {
        "CPU-bound: 1/3 demo weather servers (Python + mcp SDK), 2/3 plain Python": lambda i: (
            DEMO if i % 3 == 0 else wild()
        ),
        "waiting: servers that take 1 s to start but use no CPU": lambda i: wild("--start-delay", "1"),
    }
    for label, server in mixes.items():
        kinds = {json.dumps(server(i)): server(i) for i in range(3)}
        own = [statistics.median(anyio.run(own_startup, s) for _ in range(3)) for s in kinds.values()]
        slowest = max(own)
        config = tmp / "many.json"
        config.write_text(json.dumps({"mcpServers": {**{f"s{i:02d}": server(i) for i in range(n)}, "dead": DEAD}}))
        runs = [anyio.run(serve_ready, config) for _ in range(3)]
        listed = statistics.median(r[0] for r in runs)
        first = statistics.median(r[1] for r in runs)
        print(f"   {label}, {n} servers + 1 dead command")
        print(f"     slowest single server's own start-up       {slowest * 1000:7.0f} ms")
        print(f"     gocode serve: tools/list answered          {listed * 1000:7.0f} ms  ({listed / slowest:.1f}x;"
              f" {(listed - alone) / slowest:.1f}x without gocode's own start)")  # fmt: skip
        print(
            f"     gocode serve: first execute_go_code answered {first * 1000:5.0f} ms  (includes building the bindings)"
        )


async def under_faults(tmp: Path) -> None:
    flag = tmp / "cached-may-start"
    flag.touch()
    servers = {
        "weather": DEMO,
        "cached": wild("--ttl", "600000", "--fail-unless", str(flag)),
        "victim": wild(),
    }
    config = parse_config(json.dumps({"mcpServers": servers}), "<bench>.json")
    cache = ListingCache(tmp / "cache")
    async with Toolbox(config, prewarm=False, listing_cache=cache):
        pass  # lists `cached` once, so its tools are known when it is dead below
    flag.unlink()
    async with Toolbox(config, listing_cache=cache, retry=(60, 60)) as box:
        await box.wait_warm()
        ok = [await box.execute(WEATHER) for _ in range(5)]
        await box.execute("_, err := victimDie(ctx)\nreturn err")
        died = time.monotonic()
        dead_calls, victim_calls = [], []
        for _ in range(5):
            for tool, out in (("cachedPing", dead_calls), ("victimPing", victim_calls)):
                r = await box.execute(f"_, err := {tool}(ctx)\nreturn err")
                ms = r.tool_calls[0].duration_ms if r.tool_calls else float("nan")
                out.append((r.ok, ms, r.stderr.strip(), time.monotonic() - died))
            ok.append(await box.execute(WEATHER))
    print("\n2. under faults: 'cached' dead at start (tools from the cache), 'victim' killed mid-session")
    print(f"   weather calls that succeeded: {sum(r.ok for r in ok)}/{len(ok)}")
    for label, calls in (("dead at start", dead_calls), ("killed mid-session", victim_calls)):
        ms = [c[1] for c in calls]
        print(f"   {label:<20} calls ok {sum(c[0] for c in calls)}/{len(calls)}; each answered in "
              f"max {max(ms):.2f} ms, median {statistics.median(ms):.2f} ms")  # fmt: skip
        failed = [c for c in calls if not c[0]]
        if failed:
            print(f"     e.g. {failed[0][2].splitlines()[0][:150]}")
        first_ok = next((c[3] for c in calls if c[0]), None)
        if first_ok is not None:
            print(f"     first successful call {first_ok * 1000:.0f} ms after the server died")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--servers", type=int, default=30)
    args = p.parse_args()
    print(f"gocode fault isolation ({os.cpu_count()} cores)")
    with tempfile.TemporaryDirectory(prefix="gocode-bench-faults-") as tmp:
        startup(args.servers, Path(tmp))
        anyio.run(under_faults, Path(tmp))


if __name__ == "__main__":
    main()
