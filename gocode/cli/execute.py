"""``gocode exec``: run Go code once, as ``execute_go_code`` would."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from gocode.cli.app import _err, _progress, config_option, handle_errors, main, model_option

if TYPE_CHECKING:
    from gocode.config import Config


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
    from gocode.config import load_config

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
    from gocode.codemode import CodeMode
    from gocode.toolbox import Toolbox

    if direct:
        cm = CodeMode(config, model)
        await cm.refresh()
        for _, exc in sorted(cm.discovery.failures.items() if cm.discovery else ()):
            _err(f"gocode: warning: {exc}")
        return await cm.execute(code, timeout, progress=_progress)
    # gocode exec is the controller for its one run: its sessions serve the program.
    async with Toolbox(config, model, prewarm=False, progress=_progress) as box:
        return await box.execute(code, timeout)
