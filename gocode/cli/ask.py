"""``gocode ask``: answer a prompt with a model of ``models[]`` (see gocode/agent/, docs/ask.md)."""

from __future__ import annotations

import sys

import click

from gocode.cli.common import approve_option, config_option, handle_errors


@click.command()
@click.argument("prompt")
@config_option
@click.option("--model", "model", envvar="GOCODE_MODEL", show_envvar=True, help="Model ref in models[] to ask.")
@click.option("--json", "as_json", is_flag=True, help="Print the whole transcript as one JSON document.")
@click.option(
    "--max-repairs", type=click.IntRange(0, 10), default=2, show_default=True, help="Fixes after a failed run."
)
@approve_option
@handle_errors
def ask(
    prompt: str, config_path: str | None, model: str | None, as_json: bool, max_repairs: int, approve: str | None
) -> None:
    """Answer PROMPT with a model from models[]: it writes Go that calls the tools, gocode runs and repairs it.

    Each step goes to stderr as it happens; the answer (or, with --json, the transcript) to stdout.
    Exit 1: no tool fits, no working program, or a program held for approval was not approved;
    2: the model or gocode could not be used. See docs/ask.md.
    """
    from gocode.agent import console
    from gocode.cli.execute import approval_hint, approved_option, ask_on_terminal

    if not prompt.strip():
        raise click.BadParameter("the prompt is empty", param_hint="PROMPT")
    approved = approved_option(approve)
    person = ask_on_terminal()
    status = console.ask(
        config_path, prompt, model=model, max_repairs=max_repairs, as_json=as_json, approved=approved,
        ask_person=person, approval_hint=approval_hint("ask") if person is None else None,
    )  # fmt: skip
    sys.exit(status)
