"""The two runtimes a program can be linked with, side by side in one run (gocode.compile.runners).

    .venv/bin/python bench/runners.py [--rounds 9] [--calls 160] [--skip-load]

``sdk`` is today's runtime (the MCP Go SDK's sessions: how every program was linked before);
``loopback`` the thin one pooled runs now link (plain HTTP/1.1 to the controller, package net
alone). Every call is a new program (a unique line), so each one is type-checked, compiled and
linked: the case the thin runtime is for. Printed, for each runtime:

- a warm call through ``Toolbox.execute`` (the demo weather program): wall time, the build and
  the run, and the CPU seconds of the whole process tree per call (this process, the Go helper,
  the compiler and linker, the program, the demo server);
- where a build's time goes, phase by phase (the helper's prepare and type check, compile,
  link) and the binary's size;
- a compile error's answer (the type check alone: no runtime is linked);
- the first call after ``gocode serve`` is ready, and its time to ready;
- p50/p99 at 1 and at 32 clients on one replica behind HAProxy (bench/load.py's harness), with
  calls per CPU-second of the replica's process tree.

Timings are for reading, not asserting: compare the ratios of one run on one machine.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # bench/load.py and deploy/cluster.py, when run as a script

from bench import load  # noqa: E402
from deploy.cluster import GOCODE, Cluster, descendants, free_port, http_get  # noqa: E402
from gocode.compile import golink, runners  # noqa: E402
from gocode.compile.runners import LOOPBACK, SDK, Runner  # noqa: E402
from gocode.config import parse_config  # noqa: E402
from gocode.program.code import ModelCode  # noqa: E402
from gocode.program.render import render_main  # noqa: E402
from gocode.toolbox import Toolbox  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")
WEATHER = 'w, err := getWeather(ctx, GetWeatherInput{City: "Paris"})\nif err != nil {\n\treturn err\n}\nfmt.Println(w.Conditions)\n'
TYPE_ERROR = 'var n int = "x"\nfmt.Println(n)\n'


def say(msg: str) -> None:
    print(f"bench: {msg}", file=sys.stderr, flush=True)


def fresh(code: str) -> str:
    """A new program each time: never a cached binary."""
    return f"// {uuid.uuid4().hex}\n{code}"


@contextmanager
def runner(which: Runner) -> Iterator[None]:
    """Builds in this process link ``which`` while inside (the loopback one is the default)."""
    runners.SDK_ONLY = which == SDK
    try:
        yield
    finally:
        runners.SDK_ONLY = False


def proc_cpu(pid: int) -> float:
    """CPU seconds of a live process and of its children it has reaped."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return sum(int(v) for v in fields[11:15]) / TICK  # utime stime cutime cstime


def tree_cpu(pid: int | None = None) -> float:
    """CPU seconds of a process tree: the process, its reaped children, its live descendants."""
    if pid is None:
        me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        own = me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime
        pid = os.getpid()
    else:
        own = proc_cpu(pid)
    return own + sum(proc_cpu(p) for p in descendants(pid))


def config() -> Any:
    doc = {
        "mcpServers": {"weather": {"command": sys.executable, "args": ["-m", "gocode.demo.server"]}},
        "defaults": {"codeMode": {"sandbox": "auto"}},
    }
    return parse_config(json.dumps(doc), "<bench>.json")


def med(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


async def warm_calls(rounds: int) -> dict[str, Any]:
    """Fresh weather programs through Toolbox.execute, the runtimes alternating."""
    rows: dict[str, dict[str, list[float]]] = {
        r: {"wall": [], "build": [], "run": [], "cpu": []} for r in runners.RUNNERS
    }
    errors: list[float] = []
    phases: dict[str, dict[str, list[float]]] = {r: {} for r in runners.RUNNERS}
    sizes: dict[str, int] = {}
    async with Toolbox(config()) as box:
        await box.wait_warm()
        for which in runners.RUNNERS:  # once each, untimed: each runtime's export data listed
            with runner(which):
                await box.execute(fresh(WEATHER))
        for i in range(rounds):
            for which in runners.RUNNERS if i % 2 == 0 else runners.RUNNERS[::-1]:
                with runner(which):
                    cpu, start = tree_cpu(), time.perf_counter()
                    r = await box.execute(fresh(WEATHER))
                    wall, cpu = time.perf_counter() - start, tree_cpu() - cpu
                assert r.ok and r.output == "sunny\n" and r.runner == which, (r.runner, r.error_text())
                row = rows[which]
                row["wall"].append(wall * 1000)
                row["build"].append(r.build_ms)
                row["run"].append(r.run_ms)
                row["cpu"].append(cpu)
            r = await box.execute(fresh(TYPE_ERROR))
            assert r.phase == "compile", r.error_text()
            errors.append(r.build_ms)
        mc, pkg = box.code_mode.module_cache, box.code_mode.package
        for which in runners.RUNNERS:
            for _ in range(max(3, rounds // 2)):
                for name, ms in (await build_phases(mc, pkg, which)).items():
                    phases[which].setdefault(name, []).append(ms)
            sizes[which] = await binary_size(mc, pkg, which)
    return {"rows": rows, "errors": errors, "phases": phases, "sizes": sizes}


async def build_phases(mc: Any, pkg: Any, which: Runner) -> dict[str, float]:
    """One fresh program's build, phase by phase, as ModuleCache.build does it."""
    code = ModelCode(fresh(WEATHER))
    t0 = time.perf_counter()
    prepared = await mc.prepare(pkg, code, runner=which)
    t1 = time.perf_counter()
    main_src = render_main(pkg, prepared, "model.go")
    direct = await mc.direct_config(pkg, which)
    checked = await mc.gofix.call(
        {"op": "check", "src": main_src, "importcfg": str(direct.importcfg), "lang": direct.lang}
    )
    t2 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="gocode-bench-") as tmp:
        d = Path(tmp)
        (d / "main.go").write_text(checked.get("src") or main_src)
        env = mc.go_env()
        argv = [str(direct.compile), "-o", "main.a", "-p", "main", "-complete", "-pack", "-nolocalimports",
                "-importcfg", str(direct.importcfg), "-lang", direct.lang, "main.go"]  # fmt: skip
        rc, text = await golink.run(argv, cwd=d, env=env)
        assert rc == 0, text
        t3 = time.perf_counter()
        argv = [str(direct.link), "-o", "prog", "-importcfg", str(direct.importcfg), *golink.LINK_FLAGS, "main.a"]
        rc, text = await golink.run(argv, cwd=d, env=env)
        assert rc == 0, text
        t4 = time.perf_counter()
    return {
        "prepare": (t1 - t0) * 1000,
        "type check": (t2 - t1) * 1000,
        "compile": (t3 - t2) * 1000,
        "link": (t4 - t3) * 1000,
    }


async def binary_size(mc: Any, pkg: Any, which: Runner) -> int:
    built = await mc.build(pkg, ModelCode(fresh(WEATHER)), runner=which)
    assert built.ok and built.binary is not None, built.output
    return int(built.binary.stat().st_size)


def first_call(which: Runner) -> tuple[float, float]:
    """(seconds until /readyz, seconds of the first execute_go_code after it) for a new serve."""
    with tempfile.TemporaryDirectory(prefix="gocode-bench-first-") as tmp:
        cfg = Path(tmp) / "gocode.yaml"
        demo = {"command": sys.executable, "args": ["-m", "gocode.demo.server"], "cwd": str(ROOT)}
        cfg.write_text(yaml.safe_dump({"mcpServers": {"weather": demo}}))
        env = {**os.environ, "GOCODE_TOKEN": load.TOKEN, "GOCODE_STATE_DIR": tmp}
        if which == SDK:
            env["GOCODE_RUNNER"] = SDK
        port = free_port()
        argv = [GOCODE, "serve", "-c", str(cfg), "--transport", "http", "--port", str(port)]
        start = time.perf_counter()
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            ready = wait_ready(port, start)
            t = time.perf_counter()

            async def one() -> str:
                async with load.client(f"http://127.0.0.1:{port}/mcp") as c:
                    r = await c.call_tool("execute_go_code", {"code": fresh(WEATHER)})
                    return load.text_of(r)

            out = anyio.run(one)
            assert out == "sunny\n", out
            return ready, time.perf_counter() - t
        finally:
            proc.terminate()
            proc.wait(timeout=30)


def wait_ready(port: int, start: float, timeout: float = 180) -> float:
    while time.perf_counter() - start < timeout:
        try:
            status, _ = http_get(f"http://127.0.0.1:{port}/readyz", load.TOKEN, timeout=2)
        except OSError:
            status = 0
        if status == 200:
            return time.perf_counter() - start
        time.sleep(0.05)
    raise RuntimeError("gocode serve did not get ready")


def fresh_program(n: int, rng: random.Random) -> tuple[str, str, str]:
    """bench/load.py's n-th call, always a new program (a unique line)."""
    city = list(load.CITIES)[n % len(load.CITIES)]
    code = load.WEATHER % (json.dumps(city), json.dumps(city))
    return "fresh", fresh(code), f"{city} {load.CITIES[city]:.1f}\n"


def under_load(which: Runner, calls: int, clients_list: tuple[int, ...]) -> dict[int, dict[str, float]]:
    """p50/p99 and calls per CPU-second on one replica, for each number of clients."""
    load.program = fresh_program  # every call a new program
    out: dict[int, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="gocode-bench-runners-") as tmp:
        cfg = Path(tmp) / "gocode.yaml"
        demo = {"command": sys.executable, "args": ["-m", "gocode.demo.server"], "cwd": str(ROOT)}
        cfg.write_text(yaml.safe_dump({"mcpServers": {"weather": demo}}))
        env = {"GOCODE_RUNNER": SDK} if which == SDK else {}
        with Cluster(cfg, replicas=1, token=load.TOKEN, env=env) as cluster:
            pid = cluster.members[0].proc.pid
            for clients in clients_list:
                n = calls if clients > 1 else max(10, calls // 8)
                cpu, start = tree_cpu(pid), time.perf_counter()
                stats = anyio.run(load.run_load, cluster, n, clients, 3, None)
                wall, cpu = time.perf_counter() - start, tree_cpu(pid) - cpu
                assert stats.ok == n and not stats.wrong, (
                    stats.ok,
                    stats.wrong[:3],
                    stats.other_errors[:3],
                    stats.lost[:3],
                )
                out[clients] = {
                    "calls": n,
                    "p50": load.percentile(stats.latencies, 0.5) * 1000,
                    "p99": load.percentile(stats.latencies, 0.99) * 1000,
                    "per_cpu_s": n / cpu if cpu > 0 else float("nan"),
                    "throughput": n / wall,
                    "busy": stats.busy,
                }
    return out


def report(
    warm: dict[str, Any], first: dict[str, tuple[float, float]], loaded: dict[str, dict[int, dict[str, float]]]
) -> None:
    rows, phases = warm["rows"], warm["phases"]
    lines = [f"{'':44} {'sdk (today)':>14} {'loopback':>14} {'ratio':>7}"]

    def row(label: str, a: float, b: float, fmt: str = "{:.0f} ms", ratio: bool = True) -> None:
        r = f"{b / a:.2f}x" if ratio and a else ""
        lines.append(f"{label:44} {fmt.format(a):>14} {fmt.format(b):>14} {r:>7}")

    s, t = rows[SDK], rows[LOOPBACK]
    row("warm call, new program (median wall)", med(s["wall"]), med(t["wall"]))
    row("  build (check, compile, link)", med(s["build"]), med(t["build"]))
    row("  run", med(s["run"]), med(t["run"]))
    row("CPU seconds per call (process tree)", med(s["cpu"]), med(t["cpu"]), "{:.3f} s")
    row("calls per CPU-second, one client", 1 / med(s["cpu"]), 1 / med(t["cpu"]), "{:.2f}")
    for name in phases[SDK]:
        row(f"  phase: {name} (median)", med(phases[SDK][name]), med(phases[LOOPBACK][name]), "{:.1f} ms")
    row("binary size", warm["sizes"][SDK] / 1e6, warm["sizes"][LOOPBACK] / 1e6, "{:.1f} MB")
    lines.append(f"{'compile error answer (median build_ms)':44} {med(warm['errors']):>14.1f} ms (no runtime linked)")
    if first:
        row("serve: time to /readyz", first[SDK][0] * 1000, first[LOOPBACK][0] * 1000, ratio=False)
        row("serve: first call after ready", first[SDK][1] * 1000, first[LOOPBACK][1] * 1000)
    for clients in sorted(next(iter(loaded.values()), {})):
        a, b = loaded[SDK][clients], loaded[LOOPBACK][clients]
        lines.append(f"one replica, {clients} client(s), {int(a['calls'])} new programs:")
        row("  p50", a["p50"], b["p50"])
        row("  p99", a["p99"], b["p99"])
        row("  calls per CPU-second (replica's tree)", a["per_cpu_s"], b["per_cpu_s"], "{:.2f}")
        row("  throughput (calls/s)", a["throughput"], b["throughput"], "{:.2f}")
    print("\n".join(lines))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=9, help="warm calls per runtime (default 9)")
    ap.add_argument("--calls", type=int, default=160, help="calls at 32 clients (an eighth at 1 client)")
    ap.add_argument("--clients", type=int, default=32)
    ap.add_argument("--skip-load", action="store_true", help="no serve and no replica (warm calls only)")
    args = ap.parse_args()
    say(f"warm calls, {args.rounds} per runtime …")
    warm = asyncio.run(warm_calls(args.rounds))
    first: dict[str, tuple[float, float]] = {}
    loaded: dict[str, dict[int, dict[str, float]]] = {}
    if not args.skip_load:
        for which in runners.RUNNERS:
            say(f"first call after serve starts ({which}) …")
            first[which] = first_call(which)
        for which in runners.RUNNERS:
            say(f"one replica under load ({which}) …")
            loaded[which] = under_load(which, args.calls, (1, args.clients))
    report(warm, first, loaded)
    return 0


if __name__ == "__main__":
    sys.exit(main())
