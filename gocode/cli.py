"""The ``gocode`` command line.

stdout carries data only (declarations, program output, ``--json`` documents); progress,
warnings and errors go to stderr. Exit codes: 0 ok; 1 the code failed (compile, runtime,
timeout) or a check failed; 2 gocode itself could not run (usage, config, discovery, no Go).
Tracebacks only with ``GOCODE_DEBUG=1``.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import os
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio
import click

from gocode import junit
from gocode import smoke as smoke_mod
from gocode.build.workspace import Workspace
from gocode.codemode import CodeMode, code_mode_on, code_mode_reason, split_tools
from gocode.config import Config, load_config, parse_config
from gocode.errors import GocodeError
from gocode.mcp import logs
from gocode.mcp import server as server_mod
from gocode.mcp.discovery import discover
from gocode.mcp.guard import is_loopback
from gocode.program.render import render_bindings, tools_import_path
from gocode.resources import go_mod_template, go_sum_template, rt_sources
from gocode.run import hostlimits
from gocode.toolbox import Toolbox
from gocode.view import search as search_mod
from gocode.view import semantic
from gocode.view.modelview import render_funcs

F = TypeVar("F", bound=Callable[..., Any])

config_option = click.option(
    "-c",
    "--config",
    "config_path",
    type=click.Path(dir_okay=False),
    envvar="GOCODE_CONFIG",
    show_envvar=True,
    help="Config file (YAML or JSON). Default: gocode.yaml in the working directory.",
)
model_option = click.option(
    "--model", "model", envvar="GOCODE_MODEL", show_envvar=True, help="Model ref whose codeMode settings apply."
)


_json_logs = False  # serve --log-format json: messages become log records, one JSON object per line


def _err(msg: str) -> None:
    if _json_logs:
        logging.getLogger("gocode").warning("%s", msg.removeprefix("gocode: "))
        return
    click.echo(msg, err=True)


def handle_errors(fn: F) -> F:
    """Turn gocode's own errors into one message and exit status 2 (tracebacks with GOCODE_DEBUG=1)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except click.ClickException:
            raise  # usage errors: click prints them and exits 2
        except GocodeError as exc:
            if os.environ.get("GOCODE_DEBUG"):
                traceback.print_exc()
            _err(f"gocode: {exc.phase} error: {exc}")
            sys.exit(2)
        except KeyboardInterrupt:
            _err("gocode: interrupted")
            sys.exit(130)
        except BrokenPipeError:
            # The reader went away (`gocode list | head`): stop quietly, as Unix tools do.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(141)
        except Exception as exc:
            if os.environ.get("GOCODE_DEBUG"):
                traceback.print_exc()
            _err(f"gocode: internal error: {type(exc).__name__}: {exc} (set GOCODE_DEBUG=1 for a traceback)")
            sys.exit(2)

    return wrapper  # type: ignore[return-value]


def _progress(msg: str) -> None:
    if _json_logs:
        logging.getLogger("gocode").info("%s", msg)
        return
    _err(f"gocode: {msg}")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="gocode")
def main() -> None:
    """Go code mode for LLM agents: MCP tools as typed Go functions behind one execute_go_code tool."""
    _setup_logging()
    hostlimits.raise_open_files()


def _setup_logging(log_format: str = "text") -> None:
    """Library warnings (the MCP SDK's, e.g. a server printing non-JSON on stdout) as one line
    on stderr; their tracebacks only with GOCODE_DEBUG=1. ``json``: one object per line, and
    a ``call`` line per tool call (INFO) with its request id."""
    debug = bool(os.environ.get("GOCODE_DEBUG"))
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(logs.RequestIdFilter())
    handler.setFormatter(logs.JsonFormatter() if log_format == "json" else logs.TextFormatter())
    if not debug:

        def drop_traceback(record: logging.LogRecord) -> bool:
            if record.exc_info and record.exc_info[1] is not None:
                record.msg = f"{record.getMessage()}: {record.exc_info[1]}"
                record.args = None
            record.exc_info, record.exc_text = None, None
            return True

        handler.addFilter(drop_traceback)
    logging.basicConfig(level=logging.DEBUG if debug else logging.WARNING, handlers=[handler], force=True)
    global _json_logs
    _json_logs = log_format == "json"
    if _json_logs:
        logging.getLogger("gocode").setLevel(logging.INFO)


@main.command("list")
@config_option
@model_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
@handle_errors
def list_cmd(config_path: str | None, model: str | None, as_json: bool) -> None:
    """List each server's tools, and which are in code mode for a model."""
    config = load_config(config_path)
    settings = config.code_mode_for(model)
    result = asyncio.run(discover(config))
    excluded = set(settings.excluded_tools)
    enabled = code_mode_on(settings, result.servers)  # auto: decided as serve decides it
    for w in split_tools(result.servers, excluded, enabled).warnings:
        _err(f"gocode: warning: {w}")
    doc: dict[str, Any] = {
        "model": model,
        "codeMode": enabled,
        "codeModeSetting": settings.enabled,
        "codeModeReason": code_mode_reason(settings, result.servers),
        "servers": [],
    }
    for s in result.servers:
        tools = [
            {
                "name": t.name,
                "description": t.description,
                "codeMode": enabled and t.name not in excluded and f"{s.server}.{t.name}" not in excluded,
                "hasOutputSchema": t.output_schema is not None,
            }
            for t in s.tools
        ]
        doc["servers"].append(
            {
                "name": s.server,
                "ok": True,
                "protocolVersion": s.protocol_version,
                "tools": tools,
                "warnings": list(s.warnings),
            }
        )
    for name, exc in sorted(result.failures.items()):
        doc["servers"].append(
            {
                "name": name,
                "ok": False,
                "error": str(exc),
                "summary": exc.summary,
                "exitStatus": exc.exit_status,
                "stderr": exc.stderr,
            }
        )
    if as_json:
        click.echo(json.dumps(doc))
    else:
        click.echo(f"code mode: {'on' if enabled else 'off'} ({doc['codeModeReason']})")
        for s in doc["servers"]:
            if not s["ok"]:
                click.echo(f"{s['name']}: FAILED\n  " + s["error"].replace("\n", "\n  "))
                continue
            click.echo(f"{s['name']} ({len(s['tools'])} tools, protocol {s['protocolVersion']})")
            for t in s["tools"]:
                mode = "go     " if t["codeMode"] else "regular"
                first = (t["description"].strip().splitlines() or [""])[0]
                click.echo(f"  [{mode}] {t['name']}" + (f" — {first[:90]}" if first else ""))
            for w in s["warnings"]:
                click.echo(f"  warning: {w}")
    if result.failures:
        sys.exit(2)


@main.command()
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
    cm = CodeMode(load_config(config_path), model)
    asyncio.run(cm.refresh())
    for w in cm.warnings:
        _err(f"gocode: warning: {w}")
    click.echo(cm.declarations(), nl=False)
    if out_dir:
        out = Path(out_dir)
        tools_dir = out / tools_import_path(cm.package).removeprefix("gocodews/")
        (out / "rt").mkdir(parents=True, exist_ok=True)
        tools_dir.mkdir(parents=True, exist_ok=True)
        (out / "go.mod").write_text(go_mod_template())
        (out / "go.sum").write_text(go_sum_template())
        for name, text in rt_sources().items():
            (out / "rt" / name).write_text(text)
        (tools_dir / "tools.go").write_text(render_bindings(cm.package))
        (out / "description.md").write_text(cm.description())
        (out / "servers.json").write_text(json.dumps(cm.server_specs(), indent=2) + "\n")
        _err(
            f"gocode: wrote {out}/ (bindings in {tools_dir.relative_to(out)}, the tool description in description.md; "
            "servers.json holds the connection specs — set GOCODE_SERVERS to its content to run a program; "
            "it contains your `env`/`headers` values, keep it private)"
        )


def _code_mode(config_path: str | None, model: str | None) -> CodeMode:
    cm = CodeMode(load_config(config_path), model)
    asyncio.run(cm.refresh())
    if not cm.view.code_tools.tools():
        _err("gocode: warning: no tool is in code mode for this model (codeMode.enabled, excludedTools)")
    return cm


@main.command()
@config_option
@model_option
@click.option(
    "--limit",
    type=click.IntRange(1, search_mod.MAX_LIMIT),
    default=search_mod.DEFAULT_LIMIT,
    show_default=True,
    help="How many tools to show.",
)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list in rank order (with each declaration).")
@click.argument("query", nargs=-1, required=True)
@handle_errors
def search(config_path: str | None, model: str | None, limit: int, as_json: bool, query: tuple[str, ...]) -> None:
    """Find the tools for a task, best first, as search_go_tools ranks them (exit 1: none matched)."""
    text = " ".join(query).strip()
    if not text:
        raise click.UsageError("QUERY is empty: say what you want to do, e.g. `gocode search list pull requests`")
    cm = _code_mode(config_path, model)
    found = cm.search_index().search(text, limit)
    if as_json:
        click.echo(json.dumps([search_mod.entry_json(cm.package, e, i + 1) for i, e in enumerate(found)]))
    else:
        width = max((len(e.qualified) for e in found), default=0)
        for i, e in enumerate(found, 1):
            first = search_mod.first_sentence(e.description)
            click.echo(f"{i:>2}. {e.qualified:<{width}}  {e.function}" + (f" — {first[:100]}" if first else ""))
    if not found:
        _err(f"gocode: no tool matches {text!r}")
        sys.exit(1)


@main.command()
@config_option
@model_option
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list, one object per tool found.")
@click.argument("names", nargs=-1, required=True)
@handle_errors
def describe(config_path: str | None, model: str | None, as_json: bool, names: tuple[str, ...]) -> None:
    """Print the Go declarations of tools named as a model would (get_current_time, getCurrentTime,
    time.get_current_time); exit 1 when a name matches no tool."""
    cm = _code_mode(config_path, model)
    index = cm.search_index()
    found: dict[str, search_mod.ToolEntry] = {}
    missing = []
    for name in names:
        hits = index.lookup(name)
        if not hits:
            missing.append(search_mod.missing_note(index, name))
        found.update((e.qualified, e) for e in hits)
    if as_json:
        click.echo(json.dumps([search_mod.entry_json(cm.package, e) for e in found.values()]))
    elif found:
        click.echo(render_funcs(cm.package, [e.func for e in found.values()]), nl=False)
    for note in missing:
        _err(f"gocode: {note}")
    sys.exit(1 if missing else 0)


def _read_code(source: str) -> str:
    if source == "-":
        return sys.stdin.read()
    try:
        return Path(source).read_text(encoding="utf-8")
    except OSError as exc:
        raise click.UsageError(f"cannot read {source}: {exc}") from None


@main.command("exec")
@config_option
@model_option
@click.option(
    "--timeout", type=float, help="Seconds before the program is killed (default: the model's codeMode.timeout)."
)
@click.option(
    "--json", "as_json", is_flag=True, help="Print one JSON document (ok, phase, output, stderr, diagnostics, …)."
)
@click.option(
    "--direct",
    is_flag=True,
    help="The program starts (or dials) the servers itself, as a standalone program would, "
    "instead of reaching them through gocode's sessions.",
)
@click.argument("source", metavar="FILE|-")
@handle_errors
def exec_cmd(
    config_path: str | None, model: str | None, timeout: float | None, as_json: bool, direct: bool, source: str
) -> None:
    """Run Go code as execute_go_code would: output on stdout (exit 0), or the error on stderr (exit 1)."""
    code = _read_code(source)
    config = load_config(config_path)
    result = asyncio.run(_exec(config, model, code, timeout, direct))
    if as_json:
        click.echo(json.dumps(result.as_json()))
    else:
        click.echo(result.output, nl=False)
        if not result.ok:
            _err(result.error_text() if not result.output else result.error_text().split("\n\nstdout before")[0])
        elif result.stderr.strip():
            _err(result.stderr.rstrip())
    sys.exit(0 if result.ok else 1)


async def _exec(config: Config, model: str | None, code: str, timeout: float | None, direct: bool) -> Any:
    if direct:
        cm = CodeMode(config, model)
        await cm.refresh()
        for _, exc in sorted(cm.discovery.failures.items() if cm.discovery else ()):
            _err(f"gocode: warning: {exc}")
        return await cm.execute(code, timeout, progress=_progress)
    # gocode exec is the controller for its one run: its sessions serve the program.
    async with Toolbox(config, model, prewarm=False, progress=_progress) as box:
        return await box.execute(code, timeout)


@main.command()
@config_option
@model_option
@click.option(
    "--scripts",
    "scripts_dir",
    type=click.Path(file_okay=False, exists=True),
    help="Directory of Go scripts (*.go) to run, with expectations in their leading comments.",
)
@click.option("--junit", "junit_path", type=click.Path(dir_okay=False), help="Write a JUnit XML report here.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document (progress still goes to stderr).")
@click.option(
    "--timeout", type=float, help="Seconds per script, unless it sets its own (default: the model's codeMode.timeout)."
)
@click.option("--direct", is_flag=True, help="Run scripts as standalone programs that start the servers themselves.")
@handle_errors
def smoke(
    config_path: str | None,
    model: str | None,
    scripts_dir: str | None,
    junit_path: str | None,
    as_json: bool,
    timeout: float | None,
    direct: bool,
) -> None:
    """Check servers in Go code mode: connect, list tools, compile bindings, run scripts.

    Exit status 0 when every check passed, 1 when one failed, 2 when the smoke run itself
    could not run (bad config, no Go toolchain, nothing to check). Script expectations are
    leading comments: `// want: LINE`, `// want-match: REGEXP`, `// want-error: PHASE [REGEXP]`,
    `// timeout: SECONDS` (or exact output in NAME.out next to NAME.go).
    """
    config = load_config(config_path)
    config.code_mode_for(model)
    scripts = smoke_mod.find_scripts(Path(scripts_dir)) if scripts_dir else []
    if not config.mcp_servers and not scripts:
        where = f"no *.go scripts in {scripts_dir}" if scripts_dir else "no --scripts"
        raise click.UsageError(f"nothing to check: the config has no mcpServers and there are {where}")
    if scripts_dir and not scripts:
        _err(f"gocode: warning: no *.go scripts in {scripts_dir}")
    if junit_path:  # find out now, not after every check has run
        try:
            Path(junit_path).parent.mkdir(parents=True, exist_ok=True)
            Path(junit_path).write_text("", encoding="utf-8")
        except OSError as exc:
            raise click.UsageError(f"cannot write the JUnit report {junit_path}: {exc.strerror or exc}") from None
    ws = Workspace()
    ws.ensure(_progress)
    out = sys.stderr if as_json else sys.stdout

    def show(check: smoke_mod.Check) -> None:
        label = {"passed": "ok  ", "failed": "FAIL", "skipped": "skip"}[check.status]
        where = f"{check.group} · {check.name}" if check.group != "script" else f"script {check.name}"
        took = f"{check.duration_ms:6.0f} ms" if check.status != "skipped" else " " * 9
        click.echo(f"  {label}  {where:<44} {took}  {check.message}".rstrip(), file=out)
        for w in check.warnings:
            click.echo(f"        warning: {w}", file=out)

    report = asyncio.run(
        smoke_mod.run_smoke(config, model, scripts, workspace=ws, timeout=timeout, direct=direct, progress=show)
    )
    if junit_path:
        junit.write(report, Path(junit_path))
    summary = (
        f"{report.count('passed')} passed, {report.count('failed')} failed, {report.count('skipped')} skipped "
        f"in {report.duration_ms / 1000:.1f} s" + (f"; JUnit report: {junit_path}" if junit_path else "")
    )
    if as_json:
        click.echo(json.dumps(report.as_json()))
        _err(summary)
    else:
        failed = [c for c in report.checks if c.status == "failed"]
        for c in failed:
            title = f"{c.group} · {c.name}" if c.group != "script" else f"script {c.name}"
            click.echo(f"\n--- {title}: {c.message}")
            if c.details and c.details != c.message:
                click.echo(c.details.rstrip())
            if c.stderr.strip() and c.stderr.strip() not in c.details:
                click.echo("stderr:\n" + c.stderr.rstrip())
        click.echo(f"\n{summary}")
    sys.exit(0 if report.ok else 1)


@main.group()
def sandbox() -> None:
    """The opt-in sandbox for model programs (codeMode.sandbox)."""


@sandbox.command("doctor")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
@handle_errors
def sandbox_doctor(as_json: bool) -> None:
    """Show what this host supports and which tier each codeMode.sandbox setting would get."""
    from gocode.run import sandbox as sandbox_mod

    ws = Workspace()
    if not ws.ready:  # the launcher is built in the module workspace; the Go parser helper is not needed
        ws.warmup(_progress)
    host = asyncio.run(sandbox_mod.launcher_for(ws).probe())
    rows = sandbox_mod.describe(host)
    if as_json:
        doc = {
            "host": {**host.as_json(), **sandbox_mod.other_mechanisms(), "servers": hostlimits.server_capacity()},
            "settings": {s: {"tier": d.tier, "error": d.error or None, "warning": d.warning or None} for s, d in rows},
        }
        click.echo(json.dumps(doc))
        return
    abi = host.landlock_abi
    click.echo(f"kernel:           {host.kernel} ({host.arch}), running as uid {host.uid}")
    click.echo("Landlock:         " + (f"ABI {abi}" if abi else "not available"))
    click.echo(f"seccomp filters:  {'yes' if host.seccomp else 'no'}")
    userns = "yes" if host.user_namespaces else f"no ({host.user_namespaces_error})"
    click.echo(f"user namespaces:  {userns}")
    others = sandbox_mod.other_mechanisms()
    click.echo(f"bubblewrap:       {others['bubblewrap']}")
    click.echo(f"cgroups:          {others['cgroups']}")
    click.echo(f"processes/run:    {others['processLimit']}")
    click.echo(f"servers:          {hostlimits.describe_capacity()}")
    click.echo("\nsetting        tier")
    for setting, d in rows:
        what = d.tier or (
            "none: the program runs unconfined" if setting in ("auto", "off", "best-effort") else "refused"
        )
        click.echo(f"  {setting:<12} {what}")
        for note in (d.error, d.warning):
            if note:
                click.echo(f"               {note}")


@main.group()
def cache() -> None:
    """The cache of workspaces and built programs ($GOCODE_CACHE_DIR; see docs/operations.md)."""


def _human(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"


def _current_workspace() -> tuple[Path | None, Path | None]:
    """This gocode's workspace in the cache, and in $GOCODE_STATE_DIR when that is set."""
    try:
        ws = Workspace()
    except GocodeError:  # no Go toolchain: every workspace counts as another one's
        return None, None
    state = getattr(ws, "state", ws.dir)
    return ws.dir, (state if state != ws.dir else None)


@cache.command("info")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
@handle_errors
def cache_info(as_json: bool) -> None:
    """Show what the cache holds and what housekeeping may remove."""
    from gocode.build import housekeeping
    from gocode.build.workspace import cache_dir

    current, state = _current_workspace()
    try:
        doc = housekeeping.info(cache_dir(), current)
        if state is not None:
            doc["stateDir"] = housekeeping.info(state.parent, state)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    if as_json:
        click.echo(json.dumps(doc))
        return
    click.echo(f"cache:              {doc['cache']}")
    for w in doc["workspaces"]:
        tag = "current" if w["current"] else f"idle {w['idleSeconds'] // 3600} h"
        click.echo(f"workspace:          {w['path']}  {_human(w['bytes'])}  ({tag})")
    for kind, k in sorted(doc["removable"].items()):
        click.echo(f"{kind + ':':<19} {k['count']} entries, {_human(k['bytes'])}")
    click.echo(f"removable in all:   {_human(doc['removableBytes'])}")
    click.echo(
        f"Go build cache:     {_human(doc['goBuildCacheBytes'])} (bounded to "
        f"{_human(doc['policy']['goBuildCacheMaxBytes'])}: ${housekeeping.GOCACHE_MAX_SIZE_ENV})"
    )
    click.echo(f"Go module cache:    {_human(doc['moduleCacheBytes'])} (kept: runs need it offline)")
    p = doc["policy"]
    click.echo(
        f"automatic bounds:   {_human(p['maxBytes'])}, {p['maxAgeSeconds'] / 86400:g} days unused "
        f"(${housekeeping.MAX_SIZE_ENV}, ${housekeeping.MAX_AGE_ENV})"
    )


@cache.command("prune")
@click.option("--max-size", help="Remove least recently used entries until the removable ones fit (e.g. 500M, 2G).")
@click.option("--max-age", help="Remove entries unused for longer than this (e.g. 7d, 12h).")
@click.option("--dry-run", is_flag=True, help="Only say what would be removed.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
@handle_errors
def cache_prune(max_size: str | None, max_age: str | None, dry_run: bool, as_json: bool) -> None:
    """Remove old built programs, workspaces of other gocode versions and leftover run directories.

    Without options it applies the automatic bounds ($GOCODE_CACHE_MAX_SIZE, default 2G;
    $GOCODE_CACHE_MAX_AGE, default 14d); Go's build cache has its own size bound
    ($GOCODE_GOCACHE_MAX_SIZE, default 1G) and the same age. Nothing used in the last hour is removed, nor the
    current workspace. Exit 1 when something could not be removed.
    """
    from gocode.build import housekeeping
    from gocode.build.workspace import cache_dir

    try:
        base = housekeeping.Policy.from_env()
        policy = housekeeping.Policy(
            max_bytes=housekeeping.parse_size(max_size) if max_size else base.max_bytes,
            max_age_s=housekeeping.parse_age(max_age) if max_age else base.max_age_s,
            gocache_max_bytes=base.gocache_max_bytes,
        )
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    current, state = _current_workspace()
    doc = housekeeping.prune(cache_dir(), current, policy, dry_run=dry_run)
    if state is not None:  # per-run files and built programs kept apart from a shared cache
        more = housekeeping.prune(state.parent, state, policy, dry_run=dry_run)
        for key in ("removed", "errors", "freedBytes", "keptBytes"):
            doc[key] += more[key]
    if as_json:
        click.echo(json.dumps(doc))
    else:
        verb = "would remove" if dry_run else "removed"
        go_build = [e for e in doc["removed"] if e["kind"] == "go-build"]
        if go_build:  # thousands of small files: one line
            click.echo(f"{verb} {len(go_build)} Go build cache files, {_human(sum(e['bytes'] for e in go_build))}")
        for e in doc["removed"]:
            if e["kind"] == "go-build":
                continue
            click.echo(
                f"{verb} {e['kind']:<9} {_human(e['bytes']):>10}  idle {e['idleSeconds'] // 60} min  {e['path']}"
            )
        click.echo(
            f"{verb} {len(doc['removed'])} entries, {_human(doc['freedBytes'])}; {_human(doc['keptBytes'])} kept"
        )
        for err in doc["errors"]:
            _err(f"gocode: could not remove {err}")
    sys.exit(1 if doc["errors"] else 0)


@main.command()
@click.option("--force", is_flag=True, help="Rebuild even if the workspace is ready.")
@handle_errors
def warmup(force: bool) -> None:
    """Download and pre-build the Go workspace, so later runs need no network."""
    ws = Workspace()
    _progress(f"using {ws.toolchain.go} ({ws.toolchain.version}), cache {ws.cache}")
    ws.warmup(_progress, force=force)
    for error in semantic.fetch_all(_progress):  # search still works, with the others or by words alone
        _err(f"gocode: warning: could not fetch search model {error}; search_go_tools ranks without it")


@main.command()
@config_option
@model_option
@click.option(
    "--transport", type=click.Choice(["stdio", "http"]), default="stdio", show_default=True, help="How clients connect."
)
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP: address to bind.")
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True, help="HTTP: port (0: any).")
@click.option(
    "--token",
    envvar="GOCODE_TOKEN",
    show_envvar=True,
    help="HTTP: require `Authorization: Bearer TOKEN` on every request (prefer the variable to the flag).",
)
@click.option(
    "--metrics-token",
    envvar="GOCODE_METRICS_TOKEN",
    show_envvar=True,
    help="HTTP: a separate bearer token for /metrics (a scraper then needs no token that runs code). "
    "Without it /metrics takes the --token.",
)
@click.option(
    "--allowed-host",
    "allowed_hosts",
    multiple=True,
    metavar="NAME",
    help="HTTP: also accept this Host/Origin name (repeatable; the name clients use behind a load balancer). "
    "Default: localhost, 127.0.0.1, [::1] and the bound address. '*' accepts any.",
)
@click.option(
    "--max-body-bytes",
    type=click.IntRange(1024),
    default=server_mod.DEFAULT_MAX_BODY,
    show_default=True,
    help="HTTP: larger request bodies get 413.",
)
@click.option(
    "--insecure-no-auth",
    is_flag=True,
    help="HTTP: allow a non-loopback --host without a token. ANYONE WHO REACHES THE PORT CAN RUN CODE.",
)
@click.option(
    "--log-format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    envvar="GOCODE_LOG_FORMAT",
    show_envvar=True,
    help="stderr logs: text, or one JSON object per line with a request id per call.",
)
@click.option("--no-prewarm", is_flag=True, help="Do not build the Go bindings in the background at start.")
@handle_errors
def serve(
    config_path: str | None,
    model: str | None,
    transport: str,
    host: str,
    port: int,
    token: str | None,
    metrics_token: str | None,
    allowed_hosts: tuple[str, ...],
    max_body_bytes: int,
    insecure_no_auth: bool,
    log_format: str,
    no_prewarm: bool,
) -> None:
    """Serve execute_go_code and the model's excluded tools as an MCP server (stdio or streamable HTTP).

    Over HTTP it also answers /healthz, /readyz and /metrics (see docs/operations.md).
    Binding anything but loopback needs a token (--token or $GOCODE_TOKEN).
    """
    _setup_logging(log_format)
    config = load_config(config_path)
    config.code_mode_for(model)  # an unknown model ref fails before anything starts
    if not config.mcp_servers:
        _err(f"gocode: warning: {config.source} configures no mcpServers: execute_go_code will have no tools")
    sock = None
    if transport == "http":
        if not token and not is_loopback(host):
            if not insecure_no_auth:
                _err(
                    f"gocode: refusing to serve on {host} without a token: anyone who reaches it could run code "
                    "on this machine.\n  Set one: export GOCODE_TOKEN=$(openssl rand -hex 32) (or --token), and "
                    "give clients `Authorization: Bearer <token>`.\n  To serve without one anyway (a trusted "
                    "network only), add --insecure-no-auth."
                )
                sys.exit(2)
            _err(
                f"gocode: WARNING: --insecure-no-auth: serving on {host} WITHOUT A TOKEN: anyone who reaches "
                "this port can run code here and read /metrics"
            )
        try:
            sock = server_mod.bind(host, port)
        except OSError as exc:
            raise click.UsageError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    elif token and os.environ.get("GOCODE_TOKEN") != token:
        _err("gocode: warning: --token only applies to --transport http")
    options = server_mod.HttpOptions(tuple(allowed_hosts), max_body_bytes, metrics_token)
    server_mod.limit_malloc_arenas()  # a long-running server: resident memory stays flat
    try:
        asyncio.run(_serve(config, model, sock, host, token, not no_prewarm, options))
    finally:
        if sock is not None:
            sock.close()


async def _serve(
    config: Config,
    model: str | None,
    sock: Any,
    host: str,
    token: str | None,
    prewarm: bool,
    options: server_mod.HttpOptions | None = None,
) -> None:
    box = Toolbox(config, model, prewarm=prewarm, progress=_progress)
    tool_server = server_mod.ToolServer(box, settled=False)
    try:
        async with anyio.create_task_group() as tg:
            # The listener first (probes answer "starting"; lists wait), then discovery and warm-up.
            tg.start_soon(_transport, tool_server, sock, host, token, options, tg.cancel_scope)
            async with box:
                for w in box.warnings:
                    _err(f"gocode: warning: {w}")
                await box.settle()
                tool_server.mark_ready()
                names = [t.name for t in box.tools()]
                who = f"model {model!r}" if model else "the default model"
                _progress(
                    f"{len(names)} tool{'s' if len(names) != 1 else ''} for {who}: {', '.join(names) or '(none)'}"
                )
                await anyio.sleep_forever()  # until the transport ends and cancels this
    except* GocodeError as group:  # one message, as for every command
        raise group.exceptions[0] from None


async def _transport(
    tool_server: server_mod.ToolServer,
    sock: Any,
    host: str,
    token: str | None,
    options: server_mod.HttpOptions | None,
    done: anyio.CancelScope,
) -> None:
    try:
        if sock is None:
            _progress("serving MCP on stdio")
            try:
                await tool_server.run_stdio()
            except* (BrokenPipeError, ConnectionResetError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                pass  # the client went away mid-answer: nothing left to serve
        else:
            addr = sock.getsockname()
            shown = f"[{addr[0]}]" if ":" in addr[0] else addr[0]
            _progress(
                f"serving MCP on http://{shown}:{addr[1]}{server_mod.MCP_PATH}"
                + (" (bearer token required)" if token else "")
            )
            await server_mod.serve_http(tool_server, sock, host, token, options)
    finally:
        done.cancel()


DEMO_CODE = """\
city, err := getCity(ctx)
if err != nil {
	return err
}
weather, err := getWeather(ctx, GetWeatherInput{City: city.City, Unit: UnitFahrenheit})
if err != nil {
	return err
}
fmt.Println("City:", city.City)
fmt.Printf("Weather: %.1f°F, %s\\n", weather.Temperature, weather.Conditions)
"""


@main.command("demo-server", context_settings={"ignore_unknown_options": True})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def demo_server_cmd(args: tuple[str, ...]) -> None:
    """Run the bundled demo weather MCP server (stdio; `--transport http --port P` for HTTP).

    \b
    In a config:
      mcpServers:
        weather: {command: gocode, args: [demo-server]}
    """
    from gocode import demo_server

    demo_server.main(list(args))


def demo_config() -> Config:
    """A config with nothing but the bundled demo server, started with this Python."""
    server = {"command": sys.executable, "args": ["-m", "gocode.demo_server"]}
    return parse_config(json.dumps({"mcpServers": {"weather": server}}), "<demo>.json")


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
@click.option(
    "--sandbox",
    type=click.Choice(["auto", "off", "on", "strict", "best-effort"]),
    default="auto",
    show_default=True,
    help="Run the example under the sandbox (see `gocode sandbox doctor`).",
)
@handle_errors
def demo(as_json: bool, sandbox: str) -> None:
    """Run CPE's weather example against the bundled demo server through execute_go_code."""
    start = time.monotonic()
    result, declarations = asyncio.run(_demo(sandbox))
    if as_json:
        click.echo(json.dumps({**result.as_json(), "code": DEMO_CODE, "declarations": declarations}))
    else:
        rule = "-" * 60
        click.echo(f"{rule}\nGo declarations the model sees (execute_go_code's description):\n{rule}")
        click.echo(declarations)
        click.echo(f"{rule}\nThe model's code:\n{rule}\n{DEMO_CODE}")
        click.echo(f"{rule}\nexecute_go_code output:\n{rule}")
        click.echo(result.output if result.ok else result.error_text())
        tier = (result.sandbox or {}).get("tier")
        boxed = f"; sandbox tier {tier}" if tier else "; not sandboxed"
        click.echo(
            f"({result.phase}; build {result.build_ms:.0f} ms, run {result.run_ms:.0f} ms, "
            f"total with discovery {1000 * (time.monotonic() - start):.0f} ms{boxed})"
        )
    sys.exit(0 if result.ok else 1)


async def _demo(sandbox: str = "auto") -> tuple[Any, str]:
    config = demo_config()
    if sandbox != config.defaults.code_mode.sandbox:
        code_mode = config.defaults.code_mode.model_copy(update={"sandbox": sandbox})
        config = config.model_copy(update={"defaults": config.defaults.model_copy(update={"code_mode": code_mode})})
    async with Toolbox(config, prewarm=False, progress=_progress) as box:
        result = await box.execute(DEMO_CODE)
        return result, box.code_mode.declarations()


if __name__ == "__main__":
    main()
