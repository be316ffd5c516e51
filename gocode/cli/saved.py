"""``gocode save``, ``gocode saved`` and ``gocode build``: programs kept as tools (see gocode.tools.saved)."""

from __future__ import annotations

import json
import sys

import click

from gocode.cli.common import config_option, handle_errors, model_option, read_code, say_error


@click.command("save")
@config_option
@model_option
@click.option("--description", default="", help="The tool's description (default: the code's first // comment).")
@click.option("--force", is_flag=True, help="Overwrite a saved program of that name.")
@click.argument("name")
@click.argument("source", metavar="FILE|-")
@handle_errors
def save_cmd(config_path: str | None, model: str | None, description: str, force: bool, name: str, source: str) -> None:
    """Keep the Go program in FILE as the tool NAME (it declares `type Input struct` and reads `in`)."""
    import asyncio

    from gocode.config import load_config
    from gocode.errors import SavedProgramError
    from gocode.toolbox import Toolbox
    from gocode.tools.saved import SaveRequest

    code = read_code(source)

    async def save() -> dict[str, object] | str:
        # Pooled, as `gocode exec` and `gocode serve` run it: the saved programs are Go functions
        # it may call (a saved program only ever runs under a controller).
        async with Toolbox(load_config(config_path), model, prewarm=False) as box:
            try:  # inside: the toolbox's task group would wrap the error in a group
                return (await box.save_program(SaveRequest(name, code, description, force))).tool()
            except SavedProgramError as exc:
                return str(exc)

    answer = asyncio.run(save())
    if isinstance(answer, str):
        say_error(f"gocode: {answer}")
        sys.exit(1)
    click.echo(json.dumps(answer))


@click.command("saved")
@config_option
@model_option
@click.option("--json", "as_json", is_flag=True, help="Print the tool definitions as JSON.")
@click.option(
    "--adopt",
    is_flag=True,
    help="Move the programs saved before they were kept per model into this config and model's (once; "
    "no other model sees them then).",
)
@handle_errors
def saved_cmd(config_path: str | None, model: str | None, as_json: bool, adopt: bool) -> None:
    """List the saved programs of a config and model (each keeps its own; see codeMode.savedProgramsShare)."""
    from gocode.config import load_config
    from gocode.tools.saved import SavedStore, adopt_legacy, legacy_names

    store = SavedStore.for_model(load_config(config_path), model)
    if adopt:
        moved, left = adopt_legacy(store)
        for name in moved:
            say_error(f"gocode: adopted {name}")
        for name in left:
            say_error(f"gocode: not adopted: {name} (this model has a saved program of that name)")
    elif legacy := legacy_names():
        say_error(f"gocode: {len(legacy)} programs saved before they were kept per model are offered to no model; "
             "`gocode saved --adopt` moves them to this one")  # fmt: skip
    programs = store.all()
    if as_json:
        click.echo(json.dumps([p.tool() for p in programs]))
    for p in [] if as_json else programs:
        click.echo(f"{p.name}\t{p.description}")


UNCONFINED_NOTE = (
    "gocode: note: this binary runs unconfined (no sandbox, no approvals, your user's rights and environment); "
    "to run {name!r} confined, call it through gocode (the tool {name} of `gocode serve`, or `gocode exec`)"
)


@click.command("build")
@config_option
@model_option
@click.option("-o", "--output", "out", required=True, type=click.Path(dir_okay=False), help="The binary to write.")
@click.argument("name")
@handle_errors
def build_cmd(config_path: str | None, model: str | None, out: str, name: str) -> None:
    """Write the saved program NAME as a static binary that runs without gocode.

    The binary runs UNCONFINED: no sandbox, no approvals, with the rights and the environment of
    whoever starts it. To run the program confined, call it through gocode instead (the tool NAME
    of `gocode serve`, or `gocode exec` of a program that calls it).

    It starts (or dials) the config's servers itself; its input is the JSON in $GOCODE_INPUT or
    its first argument (`BINARY --help` lists its fields); it prints what the program prints, then
    its result() value as one line of JSON; $GOCODE_SERVERS overrides the servers built into it.
    """
    import asyncio
    from pathlib import Path

    from gocode.codemode import CodeMode
    from gocode.config import KEEP_REFERENCES, load_config
    from gocode.errors import SavedProgramError
    from gocode.tools.saved import build_binary

    async def build() -> Path:
        cm = CodeMode(load_config(config_path), model)
        program = cm.saved_store().load(name)
        await cm.refresh()
        # The binary carries the config's servers with their ${VAR}s unexpanded: it reads them
        # from its own environment when it starts, so no secret of this machine is built in.
        specs = cm.server_specs(configured=load_config(config_path, KEEP_REFERENCES).mcp_servers)
        return await build_binary(cm.module_cache, cm.package, program, specs, Path(out))

    try:
        click.echo(str(asyncio.run(build())))
    except SavedProgramError as exc:
        say_error(f"gocode: {exc}")
        sys.exit(1)
    say_error(UNCONFINED_NOTE.format(name=name))
