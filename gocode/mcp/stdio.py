"""A stdio transport that tolerates what real servers print on stdout, and says how they ended.

The MCP SDK's stdio client hands every stdout line that is not a JSON-RPC message to the
session as an exception (and logs a traceback). Servers print banners, log lines and network
errors there, so this wraps it: such lines are dropped with one short warning naming the
server (the first few of them; after that they are counted), and only messages reach the
session. The server is started through ``sh`` so that its exit status lands at the end of its
stderr, which is where a failure report looks for it (:func:`exit_status`).
"""

from __future__ import annotations

import contextlib
import logging
import re
import shutil
from collections.abc import AsyncIterator
from typing import IO, Any

import anyio
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.message import SessionMessage

log = logging.getLogger("gocode.stdio")

NOISE_WARNINGS = 3  # per server process; later lines are only counted
_EXIT_MARK = "[gocode] the server exited with status "
_EXIT_RE = re.compile(re.escape(_EXIT_MARK) + r"(\d+)\s*$")
_SCRIPT = f'"$@"; s=$?; echo "{_EXIT_MARK}$s" >&2; exit $s'


class _QuietParseErrors(logging.Filter):
    # The SDK logs each non-JSON line with a traceback; this module warns about them instead.
    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("Failed to parse JSONRPC message")


logging.getLogger("mcp.client.stdio").addFilter(_QuietParseErrors())


def with_exit_status(params: StdioServerParameters) -> StdioServerParameters:
    """The same server, run by ``sh`` so that its exit status is the last line of its stderr."""
    if not shutil.which("sh"):
        return params
    return params.model_copy(update={"command": "sh", "args": ["-c", _SCRIPT, "sh", params.command, *params.args]})


def exit_status(stderr_tail: str) -> tuple[int | None, str]:
    """The exit status :func:`with_exit_status` recorded, and the stderr without that line."""
    lines = stderr_tail.rstrip().splitlines()
    if lines and (m := _EXIT_RE.search(lines[-1])):
        return int(m.group(1)), "\n".join(lines[:-1]).strip()
    return None, stderr_tail


def _line_of(exc: Exception) -> str:
    errors = getattr(exc, "errors", None)
    with contextlib.suppress(Exception):
        value = errors()[0].get("input") if callable(errors) else None
        if isinstance(value, str):
            return value
    return str(exc).splitlines()[0]


@contextlib.asynccontextmanager
async def tolerant_stdio_client(
    name: str, params: StdioServerParameters, errlog: IO[str] | None = None
) -> AsyncIterator[tuple[Any, Any]]:
    """:func:`mcp.client.stdio.stdio_client`, minus the non-JSON lines (see the module docstring)."""
    cm = stdio_client(with_exit_status(params), errlog=errlog) if errlog is not None else stdio_client(params)
    async with cm as (read, write):
        send, receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        skipped = 0

        async def forward() -> None:
            nonlocal skipped
            async with send:
                async for item in read:
                    if isinstance(item, SessionMessage):
                        await send.send(item)
                        continue
                    skipped += 1
                    if skipped <= NOISE_WARNINGS:
                        more = "; further ones are skipped silently" if skipped == NOISE_WARNINGS else ""
                        log.warning(
                            "MCP server %r printed a line on stdout that is not JSON-RPC (skipped%s): %.120r",
                            name,
                            more,
                            _line_of(item),
                        )

        async with anyio.create_task_group() as tg:
            tg.start_soon(forward)
            try:
                yield receive, write
            finally:
                tg.cancel_scope.cancel()
