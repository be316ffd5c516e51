"""``gocode sandbox doctor``: what this host's sandbox supports."""

from __future__ import annotations

import json

import click

from gocode.cli.common import config_option, handle_errors, model_option, say_progress


@click.group()
def sandbox() -> None:
    """The sandbox model programs run in (codeMode.sandbox; auto by default)."""


@sandbox.command("doctor")
@config_option
@model_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
@handle_errors
def sandbox_doctor(config_path: str | None, model: str | None, as_json: bool) -> None:
    """Show what this host supports and which tier each codeMode.sandbox setting would get.

    The process limit per run follows the config's codeMode.limits (user, uidRange) when a
    config is given or ./gocode.yaml exists, else the defaults.
    """
    import asyncio
    from pathlib import Path

    from gocode.compile.modcache import ModuleCache
    from gocode.config import DEFAULT_CONFIG_NAME, SandboxLimits, load_config
    from gocode.run import hostlimits
    from gocode.run import sandbox as sandbox_mod

    limits = SandboxLimits()
    if config_path is not None or Path(DEFAULT_CONFIG_NAME).is_file():
        limits = load_config(config_path).code_mode_for(model).limits

    ws = ModuleCache()
    if not ws.ready:  # the launcher is built in the module cache; the Go parser helper is not needed
        ws.warmup(say_progress)
    host = asyncio.run(sandbox_mod.launcher_for(ws).probe())
    rows = sandbox_mod.describe(host)
    if as_json:
        doc = {
            "host": {
                **host.as_json(),
                **sandbox_mod.other_mechanisms(limits),
                "processLimitKind": sandbox_mod.process_limit(limits)[0],
                "servers": hostlimits.server_capacity(),
            },
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
    others = sandbox_mod.other_mechanisms(limits)
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
