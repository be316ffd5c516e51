"""The ``gocode`` command group and what every command shares: options, error handling, messages.

stdout carries data only (declarations, program output, ``--json`` documents); progress,
warnings and errors go to stderr. Exit codes: 0 ok; 1 the code failed (compile, runtime,
timeout) or a check failed; 2 gocode itself could not run (usage, config, discovery, no Go).
Tracebacks only with ``GOCODE_DEBUG=1``.
"""

from __future__ import annotations

import atexit
import functools
import gc
import importlib
import logging
import os
import sys
import traceback
from collections.abc import Callable
from typing import Any, TypeVar

import click

from gocode.errors import GocodeError

F = TypeVar("F", bound=Callable[..., Any])

config_option = click.option(
    "-c",
    "--config",
    "config_path",
    type=click.Path(dir_okay=False),
    envvar="GOCODE_CONFIG",
    show_envvar=True,
    help="Config file (YAML or JSON). Default: gocode.yaml in the working directory.",
)
model_option = click.option(
    "--model", "model", envvar="GOCODE_MODEL", show_envvar=True, help="Model ref whose codeMode settings apply."
)


_json_logs = False  # serve --log-format json: messages become log records, one JSON object per line


def _err(msg: str) -> None:
    if _json_logs:
        logging.getLogger("gocode").warning("%s", msg.removeprefix("gocode: "))
        return
    click.echo(msg, err=True)


def handle_errors(fn: F) -> F:
    """Turn gocode's own errors into one message and exit status 2 (tracebacks with GOCODE_DEBUG=1)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except click.ClickException:
            raise  # usage errors: click prints them and exits 2
        except GocodeError as exc:
            if os.environ.get("GOCODE_DEBUG"):
                traceback.print_exc()
            _err(f"gocode: {exc.phase} error: {exc}")
            sys.exit(2)
        except KeyboardInterrupt:
            _err("gocode: interrupted")
            sys.exit(130)
        except BrokenPipeError:
            # The reader went away (`gocode list | head`): stop quietly, as Unix tools do.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(141)
        except Exception as exc:
            if os.environ.get("GOCODE_DEBUG"):
                traceback.print_exc()
            _err(f"gocode: internal error: {type(exc).__name__}: {exc} (set GOCODE_DEBUG=1 for a traceback)")
            sys.exit(2)

    return wrapper  # type: ignore[return-value]


def _progress(msg: str) -> None:
    if _json_logs:
        logging.getLogger("gocode").info("%s", msg)
        return
    _err(f"gocode: {msg}")


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
    _setup_logging()
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


def _setup_logging(log_format: str = "text") -> None:
    """Library warnings (the MCP SDK's, e.g. a server printing non-JSON on stdout) as one line
    on stderr; their tracebacks only with GOCODE_DEBUG=1. ``json``: one object per line, and
    a ``call`` line per tool call (INFO) with its request id."""
    from gocode.mcp import logs

    debug = bool(os.environ.get("GOCODE_DEBUG"))
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(logs.RequestIdFilter())
    handler.setFormatter(logs.JsonFormatter() if log_format == "json" else logs.TextFormatter())
    if not debug:

        def drop_traceback(record: logging.LogRecord) -> bool:
            if record.exc_info and record.exc_info[1] is not None:
                record.msg = f"{record.getMessage()}: {record.exc_info[1]}"
                record.args = None
            record.exc_info, record.exc_text = None, None
            return True

        handler.addFilter(drop_traceback)
    logging.basicConfig(level=logging.DEBUG if debug else logging.WARNING, handlers=[handler], force=True)
    global _json_logs
    _json_logs = log_format == "json"
    if _json_logs:
        logging.getLogger("gocode").setLevel(logging.INFO)
