"""What every command shares: the common options, error handling and messages.

stdout carries data only (declarations, program output, ``--json`` documents); progress,
warnings and errors go to stderr. Exit codes: 0 ok; 1 the code failed (compile, runtime,
timeout) or a check failed; 2 gocode itself could not run (usage, config, discovery, no Go).
Tracebacks only with ``GOCODE_DEBUG=1``.
"""

from __future__ import annotations

import functools
import logging
import math
import os
import sys
import traceback
from collections.abc import Callable
from typing import Any, TypeVar

import click

from gocode.errors import GocodeError
from gocode.terminal import terminal_text

F = TypeVar("F", bound=Callable[..., Any])


class Seconds(click.ParamType[float, Any]):
    """A --timeout: a finite number of seconds above zero (0 or less would stop every program
    before it starts; nan and inf are no time at all)."""

    name = "seconds"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        try:
            seconds = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number of seconds", param, ctx)
        if not math.isfinite(seconds) or seconds <= 0:
            self.fail(f"{value} is not a time: give a number of seconds above 0", param, ctx)
        return seconds


SECONDS = Seconds()

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
# exec and ask: what a person approves without being asked (gocode.execution.approver_for).
approve_option = click.option(
    "--approve",
    "approve",
    metavar="TOOLS|all",
    help="Approve a program held for approval when it is held only for these tools (comma-separated "
    "server.tool names), or for any (all). Without it, a terminal is asked; else the program is refused.",
)


elicit_option = click.option(
    "--elicit",
    type=click.Choice(["ask", "defaults", "decline"]),
    help="How a server's question to the user (elicitation) is answered: ask on the terminal, accept the "
    "form's defaults (declined when a required field has none), or decline. Default: ask when a terminal "
    "can be opened, else the servers are told gocode cannot be asked. Each answer is said on stderr.",
)


_json_logs = False  # serve --log-format json: messages become log records, one JSON object per line


def say_error(msg: str) -> None:
    """One line (or a few) for the person at the terminal on stderr; what servers and programs
    put in it (tool names, errors) is shown without control characters."""
    msg = terminal_text(msg)
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
            say_error(f"gocode: {exc.phase} error: {exc}")
            sys.exit(2)
        except KeyboardInterrupt:
            say_error("gocode: interrupted")
            sys.exit(130)
        except BrokenPipeError:
            # The reader went away (`gocode list | head`): stop quietly, as Unix tools do.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(141)
        except Exception as exc:
            if os.environ.get("GOCODE_DEBUG"):
                traceback.print_exc()
            say_error(f"gocode: internal error: {type(exc).__name__}: {exc} (set GOCODE_DEBUG=1 for a traceback)")
            sys.exit(2)

    return wrapper  # type: ignore[return-value]


def say_progress(msg: str) -> None:
    if _json_logs:
        logging.getLogger("gocode").info("%s", msg)
        return
    say_error(f"gocode: {msg}")


def read_code(source: str) -> str:
    """The Go code in the file ``source``, or on stdin for ``-`` (a usage error when unreadable)."""
    from pathlib import Path

    if source == "-":
        return sys.stdin.read()
    try:
        return Path(source).read_text(encoding="utf-8")
    except OSError as exc:
        raise click.UsageError(f"cannot read {source}: {exc}") from None


def human_size(n: float) -> str:
    """A size in bytes for people: ``812 B``, ``4.8 MiB``."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"


def setup_logging(log_format: str = "text") -> None:
    """Library warnings (the MCP SDK's, e.g. a server printing non-JSON on stdout) as one line
    on stderr; their tracebacks only with GOCODE_DEBUG=1. ``json``: one object per line, and
    a ``call`` line per tool call (INFO) with its request id."""
    from gocode.mcp import logs

    debug = bool(os.environ.get("GOCODE_DEBUG"))
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(logs.RequestIdFilter())
    handler.addFilter(logs.FloodFilter())  # one failure repeated by thousands of clients: a few lines
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
