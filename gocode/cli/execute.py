"""``gocode exec``: run Go code once, as ``execute_go_code`` would."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any, NoReturn

import click

from gocode.cli.common import SECONDS, config_option, handle_errors, model_option, read_code, say_error, say_progress

if TYPE_CHECKING:
    from gocode.config import Config


# The shell has no one to ask (no elicitation, no callback): say how to let the program run.
APPROVAL_HINT = (
    "gocode exec cannot ask for approval: to run it from the shell, name the tools in "
    "codeMode.approval.allow of the config (see docs/approvals.md), or run it through gocode serve "
    "with a client that can be asked."
)


@click.command("exec")
@config_option
@model_option
@click.option(
    "--timeout", type=SECONDS, help="Seconds before the program is killed (default: the model's codeMode.timeout)."
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document (ok, phase, output, result, stderr, …).")
@click.option(
    "--direct",
    is_flag=True,
    help="The program starts (or dials) the servers itself, as a standalone program would, "
    "instead of reaching them through gocode's sessions.",
)
@click.option(
    "--replay",
    "replay_id",
    metavar="RUN_ID",
    help="Re-run a recorded run (its id is in --json and _meta) against its recorded results; no server "
    "is started or called. FILE is optional (default: the recorded program).",
)
@click.option(
    "--dry-run", is_flag=True, help="Call no server: answer every call with a stub shaped by the tool's output schema."
)
@click.option(
    "--plan", "plan_only", is_flag=True, help="Only check the code and print the tools it can call; run nothing."
)
@click.argument("source", metavar="FILE|-", required=False)
@handle_errors
def exec_cmd(
    config_path: str | None,
    model: str | None,
    timeout: float | None,
    as_json: bool,
    direct: bool,
    replay_id: str | None,
    dry_run: bool,
    plan_only: bool,
    source: str | None,
) -> None:
    """Run Go code as execute_go_code would: output on stdout (exit 0), or the error on stderr (exit 1)."""
    import asyncio

    if source is None and replay_id is None:
        raise click.UsageError("missing FILE|- (the Go code to run)")
    if direct and (replay_id or dry_run):
        raise click.UsageError("--direct cannot be combined with --replay or --dry-run (they need gocode's sessions)")
    if plan_only and (replay_id or dry_run or direct):
        raise click.UsageError("--plan runs nothing: it cannot be combined with --replay, --dry-run or --direct")
    code = read_code(source) if source is not None else None
    if not (plan_only or direct or replay_id is not None):
        assert code is not None
        _report(asyncio.run(_exec_pooled(config_path, model, code, timeout, dry_run)), as_json)
    from gocode.config import load_config

    config = load_config(config_path)
    if plan_only:
        assert code is not None
        ok, text = asyncio.run(plan_text(config, model, code, as_json))
        click.echo(text) if ok else say_error(text)
        sys.exit(0 if ok else 1)
    if replay_id is not None:
        from gocode.toolbox import replay_offline

        result = asyncio.run(replay_offline(config, model, replay_id, timeout, code))
    else:
        assert code is not None
        result = asyncio.run(_exec_direct(config, model, code, timeout))
    _report(result, as_json)


def _report(result: Any, as_json: bool) -> NoReturn:
    """Print a run's output and error as the command promises, and exit with its status."""
    if as_json:
        click.echo(json.dumps(result.as_json()))
    else:
        click.echo(result.output, nl=False)
        if not result.ok:
            say_error(result.error_text() if not result.output else result.error_text().split("\n\nstdout before")[0])
            if result.phase == "approval":
                say_error(APPROVAL_HINT)
        elif result.stderr.strip():
            say_error(result.stderr.rstrip())
    # A machine gocode could not set up (no Go, no module proxy) is gocode not running, not the code failing.
    sys.exit(0 if result.ok else 2 if result.phase == "setup" else 1)


async def _exec_direct(config: Config, model: str | None, code: str, timeout: float | None) -> Any:
    from gocode.codemode import CodeMode

    cm = CodeMode(config, model)
    await cm.refresh()
    for _, exc in sorted(cm.discovery.failures.items() if cm.discovery else ()):
        say_error(f"gocode: warning: {exc}")
    return await cm.execute(code, timeout, progress=say_progress)


async def _exec_pooled(
    config_path: str | None, model: str | None, code: str, timeout: float | None, dry_run: bool
) -> Any:
    from gocode.mcp.prestart import commands_in_file, prestarted

    # gocode exec is the controller for its one run: its sessions serve the program. Its stdio
    # servers start first, as the config file names them, so that their start and gocode's own
    # (reading the config, importing the MCP SDK and the rest) happen at once.
    async with prestarted(commands_in_file(config_path)):
        from gocode.config import load_config

        config = load_config(config_path)
        config.code_mode_for(model)  # an unknown model ref: said before the SDK is loaded
        from gocode.toolbox import Toolbox

        async with Toolbox(config, model, prewarm=False, progress=say_progress) as box:
            return await box.execute(code, timeout, dry_run=dry_run)


async def plan_text(config: Config, model: str | None, code: str, as_json: bool) -> tuple[bool, str]:
    """(ok, what to print) for ``gocode exec --plan``: the tools, or why the code does not check."""
    from gocode.codemode import CodeMode
    from gocode.tools.saved import expand_plan

    cm = CodeMode(config, model, offer_saved=True)  # as `gocode exec` offers them (with codeMode.savedPrograms on)
    await cm.refresh()
    got = await cm.plan(code, progress=say_progress)
    if got.plan is None:
        return False, json.dumps({"ok": False, "errors": got.output}) if as_json else got.output.rstrip()
    # What approving it means: the tools the saved programs it calls can reach.
    reach = expand_plan(got.plan, cm.saved_programs)
    held = cm.held_for(got.plan)  # what a run would be held for (docs/approvals.md)
    if as_json:
        return True, json.dumps(
            {"ok": True, "plan": got.plan.as_json()}
            | {"reach": reach.as_json(), "held": bool(held), "needsApproval": list(held)}
        )
    return True, got.plan.text() + (
        f"\nwith the saved programs it calls: {reach.text()}" if reach != got.plan else ""
    ) + (f"\nheld for approval: {', '.join(held)}" if held else "")
