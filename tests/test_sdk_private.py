"""The MCP SDK internals gocode relies on (gocode/mcp/sdk_private.py), checked against the
installed SDK: an upgrade that renames or reshapes one fails here, by name, not somewhere in
discovery or serving. Also: no module but sdk_private touches them."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest
from mcp.client.session import ClientSession
from mcp.server.connection import Connection
from mcp.server.session import ServerSession
from mcp.shared.dispatcher import Dispatcher

ROOT = Path(__file__).resolve().parent.parent
PRIVATE = ("_stamp", "_session_read_timeout_seconds", "_dispatcher", "send_raw_request", "_absorb_tool_listing",
           "_connection", "_httpx_utils")  # fmt: skip


@pytest.mark.fast
def test_the_client_session_internals_are_as_gocode_uses_them():
    init = inspect.getsource(ClientSession.__init__)
    for name in ("self._stamp", "self._session_read_timeout_seconds", "self._dispatcher"):
        assert name in init, f"ClientSession no longer sets {name}"
    # send_request itself goes this way: the raw path is the same request, minus validation
    source = inspect.getsource(ClientSession.send_request)
    for name in ("self._stamp(data, opts)", "self._session_read_timeout_seconds", "self._dispatcher.send_raw_request"):
        assert name in source, f"ClientSession.send_request no longer uses {name}"
    raw = inspect.signature(Dispatcher.send_raw_request)
    assert list(raw.parameters)[1:4] == ["method", "params", "opts"], raw
    absorb = inspect.signature(ClientSession._absorb_tool_listing)  # pyright: ignore[reportPrivateUsage]
    assert list(absorb.parameters) == ["self", "result", "complete"], absorb


@pytest.mark.fast
def test_the_server_session_still_has_its_connection_with_an_exit_stack():
    assert "self._connection = connection" in inspect.getsource(ServerSession.__init__)
    assert "exit_stack" in inspect.get_annotations(Connection), "the connection has no exit_stack any more"


@pytest.mark.fast
def test_no_module_but_sdk_private_uses_sdk_internals():
    offenders = []
    for path in sorted((ROOT / "gocode").rglob("*.py")):
        if path.name == "sdk_private.py":
            continue
        text = path.read_text(encoding="utf-8")
        for name in PRIVATE:
            if re.search(rf"[.\"']{re.escape(name)}\b", text):
                offenders.append(f"{path.relative_to(ROOT)}: {name}")
    assert offenders == []


@pytest.mark.fast
def test_the_streamable_http_client_still_parses_with_its_module_adapter():
    import mcp.client.streamable_http as streamable

    from gocode.mcp import sdk_private

    # tolerate_deep_messages replaces this name: the client must still look it up at each message.
    assert "jsonrpc_message_adapter.validate_json(" in inspect.getsource(streamable)
    sdk_private.tolerate_deep_messages()
    sdk_private.tolerate_deep_messages()  # idempotent: wrapped once
    adapter = streamable.jsonrpc_message_adapter
    assert isinstance(adapter, sdk_private._DeepTolerantAdapter)  # pyright: ignore[reportPrivateUsage]
    assert not isinstance(adapter.inner, sdk_private._DeepTolerantAdapter)  # pyright: ignore[reportPrivateUsage]
    deep = "[" * 300 + "]" * 300
    message = adapter.validate_json('{"jsonrpc": "2.0", "id": 1, "result": {"x": ' + deep + "}}", by_name=False)
    assert message.id == 1
