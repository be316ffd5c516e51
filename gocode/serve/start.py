"""Serving until the transport ends: the listener first, then the toolbox behind it.

Probes answer "starting" and tool lists wait while the toolbox discovers its servers (not
while it sets up Go or warms up, which go on in the background: a first call waits for them);
a client that hangs up (stdio) or a signal ends the transport, which leaves the toolbox in
order (its endpoint stopped, its servers closed).
"""

from __future__ import annotations

import socket
from collections.abc import Callable

import anyio

from gocode.config import Config
from gocode.errors import GocodeError
from gocode.serve.server import MCP_PATH, HttpOptions, ToolServer, serve_http
from gocode.toolbox import Toolbox

Say = Callable[[str], None]


def _quiet(_: str) -> None:
    pass


async def serve(
    config: Config,
    model: str | None,
    sock: socket.socket | None,
    host: str,
    token: str | None,
    *,
    prewarm: bool = True,
    options: HttpOptions | None = None,
    stateless_step: bool = False,
    progress: Say = _quiet,
    warn: Say = _quiet,
) -> None:
    """Serve ``config``'s tools for ``model`` over HTTP on ``sock`` (bound by
    :func:`gocode.serve.server.bind`), or over stdio when ``sock`` is None, until the transport
    ends. ``progress`` and ``warn`` get one line each (what is served, a server's warning)."""
    # A program held for approval is asked of the client of its call (elicitation).
    box = Toolbox(
        config, model, prewarm=prewarm, progress=progress, stateless_step=stateless_step, approval_by_client=True
    )
    tool_server = ToolServer(box, settled=False)
    ended = anyio.Event()  # the transport is done (a stdio client hung up, a signal): leave
    try:
        async with anyio.create_task_group() as tg:
            # The listener first (probes answer "starting"; lists wait), then discovery.
            tg.start_soon(_transport, tool_server, sock, host, token, options, ended, progress)
            served = False
            with anyio.CancelScope() as starting:
                # Until the toolbox serves, an ended transport cancels its start; after, the
                # toolbox is left in order (its endpoint stopped, its servers closed).
                async def watch() -> None:
                    await ended.wait()
                    if not served:
                        starting.cancel()

                tg.start_soon(watch)
                async with box:
                    for w in box.warnings:
                        warn(w)
                    await box.settle()
                    tool_server.mark_ready()
                    names = [t.name for t in box.tools()]
                    who = f"model {model!r}" if model else "the default model"
                    progress(
                        f"{len(names)} tool{'s' if len(names) != 1 else ''} for {who}: {', '.join(names) or '(none)'}"
                    )
                    served = True
                    await ended.wait()
            tg.cancel_scope.cancel()
    except* GocodeError as group:  # one error, as every command reports one
        raise group.exceptions[0] from None


async def _transport(
    tool_server: ToolServer,
    sock: socket.socket | None,
    host: str,
    token: str | None,
    options: HttpOptions | None,
    ended: anyio.Event,
    progress: Say,
) -> None:
    try:
        if sock is None:
            progress("serving MCP on stdio")
            try:
                await tool_server.run_stdio()
            except* (BrokenPipeError, ConnectionResetError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                pass  # the client went away mid-answer: nothing left to serve
        else:
            addr = sock.getsockname()
            shown = f"[{addr[0]}]" if ":" in addr[0] else addr[0]
            progress(
                f"serving MCP on http://{shown}:{addr[1]}{MCP_PATH}" + (" (bearer token required)" if token else "")
            )
            await serve_http(tool_server, sock, host, token, options)
    finally:
        ended.set()
