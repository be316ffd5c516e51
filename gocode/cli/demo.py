"""``gocode demo`` and ``gocode demo-server``: the bundled weather example (:mod:`gocode.demo`)."""

from __future__ import annotations

import json
import sys

import click

from gocode.cli.common import handle_errors, say_progress


@click.command("demo-server", context_settings={"ignore_unknown_options": True})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def demo_server_cmd(args: tuple[str, ...]) -> None:
    """Run the bundled demo weather MCP server (stdio; `--transport http --port P` for HTTP).

    \b
    In a config:
      mcpServers:
        weather: {command: gocode, args: [demo-server]}
    """
    from gocode.demo import server as demo_server

    demo_server.main(list(args))


@click.command()
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
    import asyncio

    from gocode.demo.runner import DEMO_CODE, run_demo

    result, declarations, times = asyncio.run(run_demo(sandbox, say_progress))
    if as_json:
        # workspaceSetupMs: setupMs's old name (the set-up is the module cache's), kept for scripts reading it.
        doc = {**result.as_json(), "code": DEMO_CODE, "declarations": declarations, **times}
        click.echo(json.dumps(doc | {"workspaceSetupMs": times["setupMs"]}))
    else:
        rule = "-" * 60
        click.echo(f"{rule}\nGo declarations the model sees (execute_go_code's description):\n{rule}")
        click.echo(declarations)
        click.echo(f"{rule}\nThe model's code:\n{rule}\n{DEMO_CODE}")
        click.echo(f"{rule}\nexecute_go_code output:\n{rule}")
        click.echo(result.output if result.ok else result.error_text())
        tier = (result.sandbox or {}).get("tier")
        boxed = f"; sandbox tier {tier}" if tier else "; not sandboxed"
        setup = times["setupMs"]
        click.echo(
            f"({result.phase}; discovery {times['discoveryMs']:.0f} ms, build {result.build_ms:.0f} ms, "
            f"run {result.run_ms:.0f} ms, call {times['callMs']:.0f} ms"
            + (
                f"; first-run set-up {setup / 1000:.0f} s (Go module cache, sandbox launcher), once per machine"
                if setup >= 1000
                else ""
            )
            + f"{boxed})"
        )
    sys.exit(0 if result.ok else 1)
