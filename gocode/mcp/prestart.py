"""Stdio servers started before the MCP SDK is imported, so their start overlaps gocode's own.

A one-off command (``gocode exec``) knows which servers it will connect to from its config file
(:func:`commands_in_file`), while validating the config and importing the SDK and the rest of
gocode take about as long as a Python server takes to start. Inside :func:`prestarted`, each
stdio server is spawned at once, exactly as
:func:`gocode.mcp.stdio.tolerant_stdio_client` would spawn it (same command line, environment,
directory, own session, stderr to a file); that transport then :func:`claim`\\ s the process
for the same command line instead of starting another. A process nobody claimed is stopped
when the block ends (stdin closed, then its process group signalled: nobody spoke to it, so
there is nothing to let it finish). Nothing here imports the MCP SDK.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import os
import tempfile
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import anyio
import anyio.lowlevel
import yaml
from anyio.abc import Process

from gocode.mcp.serverenv import server_environment
from gocode.paths import DEFAULT_CONFIG_NAME

if TYPE_CHECKING:
    from gocode.config import ServerConfig

GRACE_S = 2.0  # after stdin closes, before the process group is signalled
KILL_S = 2.0  # after SIGTERM, before SIGKILL


def server_env(server: ServerConfig) -> dict[str, str]:
    """A stdio server's environment: the server's own ``env`` over a minimal base of the
    controller's (:mod:`gocode.mcp.serverenv`).

    The Go program gives its servers the same (see go_templates/rt/serverenv.go), so a server
    behaves the same during discovery and in the program.
    """
    return server_environment(server.env)


@dataclass(frozen=True)
class Command:
    """How a stdio server is started: its command line, environment and directory."""

    argv: list[str]
    env: dict[str, str]
    cwd: str | None


def command_for(server: ServerConfig) -> Command:
    """How the stdio transport starts ``server`` (a parsed config's)."""
    return Command([server.command or "", *server.args], server_env(server), server.cwd)


def commands_in_file(path: str | None) -> dict[str, Command]:
    """The stdio servers of the config file at ``path`` (default ``gocode.yaml``), read before
    the config itself is (that takes the config's models and their library): each whose
    command line, ``env`` and ``cwd`` are plain strings with no ``${VAR}`` (expanding those is
    the config's job), as the config would start it. A file that cannot be read, or an entry
    that is not plainly a stdio server, gives none: the config's own reading reports it, and
    the session starts what the config says (a server is taken over only for the very same
    command line, environment and directory)."""
    source = str(Path(path) if path is not None else Path(DEFAULT_CONFIG_NAME))
    try:
        text = Path(source).read_text(encoding="utf-8")
        data: Any = json.loads(text) if source.endswith(".json") else yaml.safe_load(text)
    except (OSError, UnicodeDecodeError, ValueError, yaml.YAMLError):
        return {}
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    found: dict[str, Command] = {}
    for name, entry in servers.items() if isinstance(servers, dict) else ():
        if not isinstance(name, str) or not isinstance(entry, dict) or "url" in entry:
            continue
        if entry.get("type", "stdio") != "stdio":
            continue
        command, args, env, cwd = entry.get("command"), entry.get("args", []), entry.get("env", {}), entry.get("cwd")
        if not isinstance(args, list) or not isinstance(env, dict) or not command:
            continue
        plain = [command, *args, *env.keys(), *env.values(), *([cwd] if cwd is not None else [])]
        if all(isinstance(v, str) and "$" not in v for v in plain):
            found[name] = Command([command, *args], server_environment(env), cwd)
    return found


@dataclass
class Prestarted:
    """A spawned server process waiting for its session, and the file its stderr goes to."""

    command: Command
    process: Process
    stderr: IO[str]
    token: object  # the event loop it belongs to: its pipes work only there


_WAITING: contextvars.ContextVar[dict[str, Prestarted] | None] = contextvars.ContextVar(
    "gocode_prestarted", default=None
)


@contextlib.asynccontextmanager
async def prestarted(commands: Mapping[str, Command]) -> AsyncIterator[None]:
    """Start the stdio servers named in ``commands`` now; sessions opened inside the block (in
    tasks started within it) take them over. One that fails to spawn is left to its session,
    which starts it again and reports the failure as usual."""
    waiting: dict[str, Prestarted] = {}
    token = anyio.lowlevel.current_token()
    with contextlib.ExitStack() as files:
        for name, command in commands.items():
            stderr = files.enter_context(tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace"))
            try:
                process = await anyio.open_process(
                    command.argv, env=command.env, cwd=command.cwd, stderr=stderr, start_new_session=True
                )
            except OSError:
                continue
            waiting[name] = Prestarted(command, process, stderr, token)
        reset = _WAITING.set(waiting)
        try:
            yield
        finally:
            _WAITING.reset(reset)
            left = list(waiting.values())
            waiting.clear()  # a session opened from now on starts its own
            with anyio.CancelScope(shield=True):
                async with anyio.create_task_group() as tg:
                    for unclaimed in left:  # nobody spoke to it: nothing to let it finish
                        tg.start_soon(stop, unclaimed.process, 0.0)


def claim(name: str, argv: list[str], env: Mapping[str, str], cwd: str | None, errlog: IO[str]) -> Process | None:
    """The process started for server ``name`` if it was started exactly as asked (else None),
    its stderr from now on sharing ``errlog`` (what it printed so far included)."""
    waiting = _WAITING.get()
    if waiting is None:
        return None
    got = waiting.get(name)
    if got is None or got.command != Command(argv, dict(env), cwd):
        return None
    if got.token != anyio.lowlevel.current_token() or got.process.returncode is not None:
        return None  # another event loop's, or it died already: a fresh start reports properly
    del waiting[name]
    # The server writes to the open file its stderr was given; errlog becomes that same file.
    errlog.flush()
    os.dup2(got.stderr.fileno(), errlog.fileno())
    return got.process


async def stop(process: Process, grace: float = GRACE_S) -> bool:
    """Close stdin, give the server ``grace`` seconds, then end its process group (the MCP SDK's
    way); whether it ended by itself, before any signal."""
    if process.stdin is not None:
        with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            await process.stdin.aclose()
    with anyio.move_on_after(grace):
        while process.returncode is None:
            await anyio.sleep(0.01)
    by_itself = process.returncode is not None
    if not by_itself:
        from mcp.os.posix.utilities import terminate_posix_process_tree  # the SDK is loaded by then

        await terminate_posix_process_tree(process, KILL_S)
        with anyio.move_on_after(KILL_S):
            while process.returncode is None:
                await anyio.sleep(0.01)
    if process.stdout is not None:
        with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            await process.stdout.aclose()
    return by_itself
