"""How fast the ``gocode`` command answers: ``--help``, the commands that only show tools, a one-off exec.

    .venv/bin/python bench/cli.py [--runs N] [--baseline REV] [--only help|show|exec] [--json]

Each command runs as its own process (``python -m gocode.cli …`` with this tree first on
``PYTHONPATH``), ``--runs`` times; the figures are the minimum wall time and the minimum CPU
time (user + system, the process and the children it waited for) over the runs, so a loaded
machine inflates them less. ``--baseline REV`` also measures the tree at git revision REV
(exported to a temporary directory), each run of it right after the same run of this tree,
so the two columns share the machine's load.

- ``help``: ``gocode --help`` and every subcommand's ``--help`` (target: each < 0.3 s).
- ``show``: ``list``, ``search``, ``describe`` against the bundled demo server, and against
  the 47 real corpus servers (1,191 tools) from kept listings, with the tool listings (and the
  Go, the search index and the query's vectors) kept from a first run (target: < 1 s warm, no
  server started); "search (new query)" adds a word no run used before, so the embedding
  models load as for a question not asked before.
- ``exec``: a one-off ``gocode exec`` of the demo program against the demo server, beside the
  same program through a warm ``execute_go_code`` call (an open Toolbox) plus the demo
  server's own start (spawn to an answered ``initialize``, from a client whose SDK is already
  loaded), one of each per round so they share the machine's load; target:
  exec ≤ 1.5 × (warm call + server start). The minima of the three are taken separately (each
  at its luckiest moment); the ratio within each round (median, min, max) is printed too, as
  on a machine whose load swings the minima alone can tip the ratio either way.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

HELP_TARGET_S = 0.3
SHOW_TARGET_S = 1.0
EXEC_RATIO_TARGET = 1.5
# In a case's arguments: a word no run used before (a query the search has not seen).
FRESH = "{fresh}"


@dataclass
class Timing:
    wall: float = float("inf")
    cpu: float = float("inf")

    def add(self, wall: float, cpu: float) -> None:
        self.wall, self.cpu = min(self.wall, wall), min(self.cpu, cpu)

    def json(self) -> dict[str, float]:
        return {"wallS": round(self.wall, 4), "cpuS": round(self.cpu, 4)}


def run_once(
    tree: Path, args: list[str], cwd: Path, env_extra: dict[str, str] | None = None
) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds of the process and its waited-for children, exit status) of
    ``gocode ARGS`` (``python ARGS`` when ARGS starts with ``-c``)."""
    # Bytecode is written and reused, as an installed package has it.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(tree)
    env.update(env_extra or {})
    args = [a.replace(FRESH, f"w{uuid.uuid4().hex[:8]}") for a in args]
    argv = args if args[:1] == ["-c"] else ["-m", "gocode.cli", *args]
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, *argv],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1):
        sys.stderr.write(f"bench: gocode {' '.join(args)} exited {proc.returncode}:\n{err.decode(errors='replace')}")
    return wall, usage.ru_utime + usage.ru_stime, proc.returncode


def measure(
    trees: dict[str, Path],
    cases: list[tuple[str, list[str]]],
    runs: int,
    cwd: Path,
    env_extra: dict[str, str] | None = None,
) -> dict[str, dict]:
    """Each case in each tree, interleaved run by run so the trees share the machine's load."""
    got: dict[str, dict[str, Timing]] = {label: {t: Timing() for t in trees} for label, _ in cases}
    for _ in range(runs):
        for label, args in cases:
            for tree_name, tree in trees.items():
                wall, cpu, _ = run_once(tree, args, cwd, env_extra)
                got[label][tree_name].add(wall, cpu)
    return got


def demo_config_file(where: Path) -> Path:
    path = where / "gocode.yaml"
    server = {"command": sys.executable, "args": ["-m", "gocode.demo.server"]}
    path.write_text(json.dumps({"mcpServers": {"weather": server}}))
    return path


def show_cases(config: Path, query: str, name: str) -> list[tuple[str, list[str]]]:
    c = ["-c", str(config)]
    return [
        ("list", ["list", *c]),
        ("search", ["search", *c, *query.split()]),
        ("search (new query)", ["search", *c, *query.split(), FRESH]),
        ("describe", ["describe", *c, name]),
    ]


def corpus_cache(where: Path) -> tuple[Path, Path]:
    """A cache directory whose kept listings hold every real corpus server's tools (the search
    models and vectors linked from the user's cache), and a config naming those servers. The servers'
    commands do not exist: a command that started one would fail."""
    from gocode.config import parse_config
    from gocode.mcp.cache import RecentListings
    from gocode.mcp.listing import Listing
    from gocode.paths import VECTORS_DIR, cache_dir
    from tests.corpus_data import CORPUS, load

    cache = where / "cache"
    cache.mkdir()
    # The search models, and the tools' vectors (embedding 1,191 tools takes minutes, once).
    for shared in ("models", VECTORS_DIR):
        (cache_dir() / shared).mkdir(parents=True, exist_ok=True)
        (cache / shared).symlink_to(cache_dir() / shared)
    servers = {s.server: s for p in sorted(CORPUS.glob("real/*.json")) for s in load(p).servers}
    specs = {name: {"command": f"/nonexistent/corpus-server-{name}"} for name in sorted(servers)}
    config_path = where / "corpus.json"
    config_path.write_text(json.dumps({"mcpServers": specs}))
    config = parse_config(config_path.read_text(), str(config_path))
    recent = RecentListings(cache / "recent-tool-lists")
    for name, server in servers.items():
        tools = [
            {k: v for k, v in (("name", t.name), ("description", t.description), ("inputSchema", t.input_schema),
                               ("outputSchema", t.output_schema)) if v is not None}
            for t in server.tools
        ]  # fmt: skip
        recent.save(name, config.mcp_servers[name], Listing(tools=tools), "2025-11-25", "corpus snapshot")
    return cache, config_path


async def exec_rounds(
    trees: dict[str, Path], program: Path, config_path: Path, code: str, runs: int, cwd: Path
) -> tuple[dict[str, Timing], Timing, Timing, dict[str, list[float]]]:
    """A one-off ``gocode exec`` of the program per tree, the same program through an open
    Toolbox's execute_go_code (warm), and the demo server's start as a client with the SDK
    loaded sees it: one of each per round, so the three share the machine's load (on a
    machine whose load changes, measuring them one after the other skews the ratio). Also
    each round's wall ratio exec / (call + start) per tree."""
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    from gocode.config import load_config
    from gocode.toolbox import Toolbox

    one_off = {name: Timing() for name in trees}
    call, start = Timing(), Timing()
    ratios: dict[str, list[float]] = {name: [] for name in trees}
    params = StdioServerParameters(command=sys.executable, args=["-m", "gocode.demo.server"], env=dict(os.environ))
    async with Toolbox(load_config(str(config_path)), prewarm=False) as box:
        result = await box.execute(code)  # the first call builds what later ones reuse
        if not result.ok:
            raise SystemExit(f"bench: the demo program failed: {result.error_text()}")
        for _ in range(runs):
            walls: dict[str, float] = {}
            for name, tree in trees.items():
                # Blocking: the toolbox's loop waits idle meanwhile (its server session is idle too).
                walls[name], cpu, _ = run_once(tree, ["exec", str(program)], cwd)
                one_off[name].add(walls[name], cpu)
            wall, cpu = time.perf_counter(), _cpu()
            result = await box.execute(code)
            call_wall = time.perf_counter() - wall
            call.add(call_wall, _cpu() - cpu)
            assert result.ok, result.error_text()
            wall, cpu = time.perf_counter(), _cpu()
            async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                ready_wall = time.perf_counter() - wall
            # The server's CPU is counted once it has exited and been waited for.
            start.add(ready_wall, _cpu() - cpu)
            for name, exec_wall in walls.items():
                ratios[name].append(exec_wall / (call_wall + ready_wall))
    return one_off, call, start, ratios


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def export_tree(rev: str, into: Path) -> Path:
    """The package at git revision ``rev`` as plain files under ``into``."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", rev, "gocode", "go_templates", "go.mod.tmpl", "go.sum.tmpl"],
        capture_output=True,
        check=True,
    )
    with tarfile.open(fileobj=__import__("io").BytesIO(archive.stdout)) as tar:
        tar.extractall(into, filter="data")
    return into


def _row(label: str, timings: dict[str, Timing], target: float | None) -> str:
    cells = "  ".join(f"{t.wall:7.3f} {t.cpu:6.3f}" for t in timings.values())
    mark = ""
    if target is not None and label.startswith("gocode"):
        mark = "  ok" if timings["this"].wall < target else f"  over {target:g} s"
    return f"  {label:<29}{cells}{mark}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5, help="runs per command; the minimum counts (default 5)")
    parser.add_argument("--baseline", metavar="REV", help="also measure the tree at git revision REV")
    parser.add_argument("--only", choices=["help", "show", "exec"], action="append", help="measure only these")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    args = parser.parse_args()
    parts = args.only or ["help", "show", "exec"]
    doc: dict[str, object] = {"runs": args.runs, "load": os.getloadavg()[0]}
    with tempfile.TemporaryDirectory(prefix="gocode-bench-cli-") as tmp_name:
        tmp = Path(tmp_name)
        trees = {"this": ROOT}
        if args.baseline:
            trees[args.baseline] = export_tree(args.baseline, tmp / "baseline")
            doc["baseline"] = args.baseline
        work = tmp / "work"
        work.mkdir()
        config = demo_config_file(work)
        header = "  ".join(f"{name[:8]:>7} {'cpu':>6}" for name in trees)
        out: list[str] = [f"load {doc['load']:.1f}; min of {args.runs} runs; wall and CPU seconds per tree"]
        out.append(f"  {'':<29}{header}")
        if "help" in parts:
            from gocode.cli.app import command_paths

            cases = [(" ".join(["gocode", *p, "--help"]), [*p, "--help"]) for p in command_paths()]
            cases.insert(0, ("(python: import click)", ["-c", "import click"]))  # the floor
            got = measure(trees, cases, args.runs, work)
            doc["help"] = {k: {t: v.json() for t, v in tv.items()} for k, tv in got.items()}
            out.append("--help:")
            out.extend(_row(k, tv, HELP_TARGET_S) for k, tv in got.items())
            for name in trees:
                helps = [tv[name] for k, tv in got.items() if k.startswith("gocode")]
                wall, cpu = max(t.wall for t in helps), max(t.cpu for t in helps)
                out.append(
                    f"  slowest --help [{name}]: wall {wall:.3f} s, CPU {cpu:.3f} s (target < {HELP_TARGET_S} s)"
                )
        if "show" in parts:
            doc["show"] = {}
            cache, corpus_config = corpus_cache(tmp)
            scenarios = [
                ("demo server", show_cases(config, "weather in a city", "get_weather"), None),
                (
                    "real corpus servers, kept listings",
                    show_cases(corpus_config, "create a pull request on github", "create_pull_request"),
                    {"GOCODE_CACHE_DIR": str(cache)},
                ),
            ]
            for title, cases, env_extra in scenarios:
                for tree in trees.values():  # the first run keeps the listings (and the search vectors)
                    for _, case in cases:
                        run_once(tree, case, work, env_extra)
                got = measure(trees, cases, args.runs, work, env_extra)
                doc["show"][title] = {k: {t: v.json() for t, v in tv.items()} for k, tv in got.items()}
                out.append(f"list/search/describe, {title}:")
                out.extend(_row(f"gocode {k}", tv, SHOW_TARGET_S) for k, tv in got.items())
        if "exec" in parts:
            from gocode.demo.runner import DEMO_CODE

            program = work / "demo.go"
            program.write_text(DEMO_CODE)
            for tree in trees.values():  # the module cache and the build cache set up, as a user's second run
                run_once(tree, ["exec", str(program)], work)
            one_off, call, start, rounds = asyncio.run(exec_rounds(trees, program, config, DEMO_CODE, args.runs, work))
            out.append("exec of the demo program:")
            out.append(_row("gocode exec (one-off)", one_off, None))
            out.append(f"  {'warm execute_go_code':<29}{call.wall:7.3f} {call.cpu:6.3f}")
            out.append(f"  {'demo server start':<29}{start.wall:7.3f} {start.cpu:6.3f}")
            base_wall, base_cpu = call.wall + start.wall, call.cpu + start.cpu
            ratios = {name: (t.wall / base_wall, t.cpu / base_cpu) for name, t in one_off.items()}
            for name, (rw, rc) in ratios.items():
                verdict = "ok" if rw <= EXEC_RATIO_TARGET else f"over {EXEC_RATIO_TARGET}"
                out.append(f"  ratio exec / (call + start) [{name}]: wall {rw:.2f}, CPU {rc:.2f}  ({verdict})")
            for name, per_round in rounds.items():
                out.append(
                    f"  per round, wall ratio [{name}]: median {statistics.median(per_round):.2f}, "
                    f"min {min(per_round):.2f}, max {max(per_round):.2f}"
                )
            doc["exec"] = {
                "oneOff": {t: v.json() for t, v in one_off.items()},
                "warmCall": call.json(),
                "serverStart": start.json(),
                "ratio": {name: {"wall": round(rw, 3), "cpu": round(rc, 3)} for name, (rw, rc) in ratios.items()},
                "roundRatios": {name: [round(r, 3) for r in per_round] for name, per_round in rounds.items()},
            }
    print(json.dumps(doc, indent=2) if args.json else "\n".join(out))


if __name__ == "__main__":
    main()
