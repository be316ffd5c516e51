"""gocode's benchmark: execute_go_code latency against the alternatives, memory and throughput.

    make bench                        # or: .venv/bin/python bench/run.py [--runs 7] [--calls 500]

Prints one table from one run on one machine. Every latency is the median and p90 of
``--runs`` repetitions, the scenarios interleaved round by round so that a busy moment of a
shared machine hits all of them alike; compare the ratios, not the absolute times.

Scenarios (the weather example: getCity then getWeather on the bundled Python demo server;
the fan-out: 20 getWeather calls from goroutines):

- gocode pooled: a warm controller (this process) builds fresh code (compile + link) and runs
  it against its long-lived sessions through the loopback endpoint;
- gocode pooled, same code again: the built binary is reused;
- gocode direct: the program starts the server itself (``gocode exec --direct``);
- CPE-style baseline: a fresh temporary module, ``go build`` of the whole program (bindings
  included), the program starting the server itself;
- naive floor: ``go build`` plus run of a hand-written program that imports the SDK's ``mcp``
  package and makes no MCP call;
- the limit: that program compiled and linked by invoking the compiler and linker directly,
  stripped, then run;
- classic tool calling: the same tool calls one by one through the Python MCP client on an
  open session (without the model round trip each call would cost in a real agent loop).

Then: peak memory of one program and of the controller (a ``gocode serve`` process), the
controller's memory after 50 and after ``--calls`` consecutive calls, the first call after
``gocode serve`` starts against a warm one, and 8 concurrent calls. The targets
are checked at the end (printed, not asserted: timings are for reading, not for failing CI).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from gocode.compile import golink
from gocode.compile.modcache import ModuleCache
from gocode.config import parse_config
from gocode.demo.runner import DEMO_CODE
from gocode.program.code import ModelCode
from gocode.program.render import render_bindings, render_main, tools_import_path
from gocode.resources import go_mod_template, go_sum_template, rt_sources
from gocode.toolbox import Toolbox

WEATHER = DEMO_CODE  # CPE's weather example: getCity, then getWeather
FANOUT = """\
g, ctx := errgroup.WithContext(ctx)
temps := make([]float64, 20)
for i := range temps {
	g.Go(func() error {
		w, err := getWeather(ctx, GetWeatherInput{City: "Oslo"})
		if err != nil {
			return err
		}
		temps[i] = w.Temperature
		return nil
	})
}
if err := g.Wait(); err != nil {
	return err
}
fmt.Println(len(temps), temps[0])
"""
# A type error and a syntax error, as models make them: answered without compiling.
TYPE_ERROR = """\
w, err := getWeather(ctx, GetWeatherInput{City: "Paris"})
if err != nil {
	return err
}
var t int
t = w.Temperature
fmt.Println(t)
"""
SYNTAX_ERROR = """\
w, err := getWeather(ctx, GetWeatherInput{City: "Paris"})
fmt.Println("temperature:", w.Temperature
if err != nil {
	return err
}
"""
NAIVE = """\
package main

import (
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	c := mcp.NewClient(&mcp.Implementation{Name: "naive", Version: "1"}, nil)
	fmt.Println(c != nil)
}
"""


def config(sandbox: str = "off") -> Any:
    doc = {
        "mcpServers": {"weather": {"command": sys.executable, "args": ["-m", "gocode.demo.server"]}},
        "defaults": {"codeMode": {"sandbox": sandbox}},
    }
    return parse_config(json.dumps(doc), "<bench>.json")


def tag() -> str:
    """A unique first line: a fresh program, never a cached binary."""
    return f"// {uuid.uuid4().hex}\n"


def median_p90(xs: list[float]) -> tuple[float, float]:
    xs = sorted(xs)
    p90 = xs[min(len(xs) - 1, round(0.9 * (len(xs) - 1)))]
    return statistics.median(xs), p90


class Bench:
    def __init__(self, runs: int, calls: int, sandbox: str) -> None:
        self.runs, self.calls, self.sandbox = runs, calls, sandbox
        self.ws = ModuleCache()
        self.times: dict[str, list[float]] = {}
        self.notes: list[str] = []
        self.tmp = Path(tempfile.mkdtemp(prefix="gocode-bench-"))

    # --- scenario helpers -----------------------------------------------------------------

    def module_dir(self, name: str) -> Path:
        """A module like the module cache's (same go.mod/go.sum, same caches) in a directory of its own."""
        d = self.tmp / name
        (d / "rt").mkdir(parents=True, exist_ok=True)
        (d / "go.mod").write_text(go_mod_template())
        (d / "go.sum").write_text(go_sum_template())
        for fname, text in rt_sources().items():
            (d / "rt" / fname).write_text(text)
        return d

    async def cpe_baseline(self, box: Toolbox, code: str) -> float:
        """Fresh temporary module, go build of everything, the program starts the server."""
        start = time.monotonic()
        pkg = box.code_mode.package
        d = self.module_dir(f"cpe-{uuid.uuid4().hex[:8]}")
        tools = d / tools_import_path(pkg).removeprefix("gocodews/")
        tools.mkdir(parents=True)
        (tools / "tools.go").write_text(render_bindings(pkg))
        (d / "main").mkdir()
        prepared = await self.ws.prepare(pkg, ModelCode(code))
        (d / "main" / "main.go").write_text(render_main(pkg, prepared))
        code_, out = await golink.run(
            [self.ws.toolchain.go, "build", "-o", "prog", "./main"], cwd=d, env=self.ws.go_env()
        )
        if code_ != 0:
            raise RuntimeError(f"CPE-style build failed: {out}")
        env = {**os.environ, "GOCODE_SERVERS": json.dumps(box.code_mode.server_specs())}
        proc = await asyncio.create_subprocess_exec(str(d / "prog"), env=env, stdout=asyncio.subprocess.PIPE)
        await proc.communicate()
        elapsed = time.monotonic() - start
        shutil.rmtree(d, ignore_errors=True)
        if proc.returncode != 0:
            raise RuntimeError("CPE-style program failed")
        return elapsed

    async def naive(self, d: Path) -> float:
        (d / "naive" / "main.go").write_text(tag() + NAIVE)
        start = time.monotonic()
        code, out = await golink.run(
            [self.ws.toolchain.go, "build", "-o", "prog", "./naive"], cwd=d, env=self.ws.go_env()
        )
        if code != 0:
            raise RuntimeError(out)
        await golink.run([str(d / "prog")], cwd=d, env=os.environ)
        return time.monotonic() - start

    async def limit(self, d: Path, cfg: golink.DirectConfig) -> float:
        run_dir = d / "limit"
        run_dir.mkdir(exist_ok=True)
        (run_dir / "main.go").write_text(tag() + NAIVE)
        start = time.monotonic()
        ok, out = await golink.build(cfg, run_dir, run_dir / "prog", self.ws.go_env())
        if not ok:
            raise RuntimeError(out)
        await golink.run([str(run_dir / "prog")], cwd=d, env=os.environ)
        return time.monotonic() - start

    async def limit_config(self, d: Path) -> golink.DirectConfig:
        (d / "naive").mkdir(exist_ok=True)
        (d / "naive" / "main.go").write_text(NAIVE)
        fmt = "{{.ImportPath}}\t{{.Export}}\t{{.DefaultGODEBUG}}"
        code, out = await golink.run(
            [self.ws.toolchain.go, "list", "-export", "-deps", "-f", fmt, "./naive"], cwd=d, env=self.ws.go_env()
        )
        if code != 0:
            raise RuntimeError(out)
        exports, godebug = golink.parse_exports(out)
        (d / "importcfg").write_text(golink.importcfg_text(exports))
        _, tooldir = await golink.run([self.ws.toolchain.go, "env", "GOTOOLDIR"], cwd=d, env=self.ws.go_env())
        t = Path(tooldir.strip())
        return golink.DirectConfig(
            t / "compile", t / "link", d / "importcfg", golink.module_lang(go_mod_template()), godebug
        )

    async def timed(self, name: str, fn: Callable[[], Awaitable[Any]]) -> None:
        start = time.monotonic()
        result = await fn()
        elapsed = result if isinstance(result, float) else time.monotonic() - start
        ok = getattr(result, "ok", True)
        if name.startswith("compile error") or name.startswith("syntax error"):
            if ok or result.phase != "compile":  # an error row must answer with the error
                raise RuntimeError(f"{name}: expected a compile error, got {result.phase}")
        elif not ok:
            raise RuntimeError(f"{name}: {result.error_text()}")
        self.times.setdefault(name, []).append(elapsed)

    # --- the run ----------------------------------------------------------------------------

    async def latency(self) -> None:
        say("warming up (module cache, bindings, sessions) …")
        self.ws.ensure(say)
        naive_dir = self.module_dir("naive")
        limit_cfg = await self.limit_config(naive_dir)
        async with (
            Toolbox(config(), module_cache=self.ws, prewarm=False) as pooled,
            Toolbox(config(), module_cache=self.ws, prewarm=False, pooled=False) as direct,
            Toolbox(config(self.sandbox), module_cache=self.ws, prewarm=False) as sandboxed,
            Client(
                StdioServerParameters(command=sys.executable, args=["-m", "gocode.demo.server"]), mode="legacy"
            ) as classic,
        ):
            await pooled.code_mode.prewarm()
            for warm in (WEATHER, FANOUT):  # bindings compiled, importcfg listed, sessions hot
                await pooled.execute(tag() + warm)
                await direct.execute(tag() + warm)
            await pooled.execute(WEATHER)  # the binary "same code again" reuses
            first = await sandboxed.execute(tag() + WEATHER)  # builds the launcher
            if not first.ok:
                self.notes.append(f"sandboxed runs skipped: {first.error_text()}")

            async def classic_weather() -> None:
                city = await classic.call_tool("get_city", {})
                assert city.structured_content is not None
                await classic.call_tool("get_weather", {"city": city.structured_content["city"], "unit": "fahrenheit"})

            async def classic_fanout() -> None:
                for _ in range(20):
                    await classic.call_tool("get_weather", {"city": "Oslo"})

            scenarios: list[tuple[str, Callable[[], Awaitable[Any]]]] = [
                ("pooled weather", lambda: pooled.execute(tag() + WEATHER)),
                ("pooled weather, same code again", lambda: pooled.execute(WEATHER)),
                ("pooled weather, same code, sandboxed", lambda: sandboxed.execute(WEATHER)),
                ("compile error (type), pooled", lambda: pooled.execute(tag() + TYPE_ERROR)),
                ("syntax error, pooled", lambda: pooled.execute(tag() + SYNTAX_ERROR)),
                ("pooled fan-out (20 calls)", lambda: pooled.execute(tag() + FANOUT)),
                ("direct weather", lambda: direct.execute(tag() + WEATHER)),
                ("direct fan-out (20 calls)", lambda: direct.execute(tag() + FANOUT)),
                ("CPE-style baseline, weather", lambda: self.cpe_baseline(direct, tag() + WEATHER)),
                ("naive floor (go build + run)", lambda: self.naive(naive_dir)),
                ("limit (compile + link + run)", lambda: self.limit(naive_dir, limit_cfg)),
                ("classic tool calls, weather", classic_weather),
                ("classic tool calls, fan-out (20)", classic_fanout),
            ]
            if self.notes:
                scenarios = [x for x in scenarios if "sandboxed" not in x[0]]
            for r in range(self.runs):
                say(f"round {r + 1}/{self.runs}")
                for name, fn in scenarios:
                    await self.timed(name, fn)

            # One program's peak memory (pooled, so no server process is counted with it).
            build = await self.ws.build(pooled.code_mode.package, ModelCode(WEATHER))
            assert pooled._loopback is not None and build.binary is not None
            run = pooled._loopback.open_run()
            # The endpoint answers only the calls the program's static plan foresaw.
            assert build.plan is not None
            run.foreseen = build.plan.allows
            env = {**os.environ, "GOCODE_SERVERS": json.dumps(pooled._loopback.specs(run, ["weather"]))}
            self.program_kb = await asyncio.to_thread(_peak_rss_kb, [str(build.binary)], env)
            await pooled._loopback.close_run(run)

            # 8 concurrent calls, fresh code each, through one controller.
            start = time.monotonic()
            results = await asyncio.gather(*(pooled.execute(tag() + WEATHER) for _ in range(8)))
            self.concurrent = (sum(r.ok for r in results), time.monotonic() - start)

    async def serve(self) -> None:
        """A real `gocode serve`: the first call after start, memory over many calls."""
        cfg = self.tmp / "gocode.json"
        cfg.write_text(
            json.dumps({"mcpServers": {"weather": {"command": sys.executable, "args": ["-m", "gocode.demo.server"]}}})
        )
        gocode = str(Path(sys.executable).parent / "gocode")
        params = StdioServerParameters(command=gocode, args=["serve", "-c", str(cfg)])
        start = time.monotonic()
        async with Client(stdio_client(params), mode="legacy") as c:
            self.serve_start = time.monotonic() - start
            pid = _find_serve_pid(str(cfg))
            t = time.monotonic()
            r = await c.call_tool("execute_go_code", {"code": tag() + WEATHER})
            self.first_call = time.monotonic() - t
            assert not r.is_error, r.content
            warm = []
            for _ in range(3):
                t = time.monotonic()
                await c.call_tool("execute_go_code", {"code": tag() + WEATHER})
                warm.append(time.monotonic() - t)
            self.serve_warm = statistics.median(warm)
            self.rss: dict[int, int] = {}
            variants = [f"// variant {i}\n" + WEATHER for i in range(10)]
            say(f"{self.calls} consecutive calls through gocode serve …")
            for i in range(1, self.calls + 1):
                r = await c.call_tool("execute_go_code", {"code": variants[i % len(variants)]})
                assert not r.is_error
                if i in (50, self.calls):
                    self.rss[i] = _status_kb(pid, "VmRSS")
            self.serve_peak_kb = _status_kb(pid, "VmHWM")

    def report(self) -> None:
        rows = {name: median_p90(xs) for name, xs in self.times.items()}
        limit = rows["limit (compile + link + run)"][0]
        naive = rows["naive floor (go build + run)"][0]
        cpe = rows["CPE-style baseline, weather"][0]
        print(
            f"\ngocode benchmark — {self.ws.toolchain.version}, {os.cpu_count()} cores, {self.runs} interleaved runs\n"
        )
        print(f"| {'scenario':<36} | {'median':>8} | {'p90':>8} | {'× limit':>7} | {'× naive':>7} | {'× CPE':>6} |")
        print(f"|{'-' * 38}|{'-' * 10}|{'-' * 10}|{'-' * 9}|{'-' * 9}|{'-' * 8}|")
        for name, (med, p90) in rows.items():
            print(
                f"| {name:<36} | {med * 1000:6.0f}ms | {p90 * 1000:6.0f}ms | {med / limit:7.2f} | {med / naive:7.2f} | {med / cpe:6.2f} |"
            )
        growth = (self.rss[self.calls] - self.rss[50]) / self.rss[50]
        print()
        print(f"program peak RSS (pooled weather):        {self.program_kb / 1024:.1f} MiB")
        print(f"controller (gocode serve) peak RSS:       {self.serve_peak_kb / 1024:.1f} MiB")
        print(
            f"controller RSS after 50 / {self.calls} calls:     {self.rss[50] / 1024:.1f} / "
            f"{self.rss[self.calls] / 1024:.1f} MiB ({growth:+.1%})"
        )
        print(f"gocode serve start until connected:       {self.serve_start * 1000:.0f} ms")
        print(
            f"first call after start / warm call:       {self.first_call * 1000:.0f} / {self.serve_warm * 1000:.0f} ms"
        )
        if "pooled weather, same code, sandboxed" in rows:
            boxed = rows["pooled weather, same code, sandboxed"][0]
            same_code = rows["pooled weather, same code again"][0]
            print(f"sandbox overhead per call (same code):   {(boxed - same_code) * 1000:+.0f} ms")
        for note in self.notes:
            print(f"note: {note}")
        ok8, wall8 = self.concurrent
        print(f"8 concurrent calls:                       {ok8}/8 ok in {wall8:.2f} s ({8 / wall8:.1f} calls/s)")
        pooled = rows["pooled weather"][0]
        same = rows["pooled weather, same code again"][0]
        type_err = rows["compile error (type), pooled"][0]
        syntax_err = rows["syntax error, pooled"][0]
        targets = [
            ("warm pooled ≤ 1.35× the limit", pooled / limit, pooled <= 1.35 * limit),
            ("compile error ≤ 0.5× a warm call", type_err / pooled, type_err <= 0.5 * pooled),
            ("syntax error ≤ 0.5× a warm call", syntax_err / pooled, syntax_err <= 0.5 * pooled),
            ("same code again ≤ 0.35× a warm call", same / pooled, same <= 0.35 * pooled),
            ("≥ 3× faster than the CPE-style baseline", cpe / pooled, cpe >= 3 * pooled),
            (
                "first call after serve start ≤ 1.5× warm",
                self.first_call / self.serve_warm,
                self.first_call <= 1.5 * self.serve_warm,
            ),
            ("controller memory growth 50→N < 10%", growth, growth < 0.10),
            ("8 concurrent calls all complete", ok8, ok8 == 8),
        ]
        print("\ntargets:")
        for name, value, met in targets:
            shown = f"{value:.2f}" if isinstance(value, float) else str(value)
            print(f"  [{'met' if met else 'MISSED'}] {name}: {shown}")

    def cleanup(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)


def _find_serve_pid(marker: str) -> int:
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"serve" in cmd and marker.encode() in cmd:
                return int(pid)
    raise RuntimeError("gocode serve process not found")


def _peak_rss_kb(argv: list[str], env: dict[str, str]) -> int:
    """A program's peak RSS, from /proc/PID/status VmHWM sampled until it exits.

    Not wait4's ru_maxrss: that counts the forked copy of this (large) Python process before
    the exec, which swamps a small Go program. VmHWM starts afresh at exec.
    """
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL)
    peak = 0
    while proc.poll() is None:
        with contextlib.suppress(OSError, KeyError):  # it may exit between poll() and the read
            peak = max(peak, _status_kb(proc.pid, "VmHWM"))
        time.sleep(0.002)
    if proc.returncode != 0:
        raise RuntimeError(f"the program failed (exit {proc.returncode})")
    return peak


def _status_kb(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    raise KeyError(key)


def say(msg: str) -> None:
    print(f"bench: {msg}", file=sys.stderr, flush=True)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=7, help="repetitions per scenario (default 7)")
    parser.add_argument("--calls", type=int, default=500, help="consecutive calls for the memory check (default 500)")
    parser.add_argument(
        "--sandbox", default="best-effort", help="codeMode.sandbox for the sandboxed row (default best-effort)"
    )
    args = parser.parse_args()
    if args.calls < 50 or args.runs < 2:
        parser.error("--calls must be at least 50 and --runs at least 2")
    bench = Bench(args.runs, args.calls, args.sandbox)
    try:
        await bench.latency()
        await bench.serve()
        bench.report()
    finally:
        bench.cleanup()


if __name__ == "__main__":
    anyio.run(main)
