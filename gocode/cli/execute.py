"""``gocode exec``: run Go code once, as ``execute_go_code`` would (:func:`gocode.execution.exec_code`)."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, NoReturn

import click

from gocode.cli.common import (
    SECONDS,
    approve_option,
    config_option,
    elicit_option,
    handle_errors,
    model_option,
    read_code,
    say_error,
    say_progress,
    terminal_text,
)

if TYPE_CHECKING:
    from gocode.execution import Approved, Ask, Mode
    from gocode.mcp.asker import Policy
    from gocode.run.approvals import ApprovalRequest
    from gocode.run.result import RunResult


def approval_hint(command: str) -> str:
    """Without a terminal to ask on and without --approve: how to let the program run."""
    return (
        "to approve from the shell, pass --approve with the tools named above (comma-separated server.tool, "
        f"or --approve all), or run gocode {command} on a terminal to be asked; to allow them always, name them "
        "in codeMode.approval.allow of the config (see docs/approvals.md)."
    )


def ask_on_terminal() -> Ask | None:
    """The person at the terminal, when stdin and stderr are one (else None: no one to ask)."""
    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        return None

    def ask(request: ApprovalRequest) -> bool:
        # The tool names and the plan come from servers: no control character reaches the terminal.
        click.echo(terminal_text(request.message()), err=True)
        try:
            answer = click.prompt("Run it? [y/N]", default="", show_default=False, err=True)
        except (click.Abort, EOFError):
            return False
        return str(answer).strip().lower() in ("y", "yes")

    return ask


def approved_option(value: str | None) -> Approved:
    from gocode.errors import ExecRequestError
    from gocode.execution import parse_approved

    try:
        return parse_approved(value) if value is not None else frozenset()
    except ExecRequestError as exc:
        raise click.UsageError(str(exc)) from None


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
@approve_option
@elicit_option
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
    approve: str | None,
    elicit: Policy | None,
    source: str | None,
) -> None:
    """Run Go code as execute_go_code would: output on stdout (exit 0), or the error on stderr (exit 1)."""
    import asyncio

    from gocode.errors import ExecRequestError
    from gocode.execution import ExecRequest, check_request, exec_code

    mode: Mode = "direct" if direct else "pooled"
    approved = approved_option(approve)
    try:  # before the code is read: a refused request never waits on stdin
        check_request(has_code=source is not None, mode=mode, replay_id=replay_id, dry_run=dry_run, plan_only=plan_only)
    except ExecRequestError as exc:
        raise click.UsageError(str(exc)) from None
    code = read_code(source) if source is not None else None
    ask = ask_on_terminal()
    if elicit is None and not (dry_run or plan_only or replay_id):  # a run whose servers are called
        from gocode.terminal import can_ask  # not the MCP SDK: the servers start first

        elicit = "ask" if can_ask() else None  # a person at a terminal is asked
    request = ExecRequest(code, model, mode, replay_id, dry_run, plan_only, timeout, approved, ask, elicit)
    outcome = asyncio.run(exec_code(config_path, request, progress=say_progress, warn=say_warning))
    if outcome.plan is not None:
        text = json.dumps(outcome.plan.as_json()) if as_json else outcome.plan.text()
        click.echo(text) if outcome.plan.ok else say_error(text)
        sys.exit(0 if outcome.plan.ok else 1)
    assert outcome.run is not None
    _report(outcome.run, as_json, hint=ask is None)


def say_warning(msg: str) -> None:
    say_error(f"gocode: warning: {msg}")


def _report(result: RunResult, as_json: bool, hint: bool = True) -> NoReturn:
    """Print a run's output and error as the command promises, and exit with its status
    (``hint``: say how to approve a held program; not to a person who was asked and said no)."""
    if as_json:
        click.echo(json.dumps(result.as_json()))
    else:
        click.echo(result.output, nl=False)
        if not result.ok:
            say_error(result.error_message())  # its output is printed above
            if result.phase == "approval" and hint:
                say_error(approval_hint("exec"))
        elif result.stderr.strip():
            say_error(result.stderr.rstrip())
    # A machine gocode could not set up (no Go, no module proxy) is gocode not running, not the code failing.
    sys.exit(0 if result.ok else 2 if result.phase == "setup" else 1)
