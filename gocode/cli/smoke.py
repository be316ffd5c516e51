"""``gocode smoke``: check every configured server end to end."""

from __future__ import annotations

import json
import sys

import click

from gocode.cli.common import SECONDS, config_option, handle_errors, model_option, say_error, say_progress


@click.command()
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
    "--timeout",
    type=SECONDS,
    help="Seconds per script, unless it sets its own (default: the model's codeMode.timeout).",
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
    import asyncio
    from pathlib import Path

    from gocode import junit
    from gocode import smoke as smoke_mod
    from gocode.compile.modcache import ModuleCache
    from gocode.config import load_config

    config = load_config(config_path)
    config.code_mode_for(model)
    scripts = smoke_mod.find_scripts(Path(scripts_dir)) if scripts_dir else []
    if not config.mcp_servers and not scripts:
        where = f"no *.go scripts in {scripts_dir}" if scripts_dir else "no --scripts"
        raise click.UsageError(f"nothing to check: the config has no mcpServers and there are {where}")
    if scripts_dir and not scripts:
        say_error(f"gocode: warning: no *.go scripts in {scripts_dir}")
    if junit_path:  # find out now, not after every check has run
        try:
            Path(junit_path).parent.mkdir(parents=True, exist_ok=True)
            Path(junit_path).write_text("", encoding="utf-8")
        except OSError as exc:
            raise click.UsageError(f"cannot write the JUnit report {junit_path}: {exc.strerror or exc}") from None
    ws = ModuleCache()
    ws.ensure(say_progress)
    out = sys.stderr if as_json else sys.stdout

    def show(check: smoke_mod.Check) -> None:
        label = {"passed": "ok  ", "failed": "FAIL", "skipped": "skip"}[check.status]
        where = f"{check.group} · {check.name}" if check.group != "script" else f"script {check.name}"
        took = f"{check.duration_ms:6.0f} ms" if check.status != "skipped" else " " * 9
        click.echo(f"  {label}  {where:<44} {took}  {check.message}".rstrip(), file=out)
        for w in check.warnings:
            click.echo(f"        warning: {w}", file=out)

    report = asyncio.run(
        smoke_mod.run_smoke(config, model, scripts, modcache=ws, timeout=timeout, direct=direct, progress=show)
    )
    if junit_path:
        junit.write(report, Path(junit_path))
    summary = (
        f"{report.count('passed')} passed, {report.count('failed')} failed, {report.count('skipped')} skipped "
        f"in {report.duration_ms / 1000:.1f} s" + (f"; JUnit report: {junit_path}" if junit_path else "")
    )
    if as_json:
        click.echo(json.dumps(report.as_json()))
        say_error(summary)
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
