"""Every use of the MCP Python SDK's private internals, in one place.

The SDK is pinned; each function here reaches past its public API because no public path
does the job, and tests/test_sdk_private.py checks each against the installed SDK, so an
upgrade that moves one fails there, loudly, rather than somewhere in discovery or serving.

- :func:`raw_request`: a request whose raw JSON result gocode reads itself. The public
  ``ClientSession.send_request`` validates the whole result against the method's type first,
  and for ``tools/list`` one tool with an odd schema then loses the server's every tool. It
  uses the session's ``_stamp`` (what the negotiated era puts on each request), its
  ``_session_read_timeout_seconds`` and its dispatcher's ``send_raw_request``.
- :func:`absorb_tool_listing`: tells the session about tools listed that way (its
  ``_absorb_tool_listing``), as its own ``list_tools`` would have, so a call does not make it
  list again to find the tool's output schema.
- :func:`connection_of`: a server-side session's connection (``_connection``), whose
  ``exit_stack`` is where per-connection teardown belongs: request handlers get no public
  handle on it, and gocode must forget a client to notify once its connection ends.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types
from mcp.client.session import ClientSession


async def raw_request(session: ClientSession, method: str, params: dict[str, Any] | None) -> Any:
    """Send ``method`` as ``send_request`` would, and return its result JSON unvalidated."""
    data: dict[str, Any] = {"method": method, "params": params or {}}
    opts: dict[str, Any] = {}
    session._stamp(data, opts)  # type: ignore[arg-type]  # pyright: ignore[reportPrivateUsage]
    timeout = session._session_read_timeout_seconds  # pyright: ignore[reportPrivateUsage]
    if timeout is not None:
        opts["timeout"] = timeout
    dispatcher = session._dispatcher  # pyright: ignore[reportPrivateUsage]
    return await dispatcher.send_raw_request(method, data.get("params"), opts)  # type: ignore[arg-type]


def absorb_tool_listing(session: ClientSession, tools: list[types.Tool]) -> None:
    """Record ``tools`` as the session's complete tool listing."""
    session._absorb_tool_listing(types.ListToolsResult(tools=tools), complete=True)  # pyright: ignore[reportPrivateUsage]


def connection_of(session: object) -> Any | None:
    """The connection behind a server-side session (None if this SDK has none there)."""
    return getattr(session, "_connection", None)
