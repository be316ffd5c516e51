"""The ``gocode`` command group: each command's module is imported by name when the command
runs or its help is asked for (what the commands share is :mod:`gocode.cli.common`)."""

from __future__ import annotations

import atexit
import gc
import importlib
from typing import Any

import click

from gocode.cli.common import setup_logging

# Each command's name -> the module and attribute defining it. A command's module (and what it
# imports) loads only when that command runs or is asked for help; ``gocode --help`` loads every
# one of them for their one-line summaries, so none may import anything heavy at module level
# (tests/test_cli_imports.py checks it).
COMMANDS: dict[str, str] = {
    "ask": "gocode.cli.ask:ask",
    "build": "gocode.cli.saved:build_cmd",
    "cache": "gocode.cli.cache:cache",
    "call": "gocode.cli.call:call_cmd",
    "demo": "gocode.cli.demo:demo",
    "demo-server": "gocode.cli.demo:demo_server_cmd",
    "describe": "gocode.cli.tools:describe",
    "exec": "gocode.cli.execute:exec_cmd",
    "generate": "gocode.cli.tools:generate",
    "list": "gocode.cli.tools:list_cmd",
    "sandbox": "gocode.cli.sandbox:sandbox",
    "save": "gocode.cli.saved:save_cmd",
    "saved": "gocode.cli.saved:saved_cmd",
    "search": "gocode.cli.tools:search",
    "serve": "gocode.cli.serve:serve",
    "smoke": "gocode.cli.smoke:smoke",
    "warmup": "gocode.cli.cache:warmup",
    "workspace": "gocode.cli.workspace:workspace_group",
}


class LazyGroup(click.Group):
    """A group whose commands are imported by name when first needed (click's lazy-loading pattern)."""

    def __init__(self, *args: Any, lazy_commands: dict[str, str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy_commands = lazy_commands

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy_commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in self.lazy_commands:
            self.add_command(self._load(cmd_name), cmd_name)
        return super().get_command(ctx, cmd_name)

    def _load(self, cmd_name: str) -> click.Command:
        module_name, attr = self.lazy_commands[cmd_name].split(":")
        cmd = getattr(importlib.import_module(module_name), attr)
        if not isinstance(cmd, click.Command) or cmd.name != cmd_name:
            raise RuntimeError(f"{module_name}:{attr} is not the click command {cmd_name!r}")
        return cmd


@click.group(cls=LazyGroup, lazy_commands=COMMANDS, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="gocode")
def main() -> None:
    """Go code mode for LLM agents: MCP tools as typed Go functions behind one execute_go_code tool."""
    from gocode.run import hostlimits

    # The interpreter's last garbage collection at exit walks every object the imports created
    # (the MCP SDK's models: about a second); frozen ones are skipped. Files and sessions are
    # closed by their context managers before this, so nothing waits on that collection.
    atexit.register(gc.freeze)
    setup_logging()
    hostlimits.raise_open_files()


def command_paths() -> list[list[str]]:
    """``[]`` for the group itself, then every command and every subcommand of a group (what
    the --help checks and benchmark walk)."""
    ctx = click.Context(main)
    paths: list[list[str]] = [[]]
    for name in main.list_commands(ctx):
        paths.append([name])
        cmd = main.get_command(ctx, name)
        if isinstance(cmd, click.Group):
            paths.extend([name, sub] for sub in cmd.list_commands(click.Context(cmd, parent=ctx)))
    return paths
