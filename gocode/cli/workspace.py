"""``gocode workspace``: the directories programs keep files in between calls."""

from __future__ import annotations

import json

import click

from gocode.cli.common import config_option, handle_errors, human_size, model_option, say_error


@click.group("workspace")
def workspace_group() -> None:
    """The directories programs keep files in between calls (codeMode.workspace; docs/workspace.md)."""


@workspace_group.command("ls")
@config_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
@handle_errors
def workspace_ls(config_path: str | None, as_json: bool) -> None:
    """List the workspaces: name (model, or model/session:ID), size, files, last change, path."""
    from gocode.config import load_config
    from gocode.run import workdir

    settings = load_config(config_path).code_mode_for(None).workdir
    rows = workdir.listing(settings)
    if as_json:
        click.echo(json.dumps({"root": str(workdir.root(settings)), "workspaces": rows}))
        return
    if not rows:
        say_error(f"no workspaces under {workdir.root(settings)}")
    for r in rows:
        click.echo(f"{r['name']:<32} {human_size(r['bytes']):>10} {r['files']:>6} files  {r['modified']}  {r['path']}")


@workspace_group.command("clean")
@config_option
@model_option
@handle_errors
def workspace_clean(config_path: str | None, model: str | None) -> None:
    """Delete every file of one model's workspace for this config (the default model's without --model)."""
    from gocode.config import load_config
    from gocode.run import workdir

    config = load_config(config_path)
    settings = config.code_mode_for(model).workdir
    key = workdir.owner(settings, config.source)  # this config's workspaces, not another project's
    path, freed = workdir.clean(settings, model or config.defaults.model, key)
    say_error(f"removed {path} ({human_size(freed)})")
