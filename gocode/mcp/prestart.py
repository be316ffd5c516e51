"""Stdio servers started before the MCP SDK is imported, so their start overlaps gocode's own.

A one-off command (``gocode exec``) knows which servers it will connect to once it has read the
config, while importing the SDK and the rest of gocode takes about as long as a Python server
takes to start. Inside :func:`prestarted`, each stdio server is spawned at once, exactly as
:func:`gocode.mcp.stdio.tolerant_stdio_client` would spawn it (same command line, environment,
directory, own session, stderr to a file); that transport then :func:`claim`\\ s the process
for the same command line instead of starting another. A process nobody claimed is stopped
when the block ends (stdin closed, then its process group signalled: nobody spoke to it, so
there is nothing to let it finish). Nothing here imports the MCP SDK.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import tempfile
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import IO

import anyio
import anyio.lowlevel
from anyio.abc import Process

from gocode.config import ServerConfig

GRACE_S = 2.0  # after stdin closes, before the process group is signalled
KILL_S = 2.0  # after SIGTERM, before SIGKILL


def server_env(server: ServerConfig) -> dict[str, str]:
    """A stdio server's environment: the controller's, plus the server's own ``env``.

    The Go program gives its servers the same (see go_templates/rt/rt.go), so a server
    behaves the same during discovery and in the program.
    """
    return {**os.environ, **server.env}


@dataclass
class Prestarted:
    """A spawned server process waiting for its session, and the file its stderr goes to."""

    argv: list[str]
    env: dict[str, str]
    cwd: str | None
    process: Process
    stderr: IO[str]
    token: object  # the event loop it belongs to: its pipes work only there


_WAITING: contextvars.ContextVar[dict[str, Prestarted] | None] = contextvars.ContextVar(
    "gocode_prestarted", default=None
)


@contextlib.asynccontextmanager
async def prestarted(servers: Mapping[str, ServerConfig]) -> AsyncIterator[None]:
    """Spawn the stdio ``servers`` now; sessions opened inside the block (in tasks started
    within it) take them over. One that fails to spawn is left to its session, which spawns
    it again and reports the failure as usual."""
    waiting: dict[str, Prestarted] = {}
    token = anyio.lowlevel.current_token()
    with contextlib.ExitStack() as files:
        for name, server in servers.items():
            if server.type != "stdio" or not server.command:
                continue
            argv, env = [server.command, *server.args], server_env(server)
            stderr = files.enter_context(tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace"))
            try:
                process = await anyio.open_process(argv, env=env, cwd=server.cwd, stderr=stderr, start_new_session=True)
            except OSError:
                continue
            waiting[name] = Prestarted(argv, env, server.cwd, process, stderr, token)
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
    got = waiting.get(name) if waiting is not None else None
    if got is None or (got.argv, got.env, got.cwd) != (argv, dict(env), cwd):
        return None
    if got.token != anyio.lowlevel.current_token() or got.process.returncode is not None:
        return None  # another event loop's, or it died already: a fresh start reports properly
    del waiting[name]
    # The server writes to the open file its stderr was given; errlog becomes that same file.
    errlog.flush()
    os.dup2(got.stderr.fileno(), errlog.fileno())
    return got.process


async def stop(process: Process, grace: float = GRACE_S) -> None:
    """Close stdin, give the server ``grace`` seconds, then end its process group (the MCP SDK's way)."""
    if process.stdin is not None:
        with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            await process.stdin.aclose()
    with anyio.move_on_after(grace):
        while process.returncode is None:
            await anyio.sleep(0.01)
    if process.returncode is None:
        from mcp.os.posix.utilities import terminate_posix_process_tree  # the SDK is loaded by then

        await terminate_posix_process_tree(process, KILL_S)
        with anyio.move_on_after(KILL_S):
            while process.returncode is None:
                await anyio.sleep(0.01)
    if process.stdout is not None:
        with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            await process.stdout.aclose()
