"""Token benchmark: what a model is sent for a tool set, classic tools against code mode.

    make bench-tokens                 # or: .venv/bin/python bench/tokens.py [--markdown]

For every server of tests/corpus/real (snapshots of real tools/list answers), for a set of four
common servers (36 tools) and for all of them together, counted with the o200k_base tokenizer
as compact JSON (what travels in a request):

- classic: the tool list as MCP clients pass it to a model (name, description, schemas);
- view: the full Go declarations alone (the model view, without the rules);
- full, index, auto: the execute_go_code definition in each codeMode.disclosure mode, plus the
  search_go_tools definition when the description does not show every declaration.

``--shapes``: what a model reads of one tool in a describe or search answer (its declaration,
plain text) before anything was learned of its results, with the learned JSON shape as a
comment (``inferResultTypes: false``), and with the result type inferred from them, for github
tools that answer JSON text without an output schema (sample results shaped like the GitHub
API's, three calls each).

The targets are printed at the end (for reading, not asserted), with the auto description at
200 servers (the corpus servers, then copies of them under other names), where even the names
tier cannot list tool names; then what saved programs
(``codeMode.savedPrograms``) add to the definitions of the common set: the save tool alone
with none saved, and each saved program (its own tool definition plus its Go declaration in
execute_go_code's description).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gocode.codemode import CodeMode  # noqa: E402
from gocode.config import Config  # noqa: E402
from gocode.toolset import ServerTools, ToolSet  # noqa: E402
from gocode.view.modelview import render_full, render_funcs  # noqa: E402
from gocode.view.tokens import count, count_json  # noqa: E402
from tests.corpus_data import load  # noqa: E402

REAL = ROOT / "tests" / "corpus" / "real"
COMMON = ("filesystem", "git", "memory", "fetch")  # 14 + 12 + 9 + 1 = 36 tools
MODES = ("full", "index", "auto")


def search_definition() -> dict[str, object]:
    """search_go_tools as offered next to execute_go_code when not every declaration is shown."""
    from gocode.search.answer import search_tool_definition

    return search_tool_definition()


def measure(name: str, toolset: ToolSet, go_version: str) -> dict[str, object]:
    row: dict[str, object] = {"set": name, "tools": len(toolset.tools()), "servers": len(toolset.servers)}
    row["classic"] = count_json([t.as_json() for t in toolset.tools()])
    search_tokens = count_json(search_definition())
    for mode in MODES:
        config = Config.model_validate({"mcpServers": {}, "defaults": {"codeMode": {"disclosure": mode}}})
        cm = CodeMode(config)
        cm.go_version = lambda: go_version  # type: ignore[method-assign]  # no toolchain lookup per row
        cm.use(list(toolset.servers))
        if mode == "full":
            row["view"] = count_json(render_full(cm.package))
        tokens = count_json(cm.tool_definition())
        tier = cm.disclosure().tier
        row[mode] = tokens + (0 if tier == "full" else search_tokens)
        row[mode + "_tier"] = tier
    return row


def corpus_sets() -> list[tuple[str, ToolSet]]:
    sets = [(p.stem, load(p)) for p in sorted(REAL.glob("*.json"))]
    by_name = dict(sets)
    common = ToolSet(tuple(s for n in COMMON for s in by_name[n].servers))
    everything = ToolSet(tuple(s for _, ts in sets for s in ts.servers))
    # Twice the corpus under other server names: close to 2,400 tools from 94 servers.
    copies = tuple(
        ServerTools("copy_" + s.server, tuple(replace(t, server="copy_" + s.server) for t in s.tools))
        for s in everything.servers
    )
    return [
        *sets,
        ("common4 (" + "+".join(COMMON) + ")", common),
        ("all corpus servers", everything),
        ("all corpus servers x2", ToolSet(everything.servers + copies)),
    ]


def _commit(i: int) -> dict[str, object]:
    who = {"name": f"Dev {i}", "email": f"dev{i}@example.com", "date": "2026-11-24T20:16:29Z"}
    return {
        "sha": f"{i:040x}",
        "html_url": f"https://github.com/o/r/commit/{i:040x}",
        "commit": {"message": f"Change {i}", "author": who, "committer": who},
        "author": {"login": f"dev{i}", "id": i, "html_url": f"https://github.com/dev{i}"},
    }


def _issue(i: int) -> dict[str, object]:
    doc: dict[str, object] = {
        "number": i,
        "title": f"Issue {i}",
        "state": "open",
        "body": "Steps to reproduce …",
        "user": {"login": f"dev{i}", "id": i},
        "labels": [{"name": "bug", "color": "d73a4a"}] if i % 2 else [],
        "comments": i * 2,
        "created_at": "2026-11-20T10:00:00Z",
        "updated_at": "2026-11-24T10:00:00Z",
        "html_url": f"https://github.com/o/r/issues/{i}",
    }
    if i == 2:
        doc["closed_at"] = None
    return doc


# Three results per tool, as three calls returned them.
SHAPE_SAMPLES: dict[str, list[object]] = {
    "list_commits": [[_commit(1), _commit(2)], [_commit(3)], [_commit(4), _commit(5), _commit(6)]],
    "get_issue": [_issue(1), _issue(2), _issue(3)],
}


def shape_rows() -> list[tuple[str, int, int, int]]:
    """(tool, tokens with nothing learned, with the learned shape as a comment, typed)."""
    import mcp_types as types

    from gocode.mcp.cache import ListingCache
    from gocode.mcp.shapes import ShapeRecorder

    github = load(REAL / "github.json")
    rows = []
    shapes_dir = os.environ.pop("GOCODE_SHAPES_DIR", None)  # each state learns in its own directory
    with tempfile.TemporaryDirectory() as tmp:
        for tool, samples in SHAPE_SAMPLES.items():
            counts = []
            for state in ("none", "comment", "typed"):
                server = {"command": "github-mcp-server", "inferResultTypes": state == "typed"}
                config = Config.model_validate({"mcpServers": {"github": server}})
                cm = CodeMode(config)
                cm.shapes = ShapeRecorder(ListingCache(Path(tmp) / tool / state), dict(config.mcp_servers))
                for doc in samples if state != "none" else []:
                    text = types.TextContent(type="text", text=json.dumps(doc))
                    cm.shapes.observe("github", tool, types.CallToolResult(content=[text]))
                cm.use(list(github.servers))
                func = next(f for f in cm.package.funcs if f.tool == tool)
                counts.append(count(render_funcs(cm.package, [func], shapes=cm.shape_comments())))
            rows.append((tool, *counts))
    if shapes_dir is not None:
        os.environ["GOCODE_SHAPES_DIR"] = shapes_dir
    return rows


# A saved program as `gocode save` derives it (tests/test_saved_calls.py: CITY_TEMPERATURE).
SAVED_EXAMPLE = {
    "description": "The temperature in a city, in Celsius or Fahrenheit.",
    "input_schema": {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "name of the city"},
            "fahrenheit": {"type": "boolean"},
        },
        "required": ["city"],
        "additionalProperties": False,
    },
    "output_schema": {
        "type": "object",
        "properties": {"city": {"type": "string"}, "temperature": {"type": "number"}},
        "required": ["city", "temperature"],
        "additionalProperties": False,
    },
}


def saved_costs(toolset: ToolSet, go_version: str, counts: tuple[int, ...] = (0, 1, 10)) -> list[tuple[str, int]]:
    """The definitions' tokens (auto disclosure) without saved programs, then with the setting on
    and ``n`` programs saved, as a toolbox offers them."""
    from gocode.tools.saved import SavedProgram, SavedStore, save_tool_definition

    def definitions(on: bool, n: int) -> int:
        config = Config.model_validate({"mcpServers": {}, "defaults": {"codeMode": {"savedPrograms": on}}})
        with tempfile.TemporaryDirectory() as state:
            old = os.environ.get("GOCODE_STATE_DIR")
            os.environ["GOCODE_STATE_DIR"] = state
            try:
                store = SavedStore.for_model(config, None)
                for i in range(n):
                    store.store(SavedProgram(f"city_temperature_{i}", source="", **SAVED_EXAMPLE))  # type: ignore[arg-type]
                cm = CodeMode(config, offer_saved=on)
                cm.go_version = lambda: go_version  # type: ignore[method-assign]
                cm.use(list(toolset.servers))
                defs: list[object] = [cm.tool_definition()]
                if cm.disclosure().tier != "full":
                    defs.append(search_definition())
                if on:
                    defs += [save_tool_definition(), *(p.tool() for p in store.all())]
                return count_json(defs)
            finally:
                if old is None:
                    os.environ.pop("GOCODE_STATE_DIR", None)
                else:
                    os.environ["GOCODE_STATE_DIR"] = old

    rows = [("savedPrograms off", definitions(False, 0))]
    rows += [(f"savedPrograms on, {n} saved", definitions(True, n)) for n in counts]
    return rows


def at_servers(count: int, go_version: str) -> tuple[int, str]:
    """The auto description plus search_go_tools for ``count`` servers: the corpus servers, then
    copies of them (copy1_github, …) until there are that many."""
    real = [s for p in sorted(REAL.glob("*.json")) for s in load(p).servers]
    servers = list(real)
    k = 1
    while len(servers) < count:
        for s in real[: count - len(servers)]:
            name = f"copy{k}_{s.server}"
            servers.append(ServerTools(name, tuple(replace(t, server=name) for t in s.tools)))
        k += 1
    config = Config.model_validate({"mcpServers": {}, "defaults": {"codeMode": {"disclosure": "auto"}}})
    cm = CodeMode(config)
    cm.go_version = lambda: go_version  # type: ignore[method-assign]
    cm.use(servers)
    tier = cm.disclosure().tier
    return count_json(cm.tool_definition()) + (0 if tier == "full" else count_json(search_definition())), tier


def table(rows: list[dict[str, object]], markdown: bool) -> str:
    head = ["tool set", "servers", "tools", "classic", "view", "view/classic", "full", "index", "auto", "auto/classic"]
    lines = []
    for r in rows:
        classic = int(r["classic"])  # type: ignore[call-overload]
        cells = [
            str(r["set"]),
            str(r["servers"]),
            str(r["tools"]),
            str(classic),
            str(r["view"]),
            f"{int(r['view']) / classic:.2f}",  # type: ignore[call-overload]
            str(r["full"]),
            f"{r['index']} ({r['index_tier']})",
            f"{r['auto']} ({r['auto_tier']})",
            f"{int(r['auto']) / classic:.2f}",  # type: ignore[call-overload]
        ]
        lines.append(cells)
    if markdown:
        out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        out += ["| " + " | ".join(c) + " |" for c in lines]
        return "\n".join(out)
    widths = [max(len(h), *(len(c[i]) for c in lines)) for i, h in enumerate(head)]
    fmt = "  ".join(f"{{:{'<' if i == 0 else '>'}{w}}}" for i, w in enumerate(widths))
    return "\n".join([fmt.format(*head), *(fmt.format(*c) for c in lines)])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    parser.add_argument("--go-version", default="1.26", help="Go version the rules name (default 1.26)")
    parser.add_argument("--shapes", action="store_true", help="only the learned result shapes' tokens (see above)")
    args = parser.parse_args()
    if args.shapes:
        print(f"{'github tool':<14}  {'nothing learned':>15}  {'learned shape':>13}  {'inferred type':>13}")
        for tool, none, comment, typed in shape_rows():
            print(f"{tool:<14}  {none:>15}  {comment:>13}  {typed:>13}")
        return 0
    rows = [measure(name, ts, args.go_version) for name, ts in corpus_sets()]
    print(table(rows, args.markdown))
    singles = rows[:-3]
    common, everything = rows[-3], rows[-1]
    worst = max(singles, key=lambda r: int(r["view"]) / int(r["classic"]))  # type: ignore[call-overload]
    total_view = sum(int(r["view"]) for r in singles)  # type: ignore[call-overload]
    total_classic = sum(int(r["classic"]) for r in singles)  # type: ignore[call-overload]
    over = [str(r["set"]) for r in singles if int(r["view"]) > 0.75 * int(r["classic"])]  # type: ignore[call-overload]
    print()
    print("targets:")
    print(
        f"  full view <= 0.75x classic: all servers {total_view}/{total_classic} = {total_view / total_classic:.2f}x; "
        f"worst {worst['set']} {int(worst['view']) / int(worst['classic']):.2f}x; "  # type: ignore[call-overload]
        f"{len(over)} of {len(singles)} servers above 0.75x"
    )
    print(
        f"  auto <= 0.5x classic on {common['set']}: {common['auto']}/{common['classic']} = "
        f"{int(common['auto']) / int(common['classic']):.2f}x"  # type: ignore[call-overload]
    )
    print(
        f"  auto <= 2,500 tokens for {everything['tools']} tools from {everything['servers']} servers: "
        f"{everything['auto']} ({everything['auto_tier']} tier)"
    )
    tokens, tier = at_servers(200, args.go_version)
    print(f"  auto <= 2,500 tokens at 200 servers: {tokens} ({tier} tier)")
    print()
    print(f"saved programs, definitions of {common['set']} (auto disclosure):")
    sets = dict(corpus_sets())
    base = None
    for label, tokens in saved_costs(sets[str(common["set"])], args.go_version):
        base = tokens if base is None else base
        print(f"  {label:<28} {tokens:>6} tokens  (+{tokens - base})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
