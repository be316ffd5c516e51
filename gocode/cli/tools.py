"""``gocode list``, ``generate``, ``search``, ``describe``: the tools and the Go the model sees."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

import click

from gocode.cli.common import config_option, handle_errors, model_option, say_error, say_progress, terminal_text
from gocode.search.limits import DEFAULT_LIMIT, MAX_LIMIT

if TYPE_CHECKING:
    from gocode.codemode import CodeMode


refresh_option = click.option(
    "--refresh",
    is_flag=True,
    help="Start the servers to list their tools, instead of the listings kept from the last "
    "time (kept a day, $GOCODE_LIST_MAX_AGE seconds).",
)


@click.command("list")
@config_option
@model_option
@refresh_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
@handle_errors
def list_cmd(config_path: str | None, model: str | None, refresh: bool, as_json: bool) -> None:
    """List each server's tools, and which are in code mode for a model."""
    import asyncio

    from gocode.config import load_config
    from gocode.mcp.browse import browse
    from gocode.run.approvals import safety_marks, with_safety
    from gocode.view.selection import listing

    config = load_config(config_path)
    settings = config.code_mode_for(model)  # an unknown model ref fails before a server starts
    result = asyncio.run(browse(config, refresh=refresh, progress=say_progress))
    doc, warnings = listing(settings, result, model)
    with_safety(doc, settings.approval, result.servers)
    for w in warnings:
        say_error(f"gocode: warning: {terminal_text(w)}")
    if as_json:
        click.echo(json.dumps(doc))
    else:
        click.echo(f"code mode: {'on' if doc['codeMode'] else 'off'} ({doc['codeModeReason']})")
        for s in doc["servers"]:
            if not s["ok"]:
                click.echo(f"{terminal_text(s['name'])}: FAILED\n  " + terminal_text(s["error"]).replace("\n", "\n  "))
                continue
            click.echo(terminal_text(f"{s['name']} ({len(s['tools'])} tools, protocol {s['protocolVersion']})"))
            for t in s["tools"]:
                mode = "go     " if t["codeMode"] else "regular"
                first = (t["description"].strip().splitlines() or [""])[0]
                click.echo(
                    terminal_text(f"  [{mode}] {t['name']}{safety_marks(t)}" + (f" — {first[:90]}" if first else ""))
                )
            for w in s["warnings"]:
                click.echo(f"  warning: {terminal_text(w)}")
    if result.failures:
        sys.exit(2)


@click.command()
@config_option
@model_option
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False),
    help="Also write the bindings module (go.mod, runtime, tools) here.",
)
@handle_errors
def generate(config_path: str | None, model: str | None, out_dir: str | None) -> None:
    """Print the Go declarations the model sees; with --out, write the bindings too."""
    import asyncio
    from pathlib import Path

    from gocode.codemode import CodeMode
    from gocode.compile.modcache import write_bindings_module
    from gocode.config import load_config

    cm = CodeMode(load_config(config_path), model)
    asyncio.run(cm.refresh())
    for w in cm.warnings:
        say_error(f"gocode: warning: {w}")
    click.echo(cm.declarations(), nl=False)
    if out_dir:
        out = Path(out_dir)
        tools_dir = write_bindings_module(out, cm.package)
        (out / "description.md").write_text(cm.description())
        (out / "servers.json").write_text(json.dumps(cm.server_specs(), indent=2) + "\n")
        say_error(
            f"gocode: wrote {out}/ (bindings in {tools_dir.relative_to(out)}, the tool description in description.md; "
            "servers.json holds the connection specs — set GOCODE_SERVERS to its content to run a program; "
            "it contains your `env`/`headers` values, keep it private)"
        )


def _code_mode(config_path: str | None, model: str | None, refresh: bool) -> CodeMode:
    import asyncio

    from gocode.codemode import CodeMode
    from gocode.config import load_config
    from gocode.mcp.browse import browse

    # Saved programs offered as a controller offers them (with codeMode.savedPrograms on).
    cm = CodeMode(load_config(config_path), model, offer_saved=True)
    cm.adopt(asyncio.run(browse(cm.config, refresh=refresh, progress=say_progress)))
    if not cm.view.code_tools.tools():
        say_error("gocode: warning: no tool is in code mode for this model (codeMode.enabled, excludedTools)")
    return cm


@click.command()
@config_option
@model_option
@refresh_option
@click.option(
    "--limit",
    type=click.IntRange(1, MAX_LIMIT),
    default=DEFAULT_LIMIT,
    show_default=True,
    help="How many tools to show.",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print one JSON object: the query, whether any tool fits it, and the tools in rank order (each "
    "with its declaration); a request in several parts also has `parts`, each with its query, fits and tools.",
)
@click.argument("query", nargs=-1, required=True)
@handle_errors
def search(
    config_path: str | None, model: str | None, refresh: bool, limit: int, as_json: bool, query: tuple[str, ...]
) -> None:
    """Find the tools for a task, best first, as search_go_tools ranks them; when none fits, say so
    and list the nearest (exit 1). A request naming several actions is answered part by part
    ("git log of the last commit; write a text file"), each part with its tools."""
    from gocode.search import semantic
    from gocode.search.limits import MAX_QUERY_CHARS

    text = " ".join(query).strip()
    if not text:
        raise click.UsageError("QUERY is empty: say what you want to do, e.g. `gocode search list pull requests`")
    # The query's vectors are computed beside importing the search index and reading the tools,
    # their Go and BM25's index (nothing to compute for a query asked before): started first,
    # as loading the two models is the longer of the two.
    semantic.embed_query_ahead(text[:MAX_QUERY_CHARS])
    from gocode.cli.searchparts import ranked_lines, show
    from gocode.search import answer as search_mod

    cm = _code_mode(config_path, model, refresh)
    index = cm.search_index()
    parts = search_mod.by_part(index, text, limit)  # a request in several parts is listed by part
    if parts:
        sys.exit(0 if show(text, parts, cm.package, cm.shape_comments(), as_json) else 1)
    ranking = index.ranking(text, limit)
    shown = ranking.tools if ranking.fits else index.nearest(text, limit)
    if not ranking.fits:
        say_error(
            f"gocode: no tool fits {text!r}" + ("; the nearest:" if shown else " (`gocode list` shows every tool)")
        )
    if as_json:
        tools = [search_mod.entry_json(cm.package, e, i + 1, cm.shape_comments()) for i, e in enumerate(shown)]
        click.echo(json.dumps({"query": text, "fits": ranking.fits, "tools": tools}))
    else:
        for line in ranked_lines(shown):
            click.echo(terminal_text(line))
    if not ranking.fits:
        sys.exit(1)


@click.command()
@config_option
@model_option
@refresh_option
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list, one object per tool found.")
@click.argument("names", nargs=-1, required=True)
@handle_errors
def describe(config_path: str | None, model: str | None, refresh: bool, as_json: bool, names: tuple[str, ...]) -> None:
    """Print the Go declarations of tools named as a model would (get_current_time, getCurrentTime,
    time.get_current_time); exit 1 when a name matches no tool."""
    from gocode.search import answer as search_mod
    from gocode.search.index import ToolEntry
    from gocode.view.modelview import render_funcs

    cm = _code_mode(config_path, model, refresh)
    index = cm.search_index()
    found: dict[str, ToolEntry] = {}
    missing = []
    for name in names:
        hits = index.lookup(name)
        if not hits:
            missing.append(search_mod.missing_note(index, name, "`gocode search WORDS…` finds tools by what they do"))
        found.update((e.qualified, e) for e in hits)
    if as_json:
        click.echo(
            json.dumps([search_mod.entry_json(cm.package, e, shapes=cm.shape_comments()) for e in found.values()])
        )
    elif found:
        click.echo(render_funcs(cm.package, [e.func for e in found.values()], shapes=cm.shape_comments()), nl=False)
    for note in missing:
        say_error(f"gocode: {note}")
    sys.exit(1 if missing else 0)
