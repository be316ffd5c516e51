"""Play-through benchmark: everyday tasks played by a model, classic tool calling against code mode.

    make bench-play                   # or: .venv/bin/python bench/play.py [--markdown] [--tasks a,b]
    .venv/bin/python bench/play.py show ARM TASK       # replay one transcript, print what the model saw
    .venv/bin/python bench/play.py add ARM TASK ...    # replay, then play one more turn (recording)
    .venv/bin/python bench/play.py expect ARM TASK N M TEXT   # what call M of turn N must return
    .venv/bin/python bench/play.py expect --replace ARM TASK N M TEXT   # … instead of what it said
    .venv/bin/python bench/play.py cut ARM TASK N      # drop turns N…, to play them again
    .venv/bin/python bench/play.py definitions ARM     # the tool definitions the model is given

Four real servers run offline over data the bench creates in a temporary directory
(``bench/play/fixture.json``): mcp-server-filesystem over ~30 small text and JSON files and
the git repository, mcp-server-git over a repository with 20 commits by four authors and
uncommitted changes, mcp-server-memory with an empty graph, mcp-server-time in UTC.

Eight tasks (``bench/play/tasks.json``: two single calls, three chains, three data-heavy) were
played by a model seeing the tools for the first time, once per arm:

- ``classic``: the servers' own tools (code mode off), called one by one (several per turn
  where a model would), every result read by the model;
- ``code``: what :meth:`gocode.Toolbox.definitions` offers with default settings
  (``execute_go_code``, plus ``search_go_tools`` when the description does not show every
  declaration); the model writes Go, and a failed build and its retry are part of the play.

The turns are recorded in ``bench/play/<arm>/<task>.json``. The bench replays them against the
live servers (tool results are real and current) and counts, with o200k_base, what an
OpenAI-style chat API is sent: every request's input is the system line, the tool definitions
(re-sent every time) and the whole conversation so far; its output is the assistant turn (call
names and argument JSON, or the answer). Every recorded call states what its result must
contain (``expect``) and whether it fails (``error``); a replay whose results no longer match
is reported as a mismatch and the run exits 1. Paths of the temporary directory are counted
as ``/srv/play`` so the figures do not depend on where it was created.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gocode.blocking import SyncToolbox  # noqa: E402
from gocode.config import Config  # noqa: E402
from gocode.results import ToolResult  # noqa: E402
from gocode.view.tokens import count, count_json  # noqa: E402

DATA = ROOT / "bench" / "play"  # the recorded play
NPM_BIN = ROOT / ".cache" / "npm" / "node_modules" / ".bin"
VENV_BIN = Path(sys.executable).parent
ARMS = ("classic", "code")
SYSTEM = "You are a helpful assistant. Use the tools to do the user's task, then answer briefly."
CANONICAL_ROOT = "/srv/play"  # the temporary directory, as counted
TOTAL_TARGET = 0.7  # total input tokens, code mode / classic
SINGLE_TARGET = 1.1  # every single-call task


class Unusable(Exception):
    """The bench cannot run as asked (a missing server or transcript, an unknown task): exit 2."""


# --- the world the servers see ----------------------------------------------------------------


class Fixture:
    """A temporary directory with the workspace files, the git repository and the memory file.

    :meth:`reset` puts it back to the recorded state in place (the servers keep their paths), so
    one set of server sessions serves every task.
    """

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data
        self.root = Path(os.path.realpath(tempfile.mkdtemp(prefix="gocode-play-")))
        self.workspace = self.root / "workspace"
        self.repo = self.root / "repo"
        self.memory = self.root / "memory.jsonl"
        self.workspace.mkdir()
        self.repo.mkdir()

    def reset(self) -> None:
        for d in (self.workspace, self.repo):
            for child in d.iterdir():
                shutil.rmtree(child) if child.is_dir() and not child.is_symlink() else child.unlink()
        self.memory.unlink(missing_ok=True)
        _write(self.workspace, self.data["workspace"])
        self._make_repo()

    def _make_repo(self) -> None:
        repo = self.data["repo"]
        git = ["git", "-C", str(self.repo), "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"]
        subprocess.run([*git, "init", "-q"], check=True)
        for c in repo["commits"]:
            _write(self.repo, c["files"])
            subprocess.run([*git, "add", "-A"], check=True)
            env = {
                **os.environ,
                "GIT_AUTHOR_NAME": c["author"],
                "GIT_AUTHOR_EMAIL": c["email"],
                "GIT_AUTHOR_DATE": c["date"],
                "GIT_COMMITTER_NAME": c["author"],
                "GIT_COMMITTER_EMAIL": c["email"],
                "GIT_COMMITTER_DATE": c["date"],
            }
            subprocess.run([*git, "commit", "-q", "-m", c["message"]], check=True, env=env)
        _write(self.repo, repo["uncommitted"]["modified"])
        _write(self.repo, repo["uncommitted"]["untracked"])

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)

    def expand(self, value: Any) -> Any:
        """``{root}`` in recorded strings (prompts, arguments, code, expectations) → the real path."""
        if isinstance(value, str):
            return value.replace("{root}", str(self.root))
        if isinstance(value, list):
            return [self.expand(v) for v in value]
        if isinstance(value, dict):
            return {k: self.expand(v) for k, v in value.items()}
        return value

    def canonical(self, text: str) -> str:
        return text.replace(str(self.root), CANONICAL_ROOT)

    def tokens(self, value: Any) -> int:
        """Tokens of ``value`` as sent (compact JSON), with the directory counted as CANONICAL_ROOT."""
        return count(self.canonical(json.dumps(value, ensure_ascii=False, separators=(",", ":"))))


def _write(base: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = base / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def config(fixture: Fixture, arm: str) -> Config:
    """The four servers; code mode off for the classic arm, defaults for the code arm."""
    for exe in ("mcp-server-filesystem", "mcp-server-memory"):
        if not (NPM_BIN / exe).exists():
            raise Unusable(f"{NPM_BIN / exe} is missing: run `make setup`")
    servers = {
        "filesystem": {"command": str(NPM_BIN / "mcp-server-filesystem"), "args": [str(fixture.root)]},
        "git": {"command": str(VENV_BIN / "mcp-server-git"), "args": ["--repository", str(fixture.repo)]},
        "memory": {"command": str(NPM_BIN / "mcp-server-memory"), "env": {"MEMORY_FILE_PATH": str(fixture.memory)}},
        "time": {"command": str(VENV_BIN / "mcp-server-time"), "args": ["--local-timezone", "UTC"]},
    }
    defaults: dict[str, Any] = {"codeMode": {"enabled": False}} if arm == "classic" else {}
    return Config.model_validate({"mcpServers": servers, "defaults": defaults})


@contextlib.contextmanager
def session(rec: Recordings, arm: str) -> Iterator[tuple[Fixture, SyncToolbox]]:
    fixture = Fixture(rec.fixture())
    try:
        fixture.reset()
        with SyncToolbox(config(fixture, arm)) as box:
            box.wait_warm()  # build the bindings once, before any task is timed or played
            yield fixture, box
    finally:
        fixture.close()


# --- transcripts --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Recordings:
    """A directory of play data: ``fixture.json``, ``tasks.json`` and ``<arm>/<task>.json``."""

    root: Path

    def fixture(self) -> dict[str, Any]:
        return json.loads((self.root / "fixture.json").read_text())

    def tasks(self) -> list[dict[str, str]]:
        return json.loads((self.root / "tasks.json").read_text())

    def task(self, task_id: str) -> dict[str, str]:
        for t in self.tasks():
            if t["id"] == task_id:
                return t
        raise Unusable(f"unknown task {task_id!r}")

    def path(self, arm: str, task: str) -> Path:
        return self.root / arm / f"{task}.json"

    def load(self, arm: str, task: str) -> list[dict[str, Any]]:
        path = self.path(arm, task)
        return json.loads(path.read_text())["turns"] if path.exists() else []

    def save(self, arm: str, task: str, turns: list[dict[str, Any]]) -> None:
        path = self.path(arm, task)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"turns": turns}, indent=1, ensure_ascii=False) + "\n")


@dataclass
class Play:
    """One task replayed in one arm, and what each request cost."""

    task: str
    arm: str
    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    # Where the input went: definitions and system line, the user's task, assistant turns, tool results.
    parts: dict[str, int] = field(default_factory=lambda: {"definitions": 0, "task": 0, "assistant": 0, "results": 0})
    mismatches: list[str] = field(default_factory=list)
    log: list[str] = field(default_factory=list)  # the conversation as the model saw it
    finished: bool = False


def replay(
    fixture: Fixture,
    box: SyncToolbox,
    task: dict[str, str],
    arm: str,
    turns: list[dict[str, Any]],
    partial: bool = False,
) -> Play:
    """Send the recorded turns through the live toolbox and count every request's tokens.

    ``partial``: the transcript is still being played, so it need not end with an answer."""
    fixture.reset()
    play = Play(task["id"], arm)
    definitions = fixture.tokens(box.definitions("openai")) + fixture.tokens({"role": "system", "content": SYSTEM})
    user = fixture.expand(task["prompt"])
    history = {"task": fixture.tokens({"role": "user", "content": user}), "assistant": 0, "results": 0}
    play.log.append(f"USER: {user}")
    calls_made = 0
    for n, turn in enumerate(turns, 1):
        play.requests += 1
        play.input_tokens += definitions + sum(history.values())
        play.parts["definitions"] += definitions
        for k, v in history.items():
            play.parts[k] += v
        if "answer" in turn:
            text = fixture.canonical(fixture.expand(turn["answer"]))
            play.output_tokens += count(text)
            play.log.append(f"ASSISTANT: {text}")
            play.finished = n == len(turns)
            if not play.finished:
                play.mismatches.append(f"turn {n}: an answer before the last turn")
            break
        tool_calls, messages = [], []
        for call in turn["calls"]:
            calls_made += 1
            call_id = f"call_{calls_made}"
            args = fixture.expand(call["arguments"])
            arg_text = fixture.canonical(json.dumps(args, ensure_ascii=False))
            play.output_tokens += count(call["name"]) + count(arg_text)
            tool_calls.append(
                {"id": call_id, "type": "function", "function": {"name": call["name"], "arguments": arg_text}}
            )
            result = box.call(call["name"], args)
            play.log.append(f"CALL {call['name']} {_shown_args(args)}")
            play.log.append(("ERROR: " if result.is_error else "RESULT: ") + result.text)
            play.mismatches += _check(n, call, result, fixture)
            messages.append(result.openai(call_id))
        history["assistant"] += fixture.tokens({"role": "assistant", "content": None, "tool_calls": tool_calls})
        history["results"] += sum(fixture.tokens(m) for m in messages)
    if not play.finished and not partial:
        play.mismatches.append("the transcript has no final answer")
    return play


def _shown_args(args: dict[str, Any]) -> str:
    if set(args) == {"code"}:
        return "\n" + args["code"]
    return json.dumps(args, ensure_ascii=False)


def _check(n: int, call: dict[str, Any], result: ToolResult, fixture: Fixture) -> list[str]:
    """What the recorded turn assumed about this result and no longer holds."""
    out = []
    if bool(call.get("error", False)) != result.is_error:
        state = "failed" if result.is_error else "succeeded"
        out.append(f"turn {n} {call['name']}: {state}, the recording assumed the opposite: {result.text[:300]!r}")
    for want in fixture.expand(call.get("expect", [])):
        if want not in result.text:
            out.append(f"turn {n} {call['name']}: result lacks {want!r}: {result.text[:300]!r}")
    return out


# --- the report ---------------------------------------------------------------------------------

PARTS = ("definitions", "task", "assistant", "results")


def ratio(a: int, b: int) -> float | None:
    return round(a / b, 2) if b else None


def summary(rows: list[tuple[dict[str, str], Play, Play]]) -> dict[str, Any]:
    """The figures of a run (pure): per task and arm, totals, where the input went, the targets."""

    def arm_figures(p: Play) -> dict[str, Any]:
        return {"requests": p.requests, "input": p.input_tokens, "output": p.output_tokens, "parts": dict(p.parts)}

    out: dict[str, Any] = {"tasks": [], "total": {}, "targets": {}}
    for task, c, g in rows:
        out["tasks"].append({
            "task": task["id"], "kind": task["kind"], "classic": arm_figures(c), "code": arm_figures(g),
            "input_ratio": ratio(g.input_tokens, c.input_tokens), "output_ratio": ratio(g.output_tokens, c.output_tokens),
        })  # fmt: skip
    for arm, idx in (("classic", 1), ("code", 2)):
        plays: list[Play] = [r[idx] for r in rows]  # type: ignore[misc]
        out["total"][arm] = {
            "requests": sum(p.requests for p in plays),
            "input": sum(p.input_tokens for p in plays),
            "output": sum(p.output_tokens for p in plays),
            "parts": {k: sum(p.parts[k] for p in plays) for k in PARTS},
        }
    tc, tg = out["total"]["classic"]["input"], out["total"]["code"]["input"]
    out["total"]["input_ratio"] = ratio(tg, tc)
    out["total"]["output_ratio"] = ratio(out["total"]["code"]["output"], out["total"]["classic"]["output"])
    out["targets"]["total_input"] = {
        "limit": TOTAL_TARGET,
        "ratio": ratio(tg, tc),
        "met": bool(tc) and tg <= TOTAL_TARGET * tc,
    }
    singles = [t for t in out["tasks"] if t["kind"] == "single"]
    worst = max(singles, key=lambda t: t["input_ratio"] or 0.0, default=None)
    out["targets"]["single_call"] = {
        "limit": SINGLE_TARGET,
        "worst": worst and worst["task"],
        "ratio": worst and worst["input_ratio"],
        "met": all(t["code"]["input"] <= SINGLE_TARGET * t["classic"]["input"] for t in singles),
    }
    return out


def render(s: dict[str, Any], markdown: bool) -> str:
    head = [
        "task",
        "kind",
        "classic req",
        "classic in",
        "classic out",
        "code req",
        "code in",
        "code out",
        "in ratio",
        "out ratio",
    ]

    def cells(name: str, kind: str, c: dict[str, Any], g: dict[str, Any], ri: Any, ro: Any) -> list[str]:
        figures = [c["requests"], c["input"], c["output"], g["requests"], g["input"], g["output"]]
        return [
            name,
            kind,
            *map(str, figures),
            f"{ri:.2f}" if ri is not None else "-",
            f"{ro:.2f}" if ro is not None else "-",
        ]

    lines = [
        cells(t["task"], t["kind"], t["classic"], t["code"], t["input_ratio"], t["output_ratio"]) for t in s["tasks"]
    ]
    tot = s["total"]
    lines.append(cells("total", "", tot["classic"], tot["code"], tot["input_ratio"], tot["output_ratio"]))
    out = [_table(head, lines, markdown), ""]
    out.append("where the input tokens go (definitions and system line / user task / assistant turns / tool results):")
    for arm in ARMS:
        parts = tot[arm]["parts"]
        whole = sum(parts.values()) or 1
        out.append(f"  {arm}: " + ", ".join(f"{k} {v} ({100 * v / whole:.0f}%)" for k, v in parts.items()))
    t, one = s["targets"]["total_input"], s["targets"]["single_call"]
    out += ["", "targets:"]
    out.append(
        f"  total input <= {t['limit']}x classic: {tot['code']['input']}/{tot['classic']['input']} = "
        f"{t['ratio']}x  {'MET' if t['met'] else 'NOT MET'}"
    )
    if one["worst"] is None:
        out.append(f"  every single-call task <= {one['limit']}x classic: no single-call task in this run")
    else:
        out.append(
            f"  every single-call task <= {one['limit']}x classic: worst {one['worst']} {one['ratio']}x  "
            f"{'MET' if one['met'] else 'NOT MET'}"
        )
    return "\n".join(out)


def _table(head: list[str], lines: list[list[str]], markdown: bool) -> str:
    if markdown:
        md = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        return "\n".join(md + ["| " + " | ".join(c) + " |" for c in lines])
    widths = [max(len(h), *(len(c[i]) for c in lines)) for i, h in enumerate(head)]
    fmt = "  ".join(f"{{:{'<' if i < 2 else '>'}{w}}}" for i, w in enumerate(widths))
    return "\n".join([fmt.format(*head), *(fmt.format(*c) for c in lines)])


# --- commands -----------------------------------------------------------------------------------


def bench(rec: Recordings, args: argparse.Namespace) -> int:
    chosen = rec.tasks()
    if args.tasks:
        wanted = args.tasks.split(",")
        unknown = set(wanted) - {t["id"] for t in chosen}
        if unknown:
            raise Unusable(f"unknown task(s): {', '.join(sorted(unknown))}")
        chosen = [t for t in chosen if t["id"] in wanted]
    plays: dict[str, dict[str, Play]] = {}
    for arm in ARMS:
        plays[arm] = {}
        with session(rec, arm) as (fixture, box):
            for task in chosen:
                turns = rec.load(arm, task["id"])
                if not turns:
                    raise Unusable(f"{rec.path(arm, task['id'])} is missing")
                plays[arm][task["id"]] = replay(fixture, box, task, arm, turns)
    figures = summary([(t, plays["classic"][t["id"]], plays["code"][t["id"]]) for t in chosen])
    mismatches = [f"{arm}/{p.task}: {m}" for arm in ARMS for p in plays[arm].values() for m in p.mismatches]
    figures["mismatches"] = mismatches
    print(json.dumps(figures, indent=1) if args.json else render(figures, args.markdown))
    if mismatches:
        print("\nreplay mismatches (these tasks' figures are not what was played):", file=sys.stderr)
        print("\n".join("  " + m for m in mismatches), file=sys.stderr)
        return 1
    return 0


def show(rec: Recordings, args: argparse.Namespace) -> int:
    with session(rec, args.arm) as (fixture, box):
        play = replay(fixture, box, rec.task(args.task), args.arm, rec.load(args.arm, args.task))
    print("\n".join(play.log))
    print(f"\n[{play.requests} requests, {play.input_tokens} input tokens, {play.output_tokens} output tokens]")
    for m in play.mismatches:
        print("MISMATCH:", m)
    return 1 if play.mismatches else 0


def add(rec: Recordings, args: argparse.Namespace) -> int:
    """Record one more turn: replay the turns so far, then play the new one and print its result."""
    task = rec.task(args.task)
    turns = rec.load(args.arm, args.task)
    if turns and "answer" in turns[-1]:
        raise Unusable("the transcript already ends with an answer")
    if args.answer is not None:
        turn: dict[str, Any] = {"answer": args.answer}
    else:
        calls = [{"name": name, "arguments": json.loads(text)} for name, text in args.call or []]
        calls += [{"name": "execute_go_code", "arguments": {"code": Path(f).read_text()}} for f in args.code or []]
        if not calls:
            raise Unusable("give --call NAME JSON, --code FILE or --answer TEXT")
        turn = {"calls": calls}
    with session(rec, args.arm) as (fixture, box):
        before = replay(fixture, box, task, args.arm, turns, partial=True)
        print("\n".join(before.log))
        if before.mismatches:
            print("earlier turns no longer replay:", *before.mismatches, sep="\n  ")
            return 1
        for call in turn.get("calls", []):
            result = box.call(call["name"], fixture.expand(call["arguments"]))
            print(("ERROR: " if result.is_error else "RESULT: ") + result.text)
            call["error"] = result.is_error
            call["expect"] = []
    turns.append(turn)
    rec.save(args.arm, args.task, turns)
    print(f"recorded turn {len(turns)} in {rec.path(args.arm, args.task)}")
    return 0


def expect(rec: Recordings, args: argparse.Namespace) -> int:
    """Record what a call's result must contain (checked on every replay); ``--replace``: instead
    of what it said so far (after a change to what gocode shows, the model's turns unchanged)."""
    turns = rec.load(args.arm, args.task)
    call = turns[args.turn - 1]["calls"][args.call - 1]
    call["expect"] = [*([] if args.replace else call.get("expect", [])), *args.text]
    rec.save(args.arm, args.task, turns)
    return 0


def cut(rec: Recordings, args: argparse.Namespace) -> int:
    """Drop a transcript's turns from ``turn`` on, to play them again (after a change to gocode)."""
    turns = rec.load(args.arm, args.task)
    rec.save(args.arm, args.task, turns[: args.turn - 1])
    print(f"kept {min(len(turns), args.turn - 1)} of {len(turns)} turns")
    return 0


def definitions(rec: Recordings, args: argparse.Namespace) -> int:
    with session(rec, args.arm) as (fixture, box):
        defs = box.definitions("openai")
        print(fixture.canonical(json.dumps(defs, indent=1, ensure_ascii=False)))
        print(f"[{len(defs)} tools, {count_json(defs)} tokens]", file=sys.stderr)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DATA, help="the play data directory (default bench/play)")
    parser.add_argument("--tasks", help="comma-separated task ids (default: all)")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    sub = parser.add_subparsers(dest="command")
    p = sub.add_parser("show", help="replay one transcript and print the conversation")
    p.add_argument("arm", choices=ARMS)
    p.add_argument("task")
    p = sub.add_parser("add", help="play one more turn of a transcript")
    p.add_argument("arm", choices=ARMS)
    p.add_argument("task")
    p.add_argument("--call", nargs=2, action="append", metavar=("NAME", "JSON"), help="a tool call")
    p.add_argument("--code", action="append", metavar="FILE", help="an execute_go_code call with this Go")
    p.add_argument("--answer", help="the final answer")
    p = sub.add_parser("expect", help="state what a recorded call's result must contain")
    p.add_argument("arm", choices=ARMS)
    p.add_argument("task")
    p.add_argument("turn", type=int, help="turn number (from 1)")
    p.add_argument("call", type=int, help="call number in the turn (from 1)")
    p.add_argument("text", nargs="+", help="strings the result must contain ({root}: the directory)")
    p.add_argument("--replace", action="store_true", help="replace the call's expectations instead of adding")
    p = sub.add_parser("cut", help="drop a transcript's turns from TURN on, to play them again")
    p.add_argument("arm", choices=ARMS)
    p.add_argument("task")
    p.add_argument("turn", type=int, help="the first turn to drop (from 1)")
    p = sub.add_parser("definitions", help="print the tool definitions of an arm (OpenAI format)")
    p.add_argument("arm", choices=ARMS)
    args = parser.parse_args()
    command = {"show": show, "add": add, "expect": expect, "cut": cut, "definitions": definitions}.get(
        args.command, bench
    )
    try:
        return command(Recordings(args.data), args)
    except Unusable as exc:
        print(f"play: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
