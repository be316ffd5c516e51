"""A program's ``readResource``, ``listResources`` and ``getPrompt``, answered by the controller.

In a pooled run these are three tools of the ``@gocode`` pseudo-server (the same call a
program makes for a tool, so every runtime reaches them alike), answered from the
controller's own sessions by :class:`~gocode.mcp.offers.Offers`. A program reaches only the
servers whose tools it may call. A read goes to the server that owns the URI; besides what
servers list, a server owns the URIs of the links and embedded resources its tools returned
during the run, which the controller notes as the results pass (:func:`remember`): the
program cannot add to that record, so a link one server returned is never read from another.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError

from gocode.errors import OfferError
from gocode.mcp.offers import MAX_URI, Listing, Offers
from gocode.mcp.toolcall import ToolCall

READ_TOOL = "read_resource"
LIST_TOOL = "list_resources"
PROMPT_TOOL = "get_prompt"
TOOLS = (READ_TOOL, LIST_TOOL, PROMPT_TOOL)
MAX_REMEMBERED = 1024  # URIs noted per server and run
MAX_ANSWER = 16 * 1024 * 1024  # bytes of JSON an answer may hold (the stdio frame cap)


def remember(returned: dict[str, set[str]], server: str, result: types.CallToolResult) -> None:
    """Note the URIs of the links and embedded resources in ``server``'s result (bounded)."""
    seen = returned.setdefault(server, set())
    for part in result.content:
        uri = None
        if isinstance(part, types.ResourceLink):
            uri = str(part.uri)
        elif isinstance(part, types.EmbeddedResource):
            uri = str(part.resource.uri)
        if uri is not None and len(uri) <= MAX_URI and len(seen) < MAX_REMEMBERED:
            seen.add(uri)


async def answer(
    offers: Offers | None,
    name: str,
    arguments: dict[str, Any] | None,
    reachable: Callable[[str], bool],
    returned: dict[str, set[str]],
    calls: list[ToolCall],
) -> types.CallToolResult:
    """One of :data:`TOOLS`: its answer as structured content, or its refusal as an error
    result (recorded in ``calls`` either way)."""
    start = time.monotonic()
    args = arguments or {}
    error: str | None = None
    try:
        if offers is None:
            raise OfferError("this controller offers no resources or prompts")
        servers = offers.servers(reachable)
        value = await _answer(offers, name, args, servers, returned)
        text = json.dumps(value)
        if len(text) > MAX_ANSWER:
            raise OfferError(f"the answer is {len(text)} bytes of JSON; at most {MAX_ANSWER} are passed on")
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)], structured_content=value)
    except (OfferError, MCPError) as exc:
        error = str(exc)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=f"{_what(name)}: {exc}")], is_error=True
        )
    finally:
        calls.append(ToolCall("@gocode", name, (time.monotonic() - start) * 1000, error))


async def _answer(
    offers: Offers, name: str, args: dict[str, Any], servers: Sequence[str], returned: dict[str, set[str]]
) -> dict[str, Any]:
    if name == READ_TOOL:
        uri = args.get("uri")
        if not isinstance(uri, str) or not uri:
            raise OfferError("needs a URI")
        server, result = await offers.read(uri, servers, returned)
        return {"server": server, **_dump(result)}
    if name == LIST_TOOL:
        named = args.get("server")
        if not isinstance(named, str) or named not in servers:
            raise OfferError(f"no server {named!r} (servers: {', '.join(servers) or 'none'})")
        return {"resources": _entries(named, await offers.listing(named))}
    if name == PROMPT_TOOL:
        full, arguments = args.get("name"), args.get("arguments") or {}
        server = _server_of(full, servers)
        if not isinstance(arguments, dict) or not all(isinstance(v, str) for v in arguments.values()):
            raise OfferError("a prompt's arguments are strings")
        assert isinstance(full, str)
        return _dump(await offers.prompt(server, full[len(server) + 1 :], arguments))
    raise MCPError(code=types.INVALID_PARAMS, message=f"unknown tool {name!r}")


def _server_of(name: Any, servers: Sequence[str]) -> str:
    """The server of "server.prompt": the longest server name it starts with (both may hold dots)."""
    found = [s for s in servers if isinstance(name, str) and name.startswith(s + ".") and len(name) > len(s) + 1]
    if not found:
        raise OfferError(
            f'{name!r} is not "server.prompt" for a known server (servers: {", ".join(servers) or "none"})'
        )
    return max(found, key=len)


def _entries(server: str, listing: Listing) -> list[dict[str, Any]]:
    resources = [{"server": server, **_dump(r)} for r in listing.resources]
    templates = [
        {
            "server": server,
            "template": True,
            **{k: v for k, v in _dump(t).items() if k != "uriTemplate"},
            "uri": t.uri_template,
        }
        for t in listing.templates
    ]
    return resources + templates


def _dump(model: Any) -> dict[str, Any]:
    dumped: dict[str, Any] = model.model_dump(by_alias=True, exclude_none=True, mode="json")
    return dumped


def _what(name: str) -> str:
    return {READ_TOOL: "readResource", LIST_TOOL: "listResources", PROMPT_TOOL: "getPrompt"}.get(name, name)
