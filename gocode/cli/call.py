"""``gocode call SERVER TOOL``: one tool from the shell (library: :mod:`gocode.calling`)."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

import click

from gocode.cli.common import SECONDS, config_option, elicit_option, handle_errors, model_option, say_error

if TYPE_CHECKING:
    import mcp_types as types

    from gocode.mcp.asker import Policy


@click.command("call")
@config_option
@model_option
@click.argument("server")
@click.argument("tool")
@click.argument("pairs", nargs=-1, metavar="[KEY=VALUE]...")
@click.option(
    "--args",
    "args_json",
    metavar="JSON",
    help="The arguments as a JSON object (KEY=VALUE pairs add keys it does not give).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the whole MCP result as JSON.")
@click.option("--out", type=click.Path(dir_okay=False), help="Write the output to this file instead of stdout.")
@click.option("--timeout", type=SECONDS, help="Seconds to wait for the tool (default: the model's codeMode.timeout).")
@elicit_option
@handle_errors
def call_cmd(
    config_path: str | None, model: str | None, server: str, tool: str, pairs: tuple[str, ...],
    args_json: str | None, as_json: bool, out: str | None, timeout: float | None, elicit: Policy | None,
) -> None:  # fmt: skip
    """Call one tool of a server: `gocode call weather get_weather city=Paris`. KEY=VALUE values are
    read as the tool's schema types them. Exit 0; 1 when the tool reports an error; 2 when it
    could not be called (bad arguments are refused before the call, with the tool's Go declaration)."""
    import asyncio
    from pathlib import Path

    from gocode import calling as call_mod
    from gocode.config import load_config
    from gocode.terminal import can_ask

    config = load_config(config_path)
    elicit = elicit or ("ask" if can_ask() else None)  # a person at a terminal is asked
    called = asyncio.run(
        call_mod.call_tool(
            config, server, tool, args_json=args_json, pairs=pairs, model=model, timeout=timeout, elicit=elicit
        )
    )
    text = _rendered(called.result, as_json)
    if called.result.is_error and not as_json:
        say_error(f"gocode: {server}.{called.tool.name} failed: {text.rstrip()}")
    elif out is not None:
        Path(out).write_text(text, encoding="utf-8")
    else:
        click.echo(text, nl=False)
    sys.exit(1 if called.result.is_error else 0)


def _rendered(result: types.CallToolResult, as_json: bool) -> str:
    """The result's text (non-text parts as bracketed notes), or the whole MCP result as JSON."""
    from gocode.tool_formats import result_text

    if as_json:
        return json.dumps(result.model_dump(by_alias=True, exclude_none=True, mode="json"), ensure_ascii=False) + "\n"
    text = result_text(result)
    return text if not text or text.endswith("\n") else text + "\n"
