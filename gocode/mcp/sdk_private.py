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
- :func:`tolerate_deep_messages`: the streamable-HTTP client parses each message with the
  module-level ``jsonrpc_message_adapter`` it imported; gocode puts one there that reads a
  message nested deeper than the JSON parser's limit with its deepest parts cut
  (:mod:`gocode.mcp.nesting`), as gocode's own stdio transport does, instead of failing the
  request (one tool nested ~100 objects deep failed its server's whole listing). It runs on
  the event loop, so only a message up to 1 MiB is rewritten; a longer one fails as before.
- :func:`connection_of`: a server-side session's connection (``_connection``), whose
  ``exit_stack`` is where per-connection teardown belongs: request handlers get no public
  handle on it, and gocode must forget a client to notify once its connection ends.
"""

from __future__ import annotations

import logging
from typing import Any

import mcp_types as types
from mcp.client.session import ClientSession
from pydantic import ValidationError

from gocode.mcp import nesting

log = logging.getLogger("gocode.mcp")


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


class _DeepTolerantAdapter:
    """``jsonrpc_message_adapter`` for the streamable-HTTP client: the SDK's, with a second
    reading of a message its JSON parser refused for nesting too deep."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def validate_json(self, data: str | bytes | bytearray, **kwargs: Any) -> Any:
        try:
            return self.inner.validate_json(data, **kwargs)
        except ValidationError as exc:
            if "recursion limit" not in str(exc):
                raise
            text = data if isinstance(data, str) else bytes(data).decode("utf-8", "replace")
            pruned = nesting.prune(text, max_chars=nesting.LOOP_PRUNE_CHARS)  # on the event loop: short only
            if pruned is None:
                raise
            log.warning(
                "an MCP server sent a message nested deeper than %d levels; read without its deepest parts",
                nesting.MESSAGE_DEPTH,
            )
            return self.inner.validate_json(pruned, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def tolerate_deep_messages() -> None:
    """Let the streamable-HTTP client read messages nested too deep (see the module doc). Idempotent."""
    import mcp.client.streamable_http as streamable

    current = streamable.jsonrpc_message_adapter
    if not isinstance(current, _DeepTolerantAdapter):
        streamable.jsonrpc_message_adapter = _DeepTolerantAdapter(current)  # type: ignore[assignment]
