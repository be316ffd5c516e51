"""The stdio transport gocode's controller uses: tolerant of what real servers print on stdout,
and telling how a server ended.

The MCP SDK's stdio client hands every stdout line that is not a JSON-RPC message to the
session as an exception (and logs a traceback), and does not say how the process ended. Servers
print banners, log lines and network errors on stdout, and "exited with status 7" is the most
useful fact about one that died. So this transport (the SDK's shape: an async context manager
yielding the read and write streams a :class:`mcp.Client` takes):

- drops lines that are not JSON-RPC, with a short warning naming the server (the first
  :data:`NOISE_WARNINGS` of them; later ones are only skipped);
- writes how the process ended as the last line of its stderr log, where a failure report
  looks for it (:func:`exit_status`), whichever end the session saw first (stdout closing, or
  stdin refusing a write because the process is gone);
- stops the server as the SDK does: stdin closed, a grace period, then SIGTERM and SIGKILL
  to its whole process group (it runs in a session of its own).
"""

from __future__ import annotations

import contextlib
import logging
import re
import sys
from collections.abc import AsyncIterator, Callable
from typing import IO, Any

import anyio
import mcp_types as types
from anyio.abc import Process
from anyio.streams.text import TextReceiveStream
from mcp.client.stdio import StdioServerParameters
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from gocode.mcp import nesting, prestart

log = logging.getLogger("gocode.stdio")

NOISE_WARNINGS = 3  # per server process; later lines are only skipped
# The longest line read (the Go SDK's stdio frame cap is 16 MiB): a longer one is skipped as
# it arrives, never held whole.
LINE_LIMIT = 64 << 20


class _TooDeep:
    pass


TOO_DEEP = _TooDeep()
_EXIT_MARK = "[gocode] the server "
_EXIT_RE = re.compile(re.escape(_EXIT_MARK) + r"(exited with status (-?\d+)|was killed by signal (\d+))\s*$")


def exit_status(stderr_tail: str) -> tuple[str | None, int | None, str]:
    """How the process ended as this transport recorded it ("exited with status 7", "was killed
    by signal 9"), its exit status (None for a signal), and the stderr without that line."""
    lines = stderr_tail.rstrip().splitlines()
    if lines and (m := _EXIT_RE.search(lines[-1])):
        status = int(m.group(2)) if m.group(2) is not None else None
        return m.group(1), status, "\n".join(lines[:-1]).strip()
    return None, None, stderr_tail


@contextlib.asynccontextmanager
async def tolerant_stdio_client(
    name: str, params: StdioServerParameters, errlog: IO[str] | None = None, on_end: Callable[[], None] | None = None
) -> AsyncIterator[tuple[Any, Any]]:
    """Start the server and connect to it over its stdin/stdout (see the module docstring).

    ``on_end`` is called when the server's stdout closes (it exited, or is being stopped). A
    process started for this very command line ahead of time (:mod:`gocode.mcp.prestart`) is
    taken over instead of starting another.
    """
    argv = [params.command, *params.args]
    cwd = None if params.cwd is None else str(params.cwd)
    process = prestart.claim(name, argv, params.env or {}, cwd, errlog) if errlog is not None else None
    if process is None:
        process = await anyio.open_process(
            argv,
            env=params.env,
            cwd=params.cwd,
            stderr=errlog if errlog is not None else sys.stderr,
            start_new_session=True,
        )
    to_session, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, from_session = anyio.create_memory_object_stream[SessionMessage](0)
    stopping = False
    # The server ended the session itself: its stdout closed, or it stopped reading stdin. How
    # it ended is then the news, and is written to the log once, by whichever side is first:
    # a server that exits before it reads its first message breaks the pipe, the session ends
    # and is torn down while the stdout reader may not have seen the end yet.
    gone = False
    recorded = False

    def record_end() -> None:
        nonlocal recorded
        if not recorded and process.returncode is not None:
            recorded = True
            _record_end(process.returncode, errlog)

    async def read_stdout() -> None:
        nonlocal gone
        assert process.stdout is not None
        skipped = 0
        pending: list[str] = []  # the current line's chunks: joined once, when it ends
        size = 0  # of pending; -1: skipping the rest of a line over LINE_LIMIT
        try:
            async with to_session:
                try:
                    async for chunk in TextReceiveStream(process.stdout, errors="replace"):
                        if "\n" not in chunk:
                            if size >= 0:
                                pending.append(chunk)  # a long line costs one join, not one per chunk
                                size += len(chunk)
                            if size > LINE_LIMIT:
                                log.warning(
                                    "MCP server %r printed a line over %d MiB on stdout (skipped)",
                                    name,
                                    LINE_LIMIT >> 20,
                                )
                                pending, size = [], -1
                            continue
                        lines = chunk.split("\n")
                        lines[0] = "".join([*pending, lines[0]]) if size >= 0 else ""
                        pending = [lines.pop()]
                        size = len(pending[0])
                        for line in lines:
                            message = _parse(name, line, skipped)
                            if isinstance(message, _TooDeep):
                                message = await anyio.to_thread.run_sync(_parse_deep, name, line, skipped)
                            if message is None:
                                skipped += bool(line.strip())
                                continue
                            await to_session.send(SessionMessage(message))
                finally:
                    if not stopping:  # before the session sees the end, so its error can say how
                        gone = True
                        await _wait_end(process)
                        record_end()
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, ConnectionError):
            pass  # the session is gone, or our own shutdown closed the pipe
        finally:
            if on_end is not None:
                on_end()

    async def write_stdin() -> None:
        nonlocal gone
        assert process.stdin is not None
        try:
            async with from_session:
                async for item in from_session:
                    data = item.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                    await process.stdin.send(data.encode())
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            if not stopping:
                gone = True
            await to_session.aclose()  # a server that stopped reading: end the session, not hang a request

    async with anyio.create_task_group() as tg:
        tg.start_soon(read_stdout)
        tg.start_soon(write_stdin)
        try:
            yield read_stream, write_stream
        finally:
            stopping = True
            with anyio.CancelScope(shield=True):
                by_itself = await prestart.stop(process)
                if gone and by_itself:
                    record_end()
                for stream in (read_stream, write_stream, to_session, from_session):
                    await stream.aclose()
            tg.cancel_scope.cancel()


def _parse(name: str, line: str, skipped: int) -> types.JSONRPCMessage | _TooDeep | None:
    """A JSON-RPC message, or None for a blank or non-JSON-RPC line (warned about, the first
    few), or TOO_DEEP for one nested deeper than the parser reads (see :func:`_parse_deep`)."""
    if not line.strip():
        return None
    try:
        return types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except (ValidationError, ValueError) as exc:
        if "recursion limit" in str(exc):
            return TOO_DEEP
        _not_jsonrpc(name, line, skipped)
        return None


def _parse_deep(name: str, line: str, skipped: int) -> types.JSONRPCMessage | None:
    """A message nested deeper than the parser reads (a tool's schema, say), with its deepest
    parts cut, so its request is answered (the listing then leaves that tool out). Linear in the
    line, but run in a worker thread: the line is untrusted and may be megabytes."""
    pruned = nesting.prune(line)
    if pruned is not None:
        with contextlib.suppress(ValidationError, ValueError):
            message = types.jsonrpc_message_adapter.validate_json(pruned, by_name=False)
            log.warning(
                "MCP server %r sent a message nested deeper than %d levels; read without its deepest parts",
                name,
                nesting.MESSAGE_DEPTH,
            )
            return message
    _not_jsonrpc(name, line, skipped)
    return None


def _not_jsonrpc(name: str, line: str, skipped: int) -> None:
    if skipped < NOISE_WARNINGS:
        more = "; further ones are skipped silently" if skipped + 1 == NOISE_WARNINGS else ""
        log.warning("MCP server %r printed a line on stdout that is not JSON-RPC (skipped%s): %.120r", name, more, line)


async def _wait_end(process: Process) -> None:
    """Wait a moment for a process that closed its stdout to end (it is ending)."""
    with anyio.move_on_after(1):
        while process.returncode is None:
            await anyio.sleep(0.01)


def _record_end(code: int, errlog: IO[str] | None) -> None:
    """Note how the process ended at the end of its stderr log."""
    if errlog is None:
        return
    how = f"exited with status {code}" if code >= 0 else f"was killed by signal {-code}"
    with contextlib.suppress(OSError, ValueError):
        errlog.write(f"\n{_EXIT_MARK}{how}\n")
        errlog.flush()
