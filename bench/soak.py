"""Soak benchmark: one ``gocode serve --transport http`` answering many calls of fresh code.

    make bench-soak      # or: .venv/bin/python bench/soak.py [--calls 5000] [--clients 2] [--every 500]

Every call runs code no earlier call ran (a computation with numbers unique to it, plus one
getWeather call to the bundled demo server), so each one compiles and links a new program
and leaves whatever a run leaves behind. Every ``--every`` calls it samples the disk used by
gocode (its cache directory, a private one for this run, with Go's build cache hard-linked
from the warm one, and the per-run directories in ``$TMPDIR``) and the resident memory of the
serving process and its MCP server. Printed: one line per sample, then the growth from the
sample after the warm-up (``--warmup`` calls) to the last one. Nothing grows without bound
when that growth stays within a few per cent. ``--minutes`` stops early (figures so far).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
import mcp_types as types
import yaml
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from deploy.cluster import free_port, rss_bytes  # noqa: E402
from gocode.compile.housekeeping import RUN_DIR_PREFIX, tree_size  # noqa: E402
from gocode.paths import cache_dir  # noqa: E402

CODE = """\
w := must(getWeather(ctx, GetWeatherInput{City: "Paris"}))
a, b := %d, %d
fmt.Println("sum", a+b, "product", a*b, "temp", w.Temperature)
"""


def expected(n: int) -> str:
    a, b = n + 1_000_000, 7 * n + 3
    return f"sum {a + b} product {a * b} temp 18.5\n"


def mcp_servers(pid: int) -> list[int]:
    """The serving process's MCP server processes (not the programs it is running)."""
    try:
        kids = [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []
    out = []
    for kid in kids:
        try:
            if b"gocode.demo.server" in Path(f"/proc/{kid}/cmdline").read_bytes():
                out.append(kid)
        except OSError:
            continue
    return out


def private_cache(base: Path) -> Path:
    """A cache of its own for this run: the module cache linked, Go's build cache hard-linked
    (no copy, no warm-up of minutes; Go only ever adds and removes whole files)."""
    shared = cache_dir()
    cache = base / "cache"
    cache.mkdir(parents=True)
    (cache / "gomod").symlink_to(shared / "gomod")
    subprocess.run(["cp", "-al", str(shared / "go-build"), str(cache / "go-build")], check=True)
    return cache


def disk(cache: Path, tmp: Path) -> int:
    runs = sum(tree_size(p) for p in tmp.glob(RUN_DIR_PREFIX + "*"))
    return tree_size(cache) + runs


async def soak(args: argparse.Namespace) -> int:
    # Beside the warm cache (hard links need one file system); run directories in a TMPDIR of
    # their own that the run users can enter (a home directory often is not).
    base = Path(tempfile.mkdtemp(prefix="gocode-soak-", dir=str(cache_dir().parent)))
    tmp = Path(tempfile.mkdtemp(prefix="gocode-soak-tmp-"))
    os.chmod(tmp, 0o1777)  # as /tmp: each run's directory is its own
    cache = private_cache(base)
    config = base / "gocode.yaml"
    demo = {"command": sys.executable, "args": ["-m", "gocode.demo.server"], "cwd": str(ROOT)}
    config.write_text(yaml.safe_dump({"mcpServers": {"weather": demo}}))
    port = free_port()
    env = {**os.environ, "GOCODE_CACHE_DIR": str(cache), "TMPDIR": str(tmp)}
    log = (base / "serve.log").open("w")
    cmd = [sys.executable, "-m", "gocode.cli", "serve", "-c", str(config), "--transport", "http", "--port", str(port)]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=log, start_new_session=True)
    url = f"http://127.0.0.1:{port}/mcp"
    deadline = time.monotonic() + args.minutes * 60 if args.minutes else None
    samples: list[tuple[int, int, int, int]] = []  # calls, disk, serve RSS, server RSS
    failures: list[str] = []
    done = 0
    start = time.monotonic()
    try:
        for _ in range(600):
            try:
                async with Client(streamable_http_client(url), mode="legacy") as c:
                    await c.list_tools()  # answered once warm
                break
            except Exception:
                await anyio.sleep(0.5)
        print(f"serving after {time.monotonic() - start:.0f} s; cache {cache}", flush=True)

        def sample() -> None:
            servers = sum(rss_bytes(p) for p in mcp_servers(proc.pid))
            samples.append((done, disk(cache, tmp), rss_bytes(proc.pid), servers))
            d, r, s = samples[-1][1:]
            print(
                f"calls {done:>5}  disk {d / 2**20:8.1f} MiB  serve RSS {r / 2**20:6.1f} MiB  "
                f"server RSS {s / 2**20:6.1f} MiB  failures {len(failures)}  {time.monotonic() - start:.0f} s",
                flush=True,
            )

        sample()
        next_n = 0
        lock = anyio.Lock()

        async def worker() -> None:
            nonlocal done, next_n
            async with Client(streamable_http_client(url), mode="legacy") as c:
                while True:
                    async with lock:
                        if next_n >= args.calls or (deadline and time.monotonic() > deadline):
                            return
                        n, next_n = next_n, next_n + 1
                    a, b = n + 1_000_000, 7 * n + 3
                    r = await c.call_tool("execute_go_code", {"code": CODE % (a, b)})
                    got = "".join(p.text for p in r.content if isinstance(p, types.TextContent))
                    if r.is_error or got != expected(n):
                        failures.append(f"call {n}: {got[:300]}")
                    async with lock:
                        done += 1
                        if done % args.every == 0:
                            sample()

        async with anyio.create_task_group() as tg:
            for _ in range(args.clients):
                tg.start_soon(worker)
        if not samples or samples[-1][0] != done:
            sample()
    finally:
        os.killpg(proc.pid, 15)
        proc.wait(30)
        log.close()
    report(samples, args.warmup, failures, time.monotonic() - start)
    if args.keep:
        print(f"kept: {base} {tmp}")
    else:
        shutil.rmtree(base, ignore_errors=True)
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if failures else 0


def report(samples: list[tuple[int, int, int, int]], warmup: int, failures: list[str], seconds: float) -> None:
    print(f"\n{samples[-1][0]} calls in {seconds:.0f} s, {len(failures)} failed")
    for f in failures[:5]:
        print("  " + f)
    after = [s for s in samples if s[0] >= warmup]
    if len(after) < 2:
        print(f"too few samples after the warm-up ({warmup} calls) for a growth figure")
        return
    first, last = after[0], after[-1]
    for i, what in ((1, "disk"), (2, "serve RSS"), (3, "server RSS")):
        growth = (last[i] - first[i]) / first[i] * 100 if first[i] else float("nan")
        print(
            f"{what:<11} {first[i] / 2**20:8.1f} MiB at call {first[0]} -> {last[i] / 2**20:8.1f} MiB at call "
            f"{last[0]}: {growth:+.1f} %"
        )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=5000)
    ap.add_argument("--clients", type=int, default=2, help="calls at once")
    ap.add_argument("--every", type=int, default=500, help="sample every this many calls")
    ap.add_argument("--warmup", type=int, default=500, help="growth is measured from the first sample after this")
    ap.add_argument("--keep", action="store_true", help="keep the cache and temp directories for a look")
    ap.add_argument("--minutes", type=float, default=0, help="stop after this long (0: run every call)")
    return anyio.run(soak, ap.parse_args())


if __name__ == "__main__":
    sys.exit(main())
